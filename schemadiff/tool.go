package schemadiff

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/toolname"
)

// Tool-level change kinds not produced by DiffSchema.
const (
	ToolDuplicateName = "tool_duplicate_name"
	// ToolNameUnsafe: a name new to the list is outside the safe set.
	ToolNameUnsafe = "tool_name_unsafe"
	// ToolNamesAmbiguous: a name of a group of look-alikes (NFC, case
	// folding, confusable fold) of which at least one is new.
	ToolNamesAmbiguous = "tool_names_ambiguous"
	// NumberBeyondPrecisionChanged: a number at the same pointer of the old
	// and new tool changed, but both canonicalize (RFC 8785) to the same
	// bytes, so no digest and no canonical comparison can see it.
	NumberBeyondPrecisionChanged = "number_beyond_precision_changed"
)

// maxPrecisionChanges bounds the number_beyond_precision_changed records
// of one tool; the last one says how many more there were.
const maxPrecisionChanges = 100

// precisionChanges reports every number of the tool (schemas, annotations
// and members outside the projection alike, at the same pointer on both
// sides) whose value changed while its canonical form did not.
func precisionChanges(name string, o, n jcs.Value) []Change {
	pairs, total := jcs.PrecisionChanges(o, n, maxPrecisionChanges)
	var out []Change
	for _, p := range pairs {
		what := "number"
		if p.Old.IsInteger() && p.New.IsInteger() {
			what = "integer"
		}
		out = append(out, Change{Name: name, Kind: NumberBeyondPrecisionChanged, Pointer: p.Pointer, Direction: Neutral, Severity: "medium",
			Detail: fmt.Sprintf("%s %s → %s; both canonicalize to %s, so the digests cannot see the change", what,
				safetext.Clip(string(p.Old.Raw()), 40), safetext.Clip(string(p.New.Raw()), 40), p.New.Canonical())})
	}
	if total > len(pairs) {
		out[len(out)-1].Note = fmt.Sprintf("%d more numbers of this tool changed beyond float64 precision", total-len(pairs))
	}
	return out
}

// ToolOptions control DiffTools.
type ToolOptions struct {
	Schema     Options
	Classifier *classify.Classifier // for tool_added/tool_removed severity; nil: built-in
}

// hint defaults from the MCP specification: a missing hint means the least
// reassuring value for destructive/openWorld and false for the others.
var hintDefaults = []struct {
	key string
	def bool
	// weakened reports whether old→new weakens the hint.
	weakerIsTrue bool
}{
	{"readOnlyHint", false, false},
	{"destructiveHint", true, true},
	{"idempotentHint", false, false},
	{"openWorldHint", true, true},
}

// modeledToolKeys are the tool members of the digest projection (and the
// name); other members that change are tool_member_changed, information.
var modeledToolKeys = manifest.ProjectedMembers

func canonEqual(a, b jcs.Value) bool {
	if a.Valid() != b.Valid() {
		// An explicit null equals an absent member.
		if a.Valid() && a.Kind() == jcs.Null || b.Valid() && b.Kind() == jcs.Null {
			return true
		}
		return false
	}
	if !a.Valid() {
		return true
	}
	return bytes.Equal(a.Canonical(), b.Canonical())
}

func present(v jcs.Value) bool { return v.Valid() && v.Kind() != jcs.Null }

