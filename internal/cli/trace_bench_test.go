package cli

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/telemetry/otlptest"
)

// BenchmarkDriftTraced: what --otlp-endpoint costs a drift run. The same
// drift as BenchmarkDrift10kTools100Pages (10,000 tools in 100 pages on
// loopback, both connections, every rule), untraced (the baseline) and
// traced to a loopback collector that decodes and discards the export,
// alternating in each iteration so machine noise falls on both; reported
// per run: the wall time and the bytes and allocations of each (the
// collector's decoding included in the traced figure), the spans
// exported, and traced/untraced ratios.
//
//	go test ./internal/cli -run '^$' -bench DriftTraced -benchtime 5x
func BenchmarkDriftTraced(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 10000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"name":"tool_%05d","description":"Tool %d reads a record and returns it as JSON with its owner and timestamps.","inputSchema":{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z0-9-]{1,64}$"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["id"],"additionalProperties":false},"annotations":{"readOnlyHint":true}}`, i, i)
	}
	sb.WriteString("]")
	manifestPath := filepath.Join(b.TempDir(), "m.json")
	if err := os.WriteFile(manifestPath, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	tools, err := mockserver.LoadTools([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	s := mockserver.MustNew(mockserver.Config{Tools: tools, PageSize: 100})
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	defer ts.Close()
	col := otlptest.New(otlptest.Discard)
	defer col.Close()
	args := []string{"drift", manifestPath, "--url", ts.URL + "/mcp", "--format", "json"}
	once := func(extra ...string) (time.Duration, uint64, uint64) {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		start := time.Now()
		var out, stderr strings.Builder
		code := Main(append(args, extra...), strings.NewReader(""), &out, &stderr)
		took := time.Since(start)
		runtime.ReadMemStats(&m1)
		var r struct {
			Served struct {
				ToolCount int `json:"tool_count"`
			} `json:"served"`
		}
		if err := json.Unmarshal([]byte(out.String()), &r); code != 0 || stderr.Len() > 0 || err != nil || r.Served.ToolCount != 10000 {
			b.Fatalf("exit %d, %d tools (%v): %s", code, r.Served.ToolCount, err, stderr.String())
		}
		return took, m1.TotalAlloc - m0.TotalAlloc, m1.Mallocs - m0.Mallocs
	}
	var wall, by, al [2]float64
	b.ResetTimer()
	for b.Loop() {
		for i, extra := range [][]string{nil, {"--otlp-endpoint", col.URL()}} {
			t, x, y := once(extra...)
			wall[i] += t.Seconds()
			by[i] += float64(x)
			al[i] += float64(y)
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(wall[0]/n*1000, "untraced-ms/run")
	b.ReportMetric(wall[1]/n*1000, "traced-ms/run")
	b.ReportMetric(wall[1]/wall[0], "traced-wall-vs-untraced")
	b.ReportMetric(by[0]/n/1e6, "untraced-MB/run")
	b.ReportMetric(by[1]/n/1e6, "traced-MB/run")
	b.ReportMetric(al[0]/n, "untraced-allocs/run")
	b.ReportMetric(al[1]/n, "traced-allocs/run")
	b.ReportMetric(float64(col.Received())/n, "spans/run")
	b.ReportMetric(0, "ns/op")
}
