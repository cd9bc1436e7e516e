package manifest_test

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
)

func TestParseSuppressions(t *testing.T) {
	good := "version: 1\nsuppressions:\n  - rule: MCP-AUTH-NO-CHALLENGE\n    server: http://127.0.0.1:8080/mcp\n    reason: our gateway strips WWW-Authenticate (INFRA-12)\n    expires: 2027-01-31\n  - rule: mcp_tool_added\n    tool: search\n    reason: added in the approved 2.0 rollout\n"
	s, err := manifest.ParseSuppressions([]byte(good), "mcpdrift.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Items) != 2 || s.Items[1].Source != "mcpdrift.yaml, suppression 2" {
		t.Fatalf("%+v", s.Items)
	}
	m, exp := s.Match("MCP-AUTH-NO-CHALLENGE", "", []string{"http://127.0.0.1:8080/mcp"}, "2027-01-31")
	if m == nil || exp != nil {
		t.Error("a suppression applies through its expires day")
	}
	m, exp = s.Match("MCP-AUTH-NO-CHALLENGE", "", []string{"http://127.0.0.1:8080/mcp"}, "2027-02-01")
	if m != nil || exp == nil {
		t.Error("an expired suppression must not apply, and must be reported")
	}
	if m, _ := s.Match("MCP-AUTH-NO-CHALLENGE", "", []string{"http://other/mcp"}, "2026-01-01"); m != nil {
		t.Error("a suppression for one server applied to another")
	}
	if m, _ := s.Match("mcp_tool_added", "other_tool", nil, "2026-01-01"); m != nil {
		t.Error("a suppression for one tool applied to another")
	}
	if m, _ := s.Match("mcp_tool_added", "search", []string{"any"}, "2026-01-01"); m == nil {
		t.Error("a tool suppression without a server applies to every server")
	}
	var nilSet *manifest.Suppressions
	if m, _ := nilSet.Match("x", "", nil, ""); m != nil {
		t.Error("nil set matched")
	}
	for _, c := range []struct{ name, src, want string }{
		{"empty", "", "empty"},
		{"unknown rule", "version: 1\nsuppressions:\n  - rule: MCP-NOPE\n    reason: because of reasons\n", "no such rule"},
		{"inconclusive", "version: 1\nsuppressions:\n  - rule: inconclusive_manifest_partial_observation\n    reason: we know it is partial\n", "cannot be suppressed"},
		{"note", "version: 1\nsuppressions:\n  - rule: MCP-AUTH-ENFORCED\n    reason: it is only a note\n", "cannot be suppressed"},
		{"no reason", "version: 1\nsuppressions:\n  - rule: mcp_tool_added\n", "reason"},
		{"one-word reason", "version: 1\nsuppressions:\n  - rule: mcp_tool_added\n    reason: fine\n", "reason"},
		{"bad day", "version: 1\nsuppressions:\n  - rule: mcp_tool_added\n    reason: a good reason\n    expires: 2027-02-30\n", "not a day"},
		{"unknown key", "version: 1\nsuppressions:\n  - rule: mcp_tool_added\n    reason: a good reason\n    severity: low\n", "severity"},
		{"duplicate key", "version: 1\nsuppressions:\n  - rule: mcp_tool_added\n    rule: mcp_tool_removed\n    reason: a good reason\n", "already defined"},
		{"no version", "suppressions: []\n", "version"},
	} {
		_, err := manifest.ParseSuppressions([]byte(c.src), "mcpdrift.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "mcpdrift.yaml") {
			t.Errorf("%s: %v (want %q)", c.name, err, c.want)
		}
	}
}