// DiffTools compares two tool lists by name and returns every change,
// sorted by tool (most severe tool first), then severity, pointer and kind.
func DiffTools(old, new []manifest.Tool, opt ToolOptions) []Change {
	if opt.Classifier == nil {
		opt.Classifier = classify.Default()
	}
	var out []Change
	oldBy, oldDup := index(old)
	newBy, newDup := index(new)
	for _, n := range oldDup {
		out = append(out, Change{Name: n, Kind: ToolDuplicateName, Direction: Neutral, Severity: "high", Pointer: "",
			Detail: "the old list has two tools with this name; only the first is compared"})
	}
	for _, n := range newDup {
		out = append(out, Change{Name: n, Kind: ToolDuplicateName, Direction: Neutral, Severity: "high", Pointer: "",
			Detail: "the new list has two tools with this name: which one a client calls is undefined"})
	}
	out = append(out, nameChanges(new, oldBy, opt.Classifier)...)
	var removed, added []*manifest.Tool
	for i := range old {
		t := &old[i]
		if newBy[t.Name] == nil && oldBy[t.Name] == t {
			removed = append(removed, t)
		}
	}
	for i := range new {
		t := &new[i]
		if newBy[t.Name] != t {
			continue
		}
		if o := oldBy[t.Name]; o != nil {
			if o.Equivalent(t) && !t.MayReferOut() {
				// Equivalent (nothing a diff compares can differ)
				// and no external reference (whose records an
				// unchanged tool has too): nothing to diff
				// (TestSameBytesNoChanges).
				continue
			}
			out = append(out, DiffTool(o, t, opt)...)
		} else {
			added = append(added, t)
		}
	}
	// Renames: a removed and an added tool whose projections match apart
	// from the name.
	matched := map[*manifest.Tool]bool{}
	for _, a := range added {
		for _, r := range removed {
			if matched[r] || !sameApartFromName(r, a) {
				continue
			}
			matched[r], matched[a] = true, true
			out = append(out, Change{Name: a.Name, Kind: ToolRenameSuspected, Direction: Neutral, Severity: "medium",
				// Quoted in ASCII: a look-alike rename ("delete_file" to
				// one with a Cyrillic е) must not read as no rename at all.
				Detail: safetext.QuoteASCII(r.Name) + " was removed and " + safetext.QuoteASCII(a.Name) + " added with the same description, schemas and annotations"})
			break
		}
	}
	for _, a := range added {
		if matched[a] {
			continue
		}
		sev := "medium"
		detail := "new tool"
		if c := opt.Classifier.Classify(a.Name); c.Privileged {
			sev = "high"
			detail = "new privileged tool (" + c.ActionClass + ")"
		}
		out = append(out, Change{Name: a.Name, Kind: ToolAdded, Direction: Widening, Severity: sev, Detail: detail})
		out = append(out, externalRefs(a, opt.Schema.Refs)...)
	}
	for _, r := range removed {
		if matched[r] {
			continue
		}
		sev := "low"
		if opt.Classifier.Classify(r.Name).Privileged {
			sev = "medium"
		}
		out = append(out, Change{Name: r.Name, Kind: ToolRemoved, Direction: Narrowing, Severity: sev, Detail: "tool no longer served"})
	}
	// The tool-level changes made here (added, renamed, name checks) follow
	// capability like DiffTool's: by the new definition's parameters.
	capsOf := map[string][]Capability{}
	for i := range out {
		c := &out[i]
		t := newBy[c.Name]
		if t == nil || c.SeverityRaised != nil || noRaise[c.Kind] || c.Direction == Narrowing || raisedSeverity[c.Severity] == "" {
			continue
		}
		caps, ok := capsOf[c.Name]
		if !ok {
			v := t.Value()
			caps = Capabilities(manifest.Project(v).InputSchema, schemaPointer(v, "inputSchema", "input_schema"))
			capsOf[c.Name] = caps
		}
		RaiseForCapabilities(out[i:i+1], caps)
	}
	Sort(out)
	return out
}

// nameChanges reports the names of the new list that the name check
// (package toolname) flags, when the old list did not already have them:
// a name outside the safe set, and every name of a group of look-alikes
// with a new name in it. A name the old list had is not a change. The
// detail gives code points as U+XXXX and never quotes a name.
func nameChanges(new []manifest.Tool, oldBy map[string]*manifest.Tool, c *classify.Classifier) []Change {
	names := make([]string, len(new))
	for i := range new {
		names[i] = new[i].Name
	}
	res := toolname.Check(names)
	var out []Change
	for _, u := range res.Unsafe {
		if oldBy[u.Name] != nil {
			continue
		}
		sev := "medium"
		if c.Classify(u.Name).Privileged {
			sev = "high"
		}
		out = append(out, Change{Name: u.Name, Kind: ToolNameUnsafe, Pointer: "/name", Direction: Neutral, Severity: sev, Detail: u.Describe()})
	}
	for _, g := range res.Ambiguous {
		fresh, priv := false, false
		for _, n := range g.Names {
			if oldBy[n] == nil {
				fresh = true
			}
			if c.Classify(n).Privileged {
				priv = true
			}
		}
		if !fresh {
			continue
		}
		sev := "medium"
		if priv {
			sev = "high"
		}
		for _, n := range g.Names {
			out = append(out, Change{Name: n, Kind: ToolNamesAmbiguous, Pointer: "/name", Direction: Neutral, Severity: sev, Detail: g.Describe()})
		}
	}
	return out
}

