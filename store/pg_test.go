package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func pgStore(t *testing.T, opt Options) (*Store, string) {
	t.Helper()
	needPG(t)
	url, err := pg.NewSchema(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, url
}

// recordMany records n servers into one scan from 4 goroutines while
// disrupt runs once the first few are in; every RecordServer must succeed
// and every server must be recorded exactly once.
func recordThrough(t *testing.T, disrupt func()) {
	s, _ := pgStore(t, Options{RetryFor: 30 * time.Second})
	ctx := context.Background()
	id, err := s.BeginScan(ctx, "through")
	if err != nil {
		t.Fatal(err)
	}
	const n = 60
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		errs     []error
		recorded = make(chan int, n)
	)
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ts := []Tool{tool("a", fmt.Sprint(i)), tool("b", "same"), tool(fmt.Sprint("c", i), "x")}
				r := result(fmt.Sprint("server", i), ts...)
				r.Findings = []Finding{{RuleID: "MCP-X", Severity: "high", Tool: "a", ObservedDigest: ts[0].Digest}}
				if err := s.RecordServer(ctx, id, r); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
				recorded <- i
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	for i := 0; i < 10; i++ {
		<-recorded
	}
	disrupt()
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d writes failed; the first: %v", len(errs), errs[0])
	}
	if s.retries.Load() == 0 {
		t.Fatal("no write was retried: the disruption did not reach the store")
	}
	t.Logf("%d operations retried", s.retries.Load())
	if err := s.FinishScan(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	obs, err := s.Observations(ctx, id)
	if err != nil || len(obs) != n {
		t.Fatalf("recorded %d of %d servers (%v)", len(obs), n, err)
	}
	var nf int
	s.db.QueryRow(`SELECT count(*) FROM findings WHERE scan_id = $1`, id).Scan(&nf)
	if nf != n {
		t.Fatalf("%d findings for %d servers (a retry recorded twice?)", nf, n)
	}
}

