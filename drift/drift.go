// Package drift compares a declared manifest with what a running server
// serves: the tool drift and each tool's decision, conformance, the
// authentication posture, a list that varies per connection or per client,
// the model-facing surface beside the tools, and, when asked, tools/call
// outcomes against the declared output schemas. Run lists the server (a
// primary listing, and beside it a second connection, the
// credential-stripped probe and the cloak check) and evaluates every rule
// (package probe); the report says when the server could not be observed,
// never an error.
package drift

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/surface"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// Options are a drift of one server.
type Options struct {
	// Server reaches the server and bounds every listing. Its
	// ClientCapabilities are declared when OwnCapabilities; otherwise
	// those the declared tools were pinned with are.
	Server mcpclient.Config
	// Declared is the declared side (diff.Load reads one from a file),
	// and DeclaredCapabilities the client capabilities its tools were
	// pinned with (nil: none recorded).
	Declared             schemadiff.Input
	DeclaredCapabilities []byte
	// Reading, when set instead, is the declared side being read beside
	// the listing (Read): when the capabilities it reads are not those
	// its head predicted, the server is listed again declaring them.
	Reading *Reading
	// OwnCapabilities: Server.ClientCapabilities were chosen (the command
	// line's --client-capabilities); a difference from the pinned ones is
	// a warning of the report.
	OwnCapabilities bool
	// ServerID is the observed record's server id ("": the server's
	// reported name, else the target).
	ServerID string
	// Invoke plans a tools/call of each of these declared tools, with
	// Arguments (by tool; else generated from its input schema with
	// Seed); Execute sends them, on a target classified local, dev,
	// staging or stdio unless AllowProduction.
	Invoke                   []string
	Arguments                map[string]json.RawMessage
	Seed                     int64
	Execute, AllowProduction bool
	// SkipAuthProbe does not send the credential-stripped tools/list;
	// SkipSecond opens no second connection.
	SkipAuthProbe, SkipSecond bool
	// CloakAs is the NAME/VERSION of the client the cloak check lists as
	// ("": no cloak check; CloakClient picks one).
	CloakAs string
	// Profile decides each tool (nil: review); Classifier classifies the
	// tools (nil: the built-in table, compiled beside the listing).
	Profile    *schemadiff.DecisionProfile
	Classifier *classify.Classifier
	// Suppressions accept findings; Today (YYYY-MM-DD, UTC; "": today)
	// decides their expiry.
	Suppressions *manifest.Suppressions
	Today        string
	// Secrets are the values the run sends (nil: a set of Server's).
	Secrets *redact.Set
	// Tracer traces every request (nil: none); a finding names the span
	// it was read from.
	Tracer  mcptrace.Tracer
	Timeout time.Duration // 0: the context's deadline alone
}

// Result is a drift.
type Result struct {
	// Report is the drift report (mcpdrift.drift_report.v1); its exit
	// code is 0 no finding, 1 findings, 3 not observed.
	Report *probe.Report
	// Declared is the declared side compared.
	Declared schemadiff.Input
	// Served are the primary listing's tools (nil when none was read).
	Served []manifest.Tool
	// Surface is the record of the surface observed.
	Surface *surface.Evidence
	// Classifier is the classifier the run used.
	Classifier *classify.Classifier
	// PinnedCapabilities are the client capabilities the declared tools
	// were pinned with, which the run declared for their sake (nil: none,
	// or the caller chose its own).
	PinnedCapabilities []byte
	observed           func() *manifest.Observed
}

// Observed is the observed record built from the wire (the not-observed
// record when nothing was observed); its field digests are no part of the
// comparison, so it is built only when asked for.
func (r *Result) Observed() *manifest.Observed { return r.observed() }

