package proxy_test

// A hostile downstream (issue 10, "Hostile cases"): each case is bounded
// in time and in memory, and the assertions are on those bounds.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// serveGateway serves g with the http.Server the gateway builds itself
// (Gateway.Server, what mcpdrift proxy --listen runs), so the bounds under
// test are the deployed ones.
func serveGateway(t *testing.T, g *proxy.Gateway, opt proxy.HTTPOptions) (addr string) {
	t.Helper()
	srv := g.Server(opt)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func enforcingGateway(t *testing.T, upURL string, tune func(*proxy.Config)) *proxy.Gateway {
	t.Helper()
	cfg := proxy.Config{Upstream: proxy.Upstream{URL: upURL}, Mode: proxy.Enforce, Target: upURL,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{})}
	if tune != nil {
		tune(&cfg)
	}
	g, err := proxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

// heapWatch samples the heap in use every 5 ms; peak returns the largest
// growth over the heap in use when it started.
type heapWatch struct {
	base uint64
	max  atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func watchHeap() *heapWatch {
	h := &heapWatch{base: heapInUse(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > h.max.Load() {
				h.max.Store(ms.HeapInuse)
			}
			select {
			case <-h.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return h
}

func (h *heapWatch) peak() uint64 {
	close(h.stop)
	<-h.done
	if m := h.max.Load(); m > h.base {
		return m - h.base
	}
	return 0
}

const mib = 1 << 20

// A slowloris client trickles its request headers. ReadHeaderTimeout cuts
// every such connection off; requests from others are served meanwhile,
// and nothing of the attack stays behind.
func TestHostileSlowloris(t *testing.T) {
	if d := (proxy.HTTPOptions{}).WithDefaults(); d.ReadHeaderTimeout != 10*time.Second || d.MaxHeaderBytes != 64<<10 {
		t.Fatalf("the deployed defaults changed: %+v", d)
	}
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	g := enforcingGateway(t, up, nil)
	const timeout = 500 * time.Millisecond
	addr := serveGateway(t, g, proxy.HTTPOptions{ReadHeaderTimeout: timeout})
	goroutines := runtime.NumGoroutine()
	const n = 200
	var wg sync.WaitGroup
	lasted := make([]time.Duration, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			start := time.Now()
			gone := make(chan struct{})
			go func() { io.Copy(io.Discard, c); close(gone) }()
			io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-gone:
					lasted[i] = time.Since(start)
					return
				case <-tick.C:
					c.Write([]byte("a")) // never the end of the headers
				case <-time.After(10 * time.Second):
					lasted[i] = time.Since(start)
					return
				}
			}
		}()
	}
	// Meanwhile a real client is served at once.
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	status, _, body := postModern(t, "http://"+addr+"/mcp", "tools/list", benchMeta, nil)
	if status != 200 || !strings.Contains(body, `"search_issues"`) || time.Since(start) > 2*time.Second {
		t.Errorf("a real request during the attack: %d in %v: %.200s", status, time.Since(start), body)
	}
	wg.Wait()
	var worst time.Duration
	for _, d := range lasted {
		worst = max(worst, d)
	}
	if worst > timeout+time.Second {
		t.Errorf("a slowloris connection lasted %v; ReadHeaderTimeout is %v", worst, timeout)
	}
	time.Sleep(200 * time.Millisecond)
	if left := runtime.NumGoroutine() - goroutines; left > 20 {
		t.Errorf("%d goroutines left behind by %d slowloris connections", left, n)
	}
	t.Logf("%d slowloris connections, each cut off within %v (ReadHeaderTimeout %v)", n, worst, timeout)
}

// rawPost sends the request head, then body from a goroutine, and returns
// the status line the server answered with, how long that took, how long
// until the server ended the connection, and how many body bytes the
// client got to write before the server stopped it.
func rawPost(t *testing.T, addr, head string, body func(w io.Writer) error) (status string, took, closed time.Duration, sent int64) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	var n atomic.Int64
	go func() {
		if _, err := io.WriteString(c, head); err != nil {
			return
		}
		body(writerFunc(func(p []byte) (int, error) {
			m, err := c.Write(p)
			n.Add(int64(m))
			return m, err
		}))
	}()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("no answer: %v after %v", err, time.Since(start))
	}
	took = time.Since(start)
	io.Copy(io.Discard, br) // until the server ends the connection (or the deadline)
	return strings.TrimSpace(line), took, time.Since(start), n.Load()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Oversized and endless bodies are cut at MaxMessageBytes; a body
// trickled in (or sent slowly forever) at the body timeout. Neither is
// read whole, nor held in memory beyond the bound.
func TestHostileBodies(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	const limit = 1 * mib
	g := enforcingGateway(t, up, func(c *proxy.Config) { c.MaxMessageBytes = limit })
	const bodyTimeout = time.Second
	addr := serveGateway(t, g, proxy.HTTPOptions{BodyTimeout: bodyTimeout})
	chunk := bytes.Repeat([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`), 1)
	chunk = append(chunk, bytes.Repeat([]byte("x"), 64<<10)...)
	forever := func(w io.Writer) error {
		for {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
	}
	chunked := func(c []byte, delay time.Duration) func(io.Writer) error {
		framed := append(append([]byte(strconv.FormatInt(int64(len(c)), 16)+"\r\n"), c...), "\r\n"...)
		return func(w io.Writer) error {
			for {
				if _, err := w.Write(framed); err != nil {
					return err
				}
				time.Sleep(delay)
			}
		}
	}
	trickle := func(w io.Writer) error {
		for {
			if _, err := w.Write([]byte("x")); err != nil {
				return err
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	const head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	for _, c := range []struct {
		name     string
		head     string
		body     func(io.Writer) error
		status   string
		within   time.Duration
		maxBytes int64 // body bytes the client may get to write
	}{
		{"oversized Content-Length", head + "Content-Length: 1073741824\r\n\r\n", forever, "413", 5 * time.Second, 32 * mib},
		{"endless chunked", head + "Transfer-Encoding: chunked\r\n\r\n", chunked(chunk, 0), "413", 5 * time.Second, 32 * mib},
		{"slow endless chunked", head + "Transfer-Encoding: chunked\r\n\r\n", chunked(chunk[:100], 20*time.Millisecond), "408", bodyTimeout + 2*time.Second, limit},
		{"trickled Content-Length", head + "Content-Length: 1000\r\n\r\n", trickle, "408", bodyTimeout + 2*time.Second, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			status, took, closed, sent := rawPost(t, addr, c.head, c.body)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if !strings.Contains(status, " "+c.status+" ") {
				t.Errorf("status %q, want %s", status, c.status)
			}
			if took > c.within {
				t.Errorf("answered after %v, want within %v", took, c.within)
			}
			if closed > c.within+time.Second {
				t.Errorf("the connection was ended after %v, want within %v", closed, c.within+time.Second)
			}
			if sent > c.maxBytes {
				t.Errorf("the client wrote %d body bytes before the gateway stopped reading; bound %d", sent, c.maxBytes)
			}
			// Everything the process allocated meanwhile (the client's
			// writes reuse one chunk): the body was never held past the
			// limit.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*limit {
				t.Errorf("%d bytes allocated while refusing the body (limit %d)", alloc, limit)
			}
			t.Logf("%s after %v, connection ended after %v; the client wrote %d body bytes", status, took, closed, sent)
		})
	}
	// The gateway still serves.
	status, _, body := postModern(t, "http://"+addr+"/mcp", "tools/list", benchMeta, nil)
	if status != 200 || !strings.Contains(body, `"search_issues"`) {
		t.Errorf("after the hostile bodies: %d %.200s", status, body)
	}
}

// legacyInit initializes one legacy session and returns its id, or the
// HTTP status of the refusal and its body.
func legacyInit(client *http.Client, url string) (sid string, status int, body string, err error) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return "", resp.StatusCode, string(b), nil
	}
	return resp.Header.Get("Mcp-Session-Id"), 200, string(b), nil
}

// 1,000 legacy sessions initialized at once: all bounded in time and in
// memory (the upstream runs in a child process, so the heap measured is
// the gateway's); beyond MaxSessions (1024) an initialize is refused with
// 503, also when the initializes race each other; a session ended frees
// its place.
func TestHostileThousandSessions(t *testing.T) {
	manifestPath, _ := filepath.Abs(exampleV1)
	up := benchHTTPChild(t, "http", manifestPath)
	g := enforcingGateway(t, up, nil)
	addr := serveGateway(t, g, proxy.HTTPOptions{})
	url := "http://" + addr + "/mcp"
	client := &http.Client{Transport: benchTransport(), Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	// Warm the pools and the first allocations.
	if _, st, b, err := legacyInit(client, url); st != 200 || err != nil {
		t.Fatalf("initialize: %d %v %s", st, err, b)
	}
	client.CloseIdleConnections()
	heap0, goroutines0 := heapInUse(), runtime.NumGoroutine()

	burst := func(n int) (ok []string, refused []string, took time.Duration) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := time.Now()
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sid, st, b, err := legacyInit(client, url)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Error(err)
				case st == 200 && sid != "":
					ok = append(ok, sid)
				case st == 503:
					refused = append(refused, b)
				default:
					t.Errorf("initialize: HTTP %d %s", st, b)
				}
			}()
		}
		wg.Wait()
		return ok, refused, time.Since(start)
	}
	ok, refused, took := burst(999) // 1,000 with the warm-up's
	if len(ok) != 999 || len(refused) != 0 {
		t.Fatalf("1,000 sessions: %d opened, %d refused", len(ok)+1, len(refused))
	}
	if took > 30*time.Second {
		t.Errorf("1,000 initializes took %v", took)
	}
	client.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond)
	perSession := float64(int64(heapInUse())-int64(heap0)) / 999
	// An idle session holds no goroutine; the upstream connection pool,
	// shared by every session, holds two per idle connection (up to 256).
	goroutines := runtime.NumGoroutine() - goroutines0
	if perSession > 64<<10 {
		t.Errorf("%.0f bytes of heap per session; bound 64 KiB", perSession)
	}
	if goroutines > 2*256+50 {
		t.Errorf("%d goroutines more for 1,000 idle sessions", goroutines)
	}
	t.Logf("1,000 sessions in %v; %.1f KiB heap per session; %d goroutines more in all", took, perSession/1024, goroutines)

	// 124 more at once: 24 fit, 100 are refused, quickly.
	more, refused, took := burst(124)
	if len(more) != 24 || len(refused) != 100 {
		t.Errorf("beyond MaxSessions: %d opened, %d refused (want 24 and 100)", len(more), len(refused))
	}
	for _, b := range refused[:min(3, len(refused))] {
		if !strings.Contains(b, "as many sessions as it may") {
			t.Errorf("the refusal does not say why: %s", b)
		}
	}
	if took > 10*time.Second {
		t.Errorf("the burst beyond MaxSessions took %v", took)
	}
	// A session ended frees its place.
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", ok[0])
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if _, st, b, _ := legacyInit(client, url); st != 200 {
		t.Errorf("initialize after a session ended: %d %s", st, b)
	}
	if _, st, _, _ := legacyInit(client, url); st != 503 {
		t.Errorf("initialize when full again: %d, want 503", st)
	}
}

// floodUpstream is a legacy Streamable HTTP server whose GET stream
// sends n notifications of size bytes each, as fast as it can.
func floodUpstream(t *testing.T, n, size int) (url string, sent *atomic.Int64) {
	t.Helper()
	sent = &atomic.Int64{}
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("x", size) + `"}}`)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			for range n {
				if _, err := fmt.Fprintf(w, "data: %s\n\n", note); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				sent.Add(1)
			}
			<-r.Context().Done()
		case http.MethodDelete:
			w.WriteHeader(200)
		case http.MethodPost:
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.NewDecoder(r.Body).Decode(&m)
			if m.ID == nil {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			if m.Method == "initialize" {
				w.Header().Set("Mcp-Session-Id", "flood-session")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"flood","version":"1"}}}`, m.ID)
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		}
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", sent
}

// A downstream opens its session's GET stream and never reads it while
// the upstream floods the session with notifications: what waits for it
// is bounded in bytes, its stream is closed once a write cannot complete
// within the stream write timeout, and the session goes on serving.
func TestHostileStreamNeverRead(t *testing.T) {
	const size, n = 256 << 10, 800 // 200 MB of notifications
	up, sent := floodUpstream(t, n, size)
	g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Observe, MaxMessageBytes: 1 * mib})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	const writeTimeout = time.Second
	addr := serveGateway(t, g, proxy.HTTPOptions{StreamWriteTimeout: writeTimeout})
	url := "http://" + addr + "/mcp"
	client := &http.Client{Timeout: 10 * time.Second}
	sid, st, b, err := legacyInit(client, url)
	if st != 200 || err != nil {
		t.Fatalf("initialize: %d %v %s", st, err, b)
	}
	post := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	// The GET stream, opened and never read.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n", sid)
	hw := watchHeap()
	start := time.Now()
	// notifications/initialized opens the upstream's stream: the flood.
	if st, b := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != 202 {
		t.Fatalf("notifications/initialized: %d %s", st, b)
	}
	for sent.Load() < n && time.Since(start) < 30*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	if sent.Load() < n {
		t.Fatalf("the upstream got %d of %d notifications out in 30 s: the gateway stopped reading it", sent.Load(), n)
	}
	flood := time.Since(start)
	// The stream's writes have been blocked since the socket buffers
	// filled; past the write timeout the gateway gives the stream up. The
	// downstream, reading at last, finds what was in the buffers, then
	// the end.
	time.Sleep(writeTimeout + time.Second)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, rerr := io.Copy(io.Discard, c)
	if ne, ok := rerr.(net.Error); ok && ne.Timeout() {
		t.Errorf("the gateway kept the unread stream open (%d bytes readable)", got)
	}
	peak := hw.peak()
	if peak > 64*mib {
		t.Errorf("heap grew by %d MiB while %d MB flowed to a stream nobody read", peak/mib, n*size/1000000)
	}
	// The session goes on.
	if st, b := post(`{"jsonrpc":"2.0","id":7,"method":"ping"}`); st != 200 || !strings.Contains(b, `"id":7`) {
		t.Errorf("ping after the flood: %d %s", st, b)
	}
	t.Logf("%d MB flooded in %v; heap peak +%d MiB; the unread stream was closed with %d bytes in its buffers", n*size/1000000, flood, peak/mib, got)
}

// A stdio downstream sends a 1 GB line: the gateway refuses it without
// holding more than MaxMessageBytes of it, skips it at the speed of the
// pipe, and answers the next request.
func TestHostileStdioHugeLine(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	g := enforcingGateway(t, up, nil) // MaxMessageBytes: the default, 16 MiB
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	hw := watchHeap()
	start := time.Now()
	const total = 1 << 30
	go func() {
		chunk := bytes.Repeat([]byte("x"), 1*mib)
		inW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"`))
		for range total / mib {
			if _, err := inW.Write(chunk); err != nil {
				return
			}
		}
		inW.Write([]byte("\"}}\n"))
		inW.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + benchMeta + `}}` + "\n"))
	}()
	var got []string
	for len(got) < 2 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the gateway ended its output after %q", got)
			}
			got = append(got, l)
		case <-time.After(60 * time.Second):
			t.Fatalf("no answer in 60 s; got %q", got)
		}
	}
	took := time.Since(start)
	peak := hw.peak()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	if !strings.Contains(got[0], `"code":-32600`) || !strings.Contains(got[0], "larger than the gateway accepts") {
		t.Errorf("the 1 GB line: %.300s", got[0])
	}
	if !strings.Contains(got[1], `"id":2,"result"`) || !strings.Contains(got[1], `"search_issues"`) {
		t.Errorf("the request after it: %.300s", got[1])
	}
	// What the line cost: the line buffer grows up to the bound (append
	// grows a large slice by a quarter at a time: about 80 MiB allocated
	// in all for 16 MiB), and the heap in use also counts garbage the
	// collector has not taken yet. Neither comes near the line's 1 GB.
	if alloc > 128*mib || peak > 96*mib {
		t.Errorf("a 1 GB line: %d MiB allocated, heap peak +%d MiB (MaxMessageBytes 16 MiB)", alloc/mib, peak/mib)
	}
	if took > 30*time.Second {
		t.Errorf("refusing a 1 GB line took %v", took)
	}
	inW.Close()
	<-done
	t.Logf("1 GB line refused and skipped in %v: %d MiB allocated, heap peak +%d MiB", took, alloc/mib, peak/mib)
}

