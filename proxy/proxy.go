// Package proxy is mcpdrift's runtime gateway: it sits between an agent
// (the downstream) and an MCP server (the upstream), observes the real
// tools/list on the wire, and in enforce mode serves only the tools the
// pinned baseline approves, refusing every call it does not.
//
// It owns the edges only — the downstream server side (stdio, Streamable
// HTTP at /mcp), the upstream client side (Streamable HTTP in both eras,
// stdio through mcpclient's contained process), session mapping,
// re-observation, the decision log and the metrics. Every decision comes
// from package decide; every frame from mcpwire/frame. It forwards the
// bytes it received, and a tool it serves is the approved tool object
// byte for byte (the pinned one: no digest covers a tool's title, icons,
// _meta or execution, so the upstream's current ones are not served);
// the only bytes it changes are JSON-RPC ids it cannot forward as they
// came (a stdio upstream's, which it multiplexes, and an id no double
// holds; the downstream gets its own ids back), a secret it redacts,
// and whitespace between JSON tokens where a frame needs one line — and,
// only when tracing is on (Config.Tracer), the trace context in a
// forwarded message's params._meta, which becomes the gateway's own CLIENT
// span's (a deliberate exception; see trace.go).
//
// Modes:
//
//   - observe: only initialize, notifications/initialized, server/discover,
//     ping, tools/list, notifications/tools/list_changed and
//     subscriptions/listen are forwarded; anything else is answered by the
//     proxy with an error and never reaches the upstream. The latest fully
//     observed list (a cursor chain from a first page without a cursor to a
//     last page without nextCursor) is handed to Config.OnObserved.
//   - audit: everything is forwarded byte for byte; every list is observed
//     and gated, and what enforce would have hidden or refused is logged.
//   - enforce: the proxy lists the whole upstream itself, gates it, and
//     serves only approved, unchanged tools; calls to anything else, and
//     calls whose arguments the pinned inputSchema refuses, are answered
//     with -32602 and never forwarded.
package proxy

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// Mode is how the gateway treats traffic.
type Mode string

// The modes.
const (
	Observe Mode = "observe"
	Audit   Mode = "audit"
	Enforce Mode = "enforce"
)

// Upstream says which server the gateway fronts.
type Upstream struct {
	// Exactly one of URL (Streamable HTTP) and Command (stdio).
	URL     string
	Command []string
	PassEnv []string
	Env     map[string]string
	// Headers are added to every upstream HTTP request (a credential the
	// gateway holds). Never recorded.
	Headers http.Header
	// ForwardAuthorization forwards the downstream's Authorization header
	// upstream (never recorded). Off when the gateway consumes it for its
	// own bearer token.
	ForwardAuthorization bool
	// HTTPClient is optional (tests, custom TLS); redirects are refused.
	HTTPClient *http.Client
	// ClientName and ClientVersion are the clientInfo of the gateway's own
	// listing on a 2026-07-28 upstream when no downstream request gave one.
	ClientName, ClientVersion string
}

