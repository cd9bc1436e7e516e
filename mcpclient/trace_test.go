package mcpclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// fakeTracer records the spans it starts; parents come from the context.
type fakeTracer struct {
	mu    sync.Mutex
	spans []*fakeSpan
}

type fakeSpan struct {
	req    mcptrace.Request
	sc     mcptrace.SpanContext
	parent *fakeSpan
	out    mcptrace.Outcome
	ended  bool
	tracer *fakeTracer
}

type fakeKey struct{}

func (t *fakeTracer) Start(ctx context.Context, r mcptrace.Request) (context.Context, mcptrace.Span) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.spans) + 1
	s := &fakeSpan{req: r, tracer: t, sc: mcptrace.SpanContext{TraceID: [16]byte{0xaa, 1}, SpanID: [8]byte{0xbb, byte(n)}, Flags: 1}}
	s.parent, _ = ctx.Value(fakeKey{}).(*fakeSpan)
	t.spans = append(t.spans, s)
	return context.WithValue(ctx, fakeKey{}, s), s
}

func (s *fakeSpan) Context() mcptrace.SpanContext { return s.sc }
func (s *fakeSpan) End(o mcptrace.Outcome) {
	s.tracer.mu.Lock()
	defer s.tracer.mu.Unlock()
	s.out, s.ended = o, true
}

// bodies wraps h and keeps every request body.
type bodies struct {
	h  http.Handler
	mu sync.Mutex
	b  [][]byte
}

func (b *bodies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if len(body) > 0 {
		b.mu.Lock()
		b.b = append(b.b, body)
		b.mu.Unlock()
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	b.h.ServeHTTP(w, r)
}

func tracedServer(t *testing.T, cfg mockserver.Config) (*bodies, string) {
	s := mockserver.MustNew(cfg)
	b := &bodies{h: s}
	ts := httptest.NewUnstartedServer(b)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { s.Close(); ts.Close() })
	return b, ts.URL
}

// TestTracing: with a Tracer, each request and notification is a CLIENT
// span that carries its traceparent in params._meta, a listing of
// several pages is one INTERNAL span over its page spans, and a tools/call
// names its tool; the mock (strict) accepts every request in both eras.
func TestTracing(t *testing.T) {
	for _, era := range []struct {
		name    string
		cfg     mockserver.Config
		methods []string
	}{
		{"modern", mockserver.Config{Tools: mockTools("t", 5), PageSize: 2, Era: mockserver.ModernOnly},
			[]string{"server/discover", "tools/list", "tools/list", "tools/list", "tools/call"}},
		{"legacy", mockserver.Config{Tools: mockTools("t", 5), PageSize: 2, Era: mockserver.LegacyOnly},
			[]string{"server/discover", "initialize", "notifications/initialized", "tools/list", "tools/list", "tools/list", "tools/call"}},
	} {
		t.Run(era.name, func(t *testing.T) {
			b, url := tracedServer(t, era.cfg)
			tr := &fakeTracer{}
			ctx, root := tr.Start(context.Background(), mcptrace.Request{Kind: mcptrace.Internal, Name: "run"})
			obs, err := ListTools(ctx, Config{BaseURL: url, Tracer: tr, Calls: []ToolCall{{Name: "t1", Arguments: []byte(`{"secret-arg":"argument-value-xyz"}`)}}})
			if err != nil {
				t.Fatal(err)
			}
			root.End(mcptrace.Outcome{})
			if obs.Pages != 3 || obs.Completeness != "complete" || len(obs.Calls) != 1 {
				t.Fatalf("pages %d, %s, calls %+v", obs.Pages, obs.Completeness, obs.Calls)
			}
			var clients []*fakeSpan
			var list *fakeSpan
			for _, s := range tr.spans {
				if !s.ended {
					t.Errorf("span %s not ended", mcptrace.SpanName(s.req))
				}
				switch {
				case s.req.Kind == mcptrace.Client:
					clients = append(clients, s)
				case s.req.Name == "tools/list":
					list = s
				}
			}
			if len(clients) != len(era.methods) || list == nil || list.parent != root {
				t.Fatalf("%d client spans, listing %v", len(clients), list)
			}
			for i, s := range clients {
				if s.req.Method != era.methods[i] {
					t.Errorf("span %d is %s, want %s", i, s.req.Method, era.methods[i])
				}
				want := root
				if s.req.Method == "tools/list" {
					want = list
				}
				if s.parent != want {
					t.Errorf("span %d (%s): wrong parent", i, s.req.Method)
				}
				if s.req.Transport != mcptrace.TransportTCP || s.req.ServerAddress != "127.0.0.1" || s.req.ServerPort == 0 {
					t.Errorf("span %d: %+v", i, s.req)
				}
			}
			if call := clients[len(clients)-1]; call.req.Target != "t1" || mcptrace.SpanName(call.req) != "tools/call t1" || call.req.ID == "" {
				t.Errorf("tools/call span: %+v", call.req)
			}
			if era.name == "legacy" && clients[0].out.ErrorType() == "" {
				t.Errorf("the refused server/discover has no error.type: %+v", clients[0].out)
			}
			if list.out.Attrs[0].Int != 3 || !list.out.Attrs[1].Bool {
				t.Errorf("listing outcome %+v", list.out)
			}
			// Every message sent carries its own span's traceparent.
			if len(b.b) != len(clients) {
				t.Fatalf("%d bodies for %d spans", len(b.b), len(clients))
			}
			for i, body := range b.b {
				m, e := frame.FromClient(body)
				if e != nil {
					t.Fatalf("body %d: %s", i, e.Message)
				}
				sc, err := mcptrace.FromMeta(m)
				if err != nil || sc.TraceParent() != clients[i].sc.TraceParent() {
					t.Errorf("body %d (%s) carries %q, %v; want %q", i, m.Method, sc.TraceParent(), err, clients[i].sc.TraceParent())
				}
			}
			for _, s := range tr.spans {
				if bytes.Contains([]byte(fmt.Sprintf("%+v", s.req)+fmt.Sprintf("%+v", s.out)), []byte("argument-value-xyz")) {
					t.Errorf("a span holds an argument value: %+v", s)
				}
			}
		})
	}
}

// TestNoTracerSendsNoContext: without a Tracer no message carries a
// traceparent (what is sent is what was sent before tracing existed).
func TestNoTracerSendsNoContext(t *testing.T) {
	b, url := tracedServer(t, mockserver.Config{Tools: mockTools("t", 3), PageSize: 2})
	if _, err := ListTools(context.Background(), Config{BaseURL: url}); err != nil {
		t.Fatal(err)
	}
	for _, body := range b.b {
		if bytes.Contains(body, []byte("traceparent")) {
			t.Fatalf("sent %s", body)
		}
	}
}
