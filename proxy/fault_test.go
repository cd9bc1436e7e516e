package proxy_test

// Faults injected in each place a session writes (issue 29, item 3): a
// fault ends that session only, failing closed, and the other sessions
// and the process go on. The faults come from outside the gateway — a
// downstream writer, an http.ResponseWriter, an upstream — never from a
// hook in its code.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// upLog wraps an upstream handler and records the JSON-RPC messages that
// reach it (the upstream's own view).
type upLog struct {
	mu   sync.Mutex
	msgs []upMsg
}

type upMsg struct {
	HTTPMethod, Method, Tool, ID, RequestID string
}

func (l *upLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(r.Body, 16<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		l.mu.Lock()
		l.msgs = append(l.msgs, upMsg{HTTPMethod: r.Method, Method: m.Method, Tool: m.Params.Name, ID: string(m.ID), RequestID: string(m.Params.RequestID)})
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// count is how many messages of method (and tool, when given) reached the
// upstream.
func (l *upLog) count(method, tool string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if m.Method == method && (tool == "" || m.Tool == tool) {
			n++
		}
	}
	return n
}

func (l *upLog) all() []upMsg {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]upMsg(nil), l.msgs...)
}

// loggedUpstream serves the mock behind an upLog (and mid, when given,
// between the two) on loopback.
func loggedUpstream(t *testing.T, cfg mockserver.Config, path string, mid func(http.Handler) http.Handler) (*mockserver.Server, string, *upLog) {
	t.Helper()
	tools, err := mockserver.LoadToolsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tools = tools
	mock, err := mockserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = mock
	if mid != nil {
		h = mid(h)
	}
	l := &upLog{}
	ts := httptest.NewUnstartedServer(l.wrap(h))
	ts.Config.ConnContext = mock.ConnContext
	ts.Start()
	t.Cleanup(func() { ts.Close(); mock.Close() })
	return mock, ts.URL + "/mcp", l
}

// faultyRW is a downstream ResponseWriter that panics on Write or Flush.
type faultyRW struct {
	http.ResponseWriter
	on string // "write" or "flush"
}

func (w faultyRW) Write(p []byte) (int, error) {
	if w.on == "write" {
		panic("injected: the downstream's Write")
	}
	return w.ResponseWriter.Write(p)
}

func (w faultyRW) Flush() {
	if w.on == "flush" {
		panic("injected: the downstream's Flush")
	}
	w.ResponseWriter.(http.Flusher).Flush()
}

// faultyHandler serves h, with the ResponseWriter of a request that
// carries X-Test-Fault made to panic there.
func faultyHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if on := r.Header.Get("X-Test-Fault"); on != "" {
			w = faultyRW{ResponseWriter: w, on: on}
		}
		h.ServeHTTP(w, r)
	})
}

// legacyClient is a legacy HTTP session with the gateway.
type legacyClient struct {
	t   *testing.T
	url string
	sid string
}

func newLegacyClient(t *testing.T, url string) *legacyClient {
	t.Helper()
	c := &legacyClient{t: t, url: url}
	status, body, h, err := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("initialize: %d %s %v", status, body, err)
	}
	c.sid = h.Get("Mcp-Session-Id")
	if status, body, _, err := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); err != nil || status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s %v", status, body, err)
	}
	return c
}

// post sends body and returns the status and the answer (a JSON body, or
// the first response event of a stream).
func (c *legacyClient) post(body string, extra map[string]string) (int, string, http.Header, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
		return resp.StatusCode, string(b), resp.Header, err
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if ok && strings.Contains(data, `"id"`) && !strings.Contains(data, `"method"`) {
			return resp.StatusCode, strings.TrimSpace(data), resp.Header, nil
		}
	}
	return resp.StatusCode, "", resp.Header, sc.Err()
}

