package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/scan"
	"github.com/mcpdrift/mcpdrift/store"
)

// workerFlags select scan --worker: the fleet's work shared between
// processes through the PostgreSQL store's queue.
type workerFlags struct {
	on       bool
	once     bool
	interval time.Duration
	shard    string
	lease    time.Duration
	id       string
	round    string
	cmd      *cobra.Command
}

func (w *workerFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&w.on, "worker", false, "claim servers from the PostgreSQL store's queue (every worker given the same servers) instead of scanning them all")
	f.BoolVar(&w.once, "once", false, "with --worker: exit when the current round is drained")
	f.DurationVar(&w.interval, "interval", time.Hour, "with --worker: a round every DUR (the round is the start of the interval, UTC: workers whose clocks agree within it share it)")
	f.StringVar(&w.shard, "shard", "", "with --worker: claim only shard I of N (I/N, e.g. $JOB_COMPLETION_INDEX/4)")
	f.DurationVar(&w.lease, "lease", 2*time.Minute, "with --worker: how long a claimed server is held without renewal; a killed worker's servers are claimed again after it")
	f.StringVar(&w.id, "worker-id", "", "with --worker: this worker's name in the queue (default HOSTNAME-PID)")
	f.StringVar(&w.round, "round", "", "with --worker: the round's name (default: the start of the current --interval)")
	w.cmd = cmd
}

// check refuses worker flags without --worker, and a worker without a
// PostgreSQL store.
func (w *workerFlags) check(storeURL string) error {
	changed := func(n string) bool { return w.cmd != nil && w.cmd.Flags().Changed(n) }
	if !w.on {
		for _, n := range []string{"once", "interval", "shard", "lease", "worker-id", "round"} {
			if changed(n) {
				return usageErr("--%s goes with --worker", n)
			}
		}
		return nil
	}
	switch {
	case !strings.HasPrefix(storeURL, "postgres://") && !strings.HasPrefix(storeURL, "postgresql://"):
		return usageErr("--worker needs --store postgres://... (the queue is PostgreSQL's)")
	case w.interval <= 0:
		return usageErr("--interval must be more than 0")
	case w.lease < time.Second:
		return usageErr("--lease must be at least 1s")
	}
	if w.shard != "" {
		if _, err := store.ParseShard(w.shard); err != nil {
			return usageErr("%s", err.Error())
		}
	}
	if w.id == "" {
		h, _ := os.Hostname()
		w.id = safetext.Clip(h, 200) + "-" + strconv.Itoa(os.Getpid())
	}
	return nil
}

// work runs rounds: seed (idempotent), claim one server at a time (up to
// concurrency claims at once) with a lease renewed while it is scanned,
// record, complete; until the round is drained. With --once it then
// prints the summary of what this worker scanned and exits with its code;
// otherwise it waits for the next round.
func (sr *scanRun) work(ctx context.Context, w *workerFlags, concurrency int, format string, maxRows int) error {
	var sh store.Shard
	if w.shard != "" {
		sh, _ = store.ParseShard(w.shard)
	}
	byName := make(map[string]*fleetServer, len(sr.servers))
	names := make([]string, 0, len(sr.servers))
	for _, s := range sr.servers {
		if byName[s.name] != nil {
			return usageErr("server %s is listed twice: a worker queue needs unique names", safetext.Quote(s.name))
		}
		byName[s.name] = s
		names = append(names, s.name)
	}
	for {
		round := w.round
		if round == "" {
			round = store.RoundKey(time.Now(), w.interval)
		}
		results, err := sr.workRound(ctx, w, round, sh, byName, names, concurrency)
		if err != nil {
			return err
		}
		code := scan.ExitCode(results)
		fmt.Fprintf(sr.e.stderr, "mcpdrift scan: worker %s: round %s drained: %d server(s) scanned here (exit %d)\n", safetext.Quote(w.id), safetext.Quote(round), len(results), code)
		if w.once {
			scan.Sort(results)
			out := scanText(results, code, maxRows)
			if format == "json" {
				out = scanJSON(results, code)
			}
			if err := sr.e.emit("-", out); err != nil {
				return err
			}
			sr.e.code = code
			return nil
		}
		next := time.Now().UTC().Truncate(w.interval).Add(w.interval)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(next)):
		}
		if w.round != "" {
			return nil // a named round runs once
		}
	}
}

