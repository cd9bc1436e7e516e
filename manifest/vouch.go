package manifest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/toolname"
)

// Vouch is the check pin, lock add and approve make before they vouch for
// a list of tool names: names that collide (toolname.Check: equal after
// NFC, case folding or the confusable fold) are refused unless the
// operator acknowledged each in the suppression file (NameCollisionRule,
// with a reason, unexpired).
type Vouch struct {
	// What is refused, for the message ("pin \"srv\"").
	What string
	// Servers are the names a suppression's server may give.
	Servers []string
	// Suppressions reads the suppression file; it is called only when
	// names collide (nil: none).
	Suppressions func() (*Suppressions, error)
	// Today (YYYY-MM-DD, UTC) decides expiry.
	Today string
}

// Check refuses colliding names that are not acknowledged (a runerr.Usage
// error, the names escaped), and returns a line for each acknowledged one,
// with its reason. only, when given, limits the check to the groups that
// hold one of those names (the tools an approval vouches for now).
func (v Vouch) Check(names []string, only ...string) (acknowledged []string, err error) {
	res := toolname.Check(names)
	if len(only) > 0 {
		res.Ambiguous = slices.DeleteFunc(res.Ambiguous, func(g toolname.Group) bool {
			return !slices.ContainsFunc(g.Names, func(n string) bool { return slices.Contains(only, n) })
		})
	}
	if len(res.Ambiguous) == 0 {
		return nil, nil
	}
	var sup *Suppressions
	if v.Suppressions != nil {
		if sup, err = v.Suppressions(); err != nil {
			return nil, err
		}
	}
	var refused []string
	for _, g := range res.Ambiguous {
		var missing []string
		for _, n := range g.Names {
			m, expired := sup.AcknowledgesName(n, v.Servers, v.Today)
			switch {
			case m != nil:
				acknowledged = append(acknowledged, fmt.Sprintf("tool name %s collides (%s), acknowledged by %s: %s", safetext.QuoteASCII(n), g.Describe(), safetext.Quote(m.Source), safetext.Quote(m.Reason)))
			case expired != nil:
				missing = append(missing, safetext.QuoteASCII(n)+" (acknowledged until "+safetext.Quote(expired.Expires)+")")
			default:
				missing = append(missing, safetext.QuoteASCII(n))
			}
		}
		switch {
		case len(missing) == len(g.Names) && len(acknowledged) == 0 && !strings.Contains(strings.Join(missing, ""), "acknowledged until"):
			refused = append(refused, fmt.Sprintf("%s (%s)", safetext.QuoteNames(g.Names), foldWords[g.Fold]))
		case len(missing) > 0:
			refused = append(refused, fmt.Sprintf("%s (%s; not acknowledged: %s)", safetext.QuoteNames(g.Names), foldWords[g.Fold], strings.Join(missing, ", ")))
		}
	}
	if len(refused) > 0 {
		return nil, runerr.Usagef("refusing to %s: tool names collide, so a person cannot tell them apart and a client that folds names may call the wrong one: %s. Ask the server's owner for names that differ in ASCII, or acknowledge each name in the suppression file (rule %s, tool: the name, a reason, an expiry; --suppressions FILE, default %s)",
			v.What, strings.Join(refused, "; "), NameCollisionRule, SuppressionsFile)
	}
	return acknowledged, nil
}

// foldWords say which fold made names collide.
var foldWords = map[toolname.Fold]string{
	toolname.FoldNFC:        "equal after Unicode normalization (NFC)",
	toolname.FoldCase:       "equal after case folding",
	toolname.FoldConfusable: "equal after the confusable fold",
}
