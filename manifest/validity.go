package manifest

import (
	"fmt"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Baseline validity: the one check of an approved baseline. gate calls it
// (each problem is inconclusive), the gateway calls it through
// decide.NewBaseline (a baseline with a problem withholds the server), and
// the lock reader calls it for every server's entry (a lock with a
// problem is refused). No caller checks a baseline any other way.

// The codes of an invalid baseline (catalog: FamilyValidity,
// inconclusive in gate).
const (
	// BaselineDigestMismatch: the declared manifest_digest is not the
	// digest of its own entries.
	BaselineDigestMismatch = "declared_manifest_digest_mismatch"
	// BaselineAmbiguous: a tool name is listed twice (in the entries, or
	// in the definitions pinned with them).
	BaselineAmbiguous = "declared_mcp_manifest_ambiguous"
	// BaselineDefinitionsMismatch: the definitions pinned with the
	// baseline (its snapshot, a lock's definitions) are not the tools its
	// entries name, by name and tool_digest, or are another server's.
	BaselineDefinitionsMismatch = "declared_definitions_mismatch"
)

// BaselineProblem is one reason a baseline cannot be used: a code above
// and a sentence (escaped text: names quoted).
type BaselineProblem struct {
	Code    string
	Message string
	// At is where in the declared baseline it is (a JSON pointer, such
	// as "/manifest_digest" or "/tools/3/name"; "" when not there), and
	// Definition the index of the definition concerned (-1: none).
	At         string
	Definition int
}

// Definitions are the tool definitions pinned with a baseline, as
// CheckBaseline compares them with its entries.
type Definitions struct {
	Tools []Tool
	// From names them in messages ("the snapshot", "the lock's
	// definitions").
	From string
	// ServerID is the server they were pinned for ("": not recorded).
	ServerID string
}

// CheckBaseline is the validity of a baseline: its declared entries d
// (nil when the definitions alone are the baseline: a snapshot given as
// one) and the definitions pinned with them (nil when none were read:
// gate without a snapshot). It returns every problem, in a fixed order
// (the entries' digest, their names, the definitions' names, the
// definitions against the entries); none: the baseline is valid.
func CheckBaseline(d *Declared, defs *Definitions) []BaselineProblem {
	var out []BaselineProblem
	if d != nil {
		if got := ManifestDigest(d.NameDigests()); got != d.ManifestDigest {
			out = append(out, BaselineProblem{BaselineDigestMismatch, "the declared manifest_digest does not recompute from its tools (recomputed " + got + ")", "/manifest_digest", -1})
		}
		if i := firstTwice(len(d.Tools), func(i int) string { return d.Tools[i].Name }); i >= 0 {
			out = append(out, BaselineProblem{BaselineAmbiguous, "the declared baseline lists tool " + safetext.Quote(d.Tools[i].Name) + " twice", fmt.Sprintf("/tools/%d/name", i), -1})
		}
	}
	if defs == nil {
		return out
	}
	if i := firstTwice(len(defs.Tools), func(i int) string { return defs.Tools[i].Name }); i >= 0 {
		return append(out, BaselineProblem{BaselineAmbiguous, defs.From + " lists tool " + safetext.Quote(defs.Tools[i].Name) + " twice", "", i})
	}
	if d != nil {
		if p, bad := definitionsMismatch(d, defs); bad {
			out = append(out, p)
		}
	}
	return out
}

// firstTwice is the index of the first name of n that an earlier one
// repeats (-1: none).
func firstTwice(n int, name func(int) string) int {
	seen := make(map[string]struct{}, n)
	for i := range n {
		x := name(i)
		if _, ok := seen[x]; ok {
			return i
		}
		seen[x] = struct{}{}
	}
	return -1
}

// definitionsMismatch is how defs are not the tools d's entries name
// (false: they are, one for one).
func definitionsMismatch(d *Declared, defs *Definitions) (BaselineProblem, bool) {
	p := BaselineProblem{Code: BaselineDefinitionsMismatch, Definition: -1}
	if defs.ServerID != "" && defs.ServerID != d.Server.ID {
		p.Message, p.At = fmt.Sprintf("%s is of server %s, the baseline of %s", defs.From, safetext.Quote(defs.ServerID), safetext.Quote(d.Server.ID)), "/server/id"
		return p, true
	}
	entries := make(map[string]int, len(d.Tools))
	for i, e := range d.Tools {
		if _, dup := entries[e.Name]; !dup {
			entries[e.Name] = i
		}
	}
	for i := range defs.Tools {
		t := &defs.Tools[i]
		ei, ok := entries[t.Name]
		p.Definition = i
		if !ok {
			p.Message = fmt.Sprintf("%s holds tool %s, which the baseline does not list", defs.From, safetext.Quote(t.Name))
			return p, true
		}
		if got, want := t.ToolDigest(), d.Tools[ei].ToolDigest; got != want {
			p.Message, p.At = fmt.Sprintf("the tool_digest of tool %s in %s is %s, the baseline's is %s", safetext.Quote(t.Name), defs.From, got, safetext.Escape(want)), fmt.Sprintf("/tools/%d/tool_digest", ei)
			return p, true
		}
		delete(entries, t.Name)
	}
	p.Definition = -1
	for i, e := range d.Tools {
		if _, missing := entries[e.Name]; missing {
			p.Message, p.At = fmt.Sprintf("tool %s of the baseline is not in %s", safetext.Quote(e.Name), defs.From), fmt.Sprintf("/tools/%d", i)
			return p, true
		}
	}
	return BaselineProblem{}, false
}
