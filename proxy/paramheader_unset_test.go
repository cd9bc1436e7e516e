package proxy_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

const unsetTools = `{"tools":[{"name":"get_repo","description":"Fetch a repository.","inputSchema":{"type":"object","properties":{"owner":{"type":"string","x-mcp-header":"Owner"},"n":{"type":"integer","x-mcp-header":"N"},"f":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}}}]}`

// An HTTP downstream's Mcp-Param-* header for an annotated argument that
// gives no header (absent, null, not a string, integer or boolean, beyond
// the safe integers, or under an absent object) is refused -32020 before
// the upstream, in enforce and in audit; it went upstream as it came, and
// the mock server, with the same check, took it. Found by an adversarial
// review.
func TestUnsetArgumentHeaderRefused(t *testing.T) {
	manifestPath := toolsManifest(t, unsetTools)
	type tc struct{ args, header, value string }
	both := []tc{
		{`{}`, "Mcp-Param-Owner", "forged"},
		{`{"f":{}}`, "Mcp-Param-Region", "us"},
		{`{"n":9007199254740993}`, "Mcp-Param-N", "7"},
	}
	// In enforce, the arguments' check against the schema refuses these
	// first.
	auditOnly := []tc{
		{`{"owner":null}`, "Mcp-Param-Owner", "forged"},
		{`{"owner":{"x":1}}`, "Mcp-Param-Owner", "forged"},
		{`{"owner":["a"]}`, "Mcp-Param-Owner", "forged"},
		{`{"n":1.5}`, "Mcp-Param-N", "7"},
		{`{"f":"eu"}`, "Mcp-Param-Region", "us"},
	}
	for _, mode := range []proxy.Mode{proxy.Enforce, proxy.Audit} {
		mock, up := upstreamMock(t, mockserver.Config{}, manifestPath)
		_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: mode, Target: up,
			Baseline: baselineOf(t, manifestPath, manifest.Identity{})})
		if status, _, body := postModern(t, url, "tools/list", modernMeta, nil); status != 200 {
			t.Fatalf("tools/list: %d %s", status, body)
		}
		cases := both
		if mode == proxy.Audit {
			cases = append(cases, auditOnly...)
		}
		for _, c := range cases {
			call := `"name":"get_repo","arguments":` + c.args + `,` + modernMeta
			before := mock.LogTotal()
			status, _, body := postModern(t, url, "tools/call", call, map[string]string{"Mcp-Name": "get_repo", c.header: c.value})
			if status != 400 || !strings.Contains(body, `"code":-32020`) {
				t.Errorf("%s: arguments %s with %s: %s: %d %.160s, want the gateway's 400 -32020", mode, c.args, c.header, c.value, status, body)
			}
			for _, e := range mock.Log()[before:] {
				if e.Method == "tools/call" {
					t.Errorf("%s: arguments %s with %s: the call reached the upstream", mode, c.args, c.header)
				}
			}
			// Without the header the call is the upstream's to answer.
			if status, _, body := postModern(t, url, "tools/call", call, map[string]string{"Mcp-Name": "get_repo"}); status == 400 && strings.Contains(body, "Mcp-Param") {
				t.Errorf("%s: arguments %s without headers: %d %.160s", mode, c.args, status, body)
			}
		}
	}
}

// A stdio downstream's call in audit mode, before any list it observed,
// reaches an HTTP upstream with the Mcp-Param-* headers it requires, as in
// enforce: audit lists the upstream once for the schemas. It was refused
// upstream with -32020 (found by an adversarial review).
func TestAuditCallBeforeAnyListGetsItsHeaders(t *testing.T) {
	manifestPath := toolsManifest(t, unsetTools)
	for _, mode := range []proxy.Mode{proxy.Enforce, proxy.Audit} {
		for _, list := range []bool{false, true} { // true: a list sent just before the call
			mock, up := upstreamMock(t, mockserver.Config{}, manifestPath)
			g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: mode, Target: up,
				Baseline: baselineOf(t, manifestPath, manifest.Identity{})})
			if err != nil {
				t.Fatal(err)
			}
			in := `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"get_repo","arguments":{"owner":"a","n":3},` + modernMeta + `}}` + "\n" +
				`{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"get_repo","arguments":{"owner":"b"},` + modernMeta + `}}` + "\n"
			if list {
				in = `{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{` + modernMeta + `}}` + "\n" + in
			}
			var out strings.Builder
			_ = g.ServeStdio(context.Background(), strings.NewReader(in), &out)
			g.Close()
			for _, id := range []string{"c", "d"} {
				if !strings.Contains(out.String(), `"id":"`+id+`","result"`) {
					i := strings.Index(out.String(), `"id":"`+id+`"`)
					t.Errorf("%s, list first %v: call %s answered %.160s, want the upstream's result", mode, list, id, out.String()[max(i, 0):])
				}
			}
			lists := 0
			for _, e := range mock.Log() {
				if e.Method == "tools/list" {
					lists++
				}
			}
			if mode == proxy.Audit && lists > 2 {
				t.Errorf("audit, list first %v: %d listings for two calls, want at most one of its own", list, lists)
			}
		}
	}
}

// A first call whose client gives up (its HTTP request cut at 200 ms, the
// upstream answering in 600 ms) does not leave the audit session without
// the schemas: the listing for them is the session's, not the call's.
// It was cancelled with the call and never tried again, so a later forged
// Mcp-Param header went upstream unchecked, for every client of the shared
// stateless session (found by a review).
func TestAuditSchemasOutliveAnAbortedCall(t *testing.T) {
	manifestPath := toolsManifest(t, unsetTools)
	mock, up := upstreamMock(t, mockserver.Config{Slow: 600 * time.Millisecond}, manifestPath)
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Audit, Target: up,
		Baseline: baselineOf(t, manifestPath, manifest.Identity{})})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_repo","arguments":{"owner":"o"},` + modernMeta + `}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_repo", "Mcp-Param-Owner": "o"} {
		req.Header.Set(k, v)
	}
	if resp, err := (&http.Client{Timeout: 200 * time.Millisecond}).Do(req); err == nil {
		resp.Body.Close()
	}
	time.Sleep(time.Second)
	forged := `"name":"get_repo","arguments":{},` + modernMeta
	before := mock.LogTotal()
	status, _, out := postModern(t, url, "tools/call", forged, map[string]string{"Mcp-Name": "get_repo", "Mcp-Param-Owner": "forged"})
	if status != http.StatusBadRequest || !strings.Contains(out, `"code":-32020`) {
		t.Errorf("a forged Mcp-Param-Owner after an aborted first call: %d %.160s, want the gateway's 400 -32020", status, out)
	}
	for _, e := range mock.Log()[before:] {
		if e.Method == "tools/call" {
			t.Error("the forged call reached the upstream")
		}
	}
}
