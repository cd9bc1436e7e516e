package lock

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/surface"
)

func sv(t testing.TB, s string) jcs.Value {
	t.Helper()
	doc, err := jcs.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return doc.Root()
}

// servedSurface builds a surface as an observation reads it.
func servedSurface(t testing.TB, instr string, prompts ...string) *surface.Surface {
	t.Helper()
	s := surface.New(surface.NotAdvertised, "")
	s.Resources.State = surface.NotRequested
	s.Instructions = surface.NewInstr(sv(t, instr), true, 0)
	s.Prompts = surface.List{Kind: surface.Prompt, State: surface.Observed, Completeness: surface.Complete}
	for _, p := range prompts {
		s.Prompts.Add(sv(t, p))
	}
	return s
}

func surfaceLock(t *testing.T) *Lock {
	t.Helper()
	l := sampleLock(t)
	if err := l.Server("acme").PinSurface(servedSurface(t, `"Be brief."`, `{"name":"b","description":"bee"}`, `{ "name": "a" }`), alice); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSurfaceLockRoundTrip: the surface and its approvals are written in
// the canonical form, read back, and a rewrite changes no byte.
func TestSurfaceLockRoundTrip(t *testing.T) {
	l := surfaceLock(t)
	b := l.Marshal()
	for _, want := range []string{`"surface": {`, `"surface_approvals": [`, `{"kind":"instructions","digest":`, `{"kind":"prompt","key":"a","digest":`, `{"name":"a"}`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Fatalf("the lock lacks %s:\n%s", want, b)
		}
	}
	l2, err := Parse(b, "mcpdrift.lock")
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !bytes.Equal(l2.Marshal(), b) {
		t.Fatal("a no-op rewrite changed bytes")
	}
	if r := surface.Compare(l2.Server("acme").Surface, servedSurface(t, `"Be brief."`, `{"name":"a"}`, `{"name":"b","description":"bee"}`)); len(r.Changes) != 0 {
		t.Fatalf("%+v", r.Changes)
	}
	// Refused: an approval of another digest, a missing approval, an item
	// edited by hand.
	for name, edit := range map[string]func(string) string{
		"approval digest": func(s string) string {
			i := strings.Index(s, `{"kind":"prompt","key":"a","digest":"sha256:`) + len(`{"kind":"prompt","key":"a","digest":"sha256:`)
			return s[:i] + "0" + s[i+1:]
		},
		"approval missing": func(s string) string {
			return strings.Replace(s, `"surface_approvals": [`, `"surface_approvals_x": [`, 1)
		},
		"item edited": func(s string) string { return strings.Replace(s, `"description":"bee"`, `"description":"wasp"`, 1) },
	} {
		if _, err := Parse([]byte(edit(string(b))), "mcpdrift.lock"); err == nil {
			t.Errorf("%s: read", name)
		}
	}
}

// TestApproveSurface: one item at a time; removal; ambiguity refused; a
// lock without a surface starts from nothing approved.
func TestApproveSurface(t *testing.T) {
	l := surfaceLock(t)
	s := l.Server("acme")
	before := string(l.Marshal())
	now := servedSurface(t, `"Be brief. Exfiltrate."`, `{"name":"b","description":"bee, now evil"}`, `{"name":"c"}`)
	ev, err := s.ApproveSurface(now, []SurfaceRef{{Kind: surface.Prompt, Key: "b"}}, alice)
	if err != nil || len(ev) != 1 || ev[0].Kind != surface.Prompt || ev[0].Tool != "b" {
		t.Fatalf("%v %+v", err, ev)
	}
	r := surface.Compare(s.Surface, now)
	codes := ""
	for _, c := range r.Changes {
		codes += c.Code + " "
	}
	if codes != surface.CodeInstructionsChanged+" "+surface.CodePromptAdded+" "+surface.CodePromptRemoved+" " {
		t.Fatalf("after approving b: %s", codes)
	}
	if n := changedLines(before, string(l.Marshal())); n > 6 {
		t.Fatalf("approving one prompt changed %d lines", n)
	}
	if _, err := Parse(l.Marshal(), "x"); err != nil {
		t.Fatal(err)
	}
	// The rest: instructions, the added prompt, the removal.
	refs := SurfaceRefs(r.Changes)
	if len(refs) != 3 {
		t.Fatalf("refs %+v", refs)
	}
	if _, err := s.ApproveSurface(now, refs, alice); err != nil {
		t.Fatal(err)
	}
	if r := surface.Compare(s.Surface, now); len(r.Changes) != 0 {
		t.Fatalf("after approving all: %+v", r.Changes)
	}
	if _, err := s.ApproveSurface(now, []SurfaceRef{{Kind: surface.Prompt, Key: "nope"}}, alice); err == nil {
		t.Fatal("an item neither served nor pinned was approved")
	}
	dup := servedSurface(t, `"x"`, `{"name":"d"}`, `{"name":"d","description":"shadow"}`)
	if _, err := s.ApproveSurface(dup, []SurfaceRef{{Kind: surface.Prompt, Key: "d"}}, alice); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("an ambiguous prompt: %v", err)
	}
	// A server that pinned no surface: approving the instructions pins
	// them, and leaves the rest unapproved.
	z := l.Server("zeta")
	if _, err := z.ApproveSurface(now, []SurfaceRef{{Kind: surface.Instructions}}, alice); err != nil {
		t.Fatal(err)
	}
	if r := surface.Compare(z.Surface, now); len(r.Changes) != 2 {
		t.Fatalf("%+v", r.Changes)
	}
	if _, err := Parse(l.Marshal(), "x"); err != nil {
		t.Fatal(err)
	}
}

// TestCheckSurface: a changed surface is a finding of the check, and
// under fail-closed changed instructions withhold the server.
func TestCheckSurface(t *testing.T) {
	l := surfaceLock(t)
	s := l.Server("acme")
	tools := toolsOf(t, exampleV1)
	obs := manifest.BuildObserved("acme", &manifest.ToolList{Tools: tools, Completeness: manifest.Complete}, manifest.Complete, classify.Default())
	sv := &Served{Observed: obs, Tools: tools, Identity: s.Identity, Surface: servedSurface(t, `"Be brief."`, `{"name":"a"}`, `{"name":"b","description":"bee"}`)}
	res, err := s.Check(sv, CheckOptions{})
	if err != nil || res.ExitCode != 0 || res.Surface == nil || len(res.Surface.Changes) != 0 {
		t.Fatalf("clean: %v %+v %+v", err, res, res.Surface)
	}
	sv.Surface = servedSurface(t, `"Exfiltrate."`, `{"name":"a"}`, `{"name":"b","description":"bee"}`)
	res, _ = s.Check(sv, CheckOptions{})
	if res.ExitCode != 1 || res.Withheld || len(res.Surface.Pending) != 1 || res.Surface.Pending[0] != "the instructions" {
		t.Fatalf("review: %+v %+v", res, res.Surface)
	}
	s.Profile = ProfileFailClosed
	res, _ = s.Check(sv, CheckOptions{})
	if !res.Withheld || res.WithheldReason != "server_instructions_changed" {
		t.Fatalf("fail-closed: %+v", res)
	}
}
