package drift

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/oauth"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// exitInconclusive is a report's exit code when nothing was compared.
const exitInconclusive = 3

// live observes the server and evaluates every rule. A server that cannot
// be observed gives a report that says so (exit 3), never an error; an
// error is a configuration the client refuses, or a declared side that
// cannot be read.
func (r *run) live(ctx context.Context) (*Result, error) {
	cfg := r.cfg
	target, targetText := observe.Target(cfg, r.opt.Secrets)
	in, rep := r.start(cfg, target, targetText)
	res := &Result{Report: rep, Declared: r.declared}

	// The other listings run beside the primary one (listing.go); their
	// results are used once the primary listing has succeeded.
	others := startOthers(ctx, cfg, r)
	defer others.stop()
	// The tools listed, for the declared side read before the listing
	// ends (when the surface decides whether to list resources).
	var listed atomic.Pointer[manifest.PageList]
	list := func(ctx context.Context, cfg mcpclient.Config) (*mcpclient.Observation, *manifest.ToolList, error) {
		pl := manifest.NewPageList(manifest.ParseOptions{SkipInvalidTools: true})
		listed.Store(pl)
		return observe.ListInto(ctx, cfg, pl)
	}
	obs, tl, warning, err := others.primary(ctx, r.withSurface(cfg, func() *manifest.ToolList { return listed.Load().List("", "") }), list)
	if r.reading != nil {
		// Whatever the listing found, a declared side that cannot be read
		// is the run's error.
		var served *manifest.ToolList
		if err == nil {
			served = tl
		}
		declared, _, derr := r.reading.WaitKnown(served)
		if derr != nil {
			return nil, derr
		}
		r.declared, res.Declared, in.Declared = declared, declared, declared.Tools
		if err == nil {
			// The file read is held by nothing once the declared tools
			// hold the served bytes where they are the same, or a copy
			// (read with the served tools known, they already do).
			manifest.OwnBytes(declared.Tools, tl.Tools)
		}
		rep.Declared = probe.Declared{Source: declared.Source, ManifestDigest: declared.ManifestDigest, ToolCount: len(declared.Tools)}
	}
	if warning != "" {
		rep.Warnings = append(rep.Warnings, warning)
	}
	if err := r.outcome(in, rep, obs, tl, err, targetText); err != nil {
		return nil, err
	}
	protocol(rep, obs)
	id := r.opt.ServerID
	if id == "" {
		id = defaultServerID(obs, targetText)
	}
	if in.Primary != nil {
		r.beside(ctx, in, rep, obs, others)
		res.Served = in.Primary.Tools
		res.observed = func() *manifest.Observed {
			return manifest.BuildObserved(id, tl, manifest.Completeness(obs.Completeness), nil)
		}
		res.Surface = surfaceEvidence(id, obs.Surface)
	} else {
		res.observed = func() *manifest.Observed { return manifest.NotObserved(id) }
		res.Surface = surfaceEvidence(id, nil)
	}
	if others.anon != nil && in.Refused == nil && in.Primary != nil {
		in.Anonymous = anonymousProbe(others.anon, in.Primary)
	}
	r.evaluate(in, rep, obs, targetText, id)
	return res, nil
}

// start is the rules' input and the report before anything is listed.
func (r *run) start(cfg mcpclient.Config, target probe.Target, targetText string) (*probe.Input, *probe.Report) {
	var seedp *int64
	if len(r.plan) > 0 {
		seed := r.opt.Seed
		seedp = &seed
	}
	in := &probe.Input{Target: targetText, TargetClass: target.Class, Declared: r.declared.Tools,
		AuthorizationPresented: len(cfg.Headers) > 0, SkipAuth: r.opt.SkipAuthProbe}
	for name := range cfg.Headers {
		in.HeaderNames = append(in.HeaderNames, http.CanonicalHeaderKey(name))
	}
	slices.Sort(in.HeaderNames)
	in.HeaderNames = slices.Compact(in.HeaderNames)
	plan := append([]probe.PlannedCall(nil), r.plan...)
	rep := &probe.Report{Schema: probe.ReportSchemaID, Target: target, Warnings: []string{}, CallPlan: plan, Seed: seedp,
		Client:   probe.ClientIdentity{Name: cfg.ClientName, Version: cfg.ClientVersion, UserAgent: cfg.UserAgent, Capabilities: declaredCaps(cfg)},
		Declared: probe.Declared{Source: r.declared.Source, ManifestDigest: r.declared.ManifestDigest, ToolCount: len(r.declared.Tools)}}
	if r.capsNote != "" {
		rep.Warnings = append(rep.Warnings, r.capsNote)
	}
	return in, rep
}

