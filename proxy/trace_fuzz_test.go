package proxy_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// idTracer gives every span fresh random ids (what the SDK does) and
// records nothing.
type idTracer struct{}

type idSpan struct{ sc mcptrace.SpanContext }

func (idTracer) Start(ctx context.Context, r mcptrace.Request) (context.Context, mcptrace.Span) {
	s := &idSpan{}
	_, _ = rand.Read(s.sc.TraceID[:])
	_, _ = rand.Read(s.sc.SpanID[:])
	s.sc.TraceID[0] |= 1
	s.sc.SpanID[0] |= 1
	if r.Parent.Valid() {
		s.sc.TraceID, s.sc.TraceState = r.Parent.TraceID, r.Parent.TraceState
	}
	s.sc.Flags = 1
	return ctx, s
}

func (s *idSpan) Context() mcptrace.SpanContext { return s.sc }
func (s *idSpan) End(mcptrace.Outcome)          {}

var (
	tracedFuzzOnce sync.Once
	tracedHandler  http.Handler
	tracedSeen     *seenUpstream
)

// FuzzTracedDownstream posts arbitrary bodies to an auditing gateway with
// tracing on: it never panics, answers every request with JSON (or 202),
// and everything it sends upstream is a valid message whose trace context
// — when it has one — is valid: a downstream's malformed or oversized
// context is never propagated.
func FuzzTracedDownstream(f *testing.F) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `,"traceparent":"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_issues","arguments":{"repo":"a","query":"b"},` + meta + `,"traceparent":{"x":1}}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,` + meta + `,"tracestate":"k=v"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping","params":{` + meta + `}}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		tracedFuzzOnce.Do(func() {
			tools, err := mockserver.LoadToolsFile(exampleV1)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := mockserver.New(mockserver.Config{Tools: tools})
			tracedSeen = &seenUpstream{h: s}
			up := httptest.NewServer(tracedSeen)
			g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up.URL + "/mcp"}, Mode: proxy.Audit, Target: up.URL + "/mcp",
				Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Tracer: idTracer{}})
			if err != nil {
				t.Fatal(err)
			}
			tracedHandler = g.Handler(proxy.HTTPOptions{})
		})
		tracedSeen.mu.Lock()
		tracedSeen.msgs = nil
		tracedSeen.mu.Unlock()
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if m, err := frame.Parse([]byte(body)); err == nil {
			if hs, err := frame.DeriveHeaders(m, ""); err == nil {
				hs.Set(req.Header)
			}
		}
		rec := httptest.NewRecorder()
		tracedHandler.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted && !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("status %d, not JSON: %q", rec.Code, rec.Body.Bytes())
		}
		tracedSeen.mu.Lock()
		defer tracedSeen.mu.Unlock()
		for _, b := range tracedSeen.msgs {
			m, e := frame.FromClient(bytes.Clone(b))
			if e != nil {
				t.Fatalf("the upstream got an invalid message %q: %s", b, e.Message)
			}
			if !m.Kind.IsResponse() && mcptrace.HasContext(m) {
				if sc, err := mcptrace.FromMeta(m); err != nil || !sc.Valid() {
					t.Fatalf("the upstream got a bad trace context (%v): %q", err, b)
				}
			}
		}
	})
}
