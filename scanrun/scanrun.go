// Package scanrun runs a scan of a fleet: every server observed at once
// (at most Concurrency at a time, each within its own deadline), gated
// against its lock entry (lockrun) or against its last complete
// observation in the store, and recorded in the store. Work shares one
// fleet between processes through the PostgreSQL store's queue. The
// concurrency, the deadlines and the aggregation are package scan's; the
// listing is package observe's.
package scanrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/lockrun"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/scan"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// Server is one server of a fleet.
type Server struct {
	Name string
	// Target is the server as recorded (observe.Target).
	Target string
	// Config reaches the server (not used with Lock).
	Config mcpclient.Config
	// Lock, when set, is the server's lock entry: it is reached through
	// its source and gated against the entry.
	Lock *lock.Server
	// Err says why the server cannot be observed (a configuration it
	// could not be given): it is not, and the rest of the fleet is.
	Err string
}

// Options are a scan of a fleet.
type Options struct {
	Servers []Server
	// Store, when set, keeps the history: every result is recorded, and
	// a server without a lock entry is gated against its last complete
	// observation (nil: observed only, nothing recorded).
	Store *store.Store
	// Label names the scan in the store ("scan --lock").
	Label       string
	Concurrency int           // 0: 8
	Timeout     time.Duration // each server's deadline (0: 30 s)
	Classifier  *classify.Classifier
	Secrets     *redact.Set
	Tracer      mcptrace.Tracer
	// Connect reaches a lock entry's source (lockrun.Connector).
	Connect lockrun.Connect
	// Keep, when not zero, is the store's retention after the scan (each
	// server's last complete observation is kept whatever it says).
	Keep store.Keep
	// Done is told each server's result as it is known (progress).
	Done func(i int, r scan.Result)
	// Warn is told what did not stop the scan (the store could not
	// record its end, retention failed).
	Warn func(msg string)
	// Today (YYYY-MM-DD, UTC) decides the suppressions' expiry.
	Today string
}

// Result is a scan.
type Result struct {
	// Results are the servers' results, worst first.
	Results  []scan.Result
	ExitCode int
	// Observed are the servers' observed records, by index of Servers
	// (nil: not observed).
	Observed []*manifest.Observed
	// Pruned is what retention removed.
	Pruned store.PruneResult
}

// Run scans every server of the fleet: each within its deadline, at most
// Concurrency at a time; a server that hangs, crashes or floods never
// holds the others. The exit code is 1 when any server has findings, else
// 3 when any is inconclusive or could not be observed, else 0. A store
// that cannot begin the scan is a runerr.Usage error.
func Run(ctx context.Context, opt Options) (*Result, error) {
	opt = opt.defaults()
	if len(opt.Servers) == 0 {
		return nil, runerr.Usagef("the fleet lists no server")
	}
	var scanID int64
	if opt.Store != nil {
		var err error
		if scanID, err = opt.Store.BeginScan(ctx, opt.Label); err != nil {
			return nil, runerr.Usagef("--store: %s", safetext.Inert(err.Error()))
		}
	}
	res := &Result{Observed: make([]*manifest.Observed, len(opt.Servers))}
	rs := scan.Run(ctx, len(opt.Servers), scan.Options{Concurrency: opt.Concurrency, Timeout: opt.Timeout, Done: opt.Done}, func(ctx context.Context, i int) scan.Result {
		r, obs := Scan(ctx, opt.Servers[i], opt, scanID)
		res.Observed[i] = obs
		return r
	})
	// A server the stopped scan never started, a check abandoned past its
	// deadline, one that panicked: still named.
	for i := range rs {
		if rs[i].Server == "" {
			rs[i].Server, rs[i].Target = safetext.Escape(opt.Servers[i].Name), safetext.Escape(opt.Servers[i].Target)
		}
	}
	res.ExitCode = scan.ExitCode(rs)
	if opt.Store != nil {
		if err := opt.Store.FinishScan(context.WithoutCancel(ctx), scanID, res.ExitCode); err != nil {
			opt.Warn("the store did not record the end of the scan: " + safetext.Inert(err.Error()))
		}
		// Retention after the scan is recorded: each server's last
		// complete observation (the next scan's baseline) is kept.
		if !opt.Keep.IsZero() {
			p, err := opt.Store.Prune(context.WithoutCancel(ctx), opt.Keep)
			if err != nil {
				opt.Warn("retention (--keep) failed: " + safetext.Inert(err.Error()))
			}
			res.Pruned = p
		}
	}
	scan.Sort(rs)
	res.Results = rs
	return res, nil
}

