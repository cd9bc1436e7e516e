package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// BenchmarkLockCheck100x100: lock check of a lock of 100 servers of 100
// tools each (corpus.LeanTools, a typical tool's size), every server a
// loopback mock of its own, at --concurrency 8 (the default) and 32,
// beside the named baseline "list-only": the same 100 listings with
// mcpclient and nothing else, at the same concurrency — the floor a
// check cannot go below. Reported: ms per check of the whole lock, and
// the heap in use after it (MB).
func BenchmarkLockCheck100x100(b *testing.B) {
	dir := b.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	var urls []string
	l := &lock.Lock{}
	for i := range 100 {
		var tools []json.RawMessage
		if err := json.Unmarshal(corpus.LeanTools(100, uint64(i+1)), &tools); err != nil {
			b.Fatal(err)
		}
		s, err := mockserver.New(mockserver.Config{Tools: tools})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewUnstartedServer(s)
		ts.Config.ConnContext = s.ConnContext
		ts.Start()
		b.Cleanup(func() { ts.Close(); s.Close() })
		u := ts.URL + "/mcp"
		urls = append(urls, u)
		// Pinned as lock add pins it (the tools as served), without
		// re-reading a growing lock a hundred times.
		tl, err := manifest.ParseToolList(corpus.LeanTools(100, uint64(i+1)))
		if err != nil {
			b.Fatal(err)
		}
		srv, err := lock.NewServer(fmt.Sprintf("s%03d", i), lock.Source{URL: u}, lock.ProfileReview, manifest.Identity{Endpoint: u}, nil, tl.Tools, classify.Default(), lock.Approval{By: "bench@example.com", At: "2026-12-01T00:00:00Z"})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Add(srv); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(lp, l.Marshal(), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, conc := range []int{8, 32} {
		b.Run(fmt.Sprintf("lock-check/concurrency-%d", conc), func(b *testing.B) {
			for b.Loop() {
				var out, errb strings.Builder
				if code := Main([]string{"lock", "check", "--lock", lp, "--format", "json", "--concurrency", fmt.Sprint(conc)}, strings.NewReader(""), &out, &errb); code != 0 {
					b.Fatalf("lock check: %d %s", code, errb.String())
				}
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/1e6, "heap-MB")
		})
		b.Run(fmt.Sprintf("list-only/concurrency-%d", conc), func(b *testing.B) {
			for b.Loop() {
				sem := make(chan struct{}, conc)
				var wg sync.WaitGroup
				for _, u := range urls {
					wg.Add(1)
					go func() {
						defer wg.Done()
						sem <- struct{}{}
						defer func() { <-sem }()
						if _, err := mcpclient.ListTools(context.Background(), mcpclient.Config{BaseURL: u}); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
			}
		})
	}
}
