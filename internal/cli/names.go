package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/toolname"
)

// vouchNames is the check pin, lock add and approve make before they vouch
// for a list of tool names: names that collide (toolname.Check: equal after
// NFC, case folding or the confusable fold) are refused (exit 2, the names
// escaped) unless the operator acknowledged each in the suppression file
// (manifest.NameCollisionRule, with a reason, unexpired), which is read only
// then; acknowledged, each is said on stderr with its reason. what says
// what is refused ("pin \"srv\""); servers are the names a suppression's
// server may give; only, when given, limits the check to the groups that
// hold one of those names (the tools an approval vouches for now).
func (e *env) vouchNames(what string, names, servers []string, sf *suppressionFlags, only ...string) error {
	res := toolname.Check(names)
	if len(only) > 0 {
		// Only the groups of a name being vouched for now.
		res.Ambiguous = slices.DeleteFunc(res.Ambiguous, func(g toolname.Group) bool {
			return !slices.ContainsFunc(g.Names, func(n string) bool { return slices.Contains(only, n) })
		})
	}
	if len(res.Ambiguous) == 0 {
		return nil
	}
	sup, err := sf.load(e)
	if err != nil {
		return err
	}
	day := today()
	var refused []string
	var said []string
	for _, g := range res.Ambiguous {
		var missing []string
		for _, n := range g.Names {
			m, expired := sup.AcknowledgesName(n, servers, day)
			switch {
			case m != nil:
				said = append(said, fmt.Sprintf("tool name %s collides (%s), acknowledged by %s: %s", safetext.QuoteASCII(n), g.Describe(), safetext.Quote(m.Source), safetext.Quote(m.Reason)))
			case expired != nil:
				missing = append(missing, safetext.QuoteASCII(n)+" (acknowledged until "+safetext.Quote(expired.Expires)+")")
			default:
				missing = append(missing, safetext.QuoteASCII(n))
			}
		}
		switch {
		case len(missing) == len(g.Names) && len(said) == 0 && !strings.Contains(strings.Join(missing, ""), "acknowledged until"):
			refused = append(refused, fmt.Sprintf("%s (%s)", quoteNames(g.Names), foldWords[g.Fold]))
		case len(missing) > 0:
			refused = append(refused, fmt.Sprintf("%s (%s; not acknowledged: %s)", quoteNames(g.Names), foldWords[g.Fold], strings.Join(missing, ", ")))
		}
	}
	if len(refused) > 0 {
		return &exitError{ExitUsage, fmt.Sprintf("refusing to %s: tool names collide, so a person cannot tell them apart and a client that folds names may call the wrong one: %s. Ask the server's owner for names that differ in ASCII, or acknowledge each name in the suppression file (rule %s, tool: the name, a reason, an expiry; --suppressions FILE, default %s)",
			what, strings.Join(refused, "; "), manifest.NameCollisionRule, manifest.SuppressionsFile)}
	}
	for _, s := range said {
		fmt.Fprintf(e.stderr, "mcpdrift: %s\n", s)
	}
	return nil
}

// foldWords say which fold made names collide.
var foldWords = map[toolname.Fold]string{
	toolname.FoldNFC:        "equal after Unicode normalization (NFC)",
	toolname.FoldCase:       "equal after case folding",
	toolname.FoldConfusable: "equal after the confusable fold",
}

// quoteNames quotes tool names as renderers show them (every non-ASCII
// code point escaped).
func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = safetext.QuoteASCII(n)
	}
	return strings.Join(q, ", ")
}

// acknowledgeNames gives the gateway's baseline the operator's
// acknowledgement of colliding names (decide.Baseline.NameAcknowledged):
// when the pinned names collide, the suppression file is read (once) and
// each name is acknowledged while its suppression has not expired, on the
// day the gateway decides.
func (e *env) acknowledgeNames(b *decide.Baseline, servers []string, sf *suppressionFlags) error {
	names := make([]string, len(b.Tools))
	for i := range b.Tools {
		names[i] = b.Tools[i].Name
	}
	if len(toolname.Check(names).Ambiguous) == 0 {
		return nil
	}
	sup, err := sf.load(e)
	if err != nil || sup == nil {
		return err
	}
	b.NameAcknowledged = func(name string) bool {
		m, _ := sup.AcknowledgesName(name, servers, today())
		return m != nil
	}
	return nil
}

// pinBaseline is pin's last step: the baseline of o (manifest.Pin, whose
// refusals come first), refused when its names collide and were not
// acknowledged (vouchNames), then the shape warnings of a list pin read
// (checks, when read).
func (e *env) pinBaseline(o *manifest.Observed, source string, allowEmpty bool, sf *suppressionFlags, checks *pinChecks, read bool) (*manifest.Declared, error) {
	d, err := manifest.Pin(o, manifest.PinOptions{AllowEmpty: allowEmpty})
	if err != nil {
		return nil, inputErr(source, err)
	}
	names := make([]string, len(o.Observed.ToolDigests))
	for i := range o.Observed.ToolDigests {
		names[i] = o.Observed.ToolDigests[i].Name
	}
	if err := e.vouchNames("pin "+safetext.Quote(source), names, []string{o.Server.ID, source}, sf); err != nil {
		return nil, err
	}
	if read {
		checks.warnShape()
	}
	return d, nil
}

// lockToolNames are the names of the tools a lock entry approves.
func lockToolNames(s *lock.Server) []string {
	names := make([]string, len(s.Tools))
	for i, t := range s.Tools {
		names[i] = t.Name
	}
	return names
}

// toolNames are the names of a list's tools, in order.
func toolNames(tools []manifest.Tool) []string {
	names := make([]string, len(tools))
	for i := range tools {
		names[i] = tools[i].Name
	}
	return names
}