// outcome reads the primary listing's outcome into the rules' input: the
// list, the calls and the reflections; a revision the server does not
// speak; a refusal; or a server that could not be observed. A
// configuration the client refuses is the run's error.
func (r *run) outcome(in *probe.Input, rep *probe.Report, obs *mcpclient.Observation, tl *manifest.ToolList, err error, targetText string) error {
	var pe *mcpclient.ProtocolError
	var he *mcpclient.HTTPError
	switch {
	case err == nil:
		in.Primary = probeObservation(obs, tl)
		in.Calls = callChecks(obs, r.declared.Tools)
		in.Reflected = observe.Reflections(r.opt.Secrets, tl.Tools, obs)
		if in.Surface, err = r.surfaceCheck(obs); err != nil {
			return err
		}
		for i := range rep.CallPlan {
			rep.CallPlan[i].Sent = r.opt.Execute
		}
	case errors.As(err, new(*mcpclient.ConfigError)):
		return observe.Failed(targetText, err)
	case errors.As(err, &pe) && pe.Code == mcpwire.CodeUnsupportedProtocolVersion:
		in.ProtocolUnsupported = &probe.Unsupported{Requested: pe.Requested, Supported: pe.Supported}
	case errors.As(err, &he) && (he.Status == 401 || he.Status == 403):
		in.Refused = &probe.AnonProbe{Completed: true, Status: he.Status, Challenge: he.WWWAuthenticate, Method: he.Method}
	default:
		rep.NotObserved = "cannot observe " + safetext.Quote(targetText) + ": " + safetext.Inert(err.Error())
	}
	return nil
}

// protocol is what the listing learnt of the protocol and the server.
func protocol(rep *probe.Report, obs *mcpclient.Observation) {
	if obs == nil {
		return
	}
	rep.Protocol = probe.Protocol{Era: obs.Era, Transport: obs.Transport, Revision: obs.ProtocolRevision, Reason: obs.RevisionReason, LegacyVersion: obs.LegacyVersion}
	if rep.Protocol.Revision == "" {
		// Observing the absence of server/discover is evidence about that
		// method, not about a version.
		rep.Protocol.Revision = "unknown"
	}
	if obs.ServerInfo != nil {
		rep.Protocol.ServerName, rep.Protocol.ServerVersion = obs.ServerInfo.Name, obs.ServerInfo.Version
	}
	rep.Warnings = append(rep.Warnings, obs.Warnings...)
}

// beside reads the listings made beside the primary one: the second
// connection (the list MUST NOT vary per connection) and the cloak check
// (the same list, asked for as another well-known client).
func (r *run) beside(ctx context.Context, in *probe.Input, rep *probe.Report, obs *mcpclient.Observation, others *others) {
	p := in.Primary
	rep.Served = &probe.Served{ManifestDigest: p.ManifestDigest, ToolCount: len(p.Tools), Pages: obs.Pages, Completeness: obs.Completeness}
	if others.second != nil {
		o2, warning, err := secondListing(ctx, r.cfg, r.spans, others.second)
		if warning != "" {
			rep.Warnings = append(rep.Warnings, warning)
		}
		if err != nil {
			rep.Warnings = append(rep.Warnings, "the second connection failed, so per-connection stability was not checked: "+safetext.Inert(err.Error()))
		} else {
			in.Second = o2
			rep.Served.SecondCompared = true
		}
	}
	if others.cloak != nil {
		rep.Client.CloakCheckedAs = r.cloakAs
		o3, tl3, err := others.cloak.wait()
		if err != nil {
			in.Cloak = &probe.Cloak{Client: r.cloakAs, Error: safetext.Inert(err.Error())}
		} else {
			in.Cloak = &probe.Cloak{Client: r.cloakAs, Obs: probeObservation(o3, tl3)}
		}
	}
}

// evaluate evaluates every rule (probe.Evaluate) into the report.
func (r *run) evaluate(in *probe.Input, rep *probe.Report, obs *mcpclient.Observation, targetText, id string) {
	if r.spans != nil {
		era, raw := "", []byte(nil)
		if obs != nil {
			era, raw = obs.Era, obs.DiscoverRaw
		}
		in.Spans = r.spans.spans(era, raw)
	}
	in.Suppressions, in.Today = r.opt.Suppressions, r.opt.Today
	in.Profile, in.Classifier = r.opt.Profile, r.classifier()
	if r.opt.Profile != nil {
		rep.Profile = r.opt.Profile.Name
	}
	in.ServerNames = []string{targetText, id}
	in.Pinned, in.Now = identities(r.cfg, obs, r.declared.Identity, r.opt.Secrets)
	if oauthHeld(r.cfg) {
		// A token the OAuth session put on the requests counts as a
		// credential presented, under its header's name.
		in.AuthorizationPresented = true
		in.HeaderNames = slices.Compact(slices.Sorted(slices.Values(append(in.HeaderNames, "Authorization"))))
	}
	pr := probe.Evaluate(*in)
	rep.AuthPosture, rep.Compared, rep.Findings, rep.Notes, rep.ExitCode = pr.AuthPosture, pr.Compared, pr.Findings, pr.Notes, pr.ExitCode
	rep.Suppressed, rep.Tools, rep.Surface = pr.Suppressed, pr.Tools, pr.Surface
	rep.Warnings = append(rep.Warnings, pr.Warnings...)
	switch {
	case rep.NotObserved != "":
		// Nothing was compared: inconclusive, whatever else was learnt.
		rep.Notes = append(rep.Notes, "the server could not be observed, so nothing was compared: absence of evidence is not \"no drift\"")
		rep.ExitCode = exitInconclusive
	case in.Primary == nil:
		// Refused (401/403) or no shared protocol revision: no tool list,
		// nothing compared. The findings say why; the run is not observed
		// (exit 3), as for a server that cannot be reached.
		rep.ExitCode = exitInconclusive
	}
}

