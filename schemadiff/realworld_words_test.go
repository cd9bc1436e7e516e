package schemadiff_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Issue 30's rules, held on every pair of the real-world corpus (the
// checks that verify the issue use pairs its text does not name, so each
// rule is checked as a class, and on the pair the issue names).

// realworldCompare diffs a corpus pair under a profile.
func realworldCompare(t *testing.T, s realworldServer, p *schemadiff.DecisionProfile) *schemadiff.Report {
	t.Helper()
	return schemadiff.Compare(loadRealworld(t, s.name, s.old), loadRealworld(t, s.name, s.new), p, schemadiff.ToolOptions{Classifier: classify.Default()})
}

// Item 2: a change that validates the same is not a reason to review. A
// tool whose every change needs no review (a dialect no keyword of its
// schemas reads differently, an annotation validation never reads, a
// member outside the digest projection, notation) is allowed under both
// profiles and says why; a tool with any other change is not. Members
// outside the projection never decide. context7 3.2.5 → 4.1.1 changed
// only $schema (draft-07 → 2020-12) and execution: REVIEW before (exit 1),
// DENY under fail-closed (schema_drift_stable_description).
func TestRealworldValidatesSameAllows(t *testing.T) {
	for _, s := range realworldServers(t) {
		t.Run(s.name, func(t *testing.T) {
			for _, p := range []*schemadiff.DecisionProfile{schemadiff.ReviewProfile, schemadiff.FailClosedProfile} {
				r := realworldCompare(t, s, p)
				by := map[string][]schemadiff.Change{}
				for _, c := range r.Changes {
					by[c.Name] = append(by[c.Name], c)
				}
				for _, v := range r.Tools {
					cs := by[v.Name]
					neutral := len(cs) > 0 && !slices.ContainsFunc(cs, func(c schemadiff.Change) bool { return !schemadiff.NeedsNoReview(c) })
					switch {
					case neutral && (v.Decision != schemadiff.Allow || v.Reason == ""):
						t.Errorf("%s: %q: every change needs no review, decided %s (%q) under %s", s.name, v.Name, v.Decision, v.Reason, p.Name)
					case !neutral && v.Status != schemadiff.StatusUnchanged && v.Decision == schemadiff.Allow:
						t.Errorf("%s: %q: a change that needs review is allowed under %s", s.name, v.Name, p.Name)
					}
					for _, c := range cs {
						if schemadiff.Informational(c) && slices.Contains(v.DeniedBy, c.Kind) {
							t.Errorf("%s: %q: information decided: %v", s.name, v.Name, v.DeniedBy)
						}
						// The seed's refusal is for a schema that widens
						// or narrows validation.
						if c.Kind == schemadiff.SchemaDriftStableDescription && !slices.ContainsFunc(cs, func(x schemadiff.Change) bool {
							return strings.HasPrefix(x.Pointer, "/inputSchema") && x.Kind != schemadiff.SchemaDriftStableDescription && !schemadiff.NeedsNoReview(x) &&
								x.Kind != schemadiff.DescriptionChanged && x.Kind != schemadiff.TitleChanged && x.Kind != schemadiff.SchemaDefaultChanged
						}) {
							t.Errorf("%s: %q: schema drift under a stable description over changes that validate the same", s.name, v.Name)
						}
					}
				}
			}
		})
	}
	s := realworldServer{name: "context7-3.2.5", old: "3.2.5", new: "4.1.1"}
	for _, p := range []*schemadiff.DecisionProfile{schemadiff.ReviewProfile, schemadiff.FailClosedProfile} {
		r := realworldCompare(t, s, p)
		if r.Decision != schemadiff.Allow || r.DecisionReason != schemadiff.ReasonValidatesSame || r.ExitCode != schemadiff.ExitNoChange {
			t.Errorf("context7 3.2.5 → 4.1.1 under %s: %s (%q), exit %d; want allow, validates the same, exit 0", p.Name, r.Decision, r.DecisionReason, r.ExitCode)
		}
		for _, v := range r.Tools {
			if v.Decision != schemadiff.Allow || v.Reason != schemadiff.ReasonValidatesSame {
				t.Errorf("context7 under %s: %q %s (%q)", p.Name, v.Name, v.Decision, v.Reason)
			}
		}
		kinds := map[string]int{}
		for _, c := range r.Changes {
			kinds[c.Kind]++
		}
		if kinds[schemadiff.SchemaDialectChanged] != 2 || kinds[schemadiff.ToolMemberChanged] != 2 || len(r.Changes) != 4 {
			t.Errorf("context7 changes: %v", kinds)
		}
	}
}

