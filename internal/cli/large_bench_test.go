package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkLargeServer: pin --url and drift against that pin (no change),
// interleaved in one loop, against the official Go SDK server serving
// 10,000 corpus.LeanTools (about 17 MB of tool JSON) on loopback, in pages
// of 1,000 and of 100; and over stdio, the same server as a child process
// (this test binary, see envLargeServer). Each iteration runs one pin and
// one drift; pin-s and drift-s are their medians, drift/pin their ratio
// (the goal is at most 1.15).
func BenchmarkLargeServer(b *testing.B) {
	for _, c := range []struct {
		tools, page int
		stdio       bool
	}{{10000, 1000, false}, {10000, 100, false}, {10000, 1000, true}} {
		name := fmt.Sprintf("http/tools=%d/page=%d", c.tools, c.page)
		if c.stdio {
			name = fmt.Sprintf("stdio/tools=%d/page=%d", c.tools, c.page)
		}
		b.Run(name, func(b *testing.B) {
			var target []string
			if c.stdio {
				exe, err := os.Executable()
				if err != nil {
					b.Fatal(err)
				}
				b.Setenv(envLargeServer, fmt.Sprintf("tools=%d,page=%d", c.tools, c.page))
				target = []string{"--pass-env", envLargeServer, "--stdio", "--", exe}
			} else {
				srv, err := newLargeGoSDKServer(c.tools, c.page)
				if err != nil {
					b.Fatal(err)
				}
				ts := httptest.NewServer(largeHandler(srv, false))
				defer ts.Close()
				target = []string{"--url", ts.URL + "/mcp"}
			}
			dir := b.TempDir()
			pinned := filepath.Join(dir, "big.json")
			pin := append([]string{"pin", "--server-id", "big", "-o", pinned}, target...)
			drift := append([]string{"drift", pinned, "--format", "json"}, target...)
			run := func(args []string) (time.Duration, string) {
				var out bytes.Buffer
				start := time.Now()
				code := Main(args, strings.NewReader(""), &out, io.Discard)
				d := time.Since(start)
				if code != 0 {
					b.Fatalf("%s: exit %d", args[0], code)
				}
				return d, out.String()
			}
			var pins, drifts []float64
			var listing int64
			for b.Loop() {
				p, _ := run(pin)
				d, out := run(drift)
				pins, drifts = append(pins, p.Seconds()), append(drifts, d.Seconds())
				var r struct {
					Served struct {
						ToolCount int  `json:"tool_count"`
						Second    bool `json:"second_connection_compared"`
					} `json:"served"`
				}
				if err := json.Unmarshal([]byte(out), &r); err != nil || r.Served.ToolCount != c.tools || !r.Served.Second {
					b.Fatalf("drift served %+v: %v", r.Served, err)
				}
				if listing == 0 {
					st, err := os.Stat(filepath.Join(dir, "big.snapshot.json"))
					if err != nil {
						b.Fatal(err)
					}
					listing = st.Size()
				}
			}
			pm, dm := median(pins), median(drifts)
			b.ReportMetric(pm, "pin-s")
			b.ReportMetric(dm, "drift-s")
			b.ReportMetric(dm/pm, "drift/pin")
			b.ReportMetric(float64(listing)/1e6, "listing-MB")
		})
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
