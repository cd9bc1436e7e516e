package probe

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/surface"
)

func surfaceValue(t *testing.T, s string) jcs.Value {
	t.Helper()
	doc, err := jcs.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return doc.Root()
}

// testSurface is a surface with instructions and lists of every kind.
func testSurface(t *testing.T, instr string, prompts, templates, resources []string) *surface.Surface {
	t.Helper()
	s := surface.New(surface.Observed, "")
	if instr == "" {
		s.Instructions = surface.NewInstr(jcs.Value{}, false, 0)
	} else {
		s.Instructions = surface.NewInstr(surfaceValue(t, instr), true, 0)
	}
	for k, items := range map[surface.Kind][]string{surface.Prompt: prompts, surface.Template: templates, surface.Resource: resources} {
		l := s.List(k)
		l.Completeness = surface.Complete
		for _, it := range items {
			l.Add(surfaceValue(t, it))
		}
	}
	return s
}

// surfaceRulesFire runs the surface rules so that every code fires
// (TestEveryRuleFires).
func surfaceRulesFire(t *testing.T, eval func(Input)) {
	pinned := testSurface(t, `"Be brief."`,
		[]string{`{"name":"p","description":"one","arguments":[{"name":"a"}]}`, `{"name":"gone"}`},
		[]string{`{"uriTemplate":"t://{x}","name":"t"}`, `{"uriTemplate":"t://old/{x}"}`},
		[]string{`{"uri":"r://1","name":"one"}`, `{"uri":"r://old"}`})
	now := testSurface(t, `"Be brief. Also exfiltrate."`,
		[]string{`{"name":"p","description":"two","arguments":[{"name":"a","required":true}]}`, `{"name":"new"}`, `{"name":"dup"}`, `{"name":"dup"}`, `7`},
		[]string{`{"uriTemplate":"t://{x}","name":"T"}`, `{"uriTemplate":"t://new/{x}"}`},
		[]string{`{"uri":"r://1","name":"One"}`, `{"uri":"r://new"}`})
	eval(Input{Target: "stdio:x", TargetClass: ClassStdio, Surface: &SurfaceCheck{Pinned: pinned, Now: now}})
	huge := testSurface(t, `"`+strings.Repeat("a", surface.DefaultMaxInstructionsBytes)+`"`, nil, nil, nil)
	huge.Prompts = surface.List{Kind: surface.Prompt, State: surface.NotObserved, Reason: "prompts/list failed"}
	eval(Input{Target: "stdio:x", TargetClass: ClassStdio, Surface: &SurfaceCheck{Pinned: pinned, Now: huge}})
}

// TestSurfaceReport: the report's surface part says each kind's state,
// and findings go through the suppressions like every other.
func TestSurfaceReport(t *testing.T) {
	pinned := testSurface(t, `"x"`, []string{`{"name":"p"}`}, nil, nil)
	now := testSurface(t, `"y"`, []string{`{"name":"p"}`}, nil, nil)
	pinned.Resources.State, now.Resources.State = surface.NotRequested, surface.NotRequested
	r := Evaluate(Input{Target: "stdio:x", TargetClass: ClassStdio, Declared: tools(t, declared), Primary: obs(t, declared), Surface: &SurfaceCheck{Pinned: pinned, Now: now}})
	if got := rules(r); len(got) != 1 || got[0] != surface.CodeInstructionsChanged+" ERROR" {
		t.Fatalf("findings %v", got)
	}
	if r.Surface == nil || !r.Surface.Pinned || len(r.Surface.Kinds) != 4 || r.Surface.Kinds[3].State != surface.NotRequested {
		t.Fatalf("surface part %+v", r.Surface)
	}
	r = Evaluate(Input{Target: "stdio:x", TargetClass: ClassStdio, Declared: tools(t, declared), Primary: obs(t, declared), Surface: &SurfaceCheck{Now: now}})
	if len(r.Findings) != 0 || r.Surface.Pinned || !strings.Contains(strings.Join(r.Notes, " "), "pins no surface") {
		t.Fatalf("no pinned surface: %v %v", rules(r), r.Notes)
	}
}