// Run lists the server and evaluates every rule. A server that cannot be
// observed gives a report that says so (exit 3), never an error; an error
// is a runerr.Usage one: a configuration the client refuses, a declared
// side that cannot be read, a call plan that names no declared tool, or
// calls to a production target not allowed.
func Run(ctx context.Context, opt Options) (*Result, error) {
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	if opt.Secrets == nil {
		opt.Secrets = &redact.Set{}
	}
	if opt.Today == "" {
		opt.Today = time.Now().UTC().Format("2006-01-02")
	}
	observe.RecordSecrets(opt.Server, opt.Secrets)
	classifier := func() *classify.Classifier { return opt.Classifier }
	if opt.Classifier == nil {
		// Compiled beside the listing's first requests.
		classifier = par.Go(classify.Default)
	}
	r := &run{opt: opt, classifier: classifier, cloakAs: opt.CloakAs, spans: newDriftSpans(opt.Tracer)}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	res, err := r.live(ctx)
	if err != nil {
		return nil, err
	}
	if rd := opt.Reading; rd != nil && rd.mispredicted() {
		// The snapshot's capabilities were not in its head: the listing
		// was made declaring others. List again, declaring those read.
		r.reading = nil
		r.declared, r.pinnedCaps, _ = rd.Wait()
		r.applyCaps()
		r.spans = newDriftSpans(opt.Tracer)
		r.pinned = pinnedOnce{}
		if res, err = r.live(ctx); err != nil {
			return nil, err
		}
	}
	res.Classifier = classifier()
	if !opt.OwnCapabilities {
		res.PinnedCapabilities = r.pinnedCaps
	}
	return res, nil
}

// run is one drift: the options, the declared side, and what the run
// learnt beside listing.
type run struct {
	opt        Options
	cfg        mcpclient.Config
	declared   schemadiff.Input
	pinnedCaps []byte
	reading    *Reading
	plan       []probe.PlannedCall
	cloakAs    string
	capsNote   string // a warning about the client capabilities, for the report
	classifier func() *classify.Classifier
	// spans, when the run is traced, record each connection's spans for
	// the findings' trace_id and span_id; nil otherwise.
	spans *driftSpans
	// pinned is the surface the declared side pins.
	pinned pinnedOnce
}

// prepare reads what the listing needs before it starts: the declared
// side's capabilities (and the side itself, when a call plan needs its
// schemas), and the call plan.
func (r *run) prepare() error {
	opt := r.opt
	r.cfg, r.declared, r.pinnedCaps, r.reading = opt.Server, opt.Declared, opt.DeclaredCapabilities, opt.Reading
	if r.reading != nil {
		r.pinnedCaps = r.reading.predicted
		if len(opt.Invoke) > 0 || opt.Execute {
			// A call plan reads the declared schemas first.
			var err error
			if r.declared, r.pinnedCaps, err = r.reading.Wait(); err != nil {
				return err
			}
			r.reading = nil
		}
	}
	r.applyCaps()
	plan, err := callPlan(r.declared.Tools, opt.Invoke, opt.Arguments, opt.Execute, opt.Seed)
	if err != nil {
		return err
	}
	r.plan = plan
	if opt.Execute {
		if c := observe.TargetClass(r.cfg); c != probe.ClassLocal && c != probe.ClassDev && c != probe.ClassStaging && c != probe.ClassStdio && !opt.AllowProduction {
			return runerr.Usagef("refusing to call tools on a target classified %s; tools/call has side effects: pass --i-know-this-is-production if you mean it", c)
		}
		for _, p := range plan {
			r.cfg.Calls = append(r.cfg.Calls, mcpclient.ToolCall{Name: p.Tool, Arguments: p.Arguments, InputSchema: p.InputSchema})
		}
	}
	return nil
}

// applyCaps declares the client capabilities the declared tools were
// pinned with (what was pinned was listed to a client declaring these:
// observed as another, its tools look removed), unless the caller chose
// its own; a difference is a warning of the report.
func (r *run) applyCaps() {
	r.cfg.ClientCapabilities, r.capsNote = r.opt.Server.ClientCapabilities, ""
	switch {
	case r.pinnedCaps == nil:
	case !r.opt.OwnCapabilities:
		r.cfg.ClientCapabilities = r.pinnedCaps
	case !bytes.Equal(r.cfg.ClientCapabilities, r.pinnedCaps):
		r.capsNote = "the declared tools were pinned declaring client capabilities " + safetext.Escape(string(r.pinnedCaps)) + " and this run declared " + safetext.Escape(string(r.cfg.ClientCapabilities)) + ": tools a server lists only to clients with some capability can look added or removed"
	}
}
