package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/observe"
)

type driftJSON struct {
	Schema string `json:"schema"`
	Target struct {
		Class string `json:"class"`
	} `json:"target"`
	Protocol struct {
		Era      string `json:"era"`
		Revision string `json:"protocol_revision"`
	} `json:"protocol"`
	Served *struct {
		ToolCount      int    `json:"tool_count"`
		Completeness   string `json:"tools_list_complete"`
		SecondCompared bool   `json:"second_connection_compared"`
	} `json:"served"`
	AuthPosture struct {
		AuthorizationPresented bool     `json:"authorization_presented"`
		HeaderNames            []string `json:"header_names"`
		AnonymousProbe         string   `json:"anonymous_probe"`
	} `json:"auth_posture"`
	Findings []struct {
		RuleID  string `json:"rule_id"`
		Level   string `json:"level"`
		Tool    string `json:"tool"`
		Message string `json:"message"`
	} `json:"findings"`
	Notes    []string `json:"notes"`
	ExitCode int      `json:"exit_code"`
}

func (d driftJSON) rules() []string {
	var out []string
	for _, f := range d.Findings {
		s := f.RuleID
		if f.Tool != "" {
			s += " " + f.Tool
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

var (
	exampleV1 = filepath.Join("..", "..", "examples", "acme-github.v1.tools-list.json")
	exampleV2 = filepath.Join("..", "..", "examples", "acme-github.v2-rugpull.tools-list.json")
)

func mock(t *testing.T, cfg mockserver.Config, manifestPath string) (*mockserver.Server, string) {
	t.Helper()
	if manifestPath != "" {
		tools, err := mockserver.LoadToolsFile(manifestPath)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tools = tools
	}
	s, err := mockserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts.URL + "/mcp"
}

func runDrift(t *testing.T, args ...string) (int, driftJSON, string) {
	t.Helper()
	code, out, stderr := run(t, "", append([]string{"drift", "--format", "json"}, args...)...)
	var d driftJSON
	if out != "" {
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("exit %d: not JSON: %v\n%s\n%s", code, err, out, stderr)
		}
	}
	return code, d, stderr
}

func TestDriftAgainstMock(t *testing.T) {
	s, url := mock(t, mockserver.Config{PageSize: 2}, exampleV1)
	code, d, stderr := runDrift(t, exampleV1, "--url", url)
	if code != 0 || d.ExitCode != 0 {
		t.Fatalf("clean run: exit %d %v %s", code, d.rules(), stderr)
	}
	if d.Schema != "mcpdrift.drift_report.v1" || d.Target.Class != "local" || d.Protocol.Era != "modern" || d.Protocol.Revision != "2026-07-28" {
		t.Errorf("report header %+v", d)
	}
	if d.Served == nil || d.Served.ToolCount != 5 || d.Served.Completeness != "complete" || !d.Served.SecondCompared {
		t.Errorf("served %+v", d.Served)
	}
	if got := d.rules(); !slices.Equal(got, []string{"MCP-AUTH-ANONYMOUS-LIST"}) {
		t.Errorf("clean rules %v", got)
	}
	// Rug pull while the server runs.
	v2, err := mockserver.LoadToolsFile(exampleV2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetTools(v2); err != nil {
		t.Fatal(err)
	}
	obsOut := filepath.Join(t.TempDir(), "observed.json")
	code, d, _ = runDrift(t, exampleV1, "--url", url, "--observed-out", obsOut, "--server-id", "acme-github")
	want := []string{"MCP-AUTH-ANONYMOUS-LIST", "MCP-DRIFT-ANNOTATION create_or_update_file", "MCP-DRIFT-DESCRIPTION search_issues",
		"MCP-DRIFT-ESCALATION add_deploy_key", "MCP-DRIFT-SCHEMA-COMPATIBLE add_deploy_key", "MCP-DRIFT-TOOL-MISSING list_branches", "MCP-DRIFT-TOOL-UNDECLARED run_workflow_command"}
	if got := d.rules(); code != 1 || !slices.Equal(got, want) {
		t.Errorf("rug pull: exit %d\n got %v\nwant %v", code, got, want)
	}
	// The observed record from the wire gates like the saved one.
	decl := filepath.Join(t.TempDir(), "declared.json")
	run(t, "", "pin", "--input", exampleV1, "--server-id", "acme-github", "-o", decl, "--no-snapshot")
	code, out, _ := run(t, "", "gate", "--format", "json", "--observed", obsOut, "--declared", decl)
	if code != 1 || !strings.Contains(out, "mcp_new_privileged_tool") {
		t.Errorf("gate on the wire record: exit %d", code)
	}
}

func TestDriftRules(t *testing.T) {
	v1tools, _ := mockserver.LoadToolsFile(exampleV1)
	t.Run("per-connection tool set", func(t *testing.T) {
		_, url := mock(t, mockserver.Config{ConnectionTools: map[int][]json.RawMessage{2: v1tools[:2]}}, exampleV1)
		code, d, _ := runDrift(t, exampleV1, "--url", url)
		if code != 1 || !slices.Contains(d.rules(), "MCP-CONF-TOOLSET-VARIES") {
			t.Errorf("exit %d %v", code, d.rules())
		}
	})
	t.Run("legacy server", func(t *testing.T) {
		_, url := mock(t, mockserver.Config{Era: mockserver.LegacyOnly, Response: mockserver.SSEResponses}, exampleV1)
		code, d, stderr := runDrift(t, exampleV1, "--url", url)
		if code != 0 || !slices.Contains(d.rules(), "MCP-DRIFT-LEGACY-SERVER") || d.Protocol.Revision != "unknown" {
			t.Errorf("exit %d %v %+v %s", code, d.rules(), d.Protocol, stderr)
		}
	})
	t.Run("refused revision", func(t *testing.T) {
		_, url := mock(t, mockserver.Config{Era: mockserver.ModernOnly, SupportedVersions: []string{"2027-01-01"}}, exampleV1)
		code, d, stderr := runDrift(t, exampleV1, "--url", url)
		// No shared revision: no tool list, nothing compared: exit 3 (issue 9).
		if code != 3 || !slices.Equal(d.rules(), []string{"MCP-DRIFT-PROTOCOL-UNSUPPORTED"}) || d.Served != nil {
			t.Errorf("exit %d %v %s", code, d.rules(), stderr)
		}
	})
	t.Run("page cap", func(t *testing.T) {
		_, url := mock(t, mockserver.Config{PageSize: 1}, exampleV1)
		code, d, _ := runDrift(t, exampleV1, "--url", url, "--max-list-pages", "2")
		got := d.rules()
		if code != 1 || !slices.Contains(got, "MCP-DRIFT-PAGINATION-CAPPED") || slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "MCP-DRIFT-TOOL-MISSING") }) {
			t.Errorf("exit %d %v", code, got)
		}
	})
	t.Run("cursor cycle and missing cache fields", func(t *testing.T) {
		_, url := mock(t, mockserver.Config{PageSize: 2, CursorCycle: true, OmitCacheFields: true}, exampleV1)
		code, d, _ := runDrift(t, exampleV1, "--url", url, "--skip-second-connection")
		got := d.rules()
		if code != 1 || !slices.Contains(got, "MCP-CONF-CURSOR-CYCLE") || !slices.Contains(got, "MCP-CONF-LIST-CACHE-FIELDS") {
			t.Errorf("exit %d %v", code, got)
		}
	})
	t.Run("credentials enforced, no challenge", func(t *testing.T) {
		_, url := mock(t, mockserver.Config{RequireAuth: "s3cret", NoChallenge: true}, exampleV1)
		code, d, _ := runDrift(t, exampleV1, "--url", url, "--header", "Authorization=Bearer s3cret")
		got := d.rules()
		if code != 1 || !slices.Contains(got, "MCP-AUTH-ENFORCED") || !slices.Contains(got, "MCP-AUTH-NO-CHALLENGE") || d.AuthPosture.AnonymousProbe != "refused" {
			t.Errorf("exit %d %v %+v", code, got, d.AuthPosture)
		}
		if !slices.Equal(d.AuthPosture.HeaderNames, []string{"Authorization"}) {
			t.Errorf("header names %v", d.AuthPosture.HeaderNames)
		}
		_, out, _ := run(t, "", "drift", exampleV1, "--url", url, "--header", "Authorization=Bearer s3cret", "--format", "json")
		if strings.Contains(out, "s3cret") {
			t.Error("a header value reached the report")
		}
	})
	t.Run("anonymous tool set behind credentials", func(t *testing.T) {
		_, url := mock(t, mockserver.Config{RequireAuth: "s3cret", AnonymousTools: v1tools[:1]}, exampleV1)
		code, d, _ := runDrift(t, exampleV1, "--url", url, "--header", "Authorization=Bearer s3cret")
		if code != 0 || !slices.Contains(d.rules(), "MCP-AUTH-ANONYMOUS-LIST") || d.AuthPosture.AnonymousProbe != "listed" {
			t.Errorf("exit %d %v", code, d.rules())
		}
	})
	t.Run("no credentials, refused", func(t *testing.T) {
		_, url := mock(t, mockserver.Config{RequireAuth: "s3cret"}, exampleV1)
		code, d, _ := runDrift(t, exampleV1, "--url", url)
		if code != 3 || !slices.Equal(d.rules(), []string{"MCP-AUTH-ENFORCED"}) {
			t.Errorf("exit %d %v", code, d.rules())
		}
	})
}