// identities are the identities a drift compares (probe.Input.Pinned and
// Now): the one the declared side's snapshot pinned, and the one the run
// established; both nil when the declared side recorded none or the
// server was not listed.
func identities(cfg mcpclient.Config, obs *mcpclient.Observation, pinned *manifest.Identity, secrets *redact.Set) (*manifest.Identity, *manifest.Identity) {
	if pinned == nil || obs == nil {
		return nil, nil
	}
	now := observe.Identity(cfg, secrets)
	if obs.ServerInfo != nil {
		now.ServerName, now.ServerVersion = obs.ServerInfo.Name, obs.ServerInfo.Version
	}
	return pinned, &now
}

// probeObservation is a listing as the rules read it.
func probeObservation(obs *mcpclient.Observation, tl *manifest.ToolList) *probe.Observation {
	d, _ := manifest.ManifestDigestOf(tl.Tools)
	var invalid []string
	for _, it := range tl.Invalid {
		invalid = append(invalid, safetext.Quote(it.Pointer)+": "+safetext.Inert(it.Msg))
	}
	return &probe.Observation{
		Invalid: invalid,
		Tools:   tl.Tools, Completeness: manifest.Completeness(obs.Completeness), CapReached: obs.CapReached, CursorCycle: obs.CursorCycle,
		Era: obs.Era, Revision: obs.ProtocolRevision, RevisionReason: obs.RevisionReason, MissingCacheFields: obs.MissingCacheFields, ManifestDigest: d,
	}
}

// declaredCaps is the ClientCapabilities object a run declares ({} for none).
func declaredCaps(cfg mcpclient.Config) json.RawMessage {
	if len(cfg.ClientCapabilities) == 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(cfg.ClientCapabilities)
}

func defaultServerID(obs *mcpclient.Observation, target string) string {
	if obs != nil && obs.ServerInfo != nil && obs.ServerInfo.Name != "" {
		return obs.ServerInfo.Name
	}
	return target
}

// anonymousProbe is the outcome of tools/list sent without the
// credentials.
func anonymousProbe(p *pending[*probe.Observation], primary *probe.Observation) *probe.AnonProbe {
	obs, tl, err := p.wait()
	var he *mcpclient.HTTPError
	switch {
	case err == nil:
		x, y := tl.ToolNames(), primary.ToolNames()
		a := &probe.AnonProbe{Completed: true, Status: obs.HTTPStatus, Listed: true, ToolCount: len(x)}
		slices.Sort(x)
		slices.Sort(y)
		a.SameTools = slices.Equal(x, y)
		return a
	case errors.As(err, &he):
		return &probe.AnonProbe{Completed: true, Status: he.Status, Challenge: he.WWWAuthenticate}
	}
	return &probe.AnonProbe{Error: safetext.Inert(err.Error())}
}

// oauthHeld reports whether the run's OAuth session put a token on the
// requests to the server.
func oauthHeld(cfg mcpclient.Config) bool {
	s, ok := cfg.Auth.(*oauth.Session)
	return ok && s != nil && s.Holds(cfg.BaseURL)
}

// knownClients are the identities the cloak check lists as. They are the
// clientInfo names these clients send; the User-Agent is NAME/VERSION (a
// server that keys on a User-Agent can be matched with CloakAs and the
// User-Agent of Server).
var knownClients = []string{"claude-code/2.0.0", "cursor-vscode/1.0.0"}

// KnownClients are the clients CloakClient picks from.
func KnownClients() []string { return slices.Clone(knownClients) }

// CloakClient picks the other well-known client than primary (the
// client's own name) for the cloak check.
func CloakClient(primary string) string {
	for _, c := range knownClients {
		if n, _, _ := strings.Cut(c, "/"); n != primary {
			return c
		}
	}
	return knownClients[0]
}
