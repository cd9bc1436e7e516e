package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// paramHeaderTools: one tool whose x-mcp-header annotations are valid and
// three a 2026-07-28 HTTP client must exclude.
const paramHeaderTools = `[
{"name":"get_repo","description":"Fetch a repository.","inputSchema":{"type":"object","properties":{"owner":{"type":"string","x-mcp-header":"Owner"},"stats":{"type":"boolean","x-mcp-header":"Include-Stats"}}}},
{"name":"score","description":"Score.","inputSchema":{"type":"object","properties":{"s":{"type":"number","x-mcp-header":"Score"}}}},
{"name":"by_ids","description":"By ids.","inputSchema":{"type":"object","properties":{"ids":{"type":"array","items":{"type":"string","x-mcp-header":"Id"}}}}},
{"name":"inject","description":"Inject.","inputSchema":{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"Q\r\nX-Evil: \u001b[31m1"}}}}
]`

// TestDriftInvalidParamHeader: drift reports each served tool that a
// 2026-07-28 Streamable HTTP client excludes for its x-mcp-header
// (MCP-CONF-PARAM-HEADER, with where and why, inert in every format),
// and nothing of the kind for a legacy server or over stdio, where no
// argument is mirrored into a header.
func TestDriftInvalidParamHeader(t *testing.T) {
	var tools []json.RawMessage
	if err := json.Unmarshal([]byte(paramHeaderTools), &tools); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	declared := writeFile(t, dir, "declared.json", []byte(paramHeaderTools))
	want := []string{"MCP-AUTH-ANONYMOUS-LIST", "MCP-CONF-PARAM-HEADER by_ids", "MCP-CONF-PARAM-HEADER inject", "MCP-CONF-PARAM-HEADER score"}

	_, url := mock(t, mockserver.Config{Tools: tools}, "")
	code, d, stderr := runDrift(t, declared, "--url", url)
	if got := d.rules(); code != 1 || !slices.Equal(got, want) || d.Protocol.Era != "modern" {
		t.Fatalf("modern: exit %d %s\n got %v\nwant %v\n%s", code, d.Protocol.Era, got, want, stderr)
	}
	for _, f := range d.Findings {
		if f.RuleID == "MCP-CONF-PARAM-HEADER" && f.Level != "ERROR" {
			t.Errorf("%s: level %s", f.Tool, f.Level)
		}
	}
	code, out, _ := run(t, "", "drift", declared, "--url", url, "--format", "json")
	for _, w := range []string{`x-mcp-header \"Score\" at \"/properties/s\" annotates a property of type \"number\"`, `at \"/properties/ids/items\" is not on a property reached from the schema's root through properties only`, `x-mcp-header \"Q\\u000d\\u000aX-Evil: \\u001b[31m1\"`} {
		if !strings.Contains(out, w) {
			t.Errorf("the report does not say %s:\n%s", w, out)
		}
	}
	for _, format := range []string{"text", "markdown", "sarif", "html"} {
		_, out, _ := run(t, "", "drift", declared, "--url", url, "--format", format)
		if !strings.Contains(out, "MCP-CONF-PARAM-HEADER") || strings.ContainsAny(out, "\x1b\r") {
			t.Errorf("%s: the finding is missing or carries the server's raw bytes", format)
		}
	}

	// pin says so when it pins such a list.
	code, _, stderr = run(t, "", "pin", "--url", url, "--server-id", "s", "-o", filepath.Join(dir, "pinned.json"))
	if code != 0 || strings.Count(stderr, "MCP-CONF-PARAM-HEADER") != 3 || !strings.Contains(stderr, `tool "score": x-mcp-header "Score"`) || strings.Contains(stderr, `"get_repo"`) || strings.ContainsAny(stderr, "\x1b\r") {
		t.Errorf("pin --url: exit %d\n%s", code, stderr)
	}

	_, lurl := mock(t, mockserver.Config{Tools: tools, Era: mockserver.LegacyOnly}, "")
	if code, d, stderr := runDrift(t, declared, "--url", lurl); code == 2 || slices.ContainsFunc(d.rules(), func(r string) bool { return strings.HasPrefix(r, "MCP-CONF-PARAM-HEADER") }) {
		t.Errorf("legacy: exit %d %v %s", code, d.rules(), stderr)
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(declared)
	t.Setenv("MCPDRIFT_TEST_STDIO_MOCK", "1")
	t.Setenv("MCPDRIFT_TEST_STDIO_MANIFEST", abs)
	code, d, stderr = runDrift(t, declared, "--pass-env", "MCPDRIFT_TEST_STDIO_MOCK", "--pass-env", "MCPDRIFT_TEST_STDIO_MANIFEST", "--stdio", "--", exe, "-test.run=^$")
	if code != 0 || len(d.rules()) != 0 {
		t.Errorf("stdio: exit %d %v %s", code, d.rules(), stderr)
	}
}
