package proxy_test

// Benchmarks of the gateway's hot paths (docs/benchmarks.md, "The
// gateway"):
//
//   - BenchmarkToolsCall (toolscall_bench_test.go): a tools/call round
//     trip through the gateway beside direct and a bare proxy, interleaved
//     in one run.
//   - BenchmarkEnforcedList10k: an enforced tools/list of 10,000 corpus
//     tools end to end through the gateway (it lists the upstream's 100
//     pages itself, gates every tool, serves the approved ones).
//   - BenchmarkIdleSessions: heap and RSS per idle legacy session.
//
// The upstream is the strict mock; its tools/call is a trivial echo. For
// stdio and for the memory figures the mock runs in a child process (this
// test binary, see init), so its own memory is not counted.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// The test binary doubles as the mock in a child process: argv
// [exe, benchChildArg, "stdio"|"http", MANIFEST].
const benchChildArg = "mcpdrift-proxy-bench-mock"

func init() {
	if len(os.Args) < 4 || os.Args[1] != benchChildArg {
		return
	}
	tools, err := mockserver.LoadToolsFile(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s := mockserver.MustNew(mockserver.Config{Tools: tools, ServerName: "acme-github", ServerVersion: "1.0.0",
		ListChanged: os.Args[2] == "http-stream", MaxSessions: 4096, LogLimit: 1})
	switch os.Args[2] {
	case "stdio":
		_ = s.ServeStdio(context.Background(), os.Stdin, os.Stdout)
	case "http", "http-stream":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("http://%s/mcp\n", ln.Addr())
		hs := &http.Server{Handler: s, ConnContext: s.ConnContext}
		go hs.Serve(ln)
		// Until the parent closes stdin (or dies).
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM)
		go func() { io.Copy(io.Discard, os.Stdin); sig <- syscall.SIGTERM }()
		<-sig
	}
	os.Exit(0)
}

// benchChild starts the mock in a child process.
func benchChild(tb testing.TB, mode, manifestPath string) *exec.Cmd {
	tb.Helper()
	cmd := exec.Command(os.Args[0], benchChildArg, mode, manifestPath)
	cmd.Stderr = os.Stderr
	tb.Cleanup(func() {
		if cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// benchHTTPChild serves manifestPath over HTTP from a child process and
// returns its /mcp URL; mode "http-stream" also serves each legacy
// session's GET stream (ListChanged), which the gateway then holds open.
func benchHTTPChild(tb testing.TB, mode, manifestPath string) string {
	tb.Helper()
	cmd := benchChild(tb, mode, manifestPath)
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { in.Close() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatal(err)
	}
	return strings.TrimSpace(line)
}

const benchMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// callBody is a 2026-07-28 tools/call of the approved search_issues.
func callBody(id int64) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{"name":"search_issues","arguments":{"repo":"acme/widgets","query":"is:open label:bug","limit":20},` + benchMeta + `}}`)
}

// benchBaseline pins a manifest file.
func benchBaseline(tb testing.TB, path string) *decide.Baseline {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	tl, err := manifest.ParseToolList(b)
	if err != nil {
		tb.Fatal(err)
	}
	return decide.NewBaseline("acme", manifest.Identity{}, tl.Tools)
}

// benchTransport is a client transport that keeps enough idle
// connections for 32 callers (the default keeps 2 per host).
func benchTransport() *http.Transport {
	return &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
}

// httpCaller posts tools/call bodies to url.
func httpCaller(tb testing.TB, u string) func(id int64) error {
	c := &http.Client{Transport: benchTransport()}
	tb.Cleanup(c.CloseIdleConnections)
	return func(id int64) error {
		req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(callBody(id)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "search_issues")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"result":{`)) {
			return fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, b)
		}
		return nil
	}
}