// Config is one gateway.
type Config struct {
	Upstream Upstream
	Mode     Mode
	// Baseline is the approved list (required for audit and enforce).
	Baseline *decide.Baseline
	Profile  *schemadiff.DecisionProfile // nil: review
	// StrictArguments refuses call arguments the pinned inputSchema does
	// not declare (default under fail-closed; the CLI sets it).
	StrictArguments bool
	// ServeStale keeps serving the last gated list when the upstream cannot
	// be listed completely (off: fail closed, serve nothing).
	ServeStale bool
	// RelistInterval re-observes the upstream when the gated list is older
	// (0: only on list_changed and ttlMs).
	RelistInterval time.Duration
	// ServerID names the server in the decision log and records.
	ServerID string
	// Target is the upstream as recorded (a URL without credentials, or
	// "stdio:" and the command line): the endpoint of the identity tuple.
	Target string
	// TargetResolved is a stdio Target with the paths that are symlinks
	// resolved as it was started (manifest.Identity.ResolvedEndpoint; ""
	// when none resolves elsewhere): which package a bin link runs.
	TargetResolved string
	Classifier     *classify.Classifier

	// Bounds. Zero means the default.
	RequestTimeout  time.Duration // one upstream exchange (default 60s)
	ListTimeout     time.Duration // the gateway's whole listing (default 30s)
	MaxMessageBytes int64         // one message either way (default 16 MiB)
	MaxListPages    int           // default 1000
	MaxListBytes    int64         // default 64 MiB
	MaxListTools    int           // default 100,000
	MaxSessions     int           // downstream HTTP sessions (default 1024)
	SessionIdle     time.Duration // an idle legacy session is ended (default 30 min)

	// OnObserved receives the latest fully observed list (observe and
	// audit: the downstream's pages; enforce: the gateway's own listing).
	OnObserved func(*manifest.Observed)
	// Log receives one record per decision (nil: none).
	Log *DecisionLog
	// Metrics, when set, is updated (see NewMetrics).
	Metrics *Metrics
	// Secrets are redacted from the decision log and every reply
	// (header values the gateway sends; a downstream's forwarded
	// Authorization is added as it is seen, when redact.AddForwarded
	// takes it: told apart from text, among a bounded few). The spans are redacted by the
	// exporter, with the Set it was given: give the same one
	// (telemetry.Options.Secrets). Nil: the Tracer's Set when it has one
	// (a telemetry.Provider's), else a new one.
	Secrets *redact.Set
	// Status, when set, gets one line for each (re)observation whose
	// outcome differs from the last line written: how many tools are
	// served, and how many are hidden for which reason (names escaped and
	// capped), or why the server is withheld (once, while the reason
	// stands). The CLI gives it stderr (proxy --quiet: nil).
	Status io.Writer
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Tracer, when set, makes a SERVER span of each downstream request
	// and notification (a child of the trace context in its
	// params._meta) and a CLIENT span of each message sent upstream, whose
	// traceparent replaces the one in that message's params._meta: the one
	// change to forwarded bytes tracing makes (see trace.go). Nil: none.
	Tracer mcptrace.Tracer
}

func (c *Config) defaults() error {
	switch c.Mode {
	case "":
		c.Mode = Observe
		if c.Baseline != nil {
			c.Mode = Enforce
		}
	case Observe, Audit, Enforce:
	default:
		return errors.New("proxy: unknown mode " + string(c.Mode))
	}
	if c.Mode != Observe && c.Baseline == nil {
		return errors.New("proxy: " + string(c.Mode) + " mode needs a baseline")
	}
	if (c.Upstream.URL == "") == (len(c.Upstream.Command) == 0) {
		return errors.New("proxy: give exactly one of an upstream URL and an upstream command")
	}
	if c.Profile == nil {
		c.Profile = schemadiff.ReviewProfile
	}
	if c.Classifier == nil {
		c.Classifier = classify.Default()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.RequestTimeout, 60*time.Second)
	def(&c.ListTimeout, 30*time.Second)
	def(&c.SessionIdle, 30*time.Minute)
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 16 << 20
	}
	if c.MaxListPages <= 0 {
		c.MaxListPages = 1000
	}
	if c.MaxListBytes <= 0 {
		c.MaxListBytes = 64 << 20
	}
	if c.MaxListTools <= 0 {
		c.MaxListTools = 100000
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 1024
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Secrets == nil {
		if t, ok := c.Tracer.(interface{ Secrets() *redact.Set }); ok {
			c.Secrets = t.Secrets()
		}
	}
	if c.Secrets == nil {
		c.Secrets = &redact.Set{}
	}
	if c.Upstream.ClientName == "" {
		c.Upstream.ClientName, c.Upstream.ClientVersion = "mcpdrift-proxy", "0"
	}
	return nil
}

