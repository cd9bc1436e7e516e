package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/internal/pgtest"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/store"
)

// BenchmarkScanFleet scans 1,000 servers on loopback (one mock serving
// the acme-github tools at 1,000 paths, in this process) with mcpdrift
// scan run as a process of its own (the test binary, TestWatchHelperProcess),
// so that its wall time and peak RSS are the command's alone. The baseline
// in the same run is the default concurrency (8); the goal is 64; with
// and without a SQLite store (with one, every result recorded; without,
// every server observed only); the same servers as a lock of 1,000
// entries, each gated against its entry and recorded with its tools;
// and against servers that answer after 20 ms.
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
	lp := benchLock(b, urls, mockManifest(b, exampleV1))
	for _, bc := range []struct {
		name  string
		conc  int
		store bool
		slow  bool
		lock  bool
	}{{"baseline-c8", 8, false, false, false}, {"c64", 64, false, false, false}, {"c64-sqlite", 64, true, false, false},
		{"c64-sqlite-lock", 64, true, false, true},
		{"rtt20ms-baseline-c8", 8, false, true, false}, {"rtt20ms-c64", 64, false, true, false}} {
		b.Run(bc.name, func(b *testing.B) {
			var wall time.Duration
			var rss int64
			for range b.N {
				args := []string{"scan", "--concurrency", strconv.Itoa(bc.conc), "--timeout", "30s", "--format", "json"}
				db := "sqlite:" + filepath.Join(b.TempDir(), "h.db")
				if bc.store {
					args = append(args, "--store", db)
				}
				switch {
				case bc.lock:
					args = append(args, "--lock", lp)
				case bc.slow:
					args = append(args, urlArgs(slow)...)
				default:
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
				want := `"observed": 1000` // no store: observed only
				switch {
				case bc.lock:
					want = `"clean": 1000`
				case bc.store:
					want = `"recorded": 1000`
				}
				if !strings.Contains(string(out), want) {
					b.Fatalf("not every server %s: %s", want, out[:min(len(out), 2000)])
				}
				if bc.store {
					// Every kind of scan records every tool (5 a server).
					if r := countRows(b, db); r.ObservationTools != 5000 || r.ToolVersions != 5000 {
						b.Fatalf("the store holds %+v", r)
					}
				}
				rss = max(rss, maxRSSKiB(cmd.ProcessState))
			}
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms")
			b.ReportMetric(float64(rss)/1024, "peak-RSS-MiB")
		})
	}
}

// benchLock is a lock of one entry per URL, each pinning tools as lock add
// pins what it serves, written at once (lock add would read and write a
// growing lock a thousand times).
func benchLock(b testing.TB, urls []string, tools []json.RawMessage) string {
	b.Helper()
	raw, err := json.Marshal(tools)
	if err != nil {
		b.Fatal(err)
	}
	tl, err := manifest.ParseToolList(raw)
	if err != nil {
		b.Fatal(err)
	}
	l := &lock.Lock{}
	for i, u := range urls {
		srv, err := lock.NewServer(fmt.Sprintf("s%04d", i), lock.Source{URL: u}, lock.ProfileReview, manifest.Identity{Endpoint: u}, nil, tl.Tools, classify.Default(), lock.Approval{By: "bench@example.com", At: "2026-12-01T00:00:00Z"})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Add(srv); err != nil {
			b.Fatal(err)
		}
	}
	lp := filepath.Join(b.TempDir(), "mcpdrift.lock")
	if err := os.WriteFile(lp, l.Marshal(), 0o644); err != nil {
		b.Fatal(err)
	}
	return lp
}

// BenchmarkScanWorkers sweeps 1,000 servers (answering each request after
// 20 ms) through one PostgreSQL queue with one worker process, the named
// baseline, and with four, each `scan --worker --once --concurrency 8` as
// a process of its own; every server scanned exactly once per round.
//
//	go test ./internal/cli -run '^$' -bench BenchmarkScanWorkers -benchtime 1x
func BenchmarkScanWorkers(b *testing.B) {
	pg, err := pgtest.Start(context.Background())
	if err != nil {
		b.Skipf("no PostgreSQL: %v", err)
	}
	defer pg.Stop()
	pgURL, err := pg.NewSchema(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	_, urls := fleetMock(b, 1000, mockserver.Config{Tools: mockManifest(b, exampleV1), Slow: 20 * time.Millisecond}, nil)
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(context.Background(), pgURL, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	round := 0
	for _, bc := range []struct{ workers, conc int }{{1, 8}, {4, 8}, {1, 32}} {
		workers, conc := bc.workers, strconv.Itoa(bc.conc)
		b.Run(fmt.Sprintf("workers-%d-c%d", workers, bc.conc), func(b *testing.B) {
			var wall time.Duration
			for range b.N {
				round++
				name := fmt.Sprintf("bench-%d", round)
				args := append([]string{"scan", "--worker", "--once", "--round", name, "--store", pgURL, "--concurrency", conc}, urlArgs(urls)...)
				var cmds []*exec.Cmd
				start := time.Now()
				for w := range workers {
					cmd := exec.Command(exe, "-test.run=^TestWatchHelperProcess$")
					cmd.Env = append(os.Environ(), "MCPDRIFT_TEST_WATCH_ARGS="+strings.Join(append(args, "--worker-id", fmt.Sprintf("w%d", w)), "\x1f"))
					if err := cmd.Start(); err != nil {
						b.Fatal(err)
					}
					cmds = append(cmds, cmd)
				}
				for _, cmd := range cmds {
					if err := cmd.Wait(); err != nil {
						b.Fatalf("worker: %v", err)
					}
				}
				wall += time.Since(start)
				scans, err := st.Scans(context.Background(), 1000)
				if err != nil {
					b.Fatal(err)
				}
				seen := map[string]int{}
				for _, sc := range scans {
					if sc.Source == "scan --worker "+name {
						obs, err := st.Observations(context.Background(), sc.ID)
						if err != nil {
							b.Fatal(err)
						}
						for _, o := range obs {
							seen[o.Server]++
						}
					}
				}
				for s, n := range seen {
					if n != 1 {
						b.Fatalf("%s scanned %d times", s, n)
					}
				}
				if len(seen) != 1000 {
					b.Fatalf("%d servers scanned", len(seen))
				}
			}
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms")
		})
	}
}
