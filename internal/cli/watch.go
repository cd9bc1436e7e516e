package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/scanrun"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/telemetry"
	"github.com/mcpdrift/mcpdrift/watch"
)

// fleetFlags select a fleet (watch, scan) and bound each observation.
type fleetFlags struct {
	urls         []string
	headers      []string
	lockPath     string
	inventory    string
	allowConfig  bool
	timeout      time.Duration
	maxListBytes int64
	maxListTools int
	maxResponse  int64
	caFile       string
	oauth        oauthFlags
}

func (f *fleetFlags) AddFlags(cmd *cobra.Command, timeout time.Duration, urls bool) {
	fs := cmd.Flags()
	if urls {
		fs.StringArrayVar(&f.urls, "url", nil, "Streamable HTTP endpoint of a server (repeatable)")
		fs.StringArrayVar(&f.headers, "header", nil, "NAME=VALUE sent to every --url server (repeatable); names are recorded, values never, and values are redacted from every output")
	}
	fs.StringVar(&f.lockPath, "lock", "", "the lock (mcpdrift.lock) whose servers to observe, each gated against its entry")
	fs.StringVar(&f.inventory, "inventory", "", "an inventory (mcpdrift discover --format json) whose servers to observe, each read again from its configuration file")
	fs.BoolVar(&f.allowConfig, "allow-config-commands", false, "allow running the stdio commands the inventory's configuration files give (they run code on this machine)")
	fs.DurationVar(&f.timeout, "timeout", timeout, "the deadline of each server's observation")
	fs.Int64Var(&f.maxListBytes, "max-list-bytes", mcpclient.DefaultMaxListBytes, "refuse a listing whose tools/list responses exceed this many bytes in all")
	fs.IntVar(&f.maxListTools, "max-list-tools", mcpclient.DefaultMaxListTools, "refuse a listing of more than this many tools in all")
	fs.Int64Var(&f.maxResponse, "max-response-bytes", mcpclient.DefaultMaxResponseBytes, "refuse any single response larger than this")
	fs.StringVar(&f.caFile, "ca-file", "", "PEM file of a CA to trust in addition to the system roots")
	f.oauth.AddFlags(fs)
}

// base is the live flags every server of the fleet is observed with.
func (f *fleetFlags) base() *liveFlags {
	return &liveFlags{timeout: f.timeout, maxListBytes: f.maxListBytes, maxListTools: f.maxListTools, maxResponse: f.maxResponse, caFile: f.caFile, oauth: f.oauth}
}

// fleetServer is one server of a fleet as the commands see it.
type fleetServer struct {
	name   string
	cfg    mcpclient.Config
	target string // as recorded: URL without query values, or stdio: and the command line
	// baseline is the lock entry's approved tools (hasBaseline).
	baseline    []manifest.Tool
	hasBaseline bool
	// lockServer is the lock entry (--lock).
	lockServer *lock.Server
	// err says why the server cannot be reached (a placeholder whose
	// variable is not set, a command not allowed to run): it is not
	// observed, and the rest of the fleet is.
	err string
}

// selected says which source of servers was given (exactly one).
func (f *fleetFlags) selected() (string, error) {
	var given []string
	if len(f.urls) > 0 {
		given = append(given, "--url")
	}
	if f.lockPath != "" {
		given = append(given, "--lock")
	}
	if f.inventory != "" {
		given = append(given, "--inventory")
	}
	switch {
	case len(given) == 0:
		return "", usageErr("give the servers: --lock FILE, --inventory FILE or --url URL (repeatable)")
	case len(given) > 1:
		return "", usageErr("give one of %s", strings.Join(given, ", "))
	case f.allowConfig && f.inventory == "":
		return "", usageErr("--allow-config-commands goes with --inventory")
	case len(f.headers) > 0 && len(f.urls) == 0:
		return "", usageErr("--header goes with --url (a lock and an inventory say which headers each server gets)")
	}
	return given[0], nil
}