// workRound drains one round and returns the results this worker
// produced.
func (sr *scanRun) workRound(ctx context.Context, w *workerFlags, round string, sh store.Shard, byName map[string]*fleetServer, names []string, concurrency int) ([]scan.Result, error) {
	if _, err := sr.st.SeedRound(ctx, round, names); err != nil {
		return nil, usageErr("--store: seeding round %s: %s", safetext.Quote(round), safetext.Inert(err.Error()))
	}
	scanID, err := sr.st.BeginScan(ctx, "scan --worker "+round)
	if err != nil {
		return nil, usageErr("--store: %s", safetext.Inert(err.Error()))
	}
	var mu sync.Mutex
	var results []scan.Result
	var fatal error
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				c, err := sr.st.ClaimNext(ctx, round, w.id, w.lease, sh)
				switch {
				case errors.Is(err, store.ErrRoundDrained):
					return
				case errors.Is(err, store.ErrNoneClaimable):
					// The rest is leased by other workers: wait for a
					// lease to expire or the round to drain.
					select {
					case <-ctx.Done():
					case <-time.After(min(w.lease/4, 250*time.Millisecond)):
					}
					continue
				case err != nil:
					if ctx.Err() == nil {
						mu.Lock()
						fatal = usageErr("--store: claiming: %s", safetext.Inert(err.Error()))
						mu.Unlock()
					}
					return
				}
				s := byName[c.Server]
				var r scan.Result
				if s == nil {
					// Seeded by a worker given other servers: not ours to
					// reach. Completed so the round can drain.
					r = scan.Result{Server: safetext.Escape(c.Server), Status: scan.StatusNotObserved, Error: "this worker was not given this server (workers must share one lock, inventory or URL list)"}
				} else {
					r = sr.scanClaimed(ctx, w, c, s, scanID)
				}
				if err := sr.st.Complete(context.WithoutCancel(ctx), c, scanID); err != nil && !errors.Is(err, store.ErrLeaseLost) {
					fmt.Fprintf(sr.e.stderr, "mcpdrift scan: warning: completing %s: %s\n", safetext.Quote(c.Server), safetext.Inert(err.Error()))
				}
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	code := scan.ExitCode(results)
	if err := sr.st.FinishScan(context.WithoutCancel(ctx), scanID, code); err != nil {
		fmt.Fprintf(sr.e.stderr, "mcpdrift scan: warning: the store did not record the end of the scan: %s\n", safetext.Inert(err.Error()))
	}
	if fatal != nil {
		return nil, fatal
	}
	return results, nil
}

// scanClaimed checks one claimed server within its deadline, renewing the
// lease meanwhile, and records the result.
func (sr *scanRun) scanClaimed(ctx context.Context, w *workerFlags, c *store.Claim, s *fleetServer, scanID int64) scan.Result {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(w.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				if err := sr.st.Renew(rctx, c, w.lease); err != nil && rctx.Err() == nil {
					fmt.Fprintf(sr.e.stderr, "mcpdrift scan: warning: renewing the lease of %s: %s\n", safetext.Quote(c.Server), safetext.Inert(err.Error()))
				}
			}
		}
	}()
	rs := scan.Run(ctx, 1, scan.Options{Concurrency: 1, Timeout: sr.fleet.timeout}, func(ctx context.Context, _ int) scan.Result {
		r, rec := sr.check(ctx, s)
		if rec != nil {
			if err := sr.st.RecordServer(context.WithoutCancel(ctx), scanID, *rec); err != nil {
				r.Status, r.Error = scan.StatusInconclusive, "the result could not be recorded in the store: "+safetext.Inert(err.Error())
			}
		}
		return r
	})
	r := rs[0]
	r.Server, r.Target = safetext.Escape(s.name), safetext.Escape(s.target)
	return r
}