func index(tools []manifest.Tool) (map[string]*manifest.Tool, []string) {
	by := make(map[string]*manifest.Tool, len(tools))
	var dup []string
	for i := range tools {
		t := &tools[i]
		if _, ok := by[t.Name]; ok {
			dup = append(dup, t.Name)
			continue
		}
		by[t.Name] = t
	}
	return by, dup
}

// sameApartFromName: the four fields have the same canonical bytes (the
// same field digests).
func sameApartFromName(a, b *manifest.Tool) bool {
	return a.FieldDigests() == b.FieldDigests()
}

// DiffTool compares two definitions of the same tool.
func DiffTool(o, n *manifest.Tool, opt ToolOptions) []Change {
	name := n.Name
	ov, nv := o.Value(), n.Value()
	op, np := manifest.Project(ov), manifest.Project(nv)
	var out []Change
	descSame := canonEqual(op.Description, np.Description)
	if !descSame {
		out = append(out, Change{Name: name, Kind: DescriptionChanged, Pointer: "/description", Direction: Neutral, Severity: "medium",
			Detail: WordDiff(textOf(op.Description), textOf(np.Description), 360)})
	}

	// Input schema.
	inPtr := schemaPointer(nv, "inputSchema", "input_schema")
	if canonEqual(op.InputSchema, np.InputSchema) {
		out = append(out, presentRefs(name, inPtr, np.InputSchema, opt.Schema.Refs)...)
	} else {
		changes := DiffSchema(name, inPtr, op.InputSchema, np.InputSchema, opt.Schema)
		if len(changes) == 0 {
			changes = []Change{{Name: name, Kind: KeywordUnmodeled, Pointer: inPtr, Direction: Neutral, Severity: "medium",
				Detail: "the input schema's canonical bytes changed but no modeled keyword did"}}
			changes = append(changes, presentRefs(name, inPtr, np.InputSchema, opt.Schema.Refs)...)
		}
		out = append(out, changes...)
		out = append(out, stableDescriptionDrift(name, inPtr, descSame, changes)...)
	}

	// Output schema.
	outPtr := schemaPointer(nv, "outputSchema", "output_schema")
	oOut, nOut := present(op.OutputSchema), present(np.OutputSchema)
	switch {
	case !oOut && nOut:
		out = append(out, Change{Name: name, Kind: OutputSchemaAdded, Pointer: outPtr, Direction: Neutral, Severity: "low", Detail: "the tool now declares its structured output"})
		out = append(out, refChanges(ExternalRefIntroduced, name, outPtr, np.OutputSchema, opt.Schema.Refs)...)
	case oOut && !nOut:
		out = append(out, Change{Name: name, Kind: OutputSchemaRemoved, Pointer: schemaPointer(ov, "outputSchema", "output_schema"), Direction: Widening, Severity: "medium",
			Detail: "the tool no longer declares its output: it may return anything"})
	case oOut && nOut && canonEqual(op.OutputSchema, np.OutputSchema):
		out = append(out, presentRefs(name, outPtr, np.OutputSchema, opt.Schema.Refs)...)
	case oOut && nOut:
		so := opt.Schema
		so.Output = true
		changes := DiffSchema(name, outPtr, op.OutputSchema, np.OutputSchema, so)
		if len(changes) == 0 {
			changes = []Change{{Name: name, Kind: OutputSchemaChanged, Pointer: outPtr, Direction: Neutral, Severity: "low",
				Detail: "the output schema's canonical bytes changed but no modeled keyword did"}}
			changes = append(changes, presentRefs(name, outPtr, np.OutputSchema, opt.Schema.Refs)...)
		}
		out = append(out, changes...)
	}

	out = append(out, diffAnnotations(name, op.Annotations, np.Annotations)...)
	out = append(out, precisionChanges(name, ov, nv)...)

	out = append(out, memberChanges(name, ov, nv)...)
	// Severity follows capability: a tool that takes a command, code, a
	// URL, a path ... on either side has every change graded one step up.
	// An unchanged tool has nothing to grade: its capabilities (pattern
	// matches over every parameter) are not computed.
	if len(out) > 0 {
		RaiseForCapabilities(out, toolCapabilities(op.InputSchema, np.InputSchema,
			schemaPointer(ov, "inputSchema", "input_schema"), inPtr))
	}
	return out
}

