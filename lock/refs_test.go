package lock

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

const refTools = `[{"name":"lookup","description":"Look up a record.","inputSchema":{"type":"object","properties":{"rec":{"$ref":"https://schemas.example.com/rec.json#/$defs/rec"}}}},
 {"name":"plain","description":"No refs.","inputSchema":{"type":"object"}}]`

func refServer(t *testing.T, profile string) *Server {
	t.Helper()
	tl, err := manifest.ParseToolList([]byte(refTools))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer("refs", Source{URL: "https://mcp.example/mcp"}, profile, manifest.Identity{Endpoint: "https://mcp.example/mcp"}, nil, tl.Tools, classify.Default(), alice)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A lock with pinned refs round-trips byte for byte; re-pinning one
// records the old and new digest in the history.
func TestRefsRoundTrip(t *testing.T) {
	s := refServer(t, ProfileFailClosed)
	n := int64(120)
	a, b := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	s.PinRef(Ref{URL: "https://schemas.example.com/rec.json", SHA256: a, Bytes: &n, By: alice.By, At: alice.At}, alice)
	s.PinRef(Ref{URL: "https://schemas.example.com/other.json", SHA256: b, By: alice.By, At: alice.At, FromFile: true}, alice)
	ev := s.PinRef(Ref{URL: "https://schemas.example.com/rec.json", SHA256: b, Bytes: &n, By: "bob", At: alice.At}, Approval{By: "bob", At: alice.At})
	if ev.From != a || ev.To != b || ev.Reason != "https://schemas.example.com/rec.json" || ev.Action != ActionRefPinned {
		t.Errorf("re-pin event %+v", ev)
	}
	l := &Lock{}
	if err := l.Add(s); err != nil {
		t.Fatal(err)
	}
	out := l.Marshal()
	l2, err := Parse(out, "x")
	if err != nil {
		t.Fatal(err)
	}
	s2 := l2.Server("refs")
	if len(s2.Refs) != 2 || s2.Refs[0].URL != "https://schemas.example.com/other.json" || !s2.Refs[0].FromFile || s2.Ref("https://schemas.example.com/rec.json").SHA256 != b || *s2.Ref("https://schemas.example.com/rec.json").Bytes != 120 {
		t.Errorf("refs %+v", s2.Refs)
	}
	if !bytes.Equal(out, l2.Marshal()) {
		t.Error("not canonical")
	}
	if got := s2.RefPins(); len(got) != 2 || got["https://schemas.example.com/rec.json"] != b {
		t.Errorf("RefPins %v", got)
	}
	// A ref pinned twice is refused with its pointer.
	dup := bytes.Replace(out, []byte(`"url":"https://schemas.example.com/other.json"`), []byte(`"url":"https://schemas.example.com/rec.json"`), 1)
	if _, err := Parse(dup, "x"); err == nil || !strings.Contains(err.Error(), "/refs/1/url") {
		t.Errorf("duplicate ref: %v", err)
	}
	// A URL not in the form a $ref is matched in is refused with its
	// pointer: it would never match.
	for bad, want := range map[string]string{
		"https://Schemas.Example.com/other.json":     "normal form",
		"https://schemas.example.com/other.json#/x":  "normal form",
		"https://schemas.example.com:443/other.json": "normal form",
		"other.json": "relative",
		"https://u:p@schemas.example.com/other.json": "user info",
	} {
		b := bytes.Replace(out, []byte(`"url":"https://schemas.example.com/other.json"`), []byte(`"url":"`+bad+`"`), 1)
		if _, err := Parse(b, "x"); err == nil || !strings.Contains(err.Error(), "/refs/") || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "u:p@") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// Check judges the tools' external $refs against the server's pins: an
// unchanged tool with an unpinned ref is a finding under fail-closed,
// clean once pinned, and a finding again when --verify-refs saw another
// document, with the URL and both digests.
func TestCheckRefs(t *testing.T) {
	s := refServer(t, ProfileFailClosed)
	tools := s.ToolValues()
	check := func(opt CheckOptions) *ServerResult {
		t.Helper()
		r, err := s.Check(served(t, s, tools, s.Identity), opt)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := check(CheckOptions{})
	if r.ExitCode != 1 || r.Status != StatusFindings || !slices.Equal(r.Pending, []string{"lookup"}) {
		t.Fatalf("unpinned under fail-closed: %+v", r)
	}
	if i := slices.IndexFunc(r.Gate.Tools, func(v toolVerdict) bool { return v.Name == "lookup" }); i < 0 || r.Gate.Tools[i].Decision != "deny" {
		t.Errorf("verdicts %+v", r.Gate.Tools)
	}
	a, b := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	s.PinRef(Ref{URL: "https://schemas.example.com/rec.json", SHA256: a, By: alice.By, At: alice.At}, alice)
	if r := check(CheckOptions{}); r.ExitCode != 0 || len(r.Pending) != 0 {
		t.Fatalf("pinned: %+v", r)
	}
	if r := check(CheckOptions{VerifiedRefs: map[string]string{"https://schemas.example.com/rec.json": a}}); r.ExitCode != 0 || len(r.Pending) != 0 {
		t.Fatalf("pinned and verified: %+v", r)
	}
	r = check(CheckOptions{VerifiedRefs: map[string]string{"https://schemas.example.com/rec.json": b}})
	if r.ExitCode != 1 || !slices.Equal(r.Pending, []string{"lookup"}) {
		t.Fatalf("document changed: %+v", r)
	}
	found := false
	for _, c := range r.Gate.StructuralChanges {
		if c.Kind == schemadiff.ExternalRefDocumentChanged && strings.Contains(c.Detail, a) && strings.Contains(c.Detail, b) && strings.Contains(c.Detail, "https://schemas.example.com/rec.json") {
			found = true
		}
	}
	if !found {
		t.Errorf("no external_ref_document_changed with both digests in %+v", r.Gate.StructuralChanges)
	}
	// Under review the unpinned ref of an approved tool is as approved,
	// a changed document is reviewable.
	s.Profile = ProfileReview
	s.Refs = nil
	if r := check(CheckOptions{}); r.ExitCode != 0 {
		t.Errorf("unpinned under review: %+v", r)
	}
	s.PinRef(Ref{URL: "https://schemas.example.com/rec.json", SHA256: a, By: alice.By, At: alice.At}, alice)
	if r := check(CheckOptions{VerifiedRefs: map[string]string{}}); r.ExitCode != 1 || !slices.Equal(r.Pending, []string{"lookup"}) {
		t.Errorf("unverified under review: %+v", r)
	}
}

// The gateway's baseline carries the pins: its list decision is Check's.
func TestBaselineCarriesRefs(t *testing.T) {
	s := refServer(t, ProfileFailClosed)
	served := &decide.Served{Tools: s.ToolValues(), Completeness: manifest.Complete, Identity: s.Identity}
	if d, _ := decide.DecideList(s.Baseline(nil), served, decide.Options{Profile: schemadiff.FailClosedProfile}).Decision("lookup"); d.Serve || d.Decision != decide.Deny {
		t.Errorf("unpinned: %+v", d)
	}
	a := "sha256:" + strings.Repeat("a", 64)
	s.PinRef(Ref{URL: "https://schemas.example.com/rec.json", SHA256: a, By: alice.By, At: alice.At}, alice)
	if d, _ := decide.DecideList(s.Baseline(nil), served, decide.Options{Profile: schemadiff.FailClosedProfile}).Decision("lookup"); !d.Serve {
		t.Errorf("pinned: %+v", d)
	}
	if d, _ := decide.DecideList(s.Baseline(map[string]string{}), served, decide.Options{Profile: schemadiff.FailClosedProfile}).Decision("lookup"); d.Serve || d.DeniedBy[0] != schemadiff.ExternalRefUnverified {
		t.Errorf("unverified: %+v", d)
	}
}
