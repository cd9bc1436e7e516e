package proxy_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/redact"
)

// BenchmarkToolsCall is the goal of the gateway's hot path (issue 31,
// docs/benchmarks.md "The runtime gateway"): a tools/call through the
// gateway, in audit mode and in enforce mode (the arguments checked
// against the pinned inputSchema), against direct and against the floor
// of any hop, all three measured in one run, interleaved in batches.
//
//	go test ./proxy -run '^$' -bench '^BenchmarkToolsCall$' -benchtime 20000x
//
// Over HTTP each caller is a legacy session, as clients use one: it
// initializes (2025-11-25), sends notifications/initialized, lists the
// tools once, then calls search_issues with its session id and the
// revision header; a caller per worker, so c16 is 16 sessions at once.
// The floor is a bare httputil.ReverseProxy. The upstream (the strict
// mock, in process) answers in JSON ("json") or, as the SDKs' servers do
// by default, on an event stream with a priming event and a log
// notification before the response ("sse"). The gateway and the reverse
// proxy both send the upstream a credential of their own (the gateway
// redacts it from every message it sends downstream).
//
// Over stdio the session is the pipe, concurrent calls multiplexed on it;
// the floor is a bare line relay, which costs nothing measurable, so the
// figure there is the gateway's calls/s against direct's.
//
// Reported per target: p50, p99, calls/s, and the process's CPU time,
// allocations and bytes allocated per call (over its batches: client,
// mock and hop alike, so a hop's own cost is its figure minus direct's);
// and the goal ratios: the latency, CPU and allocations the gateway adds
// over direct against what the floor adds, and its calls/s against the
// floor's. With -cpuprofile or -memprofile each hop runs under a pprof
// label (see labeled).
func BenchmarkToolsCall(b *testing.B) {
	for _, framing := range []string{"json", "sse"} {
		b.Run("http/"+framing, func(b *testing.B) { toolsCallHTTP(b, framing) })
	}
	b.Run("stdio", toolsCallStdio)
}

// benchCredential is the credential the gateway and the reverse proxy
// send the upstream.
const benchCredential = "Bearer mcpd_bench_7QxV2rLk9sWm4TzN8bYc3HdJ6fPa5GeU"

// benchRevision is the legacy revision the bench's clients negotiate.
const benchRevision = "2025-11-25"

var benchModes = []proxy.Mode{proxy.Audit, proxy.Enforce}

func toolsCallHTTP(b *testing.B, framing string) {
	tools, err := mockserver.LoadToolsFile(exampleV1)
	if err != nil {
		b.Fatal(err)
	}
	cfg := mockserver.Config{Tools: tools, LogLimit: 1, MaxSessions: 4096}
	if framing == "sse" {
		cfg.Response = mockserver.SSEResponses
	}
	mock := mockserver.MustNew(cfg)
	ms := httptest.NewUnstartedServer(labeled("mock", mock))
	ms.Config.ConnContext = mock.ConnContext
	ms.Start()
	b.Cleanup(func() { ms.Close(); mock.Close() })
	upURL := ms.URL + "/mcp"

	u, _ := url.Parse(ms.URL)
	rs := httptest.NewServer(labeled("revproxy", bareProxy(u, http.Header{"Authorization": {benchCredential}}, nil)))
	b.Cleanup(rs.Close)

	for _, mode := range benchModes {
		g := deployedGateway(b, proxy.Upstream{URL: upURL, Headers: http.Header{"Authorization": {benchCredential}}}, mode)
		gs := httptest.NewServer(labeled("gateway", g.Handler(proxy.HTTPOptions{})))
		b.Cleanup(gs.Close)
		for _, conc := range []int{1, 16} {
			b.Run(string(mode)+"/c"+strconv.Itoa(conc), func(b *testing.B) {
				sideBySide(b, conc, []target{
					{name: "direct", open: legacyHTTP(b, upURL)},
					{name: "revproxy", open: legacyHTTP(b, rs.URL+"/mcp")},
					{name: "gateway", open: legacyHTTP(b, gs.URL+"/mcp")},
				})
			})
		}
	}
}