func TestDriftUnreachableAndUsage(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	code, _, stderr := runDrift(t, exampleV1, "--url", "http://"+addr+"/mcp", "--timeout", "5s")
	if code != 3 || !strings.Contains(stderr, "cannot observe") {
		t.Errorf("unreachable: %d %s", code, stderr)
	}
	// A hostile server: wrong id, invalid JSON, a redirect elsewhere.
	for name, cfg := range map[string]mockserver.Config{
		"wrong id":     {WrongID: true},
		"invalid json": {InvalidJSON: true},
		"error result": {ErrorInsteadOfResult: true},
		"redirect":     {RedirectTo: "http://203.0.113.9/mcp"},
	} {
		_, url := mock(t, cfg, exampleV1)
		code, _, stderr := runDrift(t, exampleV1, "--url", url, "--timeout", "10s")
		if code != 3 || stderr == "" {
			t.Errorf("%s: exit %d %s", name, code, stderr)
		}
	}
	for _, args := range [][]string{
		{exampleV1},
		{exampleV1, "--url", "http://x", "--stdio"},
		{exampleV1, "--stdio"},
		{exampleV1, "--url", "http://x", "--header", "Mcp-Method=x"},
		{exampleV1, "--url", "http://x", "--header", "novalue"},
		{exampleV1, "--url", "http://x", "--format", "xml"},
	} {
		if code, _, _ := run(t, "", append([]string{"drift"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

// stdio: the test binary itself serves the mock on stdin/stdout.
func TestDriftStdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(exampleV1)
	t.Setenv("MCPDRIFT_TEST_STDIO_MOCK", "1")
	t.Setenv("MCPDRIFT_TEST_STDIO_MANIFEST", abs)
	code, d, stderr := runDrift(t, exampleV1, "--pass-env", "MCPDRIFT_TEST_STDIO_MOCK", "--pass-env", "MCPDRIFT_TEST_STDIO_MANIFEST", "--stdio", "--", exe, "-test.run=^$")
	if code != 0 || d.Target.Class != "stdio" || d.Served == nil || d.Served.ToolCount != 5 {
		t.Errorf("stdio: exit %d %+v %s", code, d, stderr)
	}
	if d.AuthPosture.AnonymousProbe != "not_applicable" {
		t.Errorf("posture %+v", d.AuthPosture)
	}
}

func init() {
	// The stdio mock child: served when the environment asks for it.
	if os.Getenv("MCPDRIFT_TEST_STDIO_MOCK") == "1" {
		tools, sf, err := mockserver.LoadManifestFile(os.Getenv("MCPDRIFT_TEST_STDIO_MANIFEST"))
		if err != nil {
			os.Exit(5)
		}
		s := mockserver.MustNew(mockserver.Config{Tools: tools, Surface: sf})
		s.ServeStdio(context.Background(), os.Stdin, os.Stdout)
		os.Exit(0)
	}
}

func TestPinLive(t *testing.T) {
	s, url := mock(t, mockserver.Config{PageSize: 2, ServerName: "acme-mcp", ServerVersion: "2.4.0"}, exampleV1)
	dir := t.TempDir()
	decl := filepath.Join(dir, "declared.json")
	code, _, stderr := run(t, "", "pin", "--url", url, "--server-id", "acme-github", "-o", decl)
	if code != 0 {
		t.Fatalf("pin --url: %d %s", code, stderr)
	}
	snap, err := os.ReadFile(filepath.Join(dir, "declared.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"endpoint": "` + url + `"`, `"server_name": "acme-mcp"`, `"server_version": "2.4.0"`} {
		if !strings.Contains(string(snap), want) {
			t.Errorf("snapshot lacks %s", want)
		}
	}
	// The live baseline equals the one pinned from the saved file.
	d2 := filepath.Join(dir, "d2.json")
	run(t, "", "pin", "--input", exampleV1, "--server-id", "acme-github", "-o", d2, "--no-snapshot")
	a, _ := os.ReadFile(decl)
	b, _ := os.ReadFile(d2)
	if string(a) != string(b) {
		t.Error("a live baseline differs from the file baseline of the same tools")
	}
	// A capped listing is refused, and nothing is written.
	capped := filepath.Join(dir, "capped.json")
	code, _, stderr = run(t, "", "pin", "--url", url, "--server-id", "acme-github", "-o", capped, "--max-list-pages", "1")
	if code != 2 || !strings.Contains(stderr, "capped") {
		t.Errorf("capped: %d %s", code, stderr)
	}
	if _, err := os.Stat(capped); !os.IsNotExist(err) {
		t.Error("a refused pin wrote a file")
	}
	_ = s
	if code, _, _ := run(t, "", "pin", "--url", url, "--input", exampleV1, "--server-id", "x"); code != 2 {
		t.Error("two sources accepted")
	}
}

// Hostile servers end in a finding or a clear error, in bounded time, and
// nothing server-controlled is printed raw.
func TestDriftHostile(t *testing.T) {
	hostile := `[{"name":"evil\u001b[2J\u202eeman","description":"x","inputSchema":{"type":"object"}},{"name":"dup","inputSchema":{"type":"object"}},{"name":"dup","inputSchema":{"type":"object"}}]`
	dir := t.TempDir()
	mf := writeFile(t, dir, "hostile.json", []byte(hostile))
	declared := writeFile(t, dir, "declared.json", []byte(`[{"name":"dup","inputSchema":{"type":"object"}}]`))
	_, url := mock(t, mockserver.Config{}, mf)
	for _, format := range []string{"text", "json", "markdown", "sarif"} {
		code, out, stderr := run(t, "", "drift", declared, "--url", url, "--format", format, "--color", "always")
		if code != 1 {
			t.Errorf("%s: exit %d %s", format, code, stderr)
		}
		for _, bad := range []string{"\x1b[2J", "\u202e"} {
			if strings.Contains(out, bad) || strings.Contains(stderr, bad) {
				t.Errorf("%s: raw %q in the output", format, bad)
			}
		}
		if format == "json" {
			var d driftJSON
			json.Unmarshal([]byte(out), &d)
			if !slices.Contains(d.rules(), "MCP-CONF-DUPLICATE-TOOL-NAME dup") {
				t.Errorf("duplicates: %v", d.rules())
			}
		}
	}
	// Endless and oversized answers are cut off in bounded time.
	for name, cfg := range map[string]mockserver.Config{
		"never-ending SSE": {NeverEndingSSE: true, Response: mockserver.SSEResponses},
		"1 GB body":        {Oversized: 1 << 30},
	} {
		_, url := mock(t, cfg, exampleV1)
		start := time.Now()
		code, _, stderr := run(t, "", "drift", exampleV1, "--url", url, "--timeout", "4s", "--max-response-bytes", "4194304")
		if code != 3 || time.Since(start) > 15*time.Second {
			t.Errorf("%s: exit %d after %s: %s", name, code, time.Since(start), stderr)
		}
	}
}

// Servers from an MCP client configuration file: a URL entry runs as
// given; a command entry runs only with --allow-config-commands.
func TestDriftMCPConfig(t *testing.T) {
	_, url := mock(t, mockserver.Config{RequireAuth: "tok"}, exampleV1)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(exampleV1)
	cfg := map[string]any{"mcpServers": map[string]any{
		"remote": map[string]any{"url": url, "headers": map[string]string{"Authorization": "Bearer tok"}},
		"local":  map[string]any{"command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{"MCPDRIFT_TEST_STDIO_MOCK": "1", "MCPDRIFT_TEST_STDIO_MANIFEST": abs}, "disabled": false},
	}}
	b, _ := json.Marshal(cfg)
	file := writeFile(t, t.TempDir(), "mcp.json", b)

	code, d, stderr := runDrift(t, exampleV1, "--mcp-config", file, "--server", "remote")
	if code != 0 || d.Served == nil || d.Served.ToolCount != 5 || !d.AuthPosture.AuthorizationPresented {
		t.Errorf("remote: exit %d %+v %s", code, d, stderr)
	}
	code, _, stderr = runDrift(t, exampleV1, "--mcp-config", file, "--server", "local")
	if code != 2 || !strings.Contains(stderr, "refusing to run a command read from") || !strings.Contains(stderr, "--allow-config-commands") {
		t.Errorf("local without the flag: exit %d %s", code, stderr)
	}
	code, d, stderr = runDrift(t, exampleV1, "--mcp-config", file, "--server", "local", "--allow-config-commands")
	if code != 0 || d.Target.Class != "stdio" || d.Served == nil || d.Served.ToolCount != 5 {
		t.Errorf("local with the flag: exit %d %+v %s", code, d, stderr)
	}
	if !strings.Contains(stderr, "ignoring disabled") {
		t.Errorf("unknown entry keys should be named: %s", stderr)
	}
	for _, args := range [][]string{
		{"--mcp-config", file},
		{"--mcp-config", file, "--server", "nope"},
		{"--mcp-config", file, "--server", "remote", "--url", url},
		{"--server", "remote"},
		{"--allow-config-commands", "--url", url},
	} {
		if code, _, _ := run(t, "", append([]string{"drift", exampleV1}, args...)...); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

// A served entry without a name is a conformance finding, not a failed run;
// removals are then not evaluated.
func TestDriftNamelessTool(t *testing.T) {
	dir := t.TempDir()
	served := []json.RawMessage{json.RawMessage(`{"name":"a","inputSchema":{"type":"object"}}`), json.RawMessage(`{"description":"no name"}`), json.RawMessage(`7`)}
	declared := writeFile(t, dir, "declared.json", []byte(`[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]`))
	_, url := mock(t, mockserver.Config{Tools: served}, "")
	code, d, stderr := runDrift(t, declared, "--url", url)
	got := d.rules()
	if code != 1 || !slices.Equal(got, []string{"MCP-AUTH-ANONYMOUS-LIST", "MCP-CONF-TOOL-SHAPE", "MCP-CONF-TOOL-SHAPE"}) {
		t.Errorf("exit %d %v %s", code, got, stderr)
	}
	if d.Served == nil || d.Served.Completeness != "partial" {
		t.Errorf("served %+v", d.Served)
	}
}

func TestShellJoin(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"npx", "-y", "@scope/pkg@1.2.3"}, "npx -y @scope/pkg@1.2.3"},
		{[]string{"node", "a b.js", ""}, "node 'a b.js' ''"},
		{[]string{"sh", "-c", "echo 'x'; rm -rf /"}, `sh -c 'echo '\''x'\''; rm -rf /'`},
	} {
		if got := observe.ShellJoin(c.argv); got != c.want {
			t.Errorf("observe.ShellJoin(%q) = %s, want %s", c.argv, got, c.want)
		}
	}
}

// Opt-in tool calls: a plan without --execute sends nothing; --execute sends
// exactly the planned calls (names resolved against the declared manifest)
// and checks the results against the declared outputSchema.
func TestDriftToolCalls(t *testing.T) {
	s, url := mock(t, mockserver.Config{}, exampleV1)
	calls := func() (n int, passed bool) {
		passed = true
		for _, e := range s.Log() {
			if e.Method == "tools/call" {
				n++
				passed = passed && e.Passed && e.Headers.Get("Mcp-Name") == "get_file_contents"
			}
		}
		return
	}
	code, out, stderr := run(t, "", "drift", exampleV1, "--url", url, "--format", "json", "--invoke-tool", "get_file_contents", "--seed", "7")
	var plan struct {
		CallPlan []struct {
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
			Sent      bool            `json:"sent"`
		} `json:"call_plan"`
		Seed int64 `json:"seed"`
	}
	json.Unmarshal([]byte(out), &plan)
	if code != 0 || len(plan.CallPlan) != 1 || plan.CallPlan[0].Sent || plan.Seed != 7 || !strings.Contains(string(plan.CallPlan[0].Arguments), `"repo"`) {
		t.Fatalf("plan: exit %d %+v %s", code, plan, stderr)
	}
	if n, _ := calls(); n != 0 {
		t.Fatalf("a plan without --execute sent %d calls", n)
	}
	// Executed: the mock answers with text content and no structuredContent
	// although get_file_contents declares an outputSchema.
	code, d, stderr := runDrift(t, exampleV1, "--url", url, "--invoke-tool", "get_file_contents", "--execute")
	if n, ok := calls(); n != 1 || !ok {
		t.Errorf("executed: %d calls (valid headers %v)", n, ok)
	}
	if code != 1 || !slices.Contains(d.rules(), "MCP-DRIFT-CALL-NO-STRUCTURED-CONTENT get_file_contents") {
		t.Errorf("executed: exit %d %v %s", code, d.rules(), stderr)
	}
	// Usage rules: no wildcard, exact declared names, production needs the flag.
	for _, args := range [][]string{
		{"--url", url, "--execute"},
		{"--url", url, "--invoke-tool", "get_*", "--execute"},
		{"--url", url, "--invoke-tool", "run_workflow_command"},
		{"--url", "https://mcp.acme.io/mcp", "--invoke-tool", "search_issues", "--execute"},
	} {
		if code, _, _ := run(t, "", append([]string{"drift", exampleV1}, args...)...); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	if n, _ := calls(); n != 1 {
		t.Errorf("refused runs sent calls: %d", n)
	}
}

// The served output is checked against the DECLARED outputSchema; the
// finding names the pointer and types, never the value.
func TestDriftToolCallOutputSchema(t *testing.T) {
	s, mockURL := mock(t, mockserver.Config{}, exampleV1)
	_ = s
	target, _ := neturl.Parse(mockURL)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &req)
		if req.Method == "tools/call" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[],"structuredContent":{"content":{"SECRET":1}}}}`, req.ID)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.URL.Path = target.Path
		s.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	code, out, stderr := run(t, "", "drift", exampleV1, "--url", proxy.URL+"/mcp", "--invoke-tool", "get_file_contents", "--execute", "--format", "json", "--skip-second-connection")
	if code != 1 || !strings.Contains(out, "MCP-DRIFT-CALL-OUTPUT-SCHEMA") || !strings.Contains(out, `\"/content\": does not satisfy the declared`) {
		t.Errorf("exit %d %s %s", code, out, stderr)
	}
	if strings.Contains(out, "SECRET") {
		t.Error("a returned value reached the report")
	}
}

// The declared side of a drift is read while the server is listed
// (declared.go): a declared side that cannot be read is still the run's
// error, exit 2 with what is wrong and nothing written, though the server
// answered; a manifest on stdin and a baseline beside its snapshot still
// drift clean.
func TestDriftDeclaredReadBesideListing(t *testing.T) {
	_, base := mockSSE(t, mockserver.Config{Era: mockserver.DualEra}, exampleV1)
	url := base + "/mcp"
	dir := t.TempDir()
	decl := filepath.Join(dir, "declared.json")
	if code, _, stderr := run(t, "", "pin", "--url", url, "--server-id", "s", "-o", decl); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "", "drift", decl, "--url", url); code != 0 {
		t.Fatalf("drift against the baseline: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, string(mustRead(t, exampleV1)), "drift", "-", "--url", url); code != 0 {
		t.Fatalf("drift of a manifest on stdin: %d %s", code, stderr)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	snap := mustRead(t, snapshotPathFor(decl))
	tampered := bytes.Replace(snap, []byte(`"search_issues"`), []byte(`"search_issuez"`), 1)
	if bytes.Equal(tampered, snap) {
		t.Fatal("the snapshot does not name search_issues")
	}
	write("tampered.snapshot.json", tampered)
	write("tampered.json", mustRead(t, decl))
	write("orphan.json", mustRead(t, decl))
	for _, c := range []struct{ name, path, want string }{
		{"a snapshot that is not the baseline's", filepath.Join(dir, "tampered.json"), "does not recompute"},
		{"a baseline without its snapshot", filepath.Join(dir, "orphan.json"), "is not there"},
		{"a file that is not there", filepath.Join(dir, "absent.json"), "absent.json"},
		{"a file that is not JSON", write("garbage.json", []byte("{\"tools\": [")), "garbage.json"},
	} {
		out := filepath.Join(dir, "report.json")
		code, _, stderr := run(t, "", "drift", c.path, "--url", url, "--format", "json", "-o", out)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, want 2 saying %q: %s", c.name, code, c.want, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: a report was written", c.name)
		}
	}
}

// TestDriftOthersAfterTheFirstPage: over HTTP the listings beside the
// primary one (the second connection here) start once the primary listing
// has read its first page, beside its later pages.
func TestDriftOthersAfterTheFirstPage(t *testing.T) {
	_, base := mockSSE(t, mockserver.Config{PageSize: 1}, exampleV1)
	const pages = 5 // the example's tools, one a page
	target, _ := neturl.Parse(base + "/mcp")
	var (
		mu        sync.Mutex
		lists     int // tools/list requests
		atSecond  = -1
		listsSeen = make(chan struct{}, 64)
	)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Method string `json:"method"`
			Params struct {
				Cursor *string `json:"cursor"`
			} `json:"params"`
		}
		json.Unmarshal(body, &req)
		if req.Method == "tools/list" {
			mu.Lock()
			if req.Params.Cursor == nil && lists > 0 && atSecond < 0 {
				atSecond = lists // the second listing starts: the tools/list requests before it
			}
			lists++
			mu.Unlock()
			listsSeen <- struct{}{}
			if req.Params.Cursor != nil {
				time.Sleep(40 * time.Millisecond) // later pages take a while
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.URL.Path = target.Path
		httputil.NewSingleHostReverseProxy(&neturl.URL{Scheme: target.Scheme, Host: target.Host}).ServeHTTP(w, r)
	}))
	defer proxy.Close()
	url := proxy.URL + "/mcp"
	decl := filepath.Join(t.TempDir(), "declared.json")
	if code, _, stderr := run(t, "", "pin", "--url", url, "--server-id", "s", "-o", decl); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	reset := func() {
		mu.Lock()
		defer mu.Unlock()
		lists, atSecond = 0, -1
		for len(listsSeen) > 0 {
			<-listsSeen
		}
	}
	// The second listing starts beside the primary listing, after its
	// first page.
	reset()
	if code, _, stderr := run(t, "", "drift", decl, "--url", url); code != 0 {
		t.Fatalf("drift: %d %s", code, stderr)
	}
	mu.Lock()
	if atSecond < 1 || atSecond >= pages {
		t.Errorf("the second listing started after %d tools/list requests, want after the first page and before the last", atSecond)
	}
	mu.Unlock()
}