// benchGateway is an enforcing gateway configured as the command
// configures one (metrics on, no decision log, the review profile).
func benchGateway(tb testing.TB, up proxy.Upstream) *proxy.Gateway {
	tb.Helper()
	g, err := proxy.New(proxy.Config{Upstream: up, Mode: proxy.Enforce, Baseline: benchBaseline(tb, exampleV1),
		ServerID: "acme", Metrics: proxy.NewMetrics()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(g.Close)
	return g
}

// BenchmarkEnforcedList10k: an enforced tools/list of 10,000 tools
// (internal/corpus, seed 1: 58.6 MB; the mock serves them in 100 pages of
// 100) end to end through the gateway — the downstream's request, the
// gateway's own listing of all 100 pages, the strict parse, every digest,
// the decision on every tool, and the 58.6 MB answer read by the client.
// RelistInterval 1ns makes every tools/list a fresh listing.
func BenchmarkEnforcedList10k(b *testing.B) {
	for _, c := range []struct {
		name string
		doc  []byte
	}{
		{"corpus", corpus.Tools(10000, 1)},
		{"1KB-tools", compactToolArray(10000)},
	} {
		b.Run(c.name, func(b *testing.B) {
			tl, err := manifest.ParseToolList(c.doc)
			if err != nil {
				b.Fatal(err)
			}
			tools, err := mockserver.LoadTools(c.doc)
			if err != nil {
				b.Fatal(err)
			}
			mock := mockserver.MustNew(mockserver.Config{Tools: tools, PageSize: 100, LogLimit: 1})
			ms := httptest.NewUnstartedServer(mock)
			ms.Config.ConnContext = mock.ConnContext
			ms.Start()
			b.Cleanup(func() { ms.Close(); mock.Close() })
			g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: ms.URL + "/mcp"}, Mode: proxy.Enforce,
				Baseline: decide.NewBaseline("bench", manifest.Identity{}, tl.Tools), RelistInterval: time.Nanosecond,
				Metrics: proxy.NewMetrics()})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(g.Close)
			gs := httptest.NewServer(g.Handler(proxy.HTTPOptions{}))
			b.Cleanup(gs.Close)
			client := &http.Client{Transport: benchTransport()}
			list := func() int {
				req, _ := http.NewRequest(http.MethodPost, gs.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+benchMeta+`}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Method", "tools/list")
				req.Header.Set("MCP-Protocol-Version", "2026-07-28")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				defer resp.Body.Close()
				n, err := io.Copy(io.Discard, resp.Body)
				if err != nil || resp.StatusCode != 200 {
					b.Fatalf("HTTP %d, %v", resp.StatusCode, err)
				}
				return int(n)
			}
			n := list()
			if n < len(c.doc) {
				b.Fatalf("served %d bytes of %d: not every tool was served", n, len(c.doc))
			}
			b.SetBytes(int64(len(c.doc)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				list()
			}
		})
	}
}

// compactToolArray is n tools of about 1 KB each (the size of a typical
// real tool; manifest's Observe10k input), as a bare array.
func compactToolArray(n int) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"tool_%05d","title":"Tool %d","description":"Reads record %d in the workspace. Returns it as JSON, with its id, owner and timestamps. Use the cursor to page through long results; at most 100 items are returned per call.",`, i, i, i)
		b.WriteString(`"inputSchema":{"type":"object","properties":{"workspace":{"type":"string","description":"Workspace slug","pattern":"^[a-z0-9-]{1,64}$"},"id":{"type":"string","description":"The record id"},"limit":{"type":"integer","minimum":1,"maximum":100,"default":20},"cursor":{"type":["string","null"]},"fields":{"type":"array","items":{"enum":["id","owner","created","updated","body"]},"uniqueItems":true},"dryRun":{"type":"boolean","default":false}},"required":["workspace"],"additionalProperties":false},`)
		b.WriteString(`"outputSchema":{"type":"object","properties":{"items":{"type":"array","items":{"type":"object"}},"nextCursor":{"type":"string"}}},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// rssBytes is this process's resident set (Linux; 0 elsewhere).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

// openLegacySessions initializes n legacy sessions through the gateway at
// url (initialize, notifications/initialized, one tools/list each, so
// every session holds its gated list) and returns their ids.
func openLegacySessions(tb testing.TB, client *http.Client, u string, n, conc int) []string {
	tb.Helper()
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	post := func(sid, body string) (*http.Response, []byte, error) {
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				resp, b, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
				if err == nil && resp.StatusCode != 200 {
					err = fmt.Errorf("initialize %d: HTTP %d %.200s", i, resp.StatusCode, b)
				}
				if err != nil {
					failed.Store(err)
					return
				}
				sid := resp.Header.Get("Mcp-Session-Id")
				ids[i] = sid
				if _, _, err := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
					failed.Store(err)
					return
				}
				resp, b, err = post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
				if err == nil && (resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"search_issues"`))) {
					err = fmt.Errorf("tools/list %d: HTTP %d %.200s", i, resp.StatusCode, b)
				}
				if err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		tb.Fatal(err)
	}
	return ids
}

// BenchmarkIdleSessions: the memory one idle legacy session costs the
// gateway — each session initialized, initialized-notified and listed
// once, then left idle. The upstream mock runs in a child process, so only
// the gateway (and the test's client) are measured. Reported per session:
// Go heap and stacks in use after GC, process RSS, goroutines. "stream":
// the upstream serves a GET stream per session (listChanged), which the
// gateway holds open for the session's life.
func BenchmarkIdleSessions(b *testing.B) {
	for _, mode := range []string{"http", "http-stream"} {
		name := "no-upstream-stream"
		if mode == "http-stream" {
			name = "upstream-stream"
		}
		b.Run(name, func(b *testing.B) { idleSessions(b, mode) })
	}
}

func idleSessions(b *testing.B, mode string) {
	manifestPath, _ := filepath.Abs(exampleV1)
	upURL := benchHTTPChild(b, mode, manifestPath)
	const n = 1000
	for range b.N {
		b.StopTimer()
		g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: upURL}, Mode: proxy.Enforce,
			Baseline: benchBaseline(b, exampleV1), Metrics: proxy.NewMetrics()})
		if err != nil {
			b.Fatal(err)
		}
		gs := httptest.NewServer(g.Handler(proxy.HTTPOptions{}))
		client := &http.Client{Transport: benchTransport()}
		openLegacySessions(b, client, gs.URL+"/mcp", 8, 8) // warm: pools, first allocations
		client.CloseIdleConnections()
		heap0, rss0, gr0 := heapInUse(), rssBytes(), runtime.NumGoroutine()
		b.StartTimer()
		openLegacySessions(b, client, gs.URL+"/mcp", n, 32)
		b.StopTimer()
		client.CloseIdleConnections()
		time.Sleep(100 * time.Millisecond) // let closed connections' goroutines end
		heap1, rss1, gr1 := heapInUse(), rssBytes(), runtime.NumGoroutine()
		b.ReportMetric(float64(int64(heap1)-int64(heap0))/n, "heap-B/session")
		b.ReportMetric(float64(rss1-rss0)/n, "rss-B/session")
		b.ReportMetric(float64(gr1-gr0)/n, "goroutines/session")
		gs.Close()
		g.Close()
		b.StartTimer()
	}
	b.ReportMetric(0, "ns/op")
}