// schemaPointer is the pointer of a schema member of the tool object t:
// the snake_case spelling when only it is there.
func schemaPointer(t jcs.Value, camel, snake string) string {
	if _, ok := t.Get(camel); !ok {
		if _, ok := t.Get(snake); ok {
			return "/" + snake
		}
	}
	return "/" + camel
}

func textOf(v jcs.Value) string {
	if !v.Valid() || v.Kind() == jcs.Null {
		return ""
	}
	if v.Kind() == jcs.String {
		return v.Str()
	}
	return string(v.Canonical())
}

// NotationOnly reports whether cs is not empty and every change in it is
// notation (schema_notation_changed): schemas spelled differently that
// accept exactly the same instances and carry the same annotations. Such
// changes need no review.
func NotationOnly(cs []Change) bool {
	for _, c := range cs {
		if c.Kind != SchemaNotationChanged {
			return false
		}
	}
	return len(cs) > 0
}

// refTemplates are the two records an external $ref can give.
var refTemplates = map[string]Change{
	ExternalRefPresent: {Kind: ExternalRefPresent, Direction: Neutral, Severity: "medium",
		Detail: "the schema refers to a document outside the manifest; its effective shape is whatever that document says"},
	ExternalRefIntroduced: {Kind: ExternalRefIntroduced, Direction: Widening, Severity: "high",
		Detail: "a $ref to a document outside the manifest: the effective schema is registry-controlled and unpinned"},
}

// refChanges reports every external $ref of schema as kind, judged
// against pins (nil: no trust record).
func refChanges(kind, name, base string, schema jcs.Value, pins *RefPins) []Change {
	if !schema.Valid() || !manifest.SchemaMayReferOut(schema) {
		return nil
	}
	var out []Change
	for _, r := range newSchSide(schema).externalRefs() {
		c := refTemplates[kind]
		c.Name, c.Pointer = name, base+r.ptr
		pins.judge(&c, r)
		out = append(out, c)
	}
	return out
}

func presentRefs(name, base string, schema jcs.Value, pins *RefPins) []Change {
	return refChanges(ExternalRefPresent, name, base, schema, pins)
}

// externalRefs reports every external $ref of a tool that is new.
func externalRefs(t *manifest.Tool, pins *RefPins) []Change {
	if !t.MayReferOut() {
		return nil
	}
	v := t.Value()
	p := manifest.Project(v)
	out := refChanges(ExternalRefIntroduced, t.Name, schemaPointer(v, "inputSchema", "input_schema"), p.InputSchema, pins)
	return append(out, refChanges(ExternalRefIntroduced, t.Name, schemaPointer(v, "outputSchema", "output_schema"), p.OutputSchema, pins)...)
}

