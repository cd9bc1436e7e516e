package scanrun

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/scan"
	"github.com/mcpdrift/mcpdrift/store"
)

// WorkOptions are a worker's share of a fleet scanned by many processes
// through the PostgreSQL store's queue: every worker is given the same
// servers, seeds the round (idempotently) and claims servers one at a
// time with a lease.
type WorkOptions struct {
	Options
	// WorkerID is this worker's name in the queue.
	WorkerID string
	// Round names the round (it then runs once); "" is the start of the
	// current Interval, UTC.
	Round    string
	Interval time.Duration
	// Lease is how long a claimed server is held without renewal: a
	// killed worker's servers are claimed again after it.
	Lease time.Duration
	// Shard, when set, claims only the servers of one shard.
	Shard store.Shard
	// Once returns when the current round is drained.
	Once bool
	// OnRound is told each round this worker drained, with what it scanned.
	OnRound func(round string, results []scan.Result)
}

// Work runs rounds until ctx ends (or one round with Once; a named Round
// runs once, and Work returns at the next interval): seed, claim one server at a time (up to Concurrency claims at
// once) with a lease renewed while it is scanned, record, complete, until
// the round is drained. It returns the last round's results, worst first.
// Two servers of one name, or a store that cannot seed, begin or claim,
// are runerr.Usage errors.
func Work(ctx context.Context, opt WorkOptions) (*Result, error) {
	opt.Options = opt.defaults()
	byName := make(map[string]*Server, len(opt.Servers))
	names := make([]string, 0, len(opt.Servers))
	for i := range opt.Servers {
		s := &opt.Servers[i]
		if byName[s.Name] != nil {
			return nil, runerr.Usagef("server %s is listed twice: a worker queue needs unique names", safetext.Quote(s.Name))
		}
		byName[s.Name] = s
		names = append(names, s.Name)
	}
	for {
		round := opt.Round
		if round == "" {
			round = store.RoundKey(time.Now(), opt.Interval)
		}
		results, err := workRound(ctx, opt, round, byName, names)
		if err != nil {
			return nil, err
		}
		if opt.OnRound != nil {
			opt.OnRound(round, results)
		}
		scan.Sort(results)
		last := &Result{Results: results, ExitCode: scan.ExitCode(results)}
		if opt.Once {
			return last, nil
		}
		next := time.Now().UTC().Truncate(opt.Interval).Add(opt.Interval)
		select {
		case <-ctx.Done():
			return last, nil
		case <-time.After(time.Until(next)):
		}
		if opt.Round != "" {
			return last, nil // a named round runs once
		}
	}
}

// workRound drains one round and returns the results this worker
// produced.
func workRound(ctx context.Context, opt WorkOptions, round string, byName map[string]*Server, names []string) ([]scan.Result, error) {
	st := opt.Store
	if _, err := st.SeedRound(ctx, round, names); err != nil {
		return nil, runerr.Usagef("--store: seeding round %s: %s", safetext.Quote(round), safetext.Inert(err.Error()))
	}
	scanID, err := st.BeginScan(ctx, "scan --worker "+round)
	if err != nil {
		return nil, runerr.Usagef("--store: %s", safetext.Inert(err.Error()))
	}
	var mu sync.Mutex
	var results []scan.Result
	var fatal error
	var wg sync.WaitGroup
	for range opt.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				c, err := st.ClaimNext(ctx, round, opt.WorkerID, opt.Lease, opt.Shard)
				switch {
				case errors.Is(err, store.ErrRoundDrained):
					return
				case errors.Is(err, store.ErrNoneClaimable):
					// The rest is leased by other workers: wait for a
					// lease to expire or the round to drain.
					select {
					case <-ctx.Done():
					case <-time.After(min(opt.Lease/4, 250*time.Millisecond)):
					}
					continue
				case err != nil:
					if ctx.Err() == nil {
						mu.Lock()
						fatal = runerr.Usagef("--store: claiming: %s", safetext.Inert(err.Error()))
						mu.Unlock()
					}
					return
				}
				r := scanClaimed(ctx, opt, c, byName[c.Server], scanID)
				if err := st.Complete(context.WithoutCancel(ctx), c, scanID); err != nil && !errors.Is(err, store.ErrLeaseLost) {
					opt.Warn("completing " + safetext.Quote(c.Server) + ": " + safetext.Inert(err.Error()))
				}
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := st.FinishScan(context.WithoutCancel(ctx), scanID, scan.ExitCode(results)); err != nil {
		opt.Warn("the store did not record the end of the scan: " + safetext.Inert(err.Error()))
	}
	if fatal != nil {
		return nil, fatal
	}
	return results, nil
}

// scanClaimed checks one claimed server within its deadline, renewing the
// lease meanwhile, and records the result. A server seeded by a worker
// given other servers is not this worker's to reach: it is completed, so
// that the round can drain, as not observed.
func scanClaimed(ctx context.Context, opt WorkOptions, c *store.Claim, s *Server, scanID int64) scan.Result {
	if s == nil {
		return scan.Result{Server: safetext.Escape(c.Server), Status: scan.StatusNotObserved, Error: "this worker was not given this server (workers must share one lock, inventory or URL list)"}
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(opt.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				if err := opt.Store.Renew(rctx, c, opt.Lease); err != nil && rctx.Err() == nil {
					opt.Warn("renewing the lease of " + safetext.Quote(c.Server) + ": " + safetext.Inert(err.Error()))
				}
			}
		}
	}()
	rs := scan.Run(ctx, 1, scan.Options{Concurrency: 1, Timeout: opt.Timeout}, func(ctx context.Context, _ int) scan.Result {
		r, _ := Scan(ctx, *s, opt.Options, scanID)
		return r
	})
	r := rs[0]
	r.Server, r.Target = safetext.Escape(s.Name), safetext.Escape(s.Target)
	return r
}