// Gateway is a running gateway.
type Gateway struct {
	cfg      Config
	baseline atomic.Pointer[decide.Baseline]

	mu       sync.Mutex
	sessions map[string]*session // legacy HTTP sessions by the id the gateway gave
	opening  int                 // legacy sessions being opened (counted against MaxSessions)
	shared   *session            // stateless 2026-07-28 HTTP traffic
	closed   bool

	trace *traceState // nil without Config.Tracer

	statusMu   sync.Mutex
	lastStatus string // the last line written to Config.Status

	// ready: the upstream was observed and the baseline is valid.
	ready atomic.Bool
	// The gateway's own observations (Observe): one at a time, and the
	// era that answered last.
	observing     observing
	observeLegacy atomic.Bool
}

// New checks cfg and returns a gateway.
func New(cfg Config) (*Gateway, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	g := &Gateway{cfg: cfg, sessions: map[string]*session{}, trace: newTraceState(&cfg)}
	if cfg.Baseline != nil {
		g.baseline.Store(cfg.Baseline)
		g.logInvalid(cfg.Baseline)
	}
	if cfg.Mode == Observe {
		g.ready.Store(true)
	}
	return g, nil
}

// Reload replaces the baseline without dropping sessions: every session
// re-gates at its next list or call. A baseline that is not valid
// (decide.Baseline.Invalid: the validity gate checks, or
// decide.InvalidBaseline for one that could not be read) is put in force
// too, and the server is withheld — an empty list, every call refused
// with call_server_withheld, /healthz 503 — until a valid one is loaded.
// That is fail-closed: the operator replaced the approvals, so the old
// ones are no longer what they declare, and serving them on would hide
// the failure. Reload then returns an error that says why.
func (g *Gateway) Reload(b *decide.Baseline) error {
	if b == nil {
		return errors.New("proxy: no baseline")
	}
	g.baseline.Store(b)
	why := b.Invalid()
	g.mu.Lock()
	all := make([]*session, 0, len(g.sessions)+1)
	for _, s := range g.sessions {
		all = append(all, s)
	}
	if g.shared != nil {
		all = append(all, g.shared)
	}
	g.mu.Unlock()
	for _, s := range all {
		s.invalidate()
	}
	g.cfg.Log.write(g.cfg.Secrets, Record{Time: g.cfg.Now(), ServerID: g.cfg.ServerID, Event: "baseline_reloaded"})
	if why != "" {
		g.logInvalid(b)
		return errors.New("proxy: the new baseline is not valid, and the server is withheld until a valid one is loaded: " + why)
	}
	return nil
}

// logInvalid records, when b is not valid, why the server is withheld:
// the validity codes and their sentences (escaped text).
func (g *Gateway) logInvalid(b *decide.Baseline) {
	why := b.Invalid()
	if why == "" {
		return
	}
	codes := []string{decide.ReasonBaselineInvalid}
	for _, p := range b.Problems() {
		if p.Code != decide.ReasonBaselineInvalid {
			codes = append(codes, p.Code)
		}
	}
	g.cfg.Log.write(g.cfg.Secrets, Record{Time: g.cfg.Now(), ServerID: g.cfg.ServerID, Mode: string(g.cfg.Mode), Event: "baseline_invalid",
		Reasons: codes, Note: safetext.Inert(safetext.ClipEscaped(why, 1024))})
}

// BaselineInvalid says why the baseline in force is not valid ("": it
// is, or there is none): what withholds the server.
func (g *Gateway) BaselineInvalid() string {
	if b := g.baseline.Load(); b != nil {
		return b.Invalid()
	}
	return ""
}

// Ready reports whether the upstream was observed and the baseline is
// valid (what /healthz answers).
func (g *Gateway) Ready() bool {
	return g.ready.Load() && (g.cfg.Mode == Observe || g.BaselineInvalid() == "")
}

// Close ends every session and its upstream.
func (g *Gateway) Close() {
	g.mu.Lock()
	g.closed = true
	all := make([]*session, 0, len(g.sessions)+1)
	for _, s := range g.sessions {
		all = append(all, s)
	}
	if g.shared != nil {
		all = append(all, g.shared)
	}
	g.sessions, g.shared = map[string]*session{}, nil
	g.mu.Unlock()
	for _, s := range all {
		s.close()
		if s.http != nil {
			s.http.ended()
		}
	}
}