func diffAnnotations(name string, o, n jcs.Value) []Change {
	var out []Change
	get := func(v jcs.Value, k string) jcs.Value {
		if !v.Valid() || v.Kind() != jcs.Object {
			return jcs.Value{}
		}
		x, _ := v.Get(k)
		return x
	}
	for _, h := range hintDefaults {
		ov, nv := get(o, h.key), get(n, h.key)
		if canonEqual(ov, nv) {
			continue
		}
		ob, oOK := hintValue(ov, h.def)
		nb, nOK := hintValue(nv, h.def)
		ptr := "/annotations/" + h.key
		if !oOK || !nOK {
			out = append(out, Change{Name: name, Kind: KeywordUnmodeled, Pointer: ptr, Direction: Neutral, Severity: "medium",
				Detail: "a hint that is not a boolean changed"})
			continue
		}
		if ob == nb {
			continue // e.g. absent → the default value written out
		}
		weakened := nb == h.weakerIsTrue
		// An absent hint is its default, and is said to be one.
		c := Change{Name: name, Pointer: ptr, Detail: fmt.Sprintf("%s %s → %s", h.key, hintText(ov, ob), hintText(nv, nb))}
		if weakened {
			c.Kind, c.Direction, c.Severity = AnnotationHintWeakened, Widening, "medium"
			if h.key == "destructiveHint" || h.key == "readOnlyHint" {
				c.Severity = "high"
			}
		} else {
			// A reassuring claim breaks no caller, but it is what lets a
			// client auto-approve the tool: neutral, and worth a look.
			c.Kind, c.Direction, c.Severity = AnnotationHintStrengthened, Neutral, "medium"
		}
		// destructiveHint and idempotentHint mean something only when the
		// tool may modify its environment (readOnlyHint false): while it
		// claims to be read-only on both sides, they are shown as
		// meaningless and graded low.
		if HintMeaningless(h.key, o, n) {
			c.Direction, c.Severity = Neutral, "low"
			c.Detail += " (meaningless while readOnlyHint is true: a read-only tool modifies nothing)"
		}
		out = append(out, c)
	}
	if ot, nt := get(o, "title"), get(n, "title"); !canonEqual(ot, nt) {
		out = append(out, Change{Name: name, Kind: TitleChanged, Pointer: "/annotations/title", Direction: Neutral, Severity: "low",
			Detail: WordDiff(textOf(ot), textOf(nt), 160)})
	}
	// Other annotation members.
	seen := map[string]bool{"title": true}
	for _, h := range hintDefaults {
		seen[h.key] = true
	}
	for _, v := range []jcs.Value{o, n} {
		if !v.Valid() || v.Kind() != jcs.Object {
			continue
		}
		for _, k := range v.Keys() {
			if seen[k] {
				continue
			}
			seen[k] = true
			if !canonEqual(get(o, k), get(n, k)) {
				out = append(out, Change{Name: name, Kind: KeywordUnmodeled, Pointer: jcs.PointerJoin("/annotations", k), Direction: Neutral, Severity: "low",
					Detail: "an annotation outside the MCP hints changed"})
			}
		}
	}
	notObject := func(v jcs.Value) bool { return present(v) && v.Kind() != jcs.Object }
	if len(out) == 0 && !canonEqual(o, n) && (notObject(o) || notObject(n)) {
		// annotations replaced by a non-object (or the reverse).
		out = append(out, Change{Name: name, Kind: KeywordUnmodeled, Pointer: "/annotations", Direction: Neutral, Severity: "medium",
			Detail: "annotations changed shape"})
	}
	return out
}

// hintText shows a hint's value, or "default (X)" when it is absent.
func hintText(v jcs.Value, b bool) string {
	if !v.Valid() || v.Kind() == jcs.Null {
		return fmt.Sprintf("default (%t)", b)
	}
	return fmt.Sprint(b)
}

// readOnly reports whether annotations claim readOnlyHint true.
func readOnly(a jcs.Value) bool {
	if !a.Valid() || a.Kind() != jcs.Object {
		return false
	}
	v, ok := a.Get("readOnlyHint")
	return ok && v.Kind() == jcs.True
}

func hintValue(v jcs.Value, def bool) (bool, bool) {
	if !v.Valid() || v.Kind() == jcs.Null {
		return def, true
	}
	switch v.Kind() {
	case jcs.True:
		return true, true
	case jcs.False:
		return false, true
	}
	return false, false
}

var sevRank = map[string]int{"high": 3, "medium": 2, "low": 1}

// SeverityRank orders change severities (high 3, medium 2, low 1).
func SeverityRank(s string) int { return sevRank[s] }

// Sort orders changes: tools with the most severe change first, then by
// tool name; within a tool, most severe first, then pointer and kind.
func Sort(cs []Change) {
	worst := map[string]int{}
	for _, c := range cs {
		if r := sevRank[c.Severity]; r > worst[c.Name] {
			worst[c.Name] = r
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if worst[a.Name] != worst[b.Name] {
			return worst[a.Name] > worst[b.Name]
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if sevRank[a.Severity] != sevRank[b.Severity] {
			return sevRank[a.Severity] > sevRank[b.Severity]
		}
		if a.Pointer != b.Pointer {
			return a.Pointer < b.Pointer
		}
		return a.Kind < b.Kind
	})
}