func (o Options) defaults() Options {
	if o.Concurrency < 1 {
		o.Concurrency = 8
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	return o
}

// Scan checks one server and records its result in the store under the
// scan scanID (opt.Store nil: nothing recorded); it returns the result,
// named, and the observed record of the listing (nil: not observed).
func Scan(ctx context.Context, s Server, opt Options, scanID int64) (scan.Result, *manifest.Observed) {
	opt = opt.defaults()
	var r scan.Result
	var rec *store.ServerResult
	var obs *manifest.Observed
	if s.Lock != nil {
		r, rec, obs = checkLocked(ctx, &s, opt)
	} else {
		r, rec, obs = checkFleet(ctx, s, opt)
	}
	r.Server, r.Target = safetext.Escape(s.Name), safetext.Escape(s.Target)
	if rec != nil && opt.Store != nil {
		if err := opt.Store.RecordServer(context.WithoutCancel(ctx), scanID, *rec); err != nil {
			r.Status = scan.StatusInconclusive
			r.Error = "the result could not be recorded in the store: " + safetext.Inert(err.Error())
		}
	}
	return r, obs
}

// notObserved is the result of a server that could not be observed.
func notObserved(s Server, class, msg string) (scan.Result, *store.ServerResult, *manifest.Observed) {
	return scan.Result{Status: scan.StatusNotObserved, Error: msg},
		&store.ServerResult{Server: s.Name, Target: s.Target, Status: manifest.StatusNotObserved, Completeness: "unknown", ErrorClass: class, ErrorDetail: msg}, nil
}

// checkFleet observes a server of an inventory or a URL list, and gates
// it against its last complete observation in the store (none: the
// first record).
func checkFleet(ctx context.Context, s Server, opt Options) (scan.Result, *store.ServerResult, *manifest.Observed) {
	if s.Err != "" {
		return notObserved(s, "config", s.Err)
	}
	cfg := s.Config
	cfg.Tracer = opt.Tracer
	o, err := List(ctx, cfg, opt.Secrets)
	if err != nil {
		msg := safetext.Inert(err.Error())
		if ce, ok := errors.AsType[*mcpclient.ConfigError](err); ok {
			msg = safetext.Inert(ce.Msg)
		}
		return notObserved(s, ErrorClass(err), msg)
	}
	observed := manifest.BuildObserved(s.Name, o.Tools, manifest.Completeness(o.Observation.Completeness), opt.Classifier)
	id := manifest.Identity{Endpoint: s.Target, Env: observe.EnvIdentity(cfg)}
	if si := o.Observation.ServerInfo; si != nil {
		id.ServerName, id.ServerVersion = si.Name, si.Version
	}
	rec, ok, why := Record(s.Name, s.Target, id, o.Observation, o.Tools)
	r := scan.Result{ToolCount: len(o.Tools.Tools)}
	if !ok {
		r.Status, r.Error = scan.StatusInconclusive, "the listing cannot be compared: "+safetext.Inert(why)
		return r, rec, observed
	}
	r.ManifestDigest = rec.ManifestDigest
	if opt.Store == nil {
		// No store: no history to gate against, and none kept.
		r.Status = scan.StatusObserved
		return r, nil, observed
	}
	return againstHistory(ctx, s, opt, r, rec, o.Tools), rec, observed
}

// againstHistory gates a listing against the server's last complete
// observation in the store.
func againstHistory(ctx context.Context, s Server, opt Options, r scan.Result, rec *store.ServerResult, tl *manifest.ToolList) scan.Result {
	last, err := opt.Store.LastComplete(ctx, s.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		r.Status = scan.StatusRecorded
		return r
	case err != nil:
		r.Status, r.Error = scan.StatusInconclusive, "the store could not give the last observation: "+safetext.Inert(err.Error())
		return r
	}
	r.Baseline = "history"
	if last.ManifestDigest == rec.ManifestDigest {
		r.Status = scan.StatusClean
		return r
	}
	prev, err := manifest.ParseToolList(last.ToolArray())
	if err != nil {
		r.Status, r.Error = scan.StatusInconclusive, "the last observation in the store cannot be read: "+safetext.Inert(err.Error())
		return r
	}
	r.Findings = scan.Against(prev.Tools, tl.Tools, decide.Options{Classifier: opt.Classifier})
	r.Status = scan.StatusClean
	if len(r.Findings) > 0 {
		r.Status = scan.StatusFindings
	}
	for _, f := range r.Findings {
		rec.Findings = append(rec.Findings, store.Finding{RuleID: f.Rule, Severity: f.Severity, Tool: f.Tool, Message: f.Message, ObservedDigest: f.Observed, DeclaredDigest: f.Declared})
	}
	return r
}

// checkLocked gates a lock's server against its entry with lock check's
// own per-server check (lockrun.CheckServer), and records the listing it
// gated as every scan kind records one (Record), with the gate's
// findings.
func checkLocked(ctx context.Context, s *Server, opt Options) (scan.Result, *store.ServerResult, *manifest.Observed) {
	c := lockrun.CheckServer(ctx, s.Lock, lockrun.CheckOptions{Check: lock.CheckOptions{Today: opt.Today},
		ObserveOptions: lockrun.ObserveOptions{Connect: opt.Connect, Classifier: opt.Classifier, Secrets: opt.Secrets, Timeout: opt.Timeout, Tracer: opt.Tracer}})
	lr, o := c.Result, c.Listing
	if lr.Target != "" {
		s.Target = lr.Target
	}
	r := scan.Result{Baseline: "lock", Error: lr.Error}
	if lr.Status == lock.StatusNotObserved || o == nil {
		r.Status = scan.StatusNotObserved
		return r, &store.ServerResult{Server: s.Name, Target: s.Target, Status: manifest.StatusNotObserved, Completeness: "unknown", ErrorClass: "observe", ErrorDetail: r.Error}, nil
	}
	rec, _, _ := Record(s.Name, s.Target, o.Identity, o.Observation, o.Tools)
	switch lr.ExitCode {
	case 1:
		r.Status = scan.StatusFindings
	case 3:
		r.Status = scan.StatusInconclusive
	default:
		r.Status = scan.StatusClean
	}
	if g := lr.Gate; g != nil {
		r.ToolCount = g.ObservedToolCount
		if g.ObservedManifestDigest != nil {
			r.ManifestDigest = *g.ObservedManifestDigest
		}
		for _, f := range g.Findings {
			sf := scan.Finding{Rule: f.ReasonCode, Severity: f.Severity, Tool: safetext.EscapeASCII(safetext.Clip(f.Name, 256)), Message: catalogTitle(f.ReasonCode), Observed: f.ObservedDigest, Declared: f.DeclaredDigest}
			r.Findings = append(r.Findings, sf)
			rec.Findings = append(rec.Findings, store.Finding{RuleID: sf.Rule, Severity: sf.Severity, Tool: f.Name, Message: sf.Message, ObservedDigest: sf.Observed, DeclaredDigest: sf.Declared})
		}
	}
	return r, rec, o.Observed
}

// catalogTitle is a code's title in the catalogue ("" for a code it does
// not know, which the gate never produces).
func catalogTitle(code string) string {
	c, _ := catalog.Lookup(code)
	return c.Title
}

// Listing is a listing of a fleet's server.
type Listing struct {
	Observation *mcpclient.Observation
	Tools       *manifest.ToolList
}

// List lists a fleet's server once (observe.List); a listing that carries
// a secret the run sent is not trusted (an error).
func List(ctx context.Context, cfg mcpclient.Config, secrets *redact.Set) (*Listing, error) {
	obs, tl, err := observe.List(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if refl := observe.Reflections(secrets, tl.Tools, obs); len(refl) > 0 {
		return nil, fmt.Errorf("the server reflects a credential this run sent into its tool list (%d place(s)): nothing from this listing is trusted", len(refl))
	}
	return &Listing{Observation: obs, Tools: tl}, nil
}

// Record is the store's record of a listing: its status, completeness,
// identity, revision and raw tools, and the manifest digest when the
// listing can be compared (ok; why not, otherwise). It is the one way
// every scan kind records what a server listed (an inventory, URLs, a
// lock, the workers of each, watch), so that history and a diff from it
// are the same whichever way a server was scanned.
func Record(name, target string, id manifest.Identity, obs *mcpclient.Observation, tl *manifest.ToolList) (rec *store.ServerResult, ok bool, why string) {
	rec = &store.ServerResult{Server: name, Target: target, Status: manifest.StatusObserved, Completeness: string(tl.Completeness),
		ProtocolRevision: obs.ProtocolRevision, Identity: id}
	digest, unique := manifest.ManifestDigestOf(tl.Tools)
	rec.Tools = make([]store.Tool, 0, len(tl.Tools))
	for i := range tl.Tools {
		t := &tl.Tools[i]
		rec.Tools = append(rec.Tools, store.Tool{Name: t.Name, Digest: t.ToolDigest(), Raw: t.Raw()})
	}
	ok, why = Comparable(obs, tl)
	if !unique {
		rec.Status, ok, why = manifest.StatusAmbiguous, false, "the server lists a tool name twice"
	}
	if !ok {
		if rec.Status != manifest.StatusAmbiguous {
			rec.Completeness = string(manifest.Partial)
		}
		return rec, false, why
	}
	rec.ManifestDigest = digest
	return rec, true, ""
}

// Comparable reports whether a listing can be compared, and why not.
func Comparable(obs *mcpclient.Observation, tl *manifest.ToolList) (bool, string) {
	if obs.CapReached || obs.CursorCycle || tl.Completeness != manifest.Complete {
		return false, observe.Reason(obs)
	}
	return true, ""
}

// ErrorClass is a fixed class of why a server was not observed.
func ErrorClass(err error) string {
	var he *mcpclient.HTTPError
	var pe *mcpclient.ProtocolError
	var le *mcpclient.LimitError
	var ue *mcpclient.UnreachableError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &le):
		if le.Kind == mcpclient.LimitRequestTime {
			return "timeout"
		}
		return "limit"
	case errors.As(err, &he):
		if he.Status == 401 || he.Status == 403 {
			return "refused"
		}
		return "http"
	case errors.As(err, &pe):
		return "protocol"
	case errors.As(err, &ue):
		return "unreachable"
	case errors.As(err, new(*mcpclient.ConfigError)):
		return "config"
	}
	return "other"
}