// Item 1: a parameter's description or title is planner-facing text,
// reported with the description family's kind and severity, never as a
// schema annotation; schema drift under a stable description carries the
// direction of the changes under it. playwright 0.0.70 → 0.0.86:
// browser_console_messages only edited a parameter's description (a LOW
// schema_drift_stable_description before), browser_click, browser_hover,
// browser_select_option and browser_type only narrowed.
func TestRealworldParameterTextAndDriftDirection(t *testing.T) {
	for _, s := range realworldServers(t) {
		r := realworldCompare(t, s, nil)
		for _, c := range r.Changes {
			last := c.Pointer[strings.LastIndexByte(c.Pointer, '/')+1:]
			if c.Kind == schemadiff.SchemaAnnotationChanged && (last == "description" || last == "title" || last == "default") {
				t.Errorf("%s: %q: %s at %s is not text or a default", s.name, c.Name, c.Kind, c.Pointer)
			}
			if c.Kind == schemadiff.DescriptionChanged && c.Severity != "medium" && c.Severity != "high" && !schemadiff.IsOutput(c) {
				t.Errorf("%s: %q: a description graded %s", s.name, c.Name, c.Severity)
			}
		}
	}
	r := realworldCompare(t, realworldServer{name: "playwright-0.0.70", old: "0.0.70", new: "0.0.86"}, nil)
	drift := map[string]schemadiff.Direction{}
	for _, c := range r.Changes {
		if c.Kind == schemadiff.SchemaDriftStableDescription {
			drift[c.Name] = c.Direction
		}
	}
	for _, n := range []string{"browser_click", "browser_hover", "browser_select_option", "browser_type"} {
		if drift[n] != schemadiff.Narrowing {
			t.Errorf("playwright %s: schema drift %q, want narrowing", n, drift[n])
		}
	}
	if d, ok := drift["browser_console_messages"]; ok {
		t.Errorf("playwright browser_console_messages: schema drift (%s) over a parameter's description", d)
	}
	found := false
	for _, c := range r.Changes {
		if c.Name == "browser_console_messages" {
			found = found || c.Kind == schemadiff.DescriptionChanged && c.Pointer == "/inputSchema/properties/filename/description" &&
				strings.HasPrefix(schemadiff.Sentence(c, safetext.Quote), `description of parameter "filename" changed: `)
		}
	}
	if !found {
		t.Error("playwright browser_console_messages: no description_changed of parameter \"filename\"")
	}
}

// Item 3: an output schema is not a parameter. Every change under
// /outputSchema is named as output, graded for the agent that reads the
// result (a narrowing is low and harmless), never raised by the parameters
// the tool takes, and never restated as schema drift of the input.
// filesystem 2026.1.14 → 2026.8.31 reported `enum of parameter
// "content[].type" narrowed` [severity raised: the tool takes a path
// parameter].
func TestRealworldOutputIsNotAParameter(t *testing.T) {
	for _, s := range realworldServers(t) {
		r := realworldCompare(t, s, nil)
		for _, c := range r.Changes {
			if !schemadiff.IsOutput(c) {
				continue
			}
			sentence := schemadiff.Sentence(c, safetext.Quote)
			if strings.Contains(sentence, "parameter") {
				t.Errorf("%s: %q: an output change named as a parameter: %s", s.name, c.Name, sentence)
			}
			if c.SeverityRaised != nil {
				t.Errorf("%s: %q: an output change raised by what the tool takes: %s", s.name, c.Name, sentence)
			}
			if c.Direction == schemadiff.Narrowing && (c.Severity != "low" || !strings.Contains(sentence, "harmless")) {
				t.Errorf("%s: %q: an output narrowing graded %s: %s", s.name, c.Name, c.Severity, sentence)
			}
		}
	}
	r := realworldCompare(t, realworldServer{name: "filesystem-2026.1.14", old: "2026.1.14", new: "2026.8.31"}, nil)
	want := map[string]bool{
		`enum of output field "content[].type" narrowed ("enum values removed: \"blob\""): narrowing (harmless: the tool returns less)`:        true,
		`composition of output field "content[]" widened ("anyOf branch added (object)"): widening (the agent may now receive it unannounced)`: true,
	}
	for _, c := range r.Changes {
		if c.Name == "read_media_file" && schemadiff.IsOutput(c) {
			s := schemadiff.Sentence(c, safetext.Quote)
			if !want[s] {
				t.Errorf("filesystem read_media_file: %s", s)
			}
			delete(want, s)
		}
	}
	for s := range want {
		t.Errorf("filesystem read_media_file: missing %s", s)
	}
}
