// Package delta is the readable account of how each tool changed between
// an approved definition and the served one: what it can now do that it
// could not before, what it can no longer do, its description as a word
// diff, its changed hints, and the severity and decision of the profile.
// It is what a reviewer reads (mcpdrift review, the HTML report's cards)
// instead of a raw JSON diff.
//
// It computes nothing a second time. The changes are schemadiff's records
// (kind, pointer, direction, severity, capability raise), sorted into
// groups by their direction; the decision is the one the report already
// carries (schemadiff.ToolVerdict: DecisionProfile.DecideTool). What the
// records do not hold is read from the two definitions at the records'
// pointers (schemadiff.DeclAt, StringAt, HintText): a new parameter's
// description and type, the texts of a changed description, the values of
// a changed hint. Without the definitions (a report read back from a file)
// the groups are the same and those readings are missing.
//
// Build is pure and deterministic. Every string it returns that a server
// controls (names, descriptions, words, references) must be escaped before
// it is shown; package report renders it (RenderDelta, the HTML report).
package delta

import (
	"sort"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Tool is the readable delta of one tool. The verdict's fields (name,
// status, severity, the decision of the profile, what denied it) are the
// report's own.
type Tool struct {
	schemadiff.ToolVerdict

	// Signals are the escalation signals about the tool as a whole: schema
	// drift under a stable description, a suspected rename, a name outside
	// the safe set or one that looks like another, a duplicate name, a
	// number changed beyond what a digest can see.
	Signals []Item `json:"signals,omitempty"`
	// Gained is what the tool can now do that it could not before: the
	// widening changes of its input (a new parameter, a widened type or
	// enum, a dropped constraint, const or additionalProperties:false, a
	// parameter no longer required, a new external $ref), and for a new
	// tool the tool itself.
	Gained []Item `json:"gained,omitempty"`
	// Lost is what it can no longer do: the narrowing changes (a
	// parameter removed from a closed object, a narrowed type, an added
	// constraint, a parameter now required), and for a removed tool the
	// tool itself.
	Lost []Item `json:"lost,omitempty"`
	// Other are the input changes that are neither: a type changed to an
	// unrelated one, a constraint replaced by one that cannot be ordered
	// against it, a parameter's description, title or default, notation, a
	// dialect, annotations validation never reads, keywords the diff does
	// not model, members outside the digest projection (information).
	Other []Item `json:"other,omitempty"`
	// Output are the changes of what the tool returns (its outputSchema),
	// graded for the agent that reads the result: widening, what it may
	// now receive unannounced; narrowing, harmless (the tool returns less).
	Output []Item `json:"output,omitempty"`

	// Description is the description's word diff (nil: unchanged). For a
	// new tool it is its whole description, inserted; for a removed one,
	// deleted.
	Description *Text `json:"description,omitempty"`
	// Titles are the changed titles (the tool's title member, outside the
	// digest projection, and annotations.title).
	Titles []Text `json:"titles,omitempty"`
	// Hints are the changed annotation hints.
	Hints []Hint `json:"hints,omitempty"`
	// Params, for a new tool, are the parameters it takes.
	Params []schemadiff.Param `json:"params,omitempty"`
}

// Item is one change record with what the definitions say about it.
type Item struct {
	Change schemadiff.Change `json:"change"`
	// Param is the parameter the record is about, as a dotted path
	// ("options.url", "files[]"); "" when it names none.
	Param string `json:"param,omitempty"`
	// Decl, for a parameter added, removed or made required or optional,
	// is its declaration on the side that has it (the new side, the old
	// one for a removed parameter): its type, title and description.
	Decl *schemadiff.Decl `json:"decl,omitempty"`
	// Ref, for an external $ref, is the reference as written.
	Ref string `json:"ref,omitempty"`
	// Words, for a parameter's description or title that changed, is its
	// word diff.
	Words *schemadiff.Words `json:"words,omitempty"`
}

// Text is a changed text (a description, a title).
type Text struct {
	Change schemadiff.Change `json:"change"`
	// Words is the word diff of the two texts; Known says they were read
	// from the definitions (without them only Change.Detail, the diff's
	// own short rendering, is known).
	Words schemadiff.Words `json:"words"`
	Known bool             `json:"known"`
}

// Hint is a changed annotation hint, old → new as reports show it ("true",
// "false", "default (true)"; see schemadiff.HintText). Old and New are ""
// when the definitions are not known (Change.Detail says it then).
type Hint struct {
	Key    string            `json:"key"`
	Old    string            `json:"old,omitempty"`
	New    string            `json:"new,omitempty"`
	Change schemadiff.Change `json:"change"`
	// Meaningless: destructiveHint or idempotentHint while both sides
	// claim readOnlyHint true (schemadiff.HintMeaningless).
	Meaningless bool `json:"meaningless,omitempty"`
}

// Groups of change kinds that are not sorted by direction.
var signalKinds = map[string]bool{
	schemadiff.SchemaDriftStableDescription: true, schemadiff.ToolRenameSuspected: true,
	schemadiff.ToolNameUnsafe: true, schemadiff.ToolNamesAmbiguous: true, schemadiff.ToolDuplicateName: true,
	schemadiff.NumberBeyondPrecisionChanged: true,
	// What an external $ref names is not what the lock pinned.
	schemadiff.ExternalRefDocumentChanged: true, schemadiff.ExternalRefUnverified: true,
}

// textWords bounds the word diffs: a few words of context, long runs
// clipped.
var textWords = schemadiff.WordOptions{Context: 6, MaxRun: 4096}

// Build returns the readable delta of every tool that changed between the
// two lists: the tools in verdicts (the report's decisions, in their
// order) whose status is not unchanged or that have change records, then
// any tool with change records and no verdict (its decision left empty).
// The result is sorted: denied first, then reviewable, then allowed; more
// severe first; otherwise in the verdicts' order.
//
// changes are the report's records; identity records (server-level, see
// schemadiff.IdentityKind) are left out, as ToolDecisions leaves them. old
// and new are the two definitions lists (either may be nil: what only
// they say is then missing). A name is matched to the first tool of that
// name, as the diff does.
func Build(old, new []manifest.Tool, changes []schemadiff.Change, verdicts []schemadiff.ToolVerdict) []Tool {
	oldBy, newBy := manifest.FirstByName(old), manifest.FirstByName(new)
	by := map[string][]schemadiff.Change{}
	var names []string
	for _, c := range changes {
		if schemadiff.IdentityKind(c.Kind) {
			continue
		}
		if _, ok := by[c.Name]; !ok {
			names = append(names, c.Name)
		}
		by[c.Name] = append(by[c.Name], c)
	}
	var out []Tool
	seen := map[string]bool{}
	for _, v := range verdicts {
		if seen[v.Name] {
			continue
		}
		seen[v.Name] = true
		if v.Status == schemadiff.StatusUnchanged && len(by[v.Name]) == 0 {
			continue
		}
		out = append(out, build(v, oldBy[v.Name], newBy[v.Name], by[v.Name]))
	}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, build(schemadiff.ToolVerdict{Name: n, Status: schemadiff.StatusChanged, Changes: len(by[n])}, oldBy[n], newBy[n], by[n]))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ra, rb := decisionRank(a.Decision), decisionRank(b.Decision); ra != rb {
			return ra > rb
		}
		return schemadiff.SeverityRank(a.Severity) > schemadiff.SeverityRank(b.Severity)
	})
	return out
}

