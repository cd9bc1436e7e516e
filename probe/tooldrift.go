package probe

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

var annotationKinds = map[string]bool{schemadiff.AnnotationHintWeakened: true, schemadiff.AnnotationHintStrengthened: true}

// toolChanges are one served tool's change records, sorted by what each
// finding reads: the input schema, the output schema (graded for the agent
// that reads the result), planner-facing text (the tool's description, a
// parameter's description or title), hints, and members outside the
// digest projection (information).
type toolChanges struct {
	schema, output, text, hints, info []schemadiff.Change
}

func sortChanges(r *Result, name string, changes []schemadiff.Change) toolChanges {
	var t toolChanges
	for _, c := range changes {
		switch {
		case annotationKinds[c.Kind]:
			t.hints = append(t.hints, c)
		case schemadiff.Informational(c):
			t.info = append(t.info, c)
		case c.Kind == schemadiff.SchemaDriftStableDescription || c.Kind == schemadiff.ExternalRefPresent:
			// The signal restates the schema's records (the escalation
			// reads it); a reference present on both sides is no drift.
		case c.Kind == schemadiff.NumberBeyondPrecisionChanged:
			// Not graded (the diff does not say what the number bounds),
			// so not "without breaking callers": said as it is.
			r.Warnings = append(r.Warnings, "served tool "+safetext.Quote(name)+" differs from the declared one: "+schemadiff.Sentence(c, safetext.Quote))
		case schemadiff.IsOutput(c):
			t.output = append(t.output, c)
		case c.Kind == schemadiff.DescriptionChanged || c.Kind == schemadiff.TitleChanged && c.Pointer != "/annotations/title":
			t.text = append(t.text, c)
		case c.Kind == schemadiff.TitleChanged:
			// annotations.title: a display name.
		default:
			t.schema = append(t.schema, c)
		}
	}
	return t
}

// toolDrift compares one declared tool with the served one.
func toolDrift(r *Result, s *manifest.Tool, changes []schemadiff.Change, c *classify.Classifier) {
	escalation(r, s.Name, changes, c)
	t := sortChanges(r, s.Name, changes)
	if len(t.schema) > 0 {
		inputDrift(r, s.Name, t.schema)
	}
	if len(t.output) > 0 {
		outputDrift(r, s.Name, t.output)
	}
	if len(t.hints) > 0 {
		r.add("MCP-DRIFT-ANNOTATION", s.Name, "a declared hint disagrees with the served one: an agent that planned around the declared value planned wrong", "", t.hints)
	}
	if len(t.text) > 0 {
		r.add("MCP-DRIFT-DESCRIPTION", s.Name, textMessage(t.text), "", t.text)
	}
	if len(t.info) > 0 {
		var members []string
		for _, c := range t.info {
			members = append(members, strings.TrimPrefix(c.Pointer, "/"))
		}
		r.Notes = append(r.Notes, fmt.Sprintf("served tool %s: members outside the digest projection changed (%s): information, they decide nothing", safetext.Quote(s.Name), quoteList(members)))
	}
}

// inputDrift grades the changes of the input schema for callers: a
// narrowing breaks them, a widening accepts more than declared.
func inputDrift(r *Result, name string, schema []schemadiff.Change) {
	breaking, widening, same, unordered := false, false, true, false
	for _, c := range schema {
		switch {
		case c.Direction == schemadiff.Narrowing:
			breaking = true
		case c.Direction == schemadiff.Widening:
			widening = true
		case c.Kind == schemadiff.TypeChanged || c.Kind == schemadiff.ConstChanged:
			// Neutral as both at once: what callers sent before is
			// refused now (string → number), and something new accepted.
			breaking, widening = true, true
		case !schemadiff.NeedsNoReview(c) && c.Kind != schemadiff.SchemaDefaultChanged:
			unordered = true // neither a widening nor a narrowing the diff can say
		}
		if c.Kind == schemadiff.ExternalRefIntroduced {
			widening = true
		}
		if !schemadiff.NeedsNoReview(c) && c.Kind != schemadiff.SchemaDefaultChanged {
			same = false
		}
	}
	switch {
	case breaking:
		r.add("MCP-DRIFT-SCHEMA", name, fmt.Sprintf("the served schema differs in a breaking way (%s)", summarize(schema)), "", schema)
	case widening:
		r.addLevel("MCP-DRIFT-SCHEMA-COMPATIBLE", LevelWarn, name, fmt.Sprintf("the served schema accepts more than declared (%s)", summarize(schema)), "", schema)
	case unordered:
		r.addLevel("MCP-DRIFT-SCHEMA-COMPATIBLE", LevelWarn, name, fmt.Sprintf("the served schema differs in a way the structural diff cannot grade as only wider or only narrower (%s): review each change", summarize(schema)), "", schema)
	case same:
		r.addLevel("MCP-DRIFT-SCHEMA-COMPATIBLE", LevelInfo, name, fmt.Sprintf("the served schema validates the same as the declared one (%s)", summarize(schema)), "", schema)
	default:
		r.addLevel("MCP-DRIFT-SCHEMA-COMPATIBLE", LevelInfo, name, fmt.Sprintf("the served schema differs from the declared one (%s)", summarize(schema)), "", schema)
	}
}

