package lock

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

func served(t *testing.T, s *Server, tools []manifest.Tool, id manifest.Identity) *Served {
	t.Helper()
	tl := &manifest.ToolList{Tools: tools, Completeness: manifest.Complete}
	return &Served{Observed: manifest.BuildObserved(s.Name, tl, manifest.Complete, classify.Default()), Tools: tools, Identity: id}
}

func TestCheckCleanAndDrifted(t *testing.T) {
	l := sampleLock(t)
	s := l.Server("acme")
	r, err := s.Check(served(t, s, toolsOf(t, exampleV1), s.Identity), CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusClean || r.ExitCode != 0 || len(r.Pending) != 0 || r.Withheld {
		t.Fatalf("unchanged server: %+v", r)
	}
	r, err = s.Check(served(t, s, toolsOf(t, exampleV2), s.Identity), CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusFindings || r.ExitCode != 1 || len(r.Pending) == 0 {
		t.Fatalf("drifted server: %+v", r)
	}
	if len(r.Gate.Tools) == 0 || len(r.Gate.StructuralChanges) == 0 || r.Gate.DecisionProfile != "review" {
		t.Errorf("no decisions or changes: %+v", r.Gate)
	}
	for _, p := range r.Pending {
		i := slices.IndexFunc(r.Gate.Tools, func(v toolVerdict) bool { return v.Name == p })
		if i < 0 || r.Gate.Tools[i].Decision == "allow" {
			t.Errorf("pending %q is not a review or deny decision", p)
		}
	}
}

// An identity the lock did not approve holds the check even when every
// tool is unchanged: the gateway would withhold the server.
func TestCheckIdentity(t *testing.T) {
	l := sampleLock(t)
	s := l.Server("acme")
	id := s.Identity
	id.Endpoint = "http://127.0.0.1:9999/elsewhere"
	r, err := s.Check(served(t, s, toolsOf(t, exampleV1), id), CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 1 || !r.Withheld || r.WithheldReason != "server_identity_mismatch" {
		t.Fatalf("rebound endpoint: %+v", r)
	}
}

// A notation-only change: a finding under a plain profile; under
// auto_approve notation it does not hold the check, and the gate still
// lists its findings, suppressed with the profile's reason.
func TestCheckNotationAutoApproval(t *testing.T) {
	l := sampleLock(t)
	s := l.Server("acme")
	// The same schema with an empty "required" written out.
	tl, err := manifest.ParseToolList(notationVariant(t))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Check(served(t, s, tl.Tools, s.Identity), CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 1 || len(r.Pending) != 1 || len(r.AutoApprovable) != 0 {
		t.Fatalf("notation change without auto-approval: %+v", r)
	}
	if err := s.SetProfile(ProfileReview, []string{AutoNotation}, alice); err != nil {
		t.Fatal(err)
	}
	r, err = s.Check(served(t, s, tl.Tools, s.Identity), CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 || len(r.Pending) != 0 || len(r.AutoApprovable) != 1 {
		t.Fatalf("notation change with auto-approval: %+v", r)
	}
	if len(r.Gate.Suppressed) == 0 || r.Gate.Suppressed[0].Suppression.Reason != autoReason {
		t.Fatalf("auto-approved findings not listed: %+v", r.Gate.Suppressed)
	}
}

// A change that validates the same (a $comment, examples, another
// dialect no keyword reads differently) is auto-approved as notation is:
// the gateway serves such a tool under every profile, and lock check
// must not hold on it where the profile approves notation.
func TestCheckValidatesSameAutoApproval(t *testing.T) {
	l := sampleLock(t)
	s := l.Server("acme")
	var doc map[string]any
	if err := json.Unmarshal(notationVariant(t), &doc); err != nil {
		t.Fatal(err)
	}
	tools := doc["result"].(map[string]any)["tools"].([]any)
	is := tools[0].(map[string]any)["inputSchema"].(map[string]any)
	is["$comment"] = "generated"
	is["examples"] = []any{map[string]any{}}
	b, _ := json.Marshal(doc)
	tl, err := manifest.ParseToolList(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetProfile(ProfileReview, []string{AutoNotation}, alice); err != nil {
		t.Fatal(err)
	}
	r, err := s.Check(served(t, s, tl.Tools, s.Identity), CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 || len(r.Pending) != 0 || len(r.AutoApprovable) == 0 {
		t.Fatalf("a change that validates the same under auto_approve notation: exit %d, pending %v, auto %v", r.ExitCode, r.Pending, r.AutoApprovable)
	}
}

func TestAggregate(t *testing.T) {
	mk := func(codes ...int) []*ServerResult {
		var rs []*ServerResult
		for i, c := range codes {
			rs = append(rs, &ServerResult{Name: string(rune('a' + i)), ExitCode: c, Status: StatusFor(c)})
		}
		return rs
	}
	for _, c := range []struct {
		codes []int
		want  int
	}{{nil, 0}, {[]int{0, 0}, 0}, {[]int{0, 3}, 3}, {[]int{3, 0}, 3}, {[]int{0, 3, 1}, 1}, {[]int{1, 0}, 1}} {
		if got := Aggregate(mk(c.codes...)); got != c.want {
			t.Errorf("Aggregate(%v) = %d, want %d", c.codes, got, c.want)
		}
	}
	rep := NewCheckReport("x.lock", mk(0, 3, 1, 0))
	if rep.Servers[0].ExitCode != 1 || rep.Servers[1].ExitCode != 3 || rep.ExitCode != 1 || rep.Counts[StatusClean] != 2 {
		t.Errorf("report not worst first: %+v", rep)
	}
}

type toolVerdict = schemadiff.ToolVerdict

// notationVariant is the v1 list with the first tool's input schema
// respelled: "type" as a one-element array, which accepts the same
// instances.
func notationVariant(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(exampleV1)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	tools := doc["result"].(map[string]any)["tools"].([]any)
	for _, x := range tools {
		is := x.(map[string]any)["inputSchema"].(map[string]any)
		if is["type"] == "object" {
			is["type"] = []any{"object"}
			out, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	t.Fatal("no object schema in the example")
	return nil
}
