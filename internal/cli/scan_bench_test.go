package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// BenchmarkScanFleet scans 1,000 servers on loopback (one mock serving
// the acme-github tools at 1,000 paths, in this process) with mcpdrift
// scan run as a process of its own (the test binary, TestWatchHelperProcess),
// so that its wall time and peak RSS are the command's alone. The baseline
// in the same run is the default concurrency (8); the goal is 64; with
// and without a SQLite store (every result recorded); and against servers
// that answer after 20 ms.
//
//	go test ./internal/cli -run '^$' -bench BenchmarkScanFleet -benchtime 1x
func BenchmarkScanFleet(b *testing.B) {
	_, urls := fleetMock(b, 1000, mockserver.Config{Tools: mockManifest(b, exampleV1)}, nil)
	// The same servers answering each request after 20 ms, as a server
	// across a network would: concurrency then pays.
	_, slow := fleetMock(b, 1000, mockserver.Config{Tools: mockManifest(b, exampleV1), Slow: 20 * time.Millisecond}, nil)
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		conc  int
		store bool
		slow  bool
	}{{"baseline-c8", 8, false, false}, {"c64", 64, false, false}, {"c64-sqlite", 64, true, false},
		{"rtt20ms-baseline-c8", 8, false, true}, {"rtt20ms-c64", 64, false, true}} {
		b.Run(bc.name, func(b *testing.B) {
			var wall time.Duration
			var rss int64
			for range b.N {
				args := []string{"scan", "--concurrency", strconv.Itoa(bc.conc), "--timeout", "30s", "--format", "json"}
				if bc.store {
					args = append(args, "--store", "sqlite:"+filepath.Join(b.TempDir(), "h.db"))
				}
				if bc.slow {
					args = append(args, urlArgs(slow)...)
				} else {
					args = append(args, urlArgs(urls)...)
				}
				cmd := exec.Command(exe, "-test.run=^TestWatchHelperProcess$")
				cmd.Env = append(os.Environ(), "MCPDRIFT_TEST_WATCH_ARGS="+strings.Join(args, "\x1f"))
				start := time.Now()
				out, err := cmd.Output()
				wall += time.Since(start)
				if err != nil {
					b.Fatalf("%v: %s", err, out[:min(len(out), 2000)])
				}
				if !strings.Contains(string(out), `"recorded": 1000`) {
					b.Fatalf("not every server recorded: %s", out[:min(len(out), 2000)])
				}
				rss = max(rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
			}
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms")
			b.ReportMetric(float64(rss)/1024, "peak-RSS-MiB")
		})
	}
}