// outputDrift grades the changes of the output schema for the agent that
// reads the result: a widening is what it may now receive unannounced; a
// narrowing (the tool returns less) is harmless. It breaks no caller and
// escalates nothing.
func outputDrift(r *Result, name string, output []schemadiff.Change) {
	for _, c := range output {
		if c.Direction == schemadiff.Widening {
			r.addLevel("MCP-DRIFT-SCHEMA-COMPATIBLE", LevelWarn, name, fmt.Sprintf("the served output schema allows more than declared (%s): the agent may now receive what it was never told of", summarize(output)), "", output)
			return
		}
	}
	r.addLevel("MCP-DRIFT-SCHEMA-COMPATIBLE", LevelInfo, name, fmt.Sprintf("the served output schema differs, and allows nothing the declared one did not (%s)", summarize(output)), "", output)
}

// textMessage says whose planner-facing text differs: the tool's
// description, a parameter's description or title.
func textMessage(text []schemadiff.Change) string {
	if len(text) == 1 && text[0].Pointer == "/description" {
		return "the served description differs from the declared one: the agent reads the served text"
	}
	var whose []string
	for _, c := range text {
		if c.Pointer == "/description" {
			whose = append(whose, "the tool's description")
			continue
		}
		what := strings.TrimSuffix(c.Kind, "_changed")
		if p := schemadiff.ParamPath(c.Pointer); p != "" {
			whose = append(whose, "the "+what+" of parameter "+safetext.Quote(safetext.Clip(p, 100)))
		} else {
			whose = append(whose, "the "+what+" at "+safetext.Quote(safetext.Clip(c.Pointer, 100)))
		}
		if len(whose) == 10 && len(text) > 10 {
			whose = append(whose, fmt.Sprintf("and %d more", len(text)-10))
			break
		}
	}
	return "the served text differs from the declared one (" + strings.Join(whose, ", ") + "): the agent reads the served text"
}

func summarize(cs []schemadiff.Change) string {
	seen := map[string]bool{}
	var kinds []string
	for _, c := range cs {
		if !seen[c.Kind] {
			seen[c.Kind] = true
			kinds = append(kinds, c.Kind)
		}
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ", ")
}

// escalationKinds are the structural-escalation signals besides every
// widening change of the input: an external $ref, identity churn.
var escalationKinds = map[string]bool{
	schemadiff.ExternalRefIntroduced: true, schemadiff.ServerEndpointRebound: true, schemadiff.PublisherKeyChanged: true,
}

// escalation reports MCP-DRIFT-ESCALATION when the structural diff of a
// served tool carries an escalation signal: a widening of its input (the
// executor now accepts a value it did not accept before: a new optional
// parameter, a widened type, enum or constraint, a dropped requirement), a
// new external $ref, identity churn, or schema drift under a stable
// description that is not a narrowing. A narrowing is a breaking change
// for callers (MCP-DRIFT-SCHEMA), not an escalation; a change that
// validates the same, a parameter's text (MCP-DRIFT-DESCRIPTION), a hint
// (MCP-DRIFT-ANNOTATION) and the output schema (what the tool returns,
// MCP-DRIFT-SCHEMA-COMPATIBLE) never escalate. ERROR on a privileged
// tool, WARN otherwise, under every profile.
func escalation(r *Result, name string, cs []schemadiff.Change, c *classify.Classifier) {
	var sig []schemadiff.Change
	widens := false
	for _, x := range cs {
		switch {
		case schemadiff.IsOutput(x) || annotationKinds[x.Kind] || schemadiff.NeedsNoReview(x):
		case x.Kind == schemadiff.SchemaDriftStableDescription:
			// It carries the direction of the changes under it.
			if x.Direction != schemadiff.Narrowing {
				sig = append(sig, x)
			}
		case escalationKinds[x.Kind] || x.Direction == schemadiff.Widening:
			sig = append(sig, x)
			widens = true
		}
	}
	if len(sig) == 0 {
		return
	}
	level, what := LevelWarn, ""
	if c.Classify(name).Privileged {
		level, what = LevelError, " on a privileged tool"
	}
	why := "the executor now accepts what the planner never saw"
	if !widens {
		why = "the executor may now accept what the planner never saw: the input schema changed in a way that is neither only a widening nor only a narrowing"
	}
	r.addLevel("MCP-DRIFT-ESCALATION", level, name, fmt.Sprintf("the served tool escalates%s: %s (%s)", what, summarize(sig), why), "", sig)
}
