package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/scan"
	"github.com/mcpdrift/mcpdrift/scanrun"
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

func (w *workerFlags) AddFlags(cmd *cobra.Command) {
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

// work runs this worker's rounds (scanrun.Work), saying on stderr when
// each is drained; with --once it then writes the summary of what this
// worker scanned and exits with its code.
func (o *scanOptions) work(ctx context.Context, e *env, opt scanrun.Options) error {
	w := &o.worker
	wo := scanrun.WorkOptions{Options: opt, WorkerID: w.id, Round: w.round, Interval: w.interval, Lease: w.lease, Once: w.once,
		OnRound: func(round string, results []scan.Result) {
			fmt.Fprintf(e.stderr, "mcpdrift scan: worker %s: round %s drained: %d server(s) scanned here (exit %d)\n", safetext.Quote(w.id), safetext.Quote(round), len(results), scan.ExitCode(results))
		}}
	if w.shard != "" {
		wo.Shard, _ = store.ParseShard(w.shard)
	}
	res, err := scanrun.Work(ctx, wo)
	if err != nil || !w.once {
		return err
	}
	return o.summary(e, res.Results, res.ExitCode)
}