func toolsCallStdio(b *testing.B) {
	manifestPath, _ := filepath.Abs(exampleV1)
	start := func() (io.WriteCloser, io.ReadCloser) {
		cmd := benchChild(b, "stdio", manifestPath)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { in.Close() })
		return in, out
	}
	// direct: the client on the child's pipes.
	dIn, dOut := start()
	direct := legacyStdio(b, dIn, dOut)
	// floor: a bare line relay (io.Copy both ways) between in-process
	// pipes and the child's pipes: any stdio hop costs at least this.
	rIn, rOut := start()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	go io.Copy(rIn, cr)
	go func() { io.Copy(sw, rOut); sw.Close() }()
	b.Cleanup(func() { cw.Close() })
	relay := legacyStdio(b, cw, sr)
	for _, mode := range benchModes {
		// gateway: ServeStdio over in-process pipes, its upstream the
		// child it starts itself (mcpclient.StartProcess).
		g := deployedGateway(b, proxy.Upstream{Command: []string{os.Args[0], benchChildArg, "stdio", manifestPath}}, mode)
		gr, gw := io.Pipe()
		or, ow := io.Pipe()
		go func() { g.ServeStdio(context.Background(), gr, ow); ow.Close() }()
		b.Cleanup(func() { gw.Close() })
		gateway := legacyStdio(b, gw, or)
		for _, conc := range []int{1, 16} {
			b.Run(string(mode)+"/c"+strconv.Itoa(conc), func(b *testing.B) {
				sideBySideVs(b, conc, []target{{name: "direct", call: direct}, {name: "relay", call: relay}, {name: "gateway", call: gateway}}, false)
			})
		}
	}
}

// bareProxy is the floor of any HTTP hop: an httputil.ReverseProxy to
// target that sets hdr on each request it sends, over rt (nil: a
// benchTransport).
//
// It runs full duplex: the HTTP/1 server closes a request body it has not
// read to its end once the response starts, and the transport, still
// copying that body upstream, then fails the connection with the response
// half read (golang/go#40747): the floor would fail a call now and then.
// The gateway reads the body whole before it answers.
func bareProxy(target *url.URL, hdr http.Header, rt http.RoundTripper) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = rt
	if rt == nil {
		rp.Transport = benchTransport()
	}
	direct := rp.Director
	rp.Director = func(r *http.Request) {
		direct(r)
		for k, vs := range hdr {
			r.Header[k] = vs
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	})
}

// deployedGateway is a gateway configured as the command configures one
// (metrics on, no decision log, the review profile), in mode, holding
// benchCredential for the upstream.
func deployedGateway(tb testing.TB, up proxy.Upstream, mode proxy.Mode) *proxy.Gateway {
	tb.Helper()
	secrets := &redact.Set{}
	secrets.AddHeader("Authorization", benchCredential)
	g, err := proxy.New(proxy.Config{Upstream: up, Mode: mode, Baseline: benchBaseline(tb, exampleV1),
		ServerID: "acme", Metrics: proxy.NewMetrics(), Secrets: secrets})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(g.Close)
	return g
}

const (
	benchInitialize  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + benchRevision + `","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	benchInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	benchList        = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
)

// legacyCallBody is a legacy session's tools/call of the approved
// search_issues.
func legacyCallBody(id int64) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{"name":"search_issues","arguments":{"repo":"acme/widgets","query":"is:open label:bug","limit":20}}}`)
}

// legacyHTTP opens legacy sessions at u (one per call of the function it
// returns) on one client transport, and ends them when tb ends.
func legacyHTTP(tb testing.TB, u string) func() func(id int64) error {
	c := &http.Client{Transport: benchTransport()}
	tb.Cleanup(c.CloseIdleConnections)
	post := func(sid string, body []byte) (*http.Response, []byte, error) {
		req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", benchRevision)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, nil, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, b, err
	}
	return func() func(id int64) error {
		resp, b, err := post("", []byte(benchInitialize))
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") == "" {
			tb.Fatalf("initialize at %s: %v %.300s", u, err, b)
		}
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp, b, err = post(sid, []byte(benchInitialized)); err != nil || resp.StatusCode != http.StatusAccepted {
			tb.Fatalf("notifications/initialized at %s: %v %.300s", u, err, b)
		}
		if resp, b, err = post(sid, []byte(benchList)); err != nil || resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"search_issues"`)) {
			tb.Fatalf("tools/list at %s: %v %.300s", u, err, b)
		}
		tb.Cleanup(func() {
			req, _ := http.NewRequest(http.MethodDelete, u, nil)
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", benchRevision)
			if resp, err := c.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
		return func(id int64) error {
			resp, b, err := post(sid, legacyCallBody(id))
			if err != nil {
				return err
			}
			if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"result":{`)) {
				return fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, b)
			}
			return nil
		}
	}
}