// Replicas: a legacy session lives in the replica that initialized it. A
// request for it that reaches another replica is refused with 404 and a
// message that names session affinity, never forwarded: the upstream
// sees nothing from that replica.
func TestReplicasNeedSessionAffinity(t *testing.T) {
	mock, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	a := enforcingGateway(t, up, nil)
	b := enforcingGateway(t, up, nil)
	urlA := "http://" + serveGateway(t, a, proxy.HTTPOptions{}) + "/mcp"
	urlB := "http://" + serveGateway(t, b, proxy.HTTPOptions{}) + "/mcp"
	client := &http.Client{Timeout: 10 * time.Second}
	sid, st, body, err := legacyInit(client, urlA)
	if st != 200 || err != nil {
		t.Fatalf("initialize on replica A: %d %v %s", st, err, body)
	}
	do := func(method, url, body string) (int, string) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, url, rd)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, string(out)
	}
	if st, out := do(http.MethodPost, urlA, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != 202 {
		t.Fatalf("notifications/initialized on replica A: %d %s", st, out)
	}
	// Replica A then opens the session's GET stream upstream: wait for it.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if l := mock.Log(); len(l) > 0 && l[len(l)-1].HTTPMethod == http.MethodGet {
			break
		}
	}
	before := mock.LogTotal()
	for _, c := range []struct{ method, body string }{
		{http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`},
		{http.MethodPost, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_issues","arguments":{"repo":"a/b","query":"x"}}}`},
		{http.MethodGet, ""},
		{http.MethodDelete, ""},
	} {
		st, out := do(c.method, urlB, c.body)
		if st != 404 || !strings.Contains(out, "session affinity") {
			t.Errorf("%s on replica B for A's session: %d %s", c.method, st, out)
		}
	}
	if n := mock.LogTotal() - before; n != 0 {
		t.Errorf("replica B forwarded %d requests of a session it does not know: %+v", n, mock.Log()[len(mock.Log())-n:])
	}
	// Replica A still serves it.
	if st, out := do(http.MethodPost, urlA, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}`); st != 200 || !strings.Contains(out, `"search_issues"`) {
		t.Errorf("replica A: %d %.200s", st, out)
	}
}

// Initializes that race each other do not open more than MaxSessions,
// also when opening a session takes time (a stdio upstream is a process
// started per session).
func TestHostileSessionsRacePastMax(t *testing.T) {
	abs, _ := filepath.Abs(exampleV1)
	g, err := proxy.New(proxy.Config{Upstream: stdioUpstream(t, abs, nil), Mode: proxy.Observe, MaxSessions: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	url := "http://" + serveGateway(t, g, proxy.HTTPOptions{}) + "/mcp"
	client := &http.Client{Timeout: 30 * time.Second}
	var opened, refused atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, st, b, err := legacyInit(client, url)
			switch {
			case err != nil:
				t.Error(err)
			case st == 200:
				opened.Add(1)
			case st == 503:
				refused.Add(1)
			default:
				t.Errorf("initialize: %d %s", st, b)
			}
		}()
	}
	wg.Wait()
	if opened.Load() != 4 || refused.Load() != 12 {
		t.Errorf("16 racing initializes with MaxSessions 4: %d opened, %d refused", opened.Load(), refused.Load())
	}
}