// works checks that c lists and calls through the gateway.
func (c *legacyClient) works(label string) {
	c.t.Helper()
	status, body, _, err := c.post(`{"jsonrpc":"2.0","id":"w1","method":"tools/list","params":{}}`, nil)
	if err != nil || status != http.StatusOK || !strings.Contains(body, `"list_branches"`) {
		c.t.Errorf("%s: tools/list: %d %s %v", label, status, clipped(body), err)
	}
	for try := 0; ; try++ {
		status, body, _, err = c.post(`{"jsonrpc":"2.0","id":"w2","method":"tools/call","params":{"name":"list_branches","arguments":{"repo":"a/b"}}}`, nil)
		if err == nil && status == http.StatusOK && strings.Contains(body, `"result"`) {
			return
		}
		if !strings.Contains(body, "call_approval_in_doubt") || try == 50 { // see stdioRun.works
			c.t.Errorf("%s: tools/call: %d %s %v", label, status, clipped(body), err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func clipped(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// stdioRun is one stdio downstream served by ServeStdio.
type stdioRun struct {
	c    *lineClient
	in   io.WriteCloser
	done chan error
}

// serveStdio runs g.ServeStdio with w wrapped by wrap (nil: as it is).
func serveStdio(t *testing.T, g *proxy.Gateway, wrap func(io.Writer) io.Writer) *stdioRun {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var w io.Writer = outW
	if wrap != nil {
		w = wrap(outW)
	}
	run := &stdioRun{in: inW, done: make(chan error, 1)}
	go func() { run.done <- g.ServeStdio(context.Background(), inR, w); outW.Close() }()
	t.Cleanup(func() { inW.Close() })
	run.c = newLineClient(t, inW, outR)
	return run
}

// works checks that the stdio session lists and calls.
func (r *stdioRun) works(t *testing.T, label string, id float64) {
	t.Helper()
	r.c.send(`{"jsonrpc":"2.0","id":` + jsonNum(id) + `,"method":"tools/list","params":{}}`)
	if got := toolNames(r.c.wait(10*time.Second, byID(id))); len(got) == 0 {
		t.Errorf("%s: tools/list served nothing", label)
	}
	// The upstream's list_changed reaches every session: one that is
	// re-observing refuses calls meanwhile (call_approval_in_doubt), and a
	// client retries, as the README tells it to.
	for try := 0; ; try++ {
		cid := id + 1 + 0.001*float64(try)
		r.c.send(`{"jsonrpc":"2.0","id":` + jsonNum(cid) + `,"method":"tools/call","params":{"name":"list_branches","arguments":{"repo":"a/b"}}}`)
		m := r.c.wait(10*time.Second, byID(cid))
		if m["result"] != nil {
			return
		}
		if !strings.Contains(fmt.Sprint(m), "call_approval_in_doubt") || try == 50 {
			t.Errorf("%s: tools/call: %v", label, m)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

// markerWriter fails, or panics, at the first write that holds marker.
type markerWriter struct {
	w      io.Writer
	marker string
	panic  bool
}

func (m markerWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(m.marker)) {
		if m.panic {
			panic("injected: the stdio downstream's Write")
		}
		return 0, errors.New("injected: the stdio downstream's Write failed")
	}
	return m.w.Write(p)
}

// waitDone waits for a ServeStdio to return, and returns its error.
func (r *stdioRun) waitDone(t *testing.T, label string) error {
	t.Helper()
	select {
	case err := <-r.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: ServeStdio did not end", label)
		return nil
	}
}

func initStdio(t *testing.T, r *stdioRun) {
	t.Helper()
	r.c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	r.c.wait(10*time.Second, byID(1))
	r.c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// A stdio downstream whose writer panics or fails — on a request's
// answer (a worker's goroutine), or on a list_changed forwarded after the
// re-observation (a goroutine of the re-observation) — loses its session:
// ServeStdio returns an error and the decision log says where. Another
// stdio session and an HTTP session on the same gateway go on.
func TestFaultInAStdioWriter(t *testing.T) {
	for _, tc := range []struct {
		name, marker string
		panic        bool
	}{
		{"answer panics", `"id":"boom"`, true},
		{"answer fails", `"id":"boom"`, false},
		{"list_changed panics", `list_changed`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mock, up, ul := loggedUpstream(t, mockserver.Config{ListChanged: true}, exampleV1, nil)
			var log logBuf
			g, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
				Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Log: proxy.NewDecisionLog(&log)})
			bad := serveStdio(t, g, func(w io.Writer) io.Writer { return markerWriter{w: w, marker: tc.marker, panic: tc.panic} })
			good := serveStdio(t, g, nil)
			initStdio(t, bad)
			initStdio(t, good)
			other := newLegacyClient(t, url)
			bad.works(t, "the session before the fault", 10)
			if tc.marker == "list_changed" {
				time.Sleep(200 * time.Millisecond) // the gateway's GET stream to the upstream opens
				v1, _ := mockserver.LoadToolsFile(exampleV1)
				mock.SetTools(v1) // the same tools: list_changed all the same
			} else {
				bad.c.send(`{"jsonrpc":"2.0","id":"boom","method":"tools/call","params":{"name":"list_branches","arguments":{"repo":"a/b"}}}`)
			}
			err := bad.waitDone(t, tc.name)
			if err == nil || !strings.Contains(err.Error(), "proxy:") {
				t.Errorf("ServeStdio after the fault: %v, want an error", err)
			}
			good.works(t, "another stdio session", 20)
			other.works("an HTTP session")
			if tc.panic && !hasEvent(t, &log, "session_failed") {
				t.Errorf("the decision log has no session_failed record")
			}
			if n := ul.count("tools/call", "list_branches"); n < 3 {
				t.Errorf("the upstream saw %d calls, want the 3 (or 4) the sessions made", n)
			}
		})
	}
}

func hasEvent(t *testing.T, log *logBuf, event string) bool {
	for _, r := range log.records(t) {
		if r.Event == event {
			return true
		}
	}
	return false
}

// An HTTP downstream whose ResponseWriter panics — on a JSON answer's
// Write, an event stream's Flush, its GET stream's Flush — loses its
// legacy session: the response is aborted, the session's later requests
// get 404, and another session goes on. net/http recovered the panic
// before, but the session stayed open. An upstream that cuts its stream
// is the control: that is no fault of the session's.
func TestFaultInAnHTTPResponseWriter(t *testing.T) {
	t.Run("upstream cuts its stream", testUpstreamCutsItsStream)
	for _, tc := range []struct {
		name, on string
		sse, get bool
	}{
		{"JSON answer Write", "write", false, false},
		{"event stream Flush", "flush", true, false},
		{"GET stream Flush", "flush", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mockserver.Config{}
			if tc.sse {
				cfg.Response = mockserver.SSEResponses
			}
			_, up, ul := loggedUpstream(t, cfg, exampleV1, nil)
			var log logBuf
			g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
				Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Log: proxy.NewDecisionLog(&log)})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(faultyHandler(g.Handler(proxy.HTTPOptions{})))
			t.Cleanup(func() { ts.Close(); g.Close() })
			url := ts.URL + "/mcp"
			bad, other := newLegacyClient(t, url), newLegacyClient(t, url)
			bad.works("the session before the fault")
			if tc.get {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("Mcp-Session-Id", bad.sid)
				req.Header.Set("X-Test-Fault", tc.on)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			} else {
				_, body, _, err := bad.post(`{"jsonrpc":"2.0","id":"boom","method":"tools/call","params":{"name":"list_branches","arguments":{"repo":"a/b"}}}`,
					map[string]string{"X-Test-Fault": tc.on})
				if err == nil && strings.Contains(body, `"result"`) {
					t.Errorf("the faulted answer arrived whole: %s", body)
				}
			}
			status, body, _, _ := bad.post(`{"jsonrpc":"2.0","id":"after","method":"tools/list","params":{}}`, nil)
			if status != http.StatusNotFound {
				t.Errorf("the faulted session's next request: %d %s, want 404 (the session ended)", status, clipped(body))
			}
			other.works("another session")
			if !hasEvent(t, &log, "session_failed") {
				t.Errorf("the decision log has no session_failed record")
			}
			if n := ul.count("tools/call", "list_branches"); n < 2 {
				t.Errorf("the upstream saw %d calls", n)
			}
		})
	}
}

// upstreamCut cuts the stream of a request whose id is "cut" midway
// through its answer.
func upstreamCut(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte(`"id":"cut"`)) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"cut\",\"res")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection is cut
	})
}