// legacyStdio initializes a legacy session on a stdio pipe pair (w to the
// server, r from it) and returns its caller of tools/call, which
// concurrent callers share.
func legacyStdio(tb testing.TB, w io.Writer, r io.Reader) func(id int64) error {
	c := newStdioCaller(w, r)
	if b, err := c.roundTrip(0, []byte(benchInitialize)); err != nil || !bytes.Contains(b, []byte(`"result":{`)) {
		tb.Fatalf("initialize: %v %.300s", err, b)
	}
	c.wmu.Lock()
	_, err := w.Write([]byte(benchInitialized + "\n"))
	c.wmu.Unlock()
	if err != nil {
		tb.Fatal(err)
	}
	if b, err := c.roundTrip(1, []byte(benchList)); err != nil || !bytes.Contains(b, []byte(`"search_issues"`)) {
		tb.Fatalf("tools/list: %v %.300s", err, b)
	}
	return c.call
}

// stdioCaller multiplexes concurrent calls over one newline-delimited
// JSON-RPC pipe pair, matching responses by id.
type stdioCaller struct {
	wmu     sync.Mutex
	w       io.Writer
	mu      sync.Mutex
	pending map[int64]chan []byte
}

func newStdioCaller(w io.Writer, r io.Reader) *stdioCaller {
	c := &stdioCaller{w: w, pending: map[int64]chan []byte{}}
	go func() {
		lr := frame.NewLineReader(r, 64<<20)
		for {
			line, err := lr.Next()
			if b := frame.TrimSpace(line); len(b) > 0 {
				if m, perr := frame.Parse(b); perr == nil && m.Kind.IsResponse() {
					if id, ok := m.IDInt(); ok {
						c.mu.Lock()
						ch := c.pending[id]
						delete(c.pending, id)
						c.mu.Unlock()
						if ch != nil {
							ch <- bytes.Clone(b)
						}
					}
				}
			}
			if err != nil {
				c.mu.Lock()
				for id, ch := range c.pending {
					close(ch)
					delete(c.pending, id)
				}
				c.mu.Unlock()
				return
			}
		}
	}()
	return c
}

// roundTrip sends one request line with id and returns its response.
func (c *stdioCaller) roundTrip(id int64, body []byte) ([]byte, error) {
	ch := make(chan []byte, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	c.wmu.Lock()
	_, err := c.w.Write(append(body, '\n'))
	c.wmu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case b, ok := <-ch:
		if !ok {
			return nil, io.ErrUnexpectedEOF
		}
		return b, nil
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("request %d: no answer in 30s", id)
	}
}

func (c *stdioCaller) call(id int64) error {
	b, err := c.roundTrip(id, legacyCallBody(id))
	if err == nil && !bytes.Contains(b, []byte(`"result":{`)) {
		err = fmt.Errorf("%.300s", b)
	}
	return err
}

// target is one way of making the call: call, shared by every worker, or
// open, a session of its own for each worker.
type target struct {
	name string
	call func(id int64) error
	open func() func(id int64) error
}

// sideBySide makes b.N calls per target at concurrency conc, the targets
// interleaved in batches (so machine noise falls on all of them alike),
// and reports p50, p99, calls/s, CPU, allocations and bytes per call per
// target and the goal ratios: the latency, CPU and allocations the
// gateway adds over direct against what the floor adds, and the
// gateway's throughput against the floor's. targets[0] is direct,
// targets[1] the floor, targets[2] the gateway (the ratios are of these
// three). It returns each target's p50 (µs) and calls/s.
func sideBySide(b *testing.B, conc int, targets []target) (p50, rate []float64) {
	return sideBySideVs(b, conc, targets, true)
}

// tally is what one target's batches measured.
type tally struct {
	lat              []time.Duration
	busy, cpu        time.Duration
	mallocs, alloced uint64
	done             int
}

// sideBySideVs is sideBySide, with the ratios against the floor only when
// vsFloor (a floor that adds nothing measurable has no ratio to give).
func sideBySideVs(b *testing.B, conc int, targets []target, vsFloor bool) (p50, rate []float64) {
	var id atomic.Int64
	id.Store(100)
	callers := make([][]func(int64) error, len(targets))
	for i, t := range targets {
		for range conc {
			c := t.call
			if t.open != nil {
				c = t.open()
			}
			callers[i] = append(callers[i], c)
		}
	}
	// Warm up: connections, the gateway's first listing, pools.
	for i, t := range targets {
		for _, c := range callers[i] {
			for range 3 {
				if err := c(id.Add(1)); err != nil {
					b.Fatalf("%s: %v", t.name, err)
				}
			}
		}
	}
	batch := max(200, 20*conc)
	tallies := make([]tally, len(targets))
	b.ResetTimer()
	for tallies[len(targets)-1].done < b.N {
		for i, t := range targets {
			n := min(batch, b.N-tallies[i].done)
			if n <= 0 {
				continue
			}
			if err := runBatch(&tallies[i], t.name, callers[i], n, &id); err != nil {
				b.Fatalf("%s: %v", t.name, err)
			}
		}
	}
	b.StopTimer()
	return reportSideBySide(b, targets, tallies, vsFloor)
}

