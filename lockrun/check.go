package lockrun

import (
	"context"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/surface"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// ObserveOptions say how each server of the lock is reached and listed.
type ObserveOptions struct {
	// Connect reaches a server from its source (Connector).
	Connect Connect
	// Classifier classifies the tools' names (nil: the built-in table).
	Classifier *classify.Classifier
	// Secrets are the values the run sends (nil: a set of its own).
	Secrets *redact.Set
	// Timeout bounds each server's listing (0: the context's deadline).
	Timeout time.Duration
	// Tracer traces every request (nil: none).
	Tracer mcptrace.Tracer
}

// Observe lists the server of s's entry through its source, declaring the
// client capabilities its tools were pinned with: the observed record
// under s's name and the identity the listing established (with the
// configured publisher key), and what a check or an approval reads of it
// (lock.Served). A listing that carries a secret the run sent is not
// trusted (runerr.Inconclusive).
func Observe(ctx context.Context, s *lock.Server, opt ObserveOptions) (*observe.Result, *lock.Served, error) {
	cfg, err := opt.Connect(s.Source)
	if err != nil {
		return &observe.Result{}, nil, err
	}
	if s.ClientCapabilities != nil {
		cfg.ClientCapabilities = s.ClientCapabilities
	}
	// The surface beside the tools: resources too when they are pinned.
	cfg.Tracer = opt.Tracer
	cfg.Surface = &mcpclient.SurfaceOptions{Resources: s.Surface != nil && s.Surface.Resources.State == surface.Observed}
	r, err := observe.Server(ctx, observe.ServerOptions{Server: cfg, ServerID: s.Name, PublisherKey: s.Identity.PublisherKey,
		Classifier: opt.Classifier, Secrets: opt.Secrets, Timeout: opt.Timeout})
	if err != nil {
		return r, nil, err
	}
	if err := r.Reflected(); err != nil {
		return r, nil, err
	}
	return r, Served(r), nil
}

// Served is what a check or an approval reads of a listing.
func Served(r *observe.Result) *lock.Served {
	return &lock.Served{Observed: r.Observed, Tools: r.Tools.Tools, Identity: r.Identity, Surface: r.Observation.Surface}
}

// CheckOptions are a check of servers of the lock.
type CheckOptions struct {
	// Servers are the entries checked.
	Servers []*lock.Server
	ObserveOptions
	// Check gates each server (its Classifier is ObserveOptions'; Today
	// and the suppressions are the caller's).
	Check lock.CheckOptions
	// Concurrency is how many servers are observed at once (0: 8).
	Concurrency int
	// LockFile names the lock in the report.
	LockFile string
}

// ServerCheck is one server's check.
type ServerCheck struct {
	Result *lock.ServerResult
	// Deltas are the readable deltas of the tools that changed (only of
	// a server with tools to review or to auto-approve).
	Deltas []delta.Tool
	// Listing is the listing gated (nil when the server was not
	// observed, its listing reflected a credential, or the check failed).
	Listing *observe.Result
}

// CheckServer observes s and gates it against its entry: the one
// per-server check of lock check (and of scan over a lock). A server that
// cannot be observed is a not-observed result, never an error of the
// whole run; so is a source that cannot be expanded (a placeholder whose
// variable is not set), for that server alone.
func CheckServer(ctx context.Context, s *lock.Server, opt CheckOptions) ServerCheck {
	copt := opt.Check
	copt.Classifier = opt.Classifier
	o, served, err := Observe(ctx, s, opt.ObserveOptions)
	if err != nil {
		return ServerCheck{Result: s.NotObserved(o.Target, safetext.Inert(err.Error()), copt)}
	}
	r, err := s.Check(served, copt)
	if err != nil {
		return ServerCheck{Result: s.NotObserved(o.Target, "the check failed: "+safetext.Inert(err.Error()), copt)}
	}
	r.Target = o.Target
	var ds []delta.Tool
	if r.Gate != nil && len(r.Pending)+len(r.AutoApprovable) > 0 {
		ds = changedDeltas(delta.Build(s.ToolValues(), served.Tools, r.Gate.StructuralChanges, r.Gate.Tools))
	}
	return ServerCheck{Result: r, Deltas: ds, Listing: o}
}

// changedDeltas keeps the deltas of tools that changed.
func changedDeltas(ds []delta.Tool) []delta.Tool {
	out := ds[:0]
	for _, d := range ds {
		if d.Status != "unchanged" {
			out = append(out, d)
		}
	}
	return out
}

// CheckResult is a check of servers of the lock.
type CheckResult struct {
	// Report aggregates the servers' results (worst first) and the exit
	// code: 1 when any has findings, else 3 when any is inconclusive or
	// not observed, else 0.
	Report *lock.CheckReport
	// Deltas are the readable deltas of each server's changed tools, by
	// server name.
	Deltas map[string][]delta.Tool
}

// Check observes every server of Servers, at most Concurrency at a time,
// each within its own Timeout, and gates each against its entry
// (CheckServer): a server that hangs, fails or cannot be observed never
// holds the others. No server to check is a runerr.Usage error.
func Check(ctx context.Context, opt CheckOptions) (*CheckResult, error) {
	servers := opt.Servers
	if len(servers) == 0 {
		return nil, runerr.Usagef("%s has no servers to check: add one with mcpdrift lock add", safetext.Quote(opt.LockFile))
	}
	n := opt.Concurrency
	if n < 1 {
		n = 8
	}
	results := make([]ServerCheck, len(servers))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = CheckServer(ctx, s, opt)
		}()
	}
	wg.Wait()
	rs := make([]*lock.ServerResult, len(results))
	deltas := map[string][]delta.Tool{}
	for i, r := range results {
		rs[i] = r.Result
		if len(r.Deltas) > 0 {
			deltas[r.Result.Name] = r.Deltas
		}
	}
	return &CheckResult{Report: lock.NewCheckReport(opt.LockFile, rs), Deltas: deltas}, nil
}