// urlServers are the --url servers.
func (f *fleetFlags) urlServers(e *env) ([]*fleetServer, error) {
	var out []*fleetServer
	seen := map[string]bool{}
	for _, u := range f.urls {
		l := f.base()
		l.baseURL, l.headers = u, f.headers
		cfg, err := l.config(e, nil)
		if err != nil {
			return nil, err
		}
		_, target := e.targetOf(cfg)
		if seen[target] {
			return nil, usageErr("--url %s is given twice", safetext.Quote(target))
		}
		seen[target] = true
		out = append(out, &fleetServer{name: target, cfg: cfg, target: target})
	}
	return out, nil
}

// watchOptions are watch's flags: the fleet, where events go, the
// schedule and the store.
type watchOptions struct {
	fleet                              fleetFlags
	events, webhook, storeURL          string
	storeEvery                         time.Duration
	interval, minInterval, maxInterval time.Duration
	backoffMin, backoffMax             time.Duration
	concurrency                        int
	noListen                           bool
	otlp                               *otlpFlags
}

func (o *watchOptions) AddFlags(cmd *cobra.Command) {
	o.fleet.AddFlags(cmd, 30*time.Second, true)
	f := cmd.Flags()
	f.StringVar(&o.events, "events", "", "append the NDJSON events to this file (default: stdout)")
	f.StringVar(&o.storeURL, "store", "", "record observations in this history store (sqlite:PATH or postgres://...): each change at once, an unchanged server at most every --store-every")
	f.DurationVar(&o.storeEvery, "store-every", time.Hour, "with --store: record an unchanged server's observation at most this often (its tools' last-seen times)")
	f.StringVar(&o.webhook, "webhook", "", "POST each event to this URL (retried with backoff; a webhook that is down never stops the watch)")
	f.DurationVar(&o.interval, "interval", watch.DefaultInterval, "re-observe after this long when a server sends no ttlMs")
	f.DurationVar(&o.minInterval, "min-interval", watch.DefaultMinInterval, "never re-observe a server sooner than this on its ttlMs (ttlMs 0 means stale, not poll now)")
	f.DurationVar(&o.maxInterval, "max-interval", watch.DefaultMaxInterval, "re-observe at least this often whatever the ttlMs")
	f.DurationVar(&o.backoffMin, "backoff-min", watch.DefaultBackoffMin, "the delay after a failed observation, doubled after each further one (half of it at random)")
	f.DurationVar(&o.backoffMax, "backoff-max", watch.DefaultBackoffMax, "the longest delay after failed observations")
	f.IntVar(&o.concurrency, "concurrency", watch.DefaultConcurrency, "observations in flight at most")
	f.BoolVar(&o.noListen, "no-listen", false, "do not hold list_changed streams open; observe on ttlMs and the interval only")
	o.otlp = registerOTLP(cmd)
}

