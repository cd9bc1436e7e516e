package cli

import (
	"strings"
	"testing"
)

// mock-server --stdio answers on stdout until stdin ends, with the strict
// rules: a modern request without _meta is refused.
func TestMockServerCommandStdio(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`,
	}, "\n") + "\n"
	code, out, stderr := run(t, in, "mock-server", "--stdio", "--manifest", exampleV1)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	if !strings.Contains(lines[0], `"supportedVersions"`) || !strings.Contains(lines[1], `"name": "search_issues"`) {
		t.Errorf("answers:\n%s", out)
	}
	// Dual era: a request without _meta is a legacy request, and a legacy
	// session must start with initialize.
	if !strings.Contains(lines[2], `"error"`) || !strings.Contains(lines[2], "Server not initialized") {
		t.Errorf("a request without _meta or initialize must be refused: %s", lines[2])
	}
	// Modern only: the missing _meta is -32602.
	_, out, _ = run(t, lines2(in), "mock-server", "--stdio", "--modern-only", "--manifest", exampleV1)
	if !strings.Contains(out, "-32602") {
		t.Errorf("modern-only: %s", out)
	}
	if code, _, _ := run(t, "", "mock-server", "--listen", "0.0.0.0:0", "--manifest", exampleV1); code != 2 {
		t.Error("a non-loopback listener must be refused without --allow-non-loopback")
	}
}

// lines2 keeps only the last request of in (the one without _meta).
func lines2(in string) string {
	ls := strings.Split(strings.TrimSpace(in), "\n")
	return ls[len(ls)-1] + "\n"
}
