package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/pgtest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/store"
)

// startPG starts a private PostgreSQL for one test (skipped, or failed
// when MCPDRIFT_REQUIRE_POSTGRES=1, when none can be had) and returns the
// URL of a fresh schema.
func startPG(t *testing.T) string {
	t.Helper()
	pg, err := pgtest.Start(context.Background())
	if err != nil {
		if pgtest.Required() {
			t.Fatalf("no PostgreSQL: %v", err)
		}
		t.Skipf("no PostgreSQL (%v); scripts/install-postgresql.sh installs it", err)
	}
	t.Cleanup(pg.Stop)
	u, err := pg.NewSchema(context.Background(), "scan")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// roundObservations counts the observations of each server over every
// scan of a round.
func roundObservations(t *testing.T, st *store.Store, round string) map[string]int {
	t.Helper()
	ctx := context.Background()
	scans, err := st.Scans(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, sc := range scans {
		if sc.Source != "scan --worker "+round {
			continue
		}
		obs, err := st.Observations(ctx, sc.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range obs {
			n[o.Server]++
		}
	}
	return n
}

// TestScanWorkers: four workers given the same 40 servers sweep one round
// of the PostgreSQL queue with no server scanned twice and none missed;
// then a worker killed mid-lease (a claim never renewed or completed) has
// its server picked up by the next worker once the lease expires; then
// two workers on shards 0/2 and 1/2 together scan every server once.
func TestScanWorkers(t *testing.T) {
	pgURL := startPG(t)
	_, urls := fleetMock(t, 40, mockserver.Config{Tools: mockManifest(t, exampleV1), Slow: 20 * time.Millisecond}, nil)
	args := func(round, id string) []string {
		return append([]string{"scan", "--worker", "--once", "--round", round, "--store", pgURL, "--concurrency", "2", "--lease", "5s", "--worker-id", id}, urlArgs(urls)...)
	}
	var wg sync.WaitGroup
	codes := make([]int, 4)
	errs := make([]string, 4)
	outs := make([]string, 4)
	start := time.Now()
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], outs[i], errs[i] = run(t, "", args("r1", fmt.Sprintf("w%d", i))...)
		}()
	}
	wg.Wait()
	t.Logf("4 workers swept 40 servers in %v", time.Since(start))
	for i, c := range codes {
		if c != 0 {
			t.Fatalf("worker %d: exit %d: %s\n%s", i, c, errs[i], outs[i])
		}
		if !strings.Contains(outs[i], "servers:") {
			t.Fatalf("worker %d wrote no summary: %s", i, outs[i])
		}
	}
	st, err := store.Open(context.Background(), pgURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seen := roundObservations(t, st, "r1")
	if len(seen) != 40 {
		t.Fatalf("%d servers observed, want 40", len(seen))
	}
	for s, n := range seen {
		if n != 1 {
			t.Fatalf("%s scanned %d times in one round", s, n)
		}
	}

	// The killed worker: it claimed a server with a 1 s lease and died.
	ctx := context.Background()
	if _, err := st.SeedRound(ctx, "r2", urls); err != nil {
		t.Fatal(err)
	}
	dead, err := st.ClaimNext(ctx, "r2", "dead-worker", time.Second, store.Shard{})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if code, _, stderr := run(t, "", args("r2", "survivor")...); code != 0 {
		t.Fatalf("survivor: exit %d: %s", code, stderr)
	}
	t.Logf("the survivor swept r2 in %v", time.Since(start))
	seen = roundObservations(t, st, "r2")
	if len(seen) != 40 || seen[dead.Server] != 1 {
		t.Fatalf("after the dead worker: %d servers, %s seen %d times", len(seen), dead.Server, seen[dead.Server])
	}
	if el := time.Since(start); el < time.Second {
		t.Fatalf("the dead worker's server was taken before its lease expired (%v)", el)
	}
	if err := st.Complete(ctx, dead, 0); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("the dead worker completing late: %v, want ErrLeaseLost", err)
	}
	st2, _ := st.Status(ctx, "r2")
	if st2.Done != 40 {
		t.Fatalf("round r2: %+v", st2)
	}

	// Shards: two workers on 0/2 and 1/2 together scan every server once.
	start = time.Now()
	defer func() { t.Logf("the shards took %v", time.Since(start)) }()
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], outs[i], errs[i] = run(t, "", append([]string{"scan", "--worker", "--once", "--round", "s1", "--store", pgURL, "--shard", fmt.Sprintf("%d/2", i)}, urlArgs(urls)...)...)
		}()
	}
	wg.Wait()
	seen = roundObservations(t, st, "s1")
	if codes[0] != 0 || codes[1] != 0 || len(seen) != 40 {
		t.Fatalf("shards: exit %v, %d servers\n%s", codes[:2], len(seen), errs[0])
	}
	for s, n := range seen {
		if n != 1 {
			t.Fatalf("shards: %s scanned %d times", s, n)
		}
	}
}
