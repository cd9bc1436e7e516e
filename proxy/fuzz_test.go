package proxy_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

var (
	fuzzOnce    sync.Once
	fuzzHandler http.Handler
)

// FuzzDownstreamMessage posts arbitrary bodies (with and without MCP
// headers) to an enforcing gateway in front of the strict mock: the
// gateway never panics, answers every request with JSON (or 202 for a
// notification), and never lets a call to a tool outside the baseline
// through.
func FuzzDownstreamMessage(f *testing.F) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_issues","arguments":{"repo":"a","query":"b"},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"delete_everything","arguments":{},` + meta + `}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":null,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
	} {
		f.Add(seed, "tools/call", "search_issues")
	}
	f.Fuzz(func(t *testing.T, body, method, name string) {
		fuzzOnce.Do(func() {
			tools, err := mockserver.LoadToolsFile(exampleV1)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := mockserver.New(mockserver.Config{Tools: tools})
			up := httptest.NewServer(s)
			b := baselineOf(t, exampleV1, manifest.Identity{})
			g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up.URL + "/mcp"}, Mode: proxy.Enforce, Target: up.URL + "/mcp", Baseline: b, StrictArguments: true})
			if err != nil {
				t.Fatal(err)
			}
			fuzzHandler = g.Handler(proxy.HTTPOptions{})
		})
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		if method != "" && !strings.ContainsAny(method, "\r\n\x00") {
			req.Header.Set("Mcp-Method", method)
		}
		if name != "" && !strings.ContainsAny(name, "\r\n\x00") {
			req.Header.Set("Mcp-Name", name)
		}
		rec := httptest.NewRecorder()
		fuzzHandler.ServeHTTP(rec, req)
		out := rec.Body.Bytes()
		switch {
		case rec.Code == http.StatusAccepted:
		case strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream"):
		case !json.Valid(out):
			t.Fatalf("status %d, not JSON: %q", rec.Code, out)
		}
		// A successful tools/call answer only for an approved tool.
		var r struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(out, &r) == nil && r.Result != nil && strings.Contains(body, `"tools/call"`) {
			var req struct {
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(body), &req) == nil && !approved[req.Params.Name] {
				t.Fatalf("a call to %q went through: %s", req.Params.Name, out)
			}
		}
	})
}

var approved = map[string]bool{"search_issues": true, "get_file_contents": true, "create_or_update_file": true, "add_deploy_key": true, "list_branches": true}
