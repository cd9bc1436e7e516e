package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

var (
	exampleV1 = filepath.Join("..", "examples", "acme-github.v1.tools-list.json")
	exampleV2 = filepath.Join("..", "examples", "acme-github.v2-rugpull.tools-list.json")
)

// upstreamMock serves a manifest over HTTP on loopback.
func upstreamMock(t *testing.T, cfg mockserver.Config, path string) (*mockserver.Server, string) {
	t.Helper()
	if path != "" {
		tools, err := mockserver.LoadToolsFile(path)
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

// baselineOf pins a manifest file as the approved baseline.
func baselineOf(t *testing.T, path string, id manifest.Identity) *decide.Baseline {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := manifest.ParseToolList(b)
	if err != nil {
		t.Fatal(err)
	}
	return decide.NewBaseline("acme", id, tl.Tools)
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) records(t *testing.T) []proxy.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []proxy.Record
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var r proxy.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("decision log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// gateway starts a gateway over HTTP in front of upstream.
func gateway(t *testing.T, cfg proxy.Config) (*proxy.Gateway, string) {
	t.Helper()
	g, err := proxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Handler(proxy.HTTPOptions{}))
	t.Cleanup(func() { ts.Close(); g.Close() })
	return g, ts.URL + "/mcp"
}

// listThrough lists the gateway as a real client would (mcpclient, both
// eras) and calls tools.
func listThrough(t *testing.T, url string, legacy bool, calls ...mcpclient.ToolCall) (*mcpclient.Observation, *manifest.ToolList) {
	t.Helper()
	cfg := mcpclient.Config{BaseURL: url, Calls: calls}
	if legacy {
		cfg.PreferredRevision = mcpwire.Rev20250618
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	obs, err := mcpclient.ListTools(ctx, cfg)
	if err != nil {
		t.Fatalf("listing through the gateway: %v", err)
	}
	tl, err := manifest.ParseToolList(obs.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	return obs, tl
}

func names(tl *manifest.ToolList) []string {
	var out []string
	for _, t := range tl.Tools {
		out = append(out, t.Name)
	}
	return out
}

func toolBytes(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := mockserver.LoadToolsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range raw {
		var x struct {
			Name string `json:"name"`
		}
		json.Unmarshal(r, &x)
		out[x.Name] = string(r)
	}
	return out
}

// Enforce, HTTP to HTTP, both eras: the approved list is served byte for
// byte; after a rug pull the poisoned and added tools are hidden, calls
// to them are refused by the gateway and never reach the upstream.
func TestEnforceRugPull(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		name := "modern"
		if legacy {
			name = "legacy"
		}
		t.Run(name, func(t *testing.T) {
			mock, up := upstreamMock(t, mockserver.Config{PageSize: 2, ServerName: "acme-github", ServerVersion: "1.0.0"}, exampleV1)
			var log logBuf
			_, url := gateway(t, proxy.Config{
				Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
				Baseline: baselineOf(t, exampleV1, manifest.Identity{Endpoint: up}), ServerID: "acme",
				RelistInterval: time.Nanosecond, Log: proxy.NewDecisionLog(&log),
			})
			_, tl := listThrough(t, url, legacy)
			want := toolBytes(t, exampleV1)
			if len(tl.Tools) != len(want) {
				t.Fatalf("served %v", names(tl))
			}
			for _, tool := range tl.Tools {
				if string(tool.Raw()) != want[tool.Name] {
					t.Errorf("%s is not the upstream's bytes:\n got %s\nwant %s", tool.Name, tool.Raw(), want[tool.Name])
				}
			}
			// The rug pull.
			v2, _ := mockserver.LoadToolsFile(exampleV2)
			mock.SetTools(v2)
			before := mock.LogTotal()
			obs, tl := listThrough(t, url, legacy,
				mcpclient.ToolCall{Name: "run_workflow_command", Arguments: json.RawMessage(`{"command":"id"}`)},
				mcpclient.ToolCall{Name: "search_issues", Arguments: json.RawMessage(`{"query":"x"}`)},
				mcpclient.ToolCall{Name: "list_branches", Arguments: json.RawMessage(`{"repo":"a/b"}`)},
			)
			served := names(tl)
			for _, hidden := range []string{"run_workflow_command", "search_issues", "add_deploy_key", "create_or_update_file"} {
				if slices.Contains(served, hidden) {
					t.Errorf("%s served after the rug pull: %v", hidden, served)
				}
			}
			if len(obs.Calls) != 3 {
				t.Fatalf("calls %+v", obs.Calls)
			}
			for _, c := range obs.Calls {
				if c.Code != mcpwire.CodeInvalidParams {
					t.Errorf("%s: %+v, want -32602 from the gateway", c.Name, c)
				}
			}
			for _, e := range mock.Log()[before:] {
				if e.Method == "tools/call" {
					t.Errorf("the upstream saw a tools/call: %+v", e)
				}
			}
			recs := log.records(t)
			var hid, denied int
			for _, r := range recs {
				if r.Method == "tools/list" && r.Decision == "hide" {
					hid++
				}
				if r.Method == "tools/call" && r.Decision == "deny" {
					denied++
				}
				if r.Schema != proxy.LogSchema || r.ServerID != "acme" {
					t.Errorf("record %+v", r)
				}
			}
			if hid == 0 || denied != 3 {
				t.Errorf("decision log: %d hidden, %d denied calls\n%v", hid, denied, recs)
			}
		})
	}
}

// An approved call goes through; arguments the pinned schema refuses do
// not, and the refusal names the pointer, never the value.
func TestCallArguments(t *testing.T) {
	mock, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Profile: schemadiff.FailClosedProfile, StrictArguments: true})
	before := mock.LogTotal()
	obs, _ := listThrough(t, url, false,
		mcpclient.ToolCall{Name: "search_issues", Arguments: json.RawMessage(`{"repo":"a/b","query":"bug"}`)},
		mcpclient.ToolCall{Name: "search_issues", Arguments: json.RawMessage(`{"repo":"a/b","query":12345}`)},
		// list_branches' schema leaves additionalProperties open: only
		// strict arguments refuse the undeclared member.
		mcpclient.ToolCall{Name: "list_branches", Arguments: json.RawMessage(`{"repo":"a/b","exfil":"SECRET-ARG"}`)},
		mcpclient.ToolCall{Name: "Search_Issues", Arguments: json.RawMessage(`{"repo":"a/b","query":"x"}`)},
		mcpclient.ToolCall{Name: "search_issues", Arguments: json.RawMessage(`{"repo":"a/b","query":"` + strings.Repeat("q", 300) + `"}`)},
	)
	if len(obs.Calls) != 5 {
		t.Fatalf("%+v", obs.Calls)
	}
	if obs.Calls[0].Code != 0 || obs.Calls[0].Err != "" || obs.Calls[0].Result == nil {
		t.Errorf("approved call: %+v", obs.Calls[0])
	}
	for _, c := range obs.Calls[1:] {
		if c.Code != mcpwire.CodeInvalidParams || strings.Contains(c.Message, "SECRET-ARG") || strings.Contains(c.Message, "12345") || strings.Contains(c.Message, "qqqq") {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
	calls := 0
	for _, e := range mock.Log()[before:] {
		if e.Method == "tools/call" {
			calls++
		}
	}
	if calls != 1 {
		t.Errorf("the upstream saw %d calls, want only the approved one", calls)
	}
}

// Observe mode forwards only the listing methods, records the fully
// observed list, and answers everything else itself.
func TestObserveMode(t *testing.T) {
	mock, up := upstreamMock(t, mockserver.Config{PageSize: 2}, exampleV1)
	var mu sync.Mutex
	var got *manifest.Observed
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Observe, ServerID: "acme",
		OnObserved: func(o *manifest.Observed) { mu.Lock(); got = o; mu.Unlock() }})
	before := mock.LogTotal()
	obs, tl := listThrough(t, url, false, mcpclient.ToolCall{Name: "search_issues", Arguments: json.RawMessage(`{"query":"x"}`)})
	if len(tl.Tools) != 5 || obs.Pages != 3 {
		t.Errorf("observe serves the upstream's pages: %v in %d pages", names(tl), obs.Pages)
	}
	if len(obs.Calls) != 1 || obs.Calls[0].Code != mcpwire.CodeMethodNotFound {
		t.Errorf("a call in observe mode: %+v", obs.Calls)
	}
	for _, e := range mock.Log()[before:] {
		if e.Method == "tools/call" {
			t.Error("observe mode forwarded a tools/call")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got == nil || got.Observed.ToolsListComplete != manifest.Complete || len(got.Observed.ToolDigests) != 5 || got.Server.ID != "acme" {
		t.Fatalf("observed record %+v", got)
	}
}

// Audit mode forwards everything and logs what enforce would have done.
func TestAuditMode(t *testing.T) {
	mock, up := upstreamMock(t, mockserver.Config{}, exampleV2)
	var log logBuf
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Audit, Target: up,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Log: proxy.NewDecisionLog(&log)})
	before := mock.LogTotal()
	_, tl := listThrough(t, url, false, mcpclient.ToolCall{Name: "run_workflow_command", Arguments: json.RawMessage(`{"command":"id"}`)})
	if !slices.Contains(names(tl), "run_workflow_command") {
		t.Errorf("audit hides nothing: %v", names(tl))
	}
	calls := 0
	for _, e := range mock.Log()[before:] {
		if e.Method == "tools/call" {
			calls++
		}
	}
	if calls != 1 {
		t.Errorf("audit forwards the call: %d", calls)
	}
	var wouldDeny, hidden bool
	for _, r := range log.records(t) {
		if r.Method == "tools/call" && r.Decision == "audit_would_deny" && r.Tool == "run_workflow_command" {
			wouldDeny = true
		}
		if r.Method == "tools/list" && r.Decision == "hide" && r.Tool == "run_workflow_command" {
			hidden = true
		}
	}
	if !wouldDeny || !hidden {
		t.Errorf("audit log: would deny %v, would hide %v", wouldDeny, hidden)
	}
}

// Whole-server refusals: an identity mismatch, an upstream that cannot be
// listed completely (cursor cycle), a page cap.
func TestWithheldServers(t *testing.T) {
	for _, c := range []struct {
		name string
		mc   mockserver.Config
		id   manifest.Identity
		pc   func(*proxy.Config)
	}{
		{"identity", mockserver.Config{}, manifest.Identity{Endpoint: "https://elsewhere.example/mcp"}, nil},
		{"cursor cycle", mockserver.Config{PageSize: 2, CursorCycle: true}, manifest.Identity{}, nil},
		{"page cap", mockserver.Config{PageSize: 1}, manifest.Identity{}, func(c *proxy.Config) { c.MaxListPages = 3 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			mock, up := upstreamMock(t, c.mc, exampleV1)
			cfg := proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up, Baseline: baselineOf(t, exampleV1, c.id)}
			if c.pc != nil {
				c.pc(&cfg)
			}
			g, url := gateway(t, cfg)
			before := mock.LogTotal()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: url, Calls: []mcpclient.ToolCall{{Name: "search_issues", Arguments: json.RawMessage(`{"query":"x"}`)}}})
			if err == nil {
				tl, _ := manifest.ParseToolList(obs.Transcript)
				if len(tl.Tools) != 0 {
					t.Errorf("served %v", names(tl))
				}
				if len(obs.Calls) == 1 && obs.Calls[0].Code == 0 && obs.Calls[0].Err == "" {
					t.Error("a call went through to a withheld server")
				}
			}
			for _, e := range mock.Log()[before:] {
				if e.Method == "tools/call" {
					t.Error("the upstream saw a call")
				}
			}
			if g.Ready() {
				t.Error("a withheld gateway reports ready")
			}
		})
	}
}

