package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/telemetry"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
	"github.com/mcpdrift/mcpdrift/telemetry/otlptest"
)

// seenUpstream is the mock upstream behind a handler that keeps every
// JSON-RPC message it was sent.
type seenUpstream struct {
	h    http.Handler
	mu   sync.Mutex
	msgs [][]byte
}

func (u *seenUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	if len(b) > 0 {
		u.mu.Lock()
		u.msgs = append(u.msgs, b)
		u.mu.Unlock()
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	u.h.ServeHTTP(w, r)
}

// sent returns the messages of a method the upstream received, parsed.
func (u *seenUpstream) sent(t *testing.T, method string) []*frame.Message {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []*frame.Message
	for _, b := range u.msgs {
		m, e := frame.FromClient(bytes.Clone(b))
		if e != nil {
			t.Fatalf("the upstream got %s: %s", b, e.Message)
		}
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

func watchedUpstream(t *testing.T, cfg mockserver.Config) (*seenUpstream, string) {
	t.Helper()
	tools, err := mockserver.LoadToolsFile(exampleV1)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tools = tools
	s := mockserver.MustNew(cfg)
	u := &seenUpstream{h: s}
	ts := httptest.NewUnstartedServer(u)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	return u, ts.URL + "/mcp"
}

func provider(t *testing.T, c *otlptest.Collector, service string) *telemetry.Provider {
	t.Helper()
	p, err := telemetry.New(&telemetry.Settings{URL: c.URL() + "/v1/traces", ServiceName: service}, telemetry.Options{Warn: func(s string) { t.Errorf("warning: %s", s) }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// contextOf is the trace context a message carries.
func contextOf(t *testing.T, m *frame.Message) mcptrace.SpanContext {
	t.Helper()
	sc, err := mcptrace.FromMeta(m)
	if err != nil || !sc.Valid() {
		t.Fatalf("%s carries no valid trace context (%v): %s", m.Method, err, m.Raw)
	}
	return sc
}

// TestTraceThroughGateway: the downstream client's CLIENT span is the
// parent of the gateway's SERVER span, which is the parent of the
// gateway's CLIENT span, whose traceparent is what the upstream sees in
// params._meta — for a forwarded tools/call and for the pages of the
// gateway's own listing, in both eras; spans carry the MCP attributes and
// never an argument value.
func TestTraceThroughGateway(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		name := "modern"
		if legacy {
			name = "legacy"
		}
		t.Run(name, func(t *testing.T) {
			col := otlptest.New(otlptest.Accept)
			defer col.Close()
			agent, gw := provider(t, col, "agent"), provider(t, col, "gateway")
			up, upURL := watchedUpstream(t, mockserver.Config{PageSize: 3})
			_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: upURL}, Mode: proxy.Enforce, Target: upURL,
				Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Tracer: gw.Tracer()})
			cfg := mcpclient.Config{BaseURL: url, Tracer: agent.Tracer(), Calls: []mcpclient.ToolCall{
				{Name: "search_issues", Arguments: json.RawMessage(`{"repo":"a/b","query":"ARGUMENT-VALUE-7"}`)},
				{Name: "no_such_tool", Arguments: json.RawMessage(`{}`)},
			}}
			if legacy {
				cfg.PreferredRevision = mcpwire.Rev20250618
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			obs, err := mcpclient.ListTools(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(obs.Calls) != 2 || obs.Calls[0].Result == nil || obs.Calls[1].Code != mcpwire.CodeInvalidParams {
				t.Fatalf("calls %+v", obs.Calls)
			}
			if !agent.Flush() || !gw.Flush() {
				t.Fatal("export failed")
			}
			spans := col.Spans()
			byID := otlptest.ByID(spans)
			find := func(service, kind, name string) []otlptest.Span {
				var out []otlptest.Span
				for _, s := range spans {
					if s.Service == service && s.Kind == kind && s.Name == name {
						out = append(out, s)
					}
				}
				return out
			}
			one := func(service, kind, name string) otlptest.Span {
				t.Helper()
				got := find(service, kind, name)
				if len(got) != 1 {
					t.Fatalf("%d %s %s spans %q, want 1; all: %+v", len(got), service, kind, name, spans)
				}
				return got[0]
			}
			// The forwarded call.
			cc := one("agent", "CLIENT", "tools/call search_issues")
			srv := one("gateway", "SERVER", "tools/call search_issues")
			gc := one("gateway", "CLIENT", "tools/call search_issues")
			if srv.ParentSpanID != cc.SpanID || srv.TraceID != cc.TraceID || gc.ParentSpanID != srv.SpanID || gc.TraceID != cc.TraceID {
				t.Fatalf("parentage: client %+v\nserver %+v\ngateway client %+v", cc, srv, gc)
			}
			calls := up.sent(t, "tools/call")
			if len(calls) != 1 {
				t.Fatalf("the upstream got %d tools/call", len(calls))
			}
			if sc := contextOf(t, calls[0]); sc.SpanIDString() != gc.SpanID || sc.TraceIDString() != gc.TraceID {
				t.Fatalf("the upstream saw %s, want the gateway's CLIENT span %s", sc.TraceParent(), gc.SpanID)
			}
			for k, v := range map[string]string{mcptrace.KeyMethodName: "tools/call", mcptrace.KeyToolName: "search_issues", mcptrace.KeyOperationName: "execute_tool",
				mcptrace.KeyNetworkTransport: "tcp", mcptrace.KeyGatewayMode: "enforce"} {
				if srv.Attrs[k] != v {
					t.Errorf("SERVER %s = %q, want %q", k, srv.Attrs[k], v)
				}
			}
			if gc.Attrs[mcptrace.KeyServerAddress] != "127.0.0.1" || gc.Attrs[mcptrace.KeyServerPort] == "" || gc.Attrs[mcptrace.KeyRequestID] == "" {
				t.Errorf("gateway CLIENT attributes %v", gc.Attrs)
			}
			if legacy && (srv.Attrs[mcptrace.KeySessionID] == "" || !strings.HasPrefix(srv.Attrs[mcptrace.KeySessionID], "sha256:")) {
				t.Errorf("legacy SERVER session %q", srv.Attrs[mcptrace.KeySessionID])
			}
			// The refused call: a SERVER span with the refusal's code, no
			// upstream call.
			ref := one("gateway", "SERVER", "tools/call no_such_tool")
			if ref.Attrs[mcptrace.KeyErrorType] != "-32602" || !ref.StatusError || len(find("gateway", "CLIENT", "tools/call no_such_tool")) != 0 {
				t.Errorf("refused call span %+v", ref)
			}
			// Each SERVER span of a call says what the gateway decided, as
			// the decision log does.
			if ref.Attrs[mcptrace.KeyGatewayDecision] != "deny" || ref.Attrs[mcptrace.KeyGatewayReason] != decide.ReasonUnknownTool {
				t.Errorf("refused call decision %q, reason %q", ref.Attrs[mcptrace.KeyGatewayDecision], ref.Attrs[mcptrace.KeyGatewayReason])
			}
			if srv.Attrs[mcptrace.KeyGatewayDecision] != "allow" || srv.Attrs[mcptrace.KeyGatewayReason] == "" {
				t.Errorf("forwarded call decision %q, reason %q", srv.Attrs[mcptrace.KeyGatewayDecision], srv.Attrs[mcptrace.KeyGatewayReason])
			}
			// tools/list: the downstream's page → SERVER → the gateway's
			// listing → its pages, each page what the upstream saw.
			lsrv := one("gateway", "SERVER", "tools/list")
			if p := byID[lsrv.ParentSpanID]; p.Service != "agent" || p.Kind != "CLIENT" || p.Name != "tools/list" {
				t.Fatalf("the SERVER tools/list span's parent is %+v", p)
			}
			listing := one("gateway", "INTERNAL", "tools/list")
			pages := find("gateway", "CLIENT", "tools/list")
			lists := up.sent(t, "tools/list")
			if listing.ParentSpanID != lsrv.SpanID || listing.Attrs[mcptrace.KeyListPages] != fmt.Sprint(len(lists)) {
				t.Fatalf("listing %+v", listing)
			}
			if len(pages) < 2 || len(pages) != len(lists) {
				t.Fatalf("%d page spans, the upstream got %d pages", len(pages), len(lists))
			}
			for _, m := range lists {
				sc := contextOf(t, m)
				p, ok := byID[sc.SpanIDString()]
				if !ok || p.ParentSpanID != listing.SpanID || p.Kind != "CLIENT" {
					t.Errorf("page %s carries %s, not a page span of the listing", m.Raw, sc.TraceParent())
				}
			}
			// Nothing of the arguments or the descriptions in any span.
			for _, b := range col.Bodies() {
				for _, bad := range []string{"ARGUMENT-VALUE-7", "a/b", "Search issues"} {
					if bytes.Contains(b, []byte(bad)) {
						t.Errorf("an export carries %q", bad)
					}
				}
			}
		})
	}
}

// post sends one 2026-07-28 message to the gateway with the headers its
// body implies.
func post(t *testing.T, url string, body []byte) *http.Response {
	t.Helper()
	m, err := frame.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	hs, err := frame.DeriveHeaders(m, "")
	if err != nil {
		t.Fatal(err)
	}
	hs.Set(req.Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// listWith is a 2026-07-28 tools/list (forwarded in audit mode) with
// more _meta members.
func listWith(meta string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":"p1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}` + meta + `}}}`)
}

// TestDownstreamContextDropped: a malformed or oversized traceparent from
// a downstream is dropped — the SERVER span starts a trace of its own and
// says why, the upstream sees only the gateway's CLIENT span — and a bad
// tracestate is dropped alone. With tracing off, the bytes pass as they
// came.
func TestDownstreamContextDropped(t *testing.T) {
	const good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, c := range []struct {
		name, meta, dropped string
		parent              bool
	}{
		{"malformed", `,"traceparent":"00-ZZf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=1"`, "malformed traceparent", false},
		{"zero ids", `,"traceparent":"00-00000000000000000000000000000000-0000000000000000-01"`, "malformed traceparent", false},
		{"oversized", `,"traceparent":"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-` + strings.Repeat("x", 1<<20) + `"`, "oversized traceparent", false},
		{"not a string", `,"traceparent":{"a":1}`, "malformed traceparent", false},
		{"bad tracestate", `,"traceparent":"` + good + `","tracestate":"UPPER=1"`, "malformed tracestate", true},
		{"valid", `,"traceparent":"` + good + `","tracestate":"rojo=1"`, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := otlptest.New(otlptest.Accept)
			defer col.Close()
			gw := provider(t, col, "gateway")
			up, upURL := watchedUpstream(t, mockserver.Config{})
			_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: upURL}, Mode: proxy.Audit, Target: upURL,
				Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Tracer: gw.Tracer()})
			if resp := post(t, url, listWith(c.meta)); resp.StatusCode != http.StatusOK {
				t.Fatalf("tools/list: HTTP %d", resp.StatusCode)
			}
			gw.Flush()
			var srv, cl otlptest.Span
			for _, s := range col.Spans() {
				switch s.Kind {
				case "SERVER":
					srv = s
				case "CLIENT":
					cl = s
				}
			}
			if srv.SpanID == "" || cl.ParentSpanID != srv.SpanID {
				t.Fatalf("spans %+v", col.Spans())
			}
			if c.parent != (srv.ParentSpanID == "00f067aa0ba902b7") || c.parent != (srv.TraceID == "4bf92f3577b34da6a3ce929d0e0e4736") {
				t.Fatalf("SERVER span %+v: parent %v", srv, c.parent)
			}
			if srv.Attrs[mcptrace.KeyContextDropped] != c.dropped {
				t.Errorf("dropped = %q, want %q", srv.Attrs[mcptrace.KeyContextDropped], c.dropped)
			}
			pings := up.sent(t, "tools/list")
			if len(pings) != 1 {
				t.Fatalf("%d tools/list upstream", len(pings))
			}
			sc := contextOf(t, pings[0])
			if sc.SpanIDString() != cl.SpanID || bytes.Contains(pings[0].Raw, []byte("ZZ")) || bytes.Contains(pings[0].Raw, []byte("xxxx")) || bytes.Contains(pings[0].Raw, []byte("UPPER")) {
				t.Errorf("the upstream got %.300s", pings[0].Raw)
			}
			if c.name == "valid" && sc.TraceState != "rojo=1" {
				t.Errorf("a valid tracestate was not propagated: %q", sc.TraceState)
			}
		})
	}
	// Tracing off: the downstream's bytes, whatever their context.
	up, upURL := watchedUpstream(t, mockserver.Config{})
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: upURL}, Mode: proxy.Audit, Target: upURL, Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	body := listWith(`,"traceparent":"00-ZZf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`)
	post(t, url, body)
	if pings := up.sent(t, "tools/list"); len(pings) != 1 || !bytes.Equal(pings[0].Raw, body) {
		t.Fatalf("with tracing off the upstream got other bytes: %v", pings)
	}
}

// TestTraceStdioUpstream: with tracing on, a stdio upstream's messages
// are rewritten before their ids are multiplexed — the approved call is
// answered with the downstream's own id — and the CLIENT spans say pipe.
func TestTraceStdioUpstream(t *testing.T) {
	abs, _ := os.Getwd()
	col := otlptest.New(otlptest.Accept)
	defer col.Close()
	gw := provider(t, col, "gateway")
	for _, legacy := range []bool{false, true} {
		_, url := gateway(t, proxy.Config{Upstream: stdioUpstream(t, abs+"/"+exampleV1, nil), Mode: proxy.Enforce, Target: "stdio:mock",
			Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Tracer: gw.Tracer()})
		obs, tl := listThrough(t, url, legacy, mcpclient.ToolCall{Name: "list_branches", Arguments: json.RawMessage(`{"repo":"a/b"}`)})
		if len(tl.Tools) != 5 || len(obs.Calls) != 1 || obs.Calls[0].Code != 0 || obs.Calls[0].Result == nil {
			t.Fatalf("legacy=%v: served %d, calls %+v", legacy, len(tl.Tools), obs.Calls)
		}
	}
	gw.Flush()
	n := 0
	for _, s := range col.Spans() {
		if s.Kind == "CLIENT" {
			n++
			if s.Attrs[mcptrace.KeyNetworkTransport] != "pipe" || s.Attrs[mcptrace.KeyServerAddress] != "" {
				t.Errorf("CLIENT span %+v", s)
			}
		}
	}
	if n == 0 {
		t.Fatal("no CLIENT span")
	}
}

// TestTraceDecisions: under audit, a call's SERVER span says what enforce
// would have decided (audit_allow, audit_would_deny and its reason); under
// observe, a refused method's says deny, observe_mode. Both are forwarded
// or refused exactly as without tracing.
func TestTraceDecisions(t *testing.T) {
	for _, c := range []struct {
		mode         proxy.Mode
		okDecision   string
		badDecision  string
		badReason    string
		badForwarded bool
	}{
		{proxy.Audit, "audit_allow", "audit_would_deny", decide.ReasonUnknownTool, true},
		{proxy.Observe, "deny", "deny", "observe_mode", false},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			col := otlptest.New(otlptest.Accept)
			defer col.Close()
			gw := provider(t, col, "gateway")
			up, upURL := watchedUpstream(t, mockserver.Config{})
			_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: upURL}, Mode: c.mode, Target: upURL,
				Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Tracer: gw.Tracer()})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: url, Calls: []mcpclient.ToolCall{
				{Name: "search_issues", Arguments: json.RawMessage(`{"repo":"a/b","query":"q"}`)},
				{Name: "no_such_tool", Arguments: json.RawMessage(`{}`)},
			}}); err != nil {
				t.Fatal(err)
			}
			if !gw.Flush() {
				t.Fatal("export failed")
			}
			got := map[string]otlptest.Span{}
			for _, s := range col.Spans() {
				if s.Kind == "SERVER" {
					got[s.Name] = s
				}
			}
			ok, bad := got["tools/call search_issues"], got["tools/call no_such_tool"]
			if ok.Attrs[mcptrace.KeyGatewayDecision] != c.okDecision {
				t.Errorf("search_issues: decision %q, want %q", ok.Attrs[mcptrace.KeyGatewayDecision], c.okDecision)
			}
			if bad.Attrs[mcptrace.KeyGatewayDecision] != c.badDecision || bad.Attrs[mcptrace.KeyGatewayReason] != c.badReason {
				t.Errorf("no_such_tool: decision %q, reason %q", bad.Attrs[mcptrace.KeyGatewayDecision], bad.Attrs[mcptrace.KeyGatewayReason])
			}
			if n := len(up.sent(t, "tools/call")); c.badForwarded && n != 2 || !c.badForwarded && n != 0 {
				t.Errorf("%d calls reached the upstream", n)
			}
			if s := got["tools/list"]; s.Attrs[mcptrace.KeyGatewayDecision] != "" {
				t.Errorf("tools/list span has a decision %q", s.Attrs[mcptrace.KeyGatewayDecision])
			}
		})
	}
}
