package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// flushRecorder records what an HTTP handler writes, one chunk per Flush.
type flushRecorder struct {
	*httptest.ResponseRecorder
	chunks []string
	last   int
}

func (r *flushRecorder) Flush() {
	r.ResponseRecorder.Flush()
	b := r.Body.Bytes()
	r.chunks = append(r.chunks, string(b[r.last:]))
	r.last = len(b)
}

// A notification the upstream sends just before the response, in the
// same write, reaches the downstream in one write with it, in order: the
// gateway does not flush an event while more of the upstream's stream
// has already arrived.
func TestNotificationGoesOutWithTheAnswer(t *testing.T) {
	tools, err := mockserver.LoadToolsFile(exampleV1)
	if err != nil {
		t.Fatal(err)
	}
	mock := mockserver.MustNew(mockserver.Config{Tools: tools, Response: mockserver.SSEResponses})
	t.Cleanup(mock.Close)
	for _, mode := range benchModes {
		t.Run(string(mode), func(t *testing.T) {
			g := deployedGateway(t, proxy.Upstream{URL: "http://upstream.test/mcp", HTTPClient: &http.Client{Transport: inProcess{mock}}}, mode)
			h := g.Handler(proxy.HTTPOptions{})
			post := func(sid, body string) *flushRecorder {
				req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if sid != "" {
					req.Header.Set("Mcp-Session-Id", sid)
					req.Header.Set("MCP-Protocol-Version", benchRevision)
				}
				rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
				h.ServeHTTP(rec, req)
				return rec
			}
			sid := post("", benchInitialize).Header().Get("Mcp-Session-Id")
			post(sid, benchInitialized)
			post(sid, benchList)
			rec := post(sid, string(legacyCallBody(7)))
			if len(rec.chunks) != 1 {
				t.Fatalf("%d writes, want 1: %q", len(rec.chunks), rec.chunks)
			}
			events := readEvents(t, rec.chunks[0])
			if len(events) != 2 || !strings.Contains(events[0], `"notifications/message"`) || !strings.Contains(events[1], `"result":{`) {
				t.Fatalf("events %q, want the log notification, then the result", events)
			}
		})
	}
}

func readEvents(t *testing.T, s string) []string {
	t.Helper()
	sr := frame.NewSSEReader(strings.NewReader(s), frame.SSELimits{MaxBytes: 1 << 20, MaxLine: 1 << 20, MaxEvents: 100})
	var out []string
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(ev.Data))
	}
}

// A notification whose response has not arrived yet is not held: the
// downstream gets it while the upstream still works on the call.
func TestNotificationNotHeldForALateAnswer(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, err := frame.Parse(body)
		if err != nil || m.Kind != frame.Request {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sw := frame.NewSSEWriter(w)
		if m.Method == "tools/call" {
			sw.Event(frame.Event{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`)})
			_ = sw.Flush()
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		sw.Event(frame.Event{Data: frame.AppendResult(nil, m.IDRaw(), []byte(`{"content":[{"type":"text","text":"done"}]}`))})
		_ = sw.Flush()
	}))
	t.Cleanup(up.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up.URL}, Mode: proxy.Audit, Baseline: benchBaseline(t, exampleV1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	gs := httptest.NewServer(g.Handler(proxy.HTTPOptions{}))
	t.Cleanup(gs.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gs.URL+"/mcp", bytes.NewReader(callBody(7)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "search_issues")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sr := frame.NewSSEReader(bufio.NewReader(resp.Body), frame.SSELimits{MaxBytes: 1 << 20, MaxLine: 1 << 20, MaxEvents: 100})
	ev, err := sr.Next()
	if err != nil || !strings.Contains(string(ev.Data), "working") {
		t.Fatalf("first event %q, %v: want the notification, before the answer is released", ev.Data, err)
	}
	close(release)
	ev, err = sr.Next()
	if err != nil || !strings.Contains(string(ev.Data), `"done"`) {
		t.Fatalf("second event %q, %v: want the result", ev.Data, err)
	}
}