// Headers that disagree with the body are -32020; a batch is refused.
func TestDownstreamFraming(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up, Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	post := func(body string, h map[string]string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp, b.String()
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_issues","arguments":{"query":"x"},` + meta + `}}`
	resp, out := post(body, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "delete_repository", "MCP-Protocol-Version": "2026-07-28"})
	if resp.StatusCode != 400 || !strings.Contains(out, "-32020") {
		t.Errorf("Mcp-Name disagreeing with the body: %d %s", resp.StatusCode, out)
	}
	resp, out = post(`[`+body+`]`, map[string]string{"Mcp-Method": "tools/call", "MCP-Protocol-Version": "2026-07-28"})
	if resp.StatusCode != 400 || !strings.Contains(out, "batch") {
		t.Errorf("a batch: %d %s", resp.StatusCode, out)
	}
	resp, out = post(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, map[string]string{"Mcp-Session-Id": "not-a-session"})
	if resp.StatusCode != 404 || !strings.Contains(out, "affinity") {
		t.Errorf("an unknown legacy session: %d %s", resp.StatusCode, out)
	}
}

// stdio downstream: the drop-in form, over pipes, with an HTTP upstream.
func TestServeStdio(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up, Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	inR, inW := ioPipe()
	outR, outW := ioPipe()
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"nope","arguments":{},` + meta + `}}`,
	}
	for _, l := range lines {
		inW.Write([]byte(l + "\n"))
	}
	var got []string
	buf := make([]byte, 1<<20)
	var acc bytes.Buffer
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < 2 && time.Now().Before(deadline) {
		n, err := outR.Read(buf)
		acc.Write(buf[:n])
		for {
			i := bytes.IndexByte(acc.Bytes(), '\n')
			if i < 0 {
				break
			}
			got = append(got, string(acc.Next(i+1)))
		}
		if err != nil {
			break
		}
	}
	inW.Close()
	<-done
	if len(got) != 2 {
		t.Fatalf("lines %q", got)
	}
	joined := strings.Join(got, "")
	if !strings.Contains(joined, `"id":1,"result":{`) || !strings.Contains(joined, `"search_issues"`) {
		t.Errorf("tools/list over stdio: %s", joined)
	}
	if !strings.Contains(joined, `"id":"two","error":{"code":-32602`) || !strings.Contains(joined, `call_unknown_tool`) {
		t.Errorf("an unknown tool over stdio: %s", joined)
	}
}

// A reloaded baseline takes effect at the next list without dropping the
// session; an invalid one withholds the server until a valid one comes
// (TestInvalidBaselineWithheld has every kind).
func TestReload(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV2)
	g, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up, Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	_, tl := listThrough(t, url, false)
	if slices.Contains(names(tl), "run_workflow_command") {
		t.Fatalf("before the reload: %v", names(tl))
	}
	if err := g.Reload(decide.NewBaseline("acme", manifest.Identity{}, nil)); err != nil {
		t.Fatalf("an empty baseline is valid: %v", err)
	}
	dup := decide.NewBaseline("acme", manifest.Identity{}, append(baselineOf(t, exampleV2, manifest.Identity{}).Tools, baselineOf(t, exampleV2, manifest.Identity{}).Tools...))
	if err := g.Reload(dup); err == nil {
		t.Error("a baseline with duplicate names was reloaded without an error")
	}
	if _, tl = listThrough(t, url, false); len(tl.Tools) != 0 {
		t.Errorf("after an invalid reload: %v", names(tl))
	}
	if err := g.Reload(baselineOf(t, exampleV2, manifest.Identity{})); err != nil {
		t.Fatal(err)
	}
	_, tl = listThrough(t, url, false)
	if !slices.Contains(names(tl), "run_workflow_command") || len(tl.Tools) != 5 {
		t.Errorf("after the reload: %v", names(tl))
	}
}

// When the upstream goes away, the gateway serves nothing; with
// ServeStale it keeps serving the last gated list.
func TestUpstreamGoneServeStale(t *testing.T) {
	for _, stale := range []bool{false, true} {
		tools, _ := mockserver.LoadToolsFile(exampleV1)
		s, _ := mockserver.New(mockserver.Config{Tools: tools})
		ts := httptest.NewServer(s)
		up := ts.URL + "/mcp"
		_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
			Baseline: baselineOf(t, exampleV1, manifest.Identity{}), RelistInterval: time.Nanosecond, ServeStale: stale, RequestTimeout: 2 * time.Second})
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
		list := func() string {
			req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Method", "tools/list")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			return b.String()
		}
		if out := list(); !strings.Contains(out, "search_issues") {
			t.Fatalf("first list: %s", out)
		}
		ts.Close()
		s.Close()
		out := list()
		if stale != strings.Contains(out, "search_issues") {
			t.Errorf("stale=%v, upstream gone: %s", stale, out)
		}
	}
}
