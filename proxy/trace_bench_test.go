package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/telemetry"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
	"github.com/mcpdrift/mcpdrift/telemetry/otlptest"
)

// The test binary doubles as the OTLP collector of BenchmarkToolsCallTraced
// in a child process (argv [exe, benchOTLPArg]): it prints its base URL,
// decodes and discards every export, and when its stdin closes prints the
// number of spans it decoded.
const benchOTLPArg = "mcpdrift-proxy-bench-otlp"

func init() {
	if len(os.Args) < 2 || os.Args[1] != benchOTLPArg {
		return
	}
	c := otlptest.New(otlptest.Discard)
	fmt.Println(c.URL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	fmt.Println(c.Received())
	os.Exit(0)
}

// countingTracer counts the spans it starts.
type countingTracer struct {
	t mcptrace.Tracer
	n atomic.Int64
}

func (c *countingTracer) Start(ctx context.Context, r mcptrace.Request) (context.Context, mcptrace.Span) {
	c.n.Add(1)
	return c.t.Start(ctx, r)
}

// BenchmarkToolsCallTraced: what tracing costs on the gateway's hot path.
// A tools/call over HTTP four ways in the same run, interleaved in
// batches: direct to the upstream, through a bare httputil.ReverseProxy
// (the floor of any hop), through the enforcing gateway without a tracer
// (the baseline), and through the same gateway with the real
// OpenTelemetry SDK exporting in bounded batches (telemetry.ModeService,
// as mcpdrift proxy --otlp-endpoint runs it) to a collector in a child
// process (so its decoding is not counted in the gateway's memory). Each
// traced call is a SERVER and a CLIENT span, and a traceparent written
// into the forwarded params._meta. Reported: p50, p99 and calls/s of each,
// the latency tracing adds over the untraced gateway, the traced
// gateway's calls/s against the untraced one's, and the bytes and
// allocations per call of each (sideBySide: client and mock included
// alike, so the difference between the gateways is what tracing
// allocates). Every span started must reach the collector.
//
//	go test ./proxy -run '^$' -bench ToolsCallTraced -benchtime 20000x
func BenchmarkToolsCallTraced(b *testing.B) {
	tools, err := mockserver.LoadToolsFile(exampleV1)
	if err != nil {
		b.Fatal(err)
	}
	mock := mockserver.MustNew(mockserver.Config{Tools: tools, LogLimit: 1})
	ms := httptest.NewUnstartedServer(mock)
	ms.Config.ConnContext = mock.ConnContext
	ms.Start()
	b.Cleanup(func() { ms.Close(); mock.Close() })
	upURL := ms.URL + "/mcp"

	col := exec.Command(os.Args[0], benchOTLPArg)
	col.Stderr = os.Stderr
	b.Cleanup(func() {
		if col.Process != nil {
			col.Process.Kill()
			col.Wait()
		}
	})
	in, _ := col.StdinPipe()
	outp, _ := col.StdoutPipe()
	if err := col.Start(); err != nil {
		b.Fatal(err)
	}
	colOut := bufio.NewReader(outp)
	line, err := colOut.ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	s, err := telemetry.Resolve(strings.TrimSpace(line), true, func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	var warned atomic.Value
	p, err := telemetry.New(s, telemetry.Options{Mode: telemetry.ModeService, Version: "bench", Warn: func(m string) { warned.Store(m) }})
	if err != nil {
		b.Fatal(err)
	}
	ct := &countingTracer{t: p.Tracer()}
	b.Cleanup(func() {
		ok := p.Flush()
		in.Close()
		got, _ := colOut.ReadString('\n')
		n, _ := strconv.ParseInt(strings.TrimSpace(got), 10, 64)
		if m, _ := warned.Load().(string); !ok || m != "" || n != ct.n.Load() {
			b.Errorf("export: flushed %v, warning %q; %d spans started, %d received", ok, m, ct.n.Load(), n)
		}
	})

	u, _ := url.Parse(ms.URL)
	rs := httptest.NewServer(bareProxy(u, nil, nil))
	b.Cleanup(rs.Close)
	plain := httptest.NewServer(benchGateway(b, proxy.Upstream{URL: upURL}).Handler(proxy.HTTPOptions{}))
	b.Cleanup(plain.Close)
	g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: upURL}, Mode: proxy.Enforce, Baseline: benchBaseline(b, exampleV1),
		ServerID: "acme", Metrics: proxy.NewMetrics(), Tracer: ct})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(g.Close)
	traced := httptest.NewServer(g.Handler(proxy.HTTPOptions{}))
	b.Cleanup(traced.Close)

	for _, conc := range []int{1, 32} {
		b.Run("c"+strconv.Itoa(conc), func(b *testing.B) {
			targets := []target{{name: "direct", call: httpCaller(b, upURL)}, {name: "revproxy", call: httpCaller(b, rs.URL+"/mcp")},
				{name: "gateway", call: httpCaller(b, plain.URL+"/mcp")}, {name: "traced", call: httpCaller(b, traced.URL+"/mcp")}}
			p50, rate := sideBySide(b, conc, targets)
			b.ReportMetric(p50[3]-p50[2], "traced-adds-p50-µs")
			b.ReportMetric(rate[3]/rate[2], "traced-calls/s-vs-gateway")
		})
	}
}