// runBatch makes n calls, spread over callers (one goroutine each), and
// adds what they took to tl.
func runBatch(tl *tally, name string, callers []func(int64) error, n int, id *atomic.Int64) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	per := make([][]time.Duration, len(callers))
	var failed atomic.Value
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs0, bytes0 := ms.Mallocs, ms.TotalAlloc
	cpu0 := cpuTime()
	start := time.Now()
	for w, call := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if profiling() {
				pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("hop", "client-"+name)))
			}
			for next.Add(1) <= int64(n) {
				t0 := time.Now()
				if err := call(id.Add(1)); err != nil {
					failed.Store(err)
					return
				}
				per[w] = append(per[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	tl.busy += time.Since(start)
	tl.cpu += cpuTime() - cpu0
	runtime.ReadMemStats(&ms)
	tl.mallocs += ms.Mallocs - mallocs0
	tl.alloced += ms.TotalAlloc - bytes0
	if err, _ := failed.Load().(error); err != nil {
		return err
	}
	for _, p := range per {
		tl.lat = append(tl.lat, p...)
	}
	tl.done += n
	return nil
}

// reportSideBySide reports each target's figures and the ratios (see
// sideBySide), and returns each target's p50 (µs) and calls/s.
func reportSideBySide(b *testing.B, targets []target, tallies []tally, vsFloor bool) (p50, rate []float64) {
	p50 = make([]float64, len(targets))
	rate = make([]float64, len(targets))
	cpuPer := make([]float64, len(targets))
	allocsPer := make([]float64, len(targets))
	for i, t := range targets {
		tl := &tallies[i]
		slices.Sort(tl.lat)
		p50[i] = us(tl.lat[len(tl.lat)/2])
		rate[i] = float64(tl.done) / tl.busy.Seconds()
		cpuPer[i] = us(tl.cpu) / float64(tl.done)
		allocsPer[i] = float64(tl.mallocs) / float64(tl.done)
		b.ReportMetric(p50[i], t.name+"-p50-µs")
		b.ReportMetric(us(tl.lat[len(tl.lat)*99/100]), t.name+"-p99-µs")
		b.ReportMetric(rate[i], t.name+"-calls/s")
		if cpuPer[i] > 0 {
			b.ReportMetric(cpuPer[i], t.name+"-cpu-µs/call")
		}
		b.ReportMetric(allocsPer[i], t.name+"-allocs/call")
		b.ReportMetric(float64(tl.alloced)/float64(tl.done), t.name+"-B/call")
	}
	floorAdds, gwAdds := p50[1]-p50[0], p50[2]-p50[0]
	b.ReportMetric(gwAdds, "gateway-adds-p50-µs")
	b.ReportMetric(rate[2]/rate[0], "calls/s-vs-direct")
	if vsFloor {
		if floorAdds > 0 {
			b.ReportMetric(gwAdds/floorAdds, "added-p50-vs-floor")
		}
		b.ReportMetric(rate[2]/rate[1], "calls/s-vs-floor")
		if floorCPU := cpuPer[1] - cpuPer[0]; floorCPU > 0 {
			b.ReportMetric((cpuPer[2]-cpuPer[0])/floorCPU, "added-cpu-vs-floor")
		}
		if floorAllocs := allocsPer[1] - allocsPer[0]; floorAllocs > 0 {
			b.ReportMetric((allocsPer[2]-allocsPer[0])/floorAllocs, "added-allocs-vs-floor")
		}
	}
	b.ReportMetric(0, "ns/op") // per call figures are above
	return p50, rate
}

// profiling reports whether the run writes a CPU or memory profile:
// then each hop's handler, and each target's callers, run with a pprof
// label (hop=gateway, hop=revproxy, hop=mock, hop=client-NAME), so one
// hop's cost can be read apart (go tool pprof -tagfocus hop=gateway). The
// goroutines a handler starts, its upstream transport's among them,
// inherit the label.
func profiling() bool {
	for _, name := range []string{"test.cpuprofile", "test.memprofile"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return true
		}
	}
	return false
}

// labeled runs h under the pprof label hop=name when profiling.
func labeled(name string, h http.Handler) http.Handler {
	if !profiling() {
		return h
	}
	labels := pprof.Labels("hop", name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pprof.Do(r.Context(), labels, func(context.Context) { h.ServeHTTP(w, r) })
	})
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