func decisionRank(d string) int {
	switch d {
	case schemadiff.Deny:
		return 3
	case schemadiff.Review:
		return 2
	case schemadiff.Allow:
		return 0
	}
	return 1 // not given
}

// build sorts one tool's records into its groups.
func build(v schemadiff.ToolVerdict, o, n *manifest.Tool, cs []schemadiff.Change) Tool {
	t := Tool{ToolVerdict: v}
	hintKeys := map[string]bool{}
	for _, k := range schemadiff.HintKeys() {
		hintKeys[k] = true
	}
	for _, c := range cs {
		switch {
		case c.Kind == schemadiff.DescriptionChanged && c.Pointer == "/description":
			t.Description = text(c, o, n, "/description")
			continue
		case c.Kind == schemadiff.TitleChanged && c.Pointer == "/annotations/title",
			c.Kind == schemadiff.ToolMemberChanged && c.Pointer == "/title":
			t.Titles = append(t.Titles, *text(c, o, n, c.Pointer))
			continue
		case strings.HasPrefix(c.Pointer, "/annotations/") && hintKeys[c.Pointer[len("/annotations/"):]]:
			// annotation_hint_weakened, _strengthened, and a hint that is
			// not a boolean (keyword_unmodeled).
			t.Hints = append(t.Hints, hint(c, o, n))
			continue
		}
		it := item(c, o, n)
		switch {
		case signalKinds[c.Kind]:
			t.Signals = append(t.Signals, it)
		case schemadiff.IsOutput(c):
			t.Output = append(t.Output, it)
		case c.Direction == schemadiff.Widening:
			t.Gained = append(t.Gained, it)
		case c.Direction == schemadiff.Narrowing:
			t.Lost = append(t.Lost, it)
		default:
			t.Other = append(t.Other, it)
		}
	}
	switch v.Status {
	case schemadiff.StatusAdded:
		if n != nil {
			t.Params = schemadiff.Params(n)
			if d, ok := schemadiff.StringAt(n, "/description"); ok && d != "" && t.Description == nil {
				t.Description = &Text{Change: schemadiff.Change{Name: v.Name, Kind: schemadiff.ToolAdded, Pointer: "/description"},
					Words: schemadiff.DiffWords("", d, textWords), Known: true}
			}
		}
	case schemadiff.StatusRemoved:
		if o != nil {
			if d, ok := schemadiff.StringAt(o, "/description"); ok && d != "" && t.Description == nil {
				t.Description = &Text{Change: schemadiff.Change{Name: v.Name, Kind: schemadiff.ToolRemoved, Pointer: "/description"},
					Words: schemadiff.DiffWords(d, "", textWords), Known: true}
			}
		}
	}
	return t
}