// The control: an upstream that cuts a response stream midway is the
// upstream's failure, not the session's: the call is answered with
// -32603 at once, and that session and the others go on.
func testUpstreamCutsItsStream(t *testing.T) {
	_, up, _ := loggedUpstream(t, mockserver.Config{}, exampleV1, upstreamCut)
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	a, b := newLegacyClient(t, url), newLegacyClient(t, url)
	start := time.Now()
	_, body, _, err := a.post(`{"jsonrpc":"2.0","id":"cut","method":"tools/call","params":{"name":"list_branches","arguments":{"repo":"a/b"}}}`, nil)
	if err != nil || !strings.Contains(body, `"code":-32603`) || time.Since(start) > 5*time.Second {
		t.Errorf("a call whose stream is cut: %s %v after %v", body, err, time.Since(start))
	}
	a.works("the same session")
	b.works("another session")
}

// A request in flight when a fault ends its session is answered with
// session_failed, at once: the session's upstream link is closed under
// it. Before, it waited for the upstream and was answered as if nothing
// had happened (or, with the link closed, "cannot reach it").
func TestFaultAnswersTheRequestsInFlight(t *testing.T) {
	_, up, _ := loggedUpstream(t, mockserver.Config{Slow: 2 * time.Second}, exampleV1, nil)
	g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Audit, Target: up,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(faultyHandler(g.Handler(proxy.HTTPOptions{})))
	t.Cleanup(func() { ts.Close(); g.Close() })
	url := ts.URL + "/mcp"
	c := newLegacyClient(t, url)
	done := make(chan string, 1)
	go func() {
		_, body, _, _ := c.post(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"list_branches","arguments":{"repo":"a/b"}}}`, nil)
		done <- body
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("X-Test-Fault", "flush")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	select {
	case body := <-done:
		if !strings.Contains(body, `"id":"slow","error":{"code":-32603`) || !strings.Contains(body, `"reason":"session_failed"`) || time.Since(start) > 2*time.Second {
			t.Errorf("the request in flight: %s after %v", clipped(body), time.Since(start))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request in flight was not answered")
	}
}
