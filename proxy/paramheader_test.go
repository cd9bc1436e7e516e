package proxy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// One tool whose x-mcp-header annotations keep the transport's rules and
// three a 2026-07-28 HTTP client must exclude (the conformance suite's
// http-invalid-tool-headers kinds: number-typed, not reached through
// properties, not a header name).
const paramHeaderTools = `{"tools":[
{"name":"get_repo","description":"Fetch a repository.","inputSchema":{"type":"object","properties":{"owner":{"type":"string","x-mcp-header":"Owner"}}}},
{"name":"score","description":"Score.","inputSchema":{"type":"object","properties":{"s":{"type":"number","x-mcp-header":"Score"}}}},
{"name":"by_ids","description":"By ids.","inputSchema":{"type":"object","properties":{"ids":{"type":"array","items":{"type":"string","x-mcp-header":"Id"}}}}},
{"name":"inject","description":"Inject.","inputSchema":{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"Q\r\nX-Evil: 1"}}}}
]}`

// TestInvalidParamHeaderToolsNotServed: in front of a 2026-07-28 HTTP
// upstream the gateway is a client of that transport and excludes what
// its clients MUST exclude, approved or not (tool_param_header_invalid):
// the tools are not listed, their calls are refused before the upstream,
// and the decision log says why. A legacy session and a stdio upstream
// mirror no argument into a header: everything approved is served.
func TestInvalidParamHeaderToolsNotServed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(path, []byte(paramHeaderTools), 0o644); err != nil {
		t.Fatal(err)
	}
	all := []string{"by_ids", "get_repo", "inject", "score"}
	sorted := func(tl *manifest.ToolList) []string { n := names(tl); slices.Sort(n); return n }

	mock, up := upstreamMock(t, mockserver.Config{}, path)
	var log logBuf
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
		Baseline: baselineOf(t, path, manifest.Identity{}), Log: proxy.NewDecisionLog(&log)})
	if _, tl := listThrough(t, url, false); !slices.Equal(names(tl), []string{"get_repo"}) {
		t.Errorf("modern over HTTP: served %v, want only get_repo", names(tl))
	}
	before := mock.LogTotal()
	status, _, body := postModern(t, url, "tools/call", `"name":"score","arguments":{"s":1.5},`+modernMeta, map[string]string{"Mcp-Name": "score"})
	if status != 400 || !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, `"reason":"call_hidden_tool"`) {
		t.Errorf("a call of an excluded tool: %d %s", status, body)
	}
	for _, e := range mock.Log()[before:] {
		if e.Method == "tools/call" {
			t.Error("the call of an excluded tool reached the upstream")
		}
	}
	var hidden []string
	note := false
	for _, r := range log.records(t) {
		if r.Method == "tools/list" && r.Decision == "hide" && slices.Contains(r.Reasons, "tool_param_header_invalid") {
			hidden = append(hidden, r.Tool)
		}
		if r.Event == "note" && strings.Contains(r.Note, `tool "inject" is not served: x-mcp-header "Q\u000d\u000aX-Evil: 1"`) {
			note = true
		}
	}
	slices.Sort(hidden)
	hidden = slices.Compact(hidden)
	if !slices.Equal(hidden, []string{"by_ids", "inject", "score"}) || !note {
		t.Errorf("decision log: hidden %v, note %v\n%s", hidden, note, log.b.String())
	}

	// Audit forwards the list as it came and logs what enforce would do.
	var alog logBuf
	_, aurl := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Audit, Target: up,
		Baseline: baselineOf(t, path, manifest.Identity{}), Log: proxy.NewDecisionLog(&alog)})
	if _, tl := listThrough(t, aurl, false); !slices.Equal(sorted(tl), all) {
		t.Errorf("audit: forwarded %v, want all", sorted(tl))
	}
	postModern(t, aurl, "tools/call", `"name":"score","arguments":{"s":1.5},`+modernMeta, map[string]string{"Mcp-Name": "score"})
	var audited, call []string
	for _, r := range alog.records(t) {
		if r.Method == "tools/list" && r.Decision == "hide" && slices.Contains(r.Reasons, "tool_param_header_invalid") {
			audited = append(audited, r.Tool)
		}
		if r.Method == "tools/call" && r.Tool == "score" {
			call = append(call, r.Reasons...)
		}
	}
	slices.Sort(audited)
	if !slices.Equal(slices.Compact(audited), []string{"by_ids", "inject", "score"}) || !slices.Contains(call, "call_hidden_tool") {
		t.Errorf("audit log: hidden %v, call reasons %v\n%s", audited, call, alog.b.String())
	}

	if _, tl := listThrough(t, url, true); !slices.Equal(sorted(tl), all) {
		t.Errorf("legacy session over HTTP: served %v, want all", sorted(tl))
	}
	_, surl := gateway(t, proxy.Config{Upstream: stdioUpstream(t, path, nil), Mode: proxy.Enforce, Target: "stdio:mock",
		Baseline: baselineOf(t, path, manifest.Identity{})})
	if _, tl := listThrough(t, surl, false); !slices.Equal(sorted(tl), all) {
		t.Errorf("stdio upstream: served %v, want all", sorted(tl))
	}
}