func newWatch(e *env) *cobra.Command {
	o := &watchOptions{}
	cmd := &cobra.Command{
		Use:   "watch (--lock FILE | --inventory FILE | --url URL ...) [--events FILE] [--webhook URL] [--store URL]",
		Short: "Keep a fleet observed: re-observe on ttlMs (with jitter), on list_changed, and report each change as NDJSON",
		Long: `watch keeps every server of a fleet observed until SIGTERM or SIGINT. Each is
observed again when the ttlMs of its last tools/list expires (held within
--min-interval and --max-interval, plus up to 20% jitter: the specification
forbids polling in lockstep), after --interval when it sent no ttlMs, with
exponential backoff after a failure, and at once when it sends
notifications/tools/list_changed (over 2026-07-28 subscriptions/listen or a
legacy session's GET stream).

Each change is one NDJSON event (mcpdrift.watch_event.v1) on stdout or
appended to --events FILE: observed, changed, unreachable, inconclusive,
recovered, with the manifest digests, the tools added, removed and changed
(names and digests) and the decision against the lock entry or the previous
observation. --webhook URL POSTs the same event in the background: a
webhook that is down never stops or delays the watch. --store records the
observations in the history store (each change at once, an unchanged
server at most every --store-every), which mcpdrift history reads.

On SIGTERM or SIGINT the observations in flight finish, queued webhook
events get 5 s, and the command exits 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Spans go out in bounded batches while the watch runs (the
			// gateway's mode), the last ones when it stops.
			tr, err := o.otlp.start(e, telemetry.ModeService)
			if err != nil {
				return err
			}
			defer tr.finish()
			return o.run(e, tr)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// check refuses a schedule that cannot run.
func (o *watchOptions) check() error {
	switch {
	case o.interval <= 0 || o.minInterval <= 0 || o.maxInterval <= 0:
		return usageErr("--interval, --min-interval and --max-interval must be more than 0")
	case o.minInterval > o.maxInterval:
		return usageErr("--min-interval must not be more than --max-interval")
	case o.backoffMin <= 0 || o.backoffMax < o.backoffMin:
		return usageErr("--backoff-min must be more than 0 and at most --backoff-max")
	case o.concurrency < 1:
		return usageErr("--concurrency must be at least 1")
	}
	if o.webhook != "" {
		if err := checkURL("--webhook", o.webhook); err != nil {
			return err
		}
	}
	return nil
}

// run watches the fleet until SIGINT or SIGTERM.
func (o *watchOptions) run(e *env, tr *tracing) error {
	servers, err := o.fleet.servers(e)
	if err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	e.secrets.AddURL(o.webhook)
	var out io.Writer = e.stdout
	if o.events != "" && o.events != "-" {
		f, err := openAppend(o.events)
		if err != nil {
			return err
		}
		defer f.Close()
		out = e.secrets.Writer(f)
	}
	warn := func(s string) { fmt.Fprintf(e.stderr, "mcpdrift watch: warning: %s\n", s) }
	var wh *watch.Webhook
	if o.webhook != "" {
		wh = watch.NewWebhook(watch.WebhookOptions{URL: o.webhook, Warn: warn})
	}
	var targets []*watch.Target
	byTarget := map[*watch.Target]*fleetServer{}
	for _, s := range servers {
		if s.err != "" {
			warn("server " + safetext.Quote(s.name) + " is not watched: " + s.err)
			continue
		}
		cfg := s.cfg
		cfg.Tracer = tr.tracer()
		t := &watch.Target{Name: s.name, Config: cfg, Baseline: s.baseline, HasBaseline: s.hasBaseline}
		targets = append(targets, t)
		byTarget[t] = s
	}
	if len(targets) == 0 {
		return usageErr("no server can be watched")
	}
	ws, closeStore, err := o.openStore(e, warn)
	if err != nil {
		return err
	}
	defer closeStore()
	opt := o.options(func(ctx context.Context, t *watch.Target) (*watch.Result, error) {
		return observeServer(ctx, e, byTarget[t], ws)
	}, out, wh, warn)
	ctx, stop := signal.NotifyContext(e.context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(e.stderr, "mcpdrift watch: watching %d server(s)\n", len(targets))
	if err := watch.Run(ctx, targets, opt); err != nil {
		return usageErr("%s", safetext.Inert(err.Error()))
	}
	if wh != nil {
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		wh.Close(dctx)
		cancel()
	}
	fmt.Fprintf(e.stderr, "mcpdrift watch: stopped\n")
	return nil
}

// openStore opens --store (nil: none).
func (o *watchOptions) openStore(e *env, warn func(string)) (*watchStore, func(), error) {
	if o.storeURL == "" {
		return nil, func() {}, nil
	}
	if o.storeEvery <= 0 {
		return nil, nil, usageErr("--store-every must be more than 0")
	}
	storeSecrets(e, o.storeURL)
	st, err := store.Open(e.context(), o.storeURL, store.Options{Secrets: e.secrets})
	if err != nil {
		return nil, nil, usageErr("--store: %s", safetext.Inert(err.Error()))
	}
	return &watchStore{st: st, every: o.storeEvery, warn: warn, last: map[string]recorded{}}, func() { st.Close() }, nil
}

// options are the watch's schedule, with how each server is observed and
// where each event goes (out, and the webhook).
func (o *watchOptions) options(observe func(context.Context, *watch.Target) (*watch.Result, error), out io.Writer, wh *watch.Webhook, warn func(string)) watch.Options {
	var wmu sync.Mutex
	opt := watch.Options{
		Observe: observe,
		Emit: func(ev *watch.Event) {
			line := ev.Line()
			wmu.Lock()
			_, err := out.Write(line)
			wmu.Unlock()
			if err != nil {
				warn("writing an event failed: " + safetext.Inert(err.Error()))
			}
			if wh != nil {
				wh.Send(line)
			}
		},
		Warn: warn, Interval: o.interval, MinInterval: o.minInterval, MaxInterval: o.maxInterval,
		BackoffMin: o.backoffMin, BackoffMax: o.backoffMax, ObserveTimeout: o.fleet.timeout, Concurrency: o.concurrency,
	}
	if !o.noListen {
		opt.Listen = func(ctx context.Context, t *watch.Target, changed func()) error {
			return mcpclient.ListenToolsChanged(ctx, t.Config, changed)
		}
	}
	return opt
}

// observeServer is one observation of a watched server, recorded in the
// store when one is given.
func observeServer(ctx context.Context, e *env, s *fleetServer, ws *watchStore) (*watch.Result, error) {
	l, err := scanrun.List(ctx, s.cfg, e.secrets)
	if err != nil {
		msg := safetext.Inert(err.Error())
		if ce, ok := errors.AsType[*mcpclient.ConfigError](err); ok {
			msg = safetext.Inert(ce.Msg)
		}
		ws.record(ctx, &store.ServerResult{Server: s.name, Target: s.target, Status: manifest.StatusNotObserved, Completeness: "unknown", ErrorClass: scanrun.ErrorClass(err), ErrorDetail: msg}, ExitInconclusive)
		return nil, errors.New(msg)
	}
	obs, tl := l.Observation, l.Tools
	rec, ok, why := scanrun.Record(s.name, s.target, fleetIdentity(s, obs), obs, tl)
	code := ExitOK
	if !ok {
		code = ExitInconclusive
	}
	ws.record(ctx, rec, code)
	r := &watch.Result{Tools: tl.Tools, Complete: ok, Reason: why, ManifestDigest: rec.ManifestDigest}
	if obs.TTLMs != nil {
		ttl := time.Duration(min(max(*obs.TTLMs, 0), int64(watch.DefaultMaxInterval/time.Millisecond)*365)) * time.Millisecond
		r.TTL = &ttl
	}
	return r, nil
}

// watchStore records a watch's observations: a server whose status or
// manifest digest changed at once, an unchanged one at most every
// interval. Each record is a scan of its own ("watch"), since the store
// keeps one observation of a server per scan.
type watchStore struct {
	st    *store.Store
	every time.Duration
	warn  func(string)

	mu     sync.Mutex
	last   map[string]recorded
	failed bool
}

type recorded struct {
	key string
	at  time.Time
}

func (ws *watchStore) record(ctx context.Context, rec *store.ServerResult, code int) {
	if ws == nil {
		return
	}
	key := rec.Status + " " + rec.ManifestDigest
	now := time.Now()
	ws.mu.Lock()
	prev, seen := ws.last[rec.Server]
	if seen && prev.key == key && now.Sub(prev.at) < ws.every {
		ws.mu.Unlock()
		return
	}
	ws.last[rec.Server] = recorded{key, now}
	ws.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := func() error {
		id, err := ws.st.BeginScan(ctx, "watch")
		if err != nil {
			return err
		}
		if err := ws.st.RecordServer(ctx, id, *rec); err != nil {
			return err
		}
		return ws.st.FinishScan(ctx, id, code)
	}()
	ws.mu.Lock()
	defer ws.mu.Unlock()
	switch {
	case err != nil:
		delete(ws.last, rec.Server) // recorded again at the next observation
		if !ws.failed {
			ws.warn("the store did not record an observation (the watch goes on; said once until it records again): " + safetext.Inert(err.Error()))
		}
		ws.failed = true
	case ws.failed:
		ws.failed = false
		ws.warn("the store records again")
	}
}