// declKinds are the records about one parameter whose declaration a
// reader wants beside them, and the side it is read from.
var declKinds = map[string]bool{ // true: the old side
	schemadiff.ParamAddedOptional: false, schemadiff.ParamAddedRequired: false,
	schemadiff.ParamRemoved:    true,
	schemadiff.RequiredDropped: false, schemadiff.RequiredAdded: false,
}

func item(c schemadiff.Change, o, n *manifest.Tool) Item {
	it := Item{Change: c, Param: schemadiff.ParamPath(c.Pointer)}
	if fromOld, ok := declKinds[c.Kind]; ok && it.Param != "" && strings.Contains(c.Pointer, "/properties/") && !strings.HasSuffix(c.Pointer, "/required") {
		src := n
		if fromOld {
			src = o
		}
		if d, ok := schemadiff.DeclAt(src, c.Pointer); ok {
			it.Decl = &d
		}
	}
	switch c.Kind {
	case schemadiff.ExternalRefIntroduced, schemadiff.ExternalRefPresent:
		// (The records a trust record judged say their reference and
		// document in their detail, which their sentence gives.)
		if r, ok := schemadiff.StringAt(n, c.Pointer); ok {
			it.Ref = r
		}
	case schemadiff.DescriptionChanged, schemadiff.TitleChanged:
		// A parameter's description or title: planner-facing text, shown
		// as a word diff. The texts are known when the ones found at the
		// pointer give the record's own word diff (an annotation layered
		// over a reference may sit elsewhere on the old side; then only
		// the record is shown).
		ov, _ := schemadiff.StringAt(o, c.Pointer)
		nv, _ := schemadiff.StringAt(n, c.Pointer)
		max := 360
		if c.Kind == schemadiff.TitleChanged {
			max = 160
		}
		if o != nil && n != nil && schemadiff.WordDiff(ov, nv, max) == c.Detail {
			w := schemadiff.DiffWords(ov, nv, textWords)
			it.Words = &w
		}
	}
	return it
}

func text(c schemadiff.Change, o, n *manifest.Tool, ptr string) *Text {
	t := &Text{Change: c}
	if o == nil || n == nil {
		return t
	}
	t.Words, t.Known = schemadiff.DiffWords(textAt(o, ptr), textAt(n, ptr), textWords), true
	return t
}

// textAt is the text at ptr as the diff compares it: a string, "" when
// absent or null, else the value's canonical JSON.
func textAt(t *manifest.Tool, ptr string) string {
	v := schemadiff.ValueAt(t, ptr)
	switch {
	case !v.Valid() || v.Kind() == jcs.Null:
		return ""
	case v.Kind() == jcs.String:
		return v.Str()
	}
	return string(v.Canonical())
}

func hint(c schemadiff.Change, o, n *manifest.Tool) Hint {
	key := c.Pointer[len("/annotations/"):]
	h := Hint{Key: key, Change: c}
	if o != nil && n != nil {
		oa, na := o.Proj().Annotations, n.Proj().Annotations
		h.Old, h.New = schemadiff.HintText(oa, key), schemadiff.HintText(na, key)
		h.Meaningless = schemadiff.HintMeaningless(key, oa, na)
	}
	return h
}