// PostgreSQL restarted mid-scan: the writes wait for it and lose nothing.
func TestPostgresRestartMidScan(t *testing.T) {
	needPG(t)
	if os.Getenv("MCPDRIFT_TEST_POSTGRES_URL") != "" {
		t.Skip("an external PostgreSQL is not restarted")
	}
	recordThrough(t, func() {
		if err := pg.Restart(context.Background(), 300*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	})
}

// Every backend of the store's connections terminated mid-scan
// (pg_terminate_backend): the writes reconnect and lose nothing.
func TestPostgresBackendsTerminated(t *testing.T) {
	needPG(t)
	recordThrough(t, func() {
		for i := 0; i < 3; i++ {
			if err := pg.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND backend_type = 'client backend'`); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// PostgreSQL that stays away: a write gives up after RetryFor with the
// connection error, never hangs.
func TestPostgresGone(t *testing.T) {
	needPG(t)
	s, err := Open(context.Background(), "postgres://nobody:pw-s3cret@127.0.0.1:1/x?sslmode=disable&connect_timeout=1", Options{RetryFor: 200 * time.Millisecond})
	if err == nil {
		s.Close()
		t.Fatal("opened a store with no server")
	}
	if strings.Contains(err.Error(), "pw-s3cret") || !strings.Contains(err.Error(), "postgres://nobody@127.0.0.1:1/x") {
		t.Fatalf("the error: %v", err)
	}
}

func TestQueueClaims(t *testing.T) {
	forEach(t, func(t *testing.T, s *Store, _ string) {
		ctx := context.Background()
		servers := []string{"a", "b", "c"}
		if n, err := s.SeedRound(ctx, "r1", servers); err != nil || n != 3 {
			t.Fatalf("seed: %d %v", n, err)
		}
		if n, err := s.SeedRound(ctx, "r1", append(servers, "a")); err != nil || n != 0 {
			t.Fatalf("seed again: %d %v", n, err)
		}
		var claims []*Claim
		for range 3 {
			c, err := s.ClaimNext(ctx, "r1", "w1", time.Minute, Shard{})
			if err != nil {
				t.Fatal(err)
			}
			claims = append(claims, c)
		}
		if _, err := s.ClaimNext(ctx, "r1", "w2", time.Minute, Shard{}); !errors.Is(err, ErrNoneClaimable) {
			t.Fatalf("all leased: %v", err)
		}
		if err := s.Renew(ctx, claims[0], time.Minute); err != nil {
			t.Fatal(err)
		}
		for _, c := range claims {
			if err := s.Complete(ctx, c, 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Complete(ctx, claims[0], 0); err != nil {
			t.Fatalf("complete is idempotent: %v", err)
		}
		if _, err := s.ClaimNext(ctx, "r1", "w2", time.Minute, Shard{}); !errors.Is(err, ErrRoundDrained) {
			t.Fatalf("drained: %v", err)
		}
		if _, err := s.ClaimNext(ctx, "nope", "w2", time.Minute, Shard{}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown round: %v", err)
		}
		st, _ := s.Status(ctx, "r1")
		if st.Done != 3 {
			t.Fatalf("status %+v", st)
		}
	})
}

// A worker that dies mid-lease: its lease expires and another worker
// claims the server (a new token); the dead worker's late Complete and
// Renew are refused.
func TestQueueLeaseExpires(t *testing.T) {
	forEach(t, func(t *testing.T, s *Store, _ string) {
		ctx := context.Background()
		s.SeedRound(ctx, "r", []string{"only"})
		dead, err := s.ClaimNext(ctx, "r", "dead", 200*time.Millisecond, Shard{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ClaimNext(ctx, "r", "live", time.Minute, Shard{}); !errors.Is(err, ErrNoneClaimable) {
			t.Fatalf("before expiry: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
		live, err := s.ClaimNext(ctx, "r", "live", time.Minute, Shard{})
		if err != nil {
			t.Fatalf("after expiry: %v", err)
		}
		if live.Server != "only" || live.Token == dead.Token || live.Attempt != 2 {
			t.Fatalf("claim %+v after %+v", live, dead)
		}
		if err := s.Complete(ctx, dead, 0); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("late complete: %v", err)
		}
		if err := s.Renew(ctx, dead, time.Minute); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("late renew: %v", err)
		}
		if err := s.Complete(ctx, live, 0); err != nil {
			t.Fatal(err)
		}
	})
}

func TestQueueShards(t *testing.T) {
	s, _ := sqliteBackend().open(t)
	ctx := context.Background()
	var servers []string
	for i := 0; i < 40; i++ {
		servers = append(servers, fmt.Sprint("srv-", i))
	}
	s.SeedRound(ctx, "r", servers)
	seen := map[string]int{}
	for i := 0; i < 3; i++ {
		sh := Shard{Index: i, Count: 3}
		for {
			c, err := s.ClaimNext(ctx, "r", fmt.Sprint("w", i), time.Minute, sh)
			if errors.Is(err, ErrRoundDrained) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !sh.Contains(c.Server) {
				t.Fatalf("shard %d claimed %s", i, c.Server)
			}
			seen[c.Server]++
			s.Complete(ctx, c, 0)
		}
	}
	if len(seen) != 40 {
		t.Fatalf("the shards together claimed %d of 40", len(seen))
	}
}

// Many workers on one PostgreSQL round: every server is claimed exactly
// once (SKIP LOCKED), and a seeding race adds each server once.
func TestQueueNoDoubleClaim(t *testing.T) {
	needPG(t)
	_, url := pgStore(t, Options{})
	ctx := context.Background()
	const n, workers = 300, 8
	var servers []string
	for i := 0; i < n; i++ {
		servers = append(servers, fmt.Sprintf("server-%03d", i))
	}
	var (
		mu     sync.Mutex
		claims = map[string]int{}
		seeded int
		wg     sync.WaitGroup
		fail   error
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, url, Options{}) // a pool of its own, as a separate process has
			if err != nil {
				mu.Lock()
				fail = err
				mu.Unlock()
				return
			}
			defer s.Close()
			added, err := s.SeedRound(ctx, "round", servers)
			mu.Lock()
			seeded += added
			if err != nil {
				fail = err
			}
			mu.Unlock()
			for {
				c, err := s.ClaimNext(ctx, "round", fmt.Sprint("w", w), time.Minute, Shard{})
				if errors.Is(err, ErrRoundDrained) {
					return
				}
				if errors.Is(err, ErrNoneClaimable) {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if err != nil {
					mu.Lock()
					fail = err
					mu.Unlock()
					return
				}
				mu.Lock()
				claims[c.Server]++
				mu.Unlock()
				if err := s.Complete(ctx, c, 0); err != nil {
					mu.Lock()
					fail = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if fail != nil {
		t.Fatal(fail)
	}
	if seeded != n {
		t.Fatalf("seeding by %d workers added %d rows for %d servers", workers, seeded, n)
	}
	if len(claims) != n {
		t.Fatalf("%d of %d servers claimed", len(claims), n)
	}
	for sv, k := range claims {
		if k != 1 {
			t.Fatalf("%s claimed %d times", sv, k)
		}
	}
}

// Retention removes drained rounds only: a round still being swept keeps
// its rows, so that no worker seeds it again and scans a server twice.
func TestPruneKeepsLiveRounds(t *testing.T) {
	forEach(t, func(t *testing.T, s *Store, _ string) {
		ctx := context.Background()
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		s.opt.Now = func() time.Time { return clock }
		s.SeedRound(ctx, "live", []string{"a", "b"})
		s.SeedRound(ctx, "drained", []string{"c"})
		c, err := s.ClaimNext(ctx, "drained", "w", time.Minute, Shard{})
		if err != nil {
			t.Fatal(err)
		}
		s.Complete(ctx, c, 0)
		done, _ := s.ClaimNext(ctx, "live", "w", time.Minute, Shard{})
		s.Complete(ctx, done, 0)
		for i := 0; i < 3; i++ {
			clock = clock.Add(time.Hour)
			id, _ := s.BeginScan(ctx, "scan")
			s.RecordServer(ctx, id, result("a", tool("t", fmt.Sprint(i))))
		}
		if _, err := s.Prune(ctx, Keep{Scans: 1}); err != nil {
			t.Fatal(err)
		}
		if st, _ := s.Status(ctx, "drained"); st != (RoundStatus{}) {
			t.Fatalf("the drained round was kept: %+v", st)
		}
		if st, _ := s.Status(ctx, "live"); st.Done != 1 || st.Pending != 1 {
			t.Fatalf("the live round lost rows: %+v", st)
		}
		if n, _ := s.SeedRound(ctx, "live", []string{"a", "b"}); n != 0 {
			t.Fatalf("seeding the live round again added %d", n)
		}
		if c, err := s.ClaimNext(ctx, "live", "w", time.Minute, Shard{}); err != nil || c.Server == done.Server {
			t.Fatalf("claim after prune: %+v %v", c, err)
		}
	})
}
