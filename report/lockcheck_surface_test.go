package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/surface"
)

// TestLockCheckSARIFSurface: a lock check's SARIF carries each surface
// change of a server as a result (a code-scanning gate sees a rewritten
// instructions string), a suppressed one marked accepted, and the
// server's text escaped.
func TestLockCheckSARIFSurface(t *testing.T) {
	served := "sha256:" + strings.Repeat("a", 64)
	g := &gate.Report{Schema: "x", ServerID: "docs", Verdict: "drift", Mode: "granular", ExitCode: 1, ObservedManifestDigest: &served}
	sr := &lock.SurfaceResult{Pinned: true,
		Changes: []surface.Change{
			{Code: "MCP-SURFACE-INSTRUCTIONS-CHANGED", Kind: surface.Instructions, From: "sha256:1", To: "sha256:2", Message: "the instructions changed"},
			{Code: "MCP-SURFACE-PROMPT-DESCRIPTION", Kind: surface.Prompt, Key: "sum\u202eup", Message: "its description changed"},
		},
		Suppressed: []surface.Change{{Code: "MCP-SURFACE-TEMPLATE-ADDED", Kind: surface.Template, Key: "file:///{x}", Message: "a template was added"}},
	}
	r := &lock.CheckReport{Schema: lock.CheckReportSchema, Lock: "mcpdrift.lock", ExitCode: 1, Counts: map[string]int{lock.StatusFindings: 1},
		Servers: []*lock.ServerResult{{Name: "docs", Status: lock.StatusFindings, ExitCode: 1, Gate: g, Surface: sr}}}
	var b bytes.Buffer
	if err := RenderLockCheck(&b, r, nil, "sarif", Options{}); err != nil {
		t.Fatal(err)
	}
	l := parseSARIF(t, b.String())
	got := map[string]sarifResult{}
	for _, res := range l.Runs[0].Results {
		got[res.RuleID] = res
	}
	ins, ok := got["MCP-SURFACE-INSTRUCTIONS-CHANGED"]
	if !ok || ins.Level != "error" || len(ins.Suppressions) != 0 {
		t.Errorf("instructions changed: %+v (present %v), want an unsuppressed error", ins, ok)
	}
	p, ok := got["MCP-SURFACE-PROMPT-DESCRIPTION"]
	if !ok || strings.ContainsRune(p.Message.Text, '\u202e') {
		t.Errorf("prompt description: %q (present %v), want it present and escaped", p.Message.Text, ok)
	}
	if s, ok := got["MCP-SURFACE-TEMPLATE-ADDED"]; !ok || len(s.Suppressions) != 1 || s.Suppressions[0].Status != "accepted" {
		t.Errorf("suppressed template: %+v (present %v), want it marked accepted", s, ok)
	}
}
