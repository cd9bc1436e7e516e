package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// benchTools are 50 tools of about 600 bytes (a typical server), with a
// digest that changes per iteration so every insert is new history.
func benchTools(iter int) []Tool {
	ts := make([]Tool, 50)
	for j := range ts {
		ts[j] = tool(fmt.Sprintf("tool_%02d", j), fmt.Sprintf("%d: Reads and writes things in the workspace. %0500d", iter, j))
	}
	return ts
}

// BenchmarkRecordServer records one server of 50 tools per op (one
// transaction: the observation, 50 definitions, 50 tool rows, 50 version
// upserts, 2 findings). tools/s is the figure in docs/benchmarks.md.
func BenchmarkRecordServer(b *testing.B) {
	bs := []backend{sqliteBackend(), {"sqlite-baseline-ckpt1000", func(t testing.TB) (*Store, string) {
		url := "sqlite:" + filepath.Join(t.TempDir(), "history.db")
		s, err := Open(context.Background(), url, Options{walAutocheckpoint: 1000})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, url
	}}}
	if pb, ok := pgBackend(b); ok {
		bs = append(bs, pb)
	}
	for _, be := range bs {
		b.Run(be.name, func(b *testing.B) {
			s, _ := be.open(b)
			ctx := context.Background()
			id, err := s.BeginScan(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			rs := make([]ServerResult, b.N)
			for i := range rs {
				rs[i] = result(fmt.Sprint("server-", i), benchTools(i)...)
				rs[i].Findings = []Finding{{RuleID: "MCP-X", Severity: "high", Tool: "tool_01", ObservedDigest: rs[i].Tools[1].Digest}, {RuleID: "MCP-Y", Severity: "low"}}
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := s.RecordServer(ctx, id, rs[i]); err != nil {
					b.Fatal(err)
				}
			}
			el := time.Since(start).Seconds()
			b.ReportMetric(float64(b.N)/el, "servers/s")
			b.ReportMetric(float64(b.N*50)/el, "tools/s")
		})
	}
}

// BenchmarkHistoryOneTool: History of one tool of one server in a store
// holding 1,000,000 tool versions (1,000 servers × 100 tools × 10
// digests, 100,000 findings), built once per backend by Synthesize. The
// named baseline, baseline-fullscan, reads the same versions with a
// filter no index serves (every row read), which is what History would
// cost without the (server, tool) key.
func BenchmarkHistoryOneTool(b *testing.B) {
	type big struct{ name, url string }
	var bigs []big
	ctx := context.Background()
	bigs = append(bigs, big{"sqlite", "sqlite:" + filepath.Join(b.TempDir(), "big.db")})
	if pg != nil {
		u, err := pg.NewSchema(ctx, "b")
		if err != nil {
			b.Fatal(err)
		}
		bigs = append(bigs, big{"postgres", u})
	}
	for _, bg := range bigs {
		start := time.Now()
		if err := Synthesize(ctx, bg.url, 1000, 100, 10); err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: built 1,000,000 versions in %v", bg.name, time.Since(start))
		s, err := Open(ctx, bg.url, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bg.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				vs, err := s.History(ctx, Query{Server: fmt.Sprintf("server-%04d", i%1000), Tool: fmt.Sprintf("tool-%03d", i%100)})
				if err != nil || len(vs) != 10 {
					b.Fatalf("%d versions, %v", len(vs), err)
				}
			}
		})
		b.Run(bg.name+"-baseline-fullscan", func(b *testing.B) {
			q := s.d.q(`SELECT count(*) FROM tool_versions WHERE tool || server = ?`)
			for i := 0; i < b.N; i++ {
				var n int
				key := fmt.Sprintf("tool-%03dserver-%04d", i%100, i%1000)
				var arg any = []byte(key) // bytea || bytea is bytea
				if !s.d.pg {
					arg = key // SQLite's || makes text
				}
				if err := s.db.QueryRowContext(ctx, q, arg).Scan(&n); err != nil || n != 10 {
					b.Fatalf("%d versions, %v", n, err)
				}
			}
		})
		s.Close()
	}
}

// BenchmarkClaimComplete: one ClaimNext and one Complete per op from 4
// goroutines (each a pool of its own, as worker processes have) on one
// round: the queue's cost per server, against the named baseline of the
// same two statements without the queue (an UPDATE of a row by key).
func BenchmarkClaimComplete(b *testing.B) {
	if pg == nil {
		b.Skip("no PostgreSQL")
	}
	ctx := context.Background()
	b.Run("queue", func(b *testing.B) {
		url, err := pg.NewSchema(ctx, "q")
		if err != nil {
			b.Fatal(err)
		}
		s, err := Open(ctx, url, Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		servers := make([]string, b.N)
		for i := range servers {
			servers[i] = fmt.Sprintf("server-%07d", i)
		}
		if _, err := s.SeedRound(ctx, "r", servers); err != nil {
			b.Fatal(err)
		}
		var stores []*Store
		for range 4 {
			w, err := Open(ctx, url, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			stores = append(stores, w)
		}
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for _, w := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					c, err := w.ClaimNext(ctx, "r", "w", time.Minute, Shard{})
					if errors.Is(err, ErrRoundDrained) {
						return
					}
					if errors.Is(err, ErrNoneClaimable) {
						continue
					}
					if err != nil {
						b.Error(err)
						return
					}
					if err := w.Complete(ctx, c, 0); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "servers/s")
	})
	b.Run("baseline-update-by-key", func(b *testing.B) {
		url, err := pg.NewSchema(ctx, "q")
		if err != nil {
			b.Fatal(err)
		}
		s, err := Open(ctx, url, Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		servers := make([]string, b.N)
		for i := range servers {
			servers[i] = fmt.Sprintf("server-%07d", i)
		}
		s.SeedRound(ctx, "r", servers)
		next := make(chan string, b.N)
		for _, sv := range servers {
			next <- sv
		}
		close(next)
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for sv := range next {
					if _, err := s.db.ExecContext(ctx, `UPDATE queue_items SET state = 'claimed', token = token + 1 WHERE round = 'r' AND server = $1`, []byte(sv)); err != nil {
						b.Error(err)
						return
					}
					if _, err := s.db.ExecContext(ctx, `UPDATE queue_items SET state = 'done' WHERE round = 'r' AND server = $1`, []byte(sv)); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "servers/s")
	})
}
