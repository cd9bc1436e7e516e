package cli

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/surface"
	"github.com/mcpdrift/mcpdrift/telemetry"
)

// liveFlags select and bound a live server (drift, pin --url/--stdio).
type liveFlags struct {
	mcpConfig    string
	configServer string
	allowConfig  bool
	baseURL      string
	stdio        bool
	headers      []string
	passEnv      []string
	maxPages     int // 0 (not given): no page bound
	flags        *pflag.FlagSet
	maxListBytes int64
	maxListTools int
	timeout      time.Duration
	maxResponse  int64
	caFile       string
	preferLegacy bool
	clientInfo   string
	userAgent    string
	transport    string // --transport
	fileType     string // the transport of the --mcp-config entry ("type")
	clientCaps   string // --client-capabilities, as given
	suppress     suppressionFlags
	oauth        oauthFlags
}

func (l *liveFlags) register(cmd *cobra.Command, urlFlag string) {
	l.registerAs(cmd, urlFlag, "stdio")
}

// registerAs registers the flags with the URL and stdio flags named as
// given (the proxy's are --upstream-url and --upstream-stdio).
func (l *liveFlags) registerAs(cmd *cobra.Command, urlFlag, stdioFlag string) {
	f := cmd.Flags()
	f.StringVar(&l.baseURL, urlFlag, "", "Streamable HTTP endpoint of the server")
	f.BoolVar(&l.stdio, stdioFlag, false, "run the server given after -- as a child process and speak stdio (it runs with a minimal environment; see README)")
	f.StringArrayVar(&l.headers, "header", nil, "NAME=VALUE sent on every HTTP request (repeatable); names are recorded, values never, and values are redacted from every output")
	f.StringArrayVar(&l.passEnv, "pass-env", nil, "environment variable the stdio child inherits (repeatable); its value is redacted from every output")
	l.flags = f
	l.suppress.register(f)
	l.oauth.register(f)
	f.IntVar(&l.maxPages, "max-list-pages", 0, "follow at most this many tools/list pages: a longer list is then partial (MCP-DRIFT-PAGINATION-CAPPED); by default there is no page bound, and --max-list-bytes, --max-list-tools and --timeout bound the listing")
	f.Int64Var(&l.maxListBytes, "max-list-bytes", mcpclient.DefaultMaxListBytes, "refuse a listing whose tools/list responses exceed this many bytes in all")
	f.IntVar(&l.maxListTools, "max-list-tools", mcpclient.DefaultMaxListTools, "refuse a listing of more than this many tools in all")
	f.DurationVar(&l.timeout, "timeout", 2*time.Minute, "bound on the whole run (more than 0)")
	f.Int64Var(&l.maxResponse, "max-response-bytes", mcpclient.DefaultMaxResponseBytes, "refuse any single response larger than this")
	f.StringVar(&l.caFile, "ca-file", "", "PEM file of a CA to trust in addition to the system roots (TLS verification stays on)")
	f.BoolVar(&l.preferLegacy, "legacy", false, "start with initialize (a legacy revision) instead of server/discover")
	f.StringVar(&l.mcpConfig, "mcp-config", "", `an MCP client configuration file ({"mcpServers": {...}}); with --server NAME, observe that server`)
	f.StringVar(&l.configServer, "server", "", "the server entry of --mcp-config")
	f.BoolVar(&l.allowConfig, "allow-config-commands", false, "allow running a stdio command read from --mcp-config (it runs code on this machine)")
	f.StringVar(&l.clientInfo, "client-info", "", "NAME/VERSION to send as clientInfo (default mcpdrift/"+version()+"): look like the client your agents use")
	f.StringVar(&l.userAgent, "user-agent", "", "User-Agent of every HTTP request (default: Go's)")
	f.StringVar(&l.transport, "transport", "", "HTTP transport: streamable-http, or sse for the deprecated HTTP+SSE of 2024-11-05 (default: Streamable HTTP, then HTTP+SSE when initialize is refused with 400, 404 or 405)")
	f.StringVar(&l.clientCaps, "client-capabilities", "", `ClientCapabilities to declare, as JSON ('{"sampling":{}}') or names ("sampling,elicitation,roots"): servers may list some tools only to such clients. Nothing is answered: server requests are refused`)
}

// parseClientInfo reads NAME/VERSION.
func parseClientInfo(flag, s string) (name, ver string, err error) {
	name, ver, ok := strings.Cut(s, "/")
	if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(ver) == "" || !safetext.IsSafe(s) {
		return "", "", usageErr("%s must be NAME/VERSION (printable text), for example claude-code/2.0.0", flag)
	}
	return name, ver, nil
}

// fromConfigFile fills the target from --mcp-config. A command read from
// a file runs only with --allow-config-commands.
func (l *liveFlags) fromConfigFile(e *env, argv []string) (url string, command []string, env map[string]string, headers http.Header, err error) {
	if l.configServer == "" {
		return "", nil, nil, nil, usageErr("--mcp-config needs --server NAME")
	}
	if l.baseURL != "" || l.stdio || len(argv) > 0 {
		return "", nil, nil, nil, usageErr("--mcp-config replaces the URL, --stdio and the command after --")
	}
	src, err := readInput(e, l.mcpConfig, DefaultMaxInput)
	if err != nil {
		return "", nil, nil, nil, err
	}
	cs, err := loadConfigServer(src, l.mcpConfig, l.configServer)
	if err != nil {
		return "", nil, nil, nil, err
	}
	// Everything the entry would send is a secret from here on, before
	// any message could quote it.
	for _, v := range cs.expanded {
		l.short(e, shortOnly(e.secrets.Add("a value a placeholder took from the environment", v), "a value a placeholder of "+safetext.Quote(l.mcpConfig)+" took from the environment"))
	}
	for k, v := range cs.env {
		e.secrets.Add("the value of env "+k+" of the stdio server", v)
	}
	for k, vs := range cs.headers {
		for _, v := range vs {
			e.secrets.AddHeader(k, v)
		}
	}
	e.secrets.AddURL(cs.url)
	l.fileType = cs.transport
	if len(cs.ignored) > 0 {
		fmt.Fprintf(e.stderr, "mcpdrift: %s: ignoring %s of server %s\n", safetext.Escape(l.mcpConfig), safetext.Escape(strings.Join(cs.ignored, ", ")), safetext.Quote(l.configServer))
	}
	if cs.command != nil && !l.allowConfig {
		quoted := make([]string, len(cs.command))
		for i, a := range cs.command {
			quoted[i] = safetext.Quote(a)
		}
		return "", nil, nil, nil, usageErr("refusing to run a command read from %s: %s. It would run code on this machine; pass --allow-config-commands if you mean it", safetext.Escape(l.mcpConfig), strings.Join(quoted, " "))
	}
	return cs.url, cs.command, cs.env, cs.headers, nil
}

// checkURL refuses a URL mcpdrift will not send to, as a usage error that
// never repeats the URL's credentials.
func checkURL(flag, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return usageErr("%s is not a URL", flag)
	case u.User != nil:
		return usageErr("%s carries user info (credentials before @): mcpdrift does not put credentials in a URL; send them with --header, for example --header \"Authorization=Bearer $TOKEN\" (the URL is not repeated here)", flag)
	case u.Scheme != "http" && u.Scheme != "https":
		return usageErr("%s must be an http:// or https:// URL, not %s", flag, safetext.Quote(u.Scheme+":"))
	case u.Host == "":
		return usageErr("%s has no host", flag)
	case u.Fragment != "" || u.RawFragment != "":
		return usageErr("%s must not have a #fragment", flag)
	}
	return nil
}

// config builds the client configuration and records every secret it
// will send. argv is the command after --.
func (l *liveFlags) config(e *env, argv []string) (mcpclient.Config, error) {
	cfg := mcpclient.Config{ClientName: "mcpdrift", ClientVersion: version(), MaxListPages: l.maxPages, MaxListBytes: l.maxListBytes, MaxListTools: l.maxListTools, MaxResponseBytes: l.maxResponse, UserAgent: l.userAgent}
	// Secrets first: whatever fails below must not be able to echo them.
	for _, h := range l.headers {
		if name, value, ok := strings.Cut(h, "="); ok {
			l.short(e, e.secrets.AddHeader(http.CanonicalHeaderKey(strings.TrimSpace(name)), value))
		}
	}
	l.short(e, e.secrets.AddURL(l.baseURL))
	for _, n := range l.passEnv {
		if v, ok := os.LookupEnv(n); ok && !e.secrets.Add("the value of env "+n+" passed to the stdio server", v) {
			l.short(e, []string{"the value of env " + n})
		}
	}
	var fileHeaders http.Header
	if l.mcpConfig != "" {
		url, command, env, headers, err := l.fromConfigFile(e, argv)
		if err != nil {
			return cfg, err
		}
		if command != nil {
			l.stdio, argv, cfg.Env = true, command, env
		} else {
			l.baseURL, fileHeaders = url, headers
		}
	} else if l.configServer != "" || l.allowConfig {
		return cfg, usageErr("--server and --allow-config-commands go with --mcp-config")
	}
	if err := l.checkBounds(); err != nil {
		return cfg, err
	}
	if l.clientInfo != "" {
		n, v, err := parseClientInfo("--client-info", l.clientInfo)
		if err != nil {
			return cfg, err
		}
		cfg.ClientName, cfg.ClientVersion = n, v
	}
	if err := l.reach(&cfg, argv); err != nil {
		return cfg, err
	}
	if err := l.addHeaders(&cfg, fileHeaders); err != nil {
		return cfg, err
	}
	return cfg, l.finish(e, &cfg)
}

// checkBounds refuses a bound the listing cannot run with.
func (l *liveFlags) checkBounds() error {
	switch {
	case l.timeout <= 0:
		return usageErr("--timeout must be more than 0 (for example 30s)")
	case l.maxResponse < 1:
		return usageErr("--max-response-bytes must be at least 1")
	case l.maxPages < 0 || l.maxPages == 0 && l.flags != nil && l.flags.Changed("max-list-pages"):
		return usageErr("--max-list-pages must be at least 1 (without it, no page bound)")
	case l.maxListBytes < 1:
		return usageErr("--max-list-bytes must be at least 1")
	case l.maxListTools < 1:
		return usageErr("--max-list-tools must be at least 1")
	case strings.ContainsAny(l.userAgent, "\r\n\x00"):
		return usageErr("--user-agent must not contain CR, LF or NUL")
	}
	return nil
}

// reach sets how cfg reaches the server: the stdio command, or the URL
// and its transport; a flag of the other kind is refused.
func (l *liveFlags) reach(cfg *mcpclient.Config, argv []string) error {
	switch {
	case l.stdio && l.baseURL != "":
		return usageErr("give a URL or --stdio, not both")
	case l.stdio:
		if len(argv) == 0 {
			return usageErr("--stdio needs the server's command after --, for example: --stdio -- npx -y @modelcontextprotocol/server-everything")
		}
		switch {
		case len(l.headers) > 0:
			return usageErr("--header applies to HTTP servers only")
		case l.userAgent != "":
			return usageErr("--user-agent applies to HTTP servers only")
		case l.transport != "":
			return usageErr("--transport applies to HTTP servers only")
		}
		cfg.Command, cfg.PassEnv = argv, l.passEnv
		return nil
	case l.baseURL != "":
		if len(argv) > 0 {
			return usageErr("arguments after -- are a stdio command; give --stdio")
		}
		flag := "the URL"
		if l.mcpConfig != "" {
			flag = "the url of server " + safetext.Quote(l.configServer) + " in " + safetext.Quote(l.mcpConfig)
		}
		if err := checkURL(flag, l.baseURL); err != nil {
			return err
		}
		if len(l.passEnv) > 0 {
			return usageErr("--pass-env applies to stdio servers only")
		}
		cfg.BaseURL = l.baseURL
		switch {
		case l.transport != "" && l.transport != mcpclient.TransportStreamableHTTP && l.transport != mcpclient.TransportSSE:
			return usageErr("--transport must be %s or %s", mcpclient.TransportStreamableHTTP, mcpclient.TransportSSE)
		case l.transport != "" && l.fileType != "" && l.transport != l.fileType:
			return usageErr("--transport %s contradicts the type %s of server %s in %s", l.transport, safetext.Quote(l.fileType), safetext.Quote(l.configServer), safetext.Quote(l.mcpConfig))
		case l.transport != "":
			cfg.Transport = l.transport
		default:
			cfg.Transport = l.fileType
		}
		return nil
	}
	return usageErr("give a URL (--url; the gateway: --upstream-url) or a command to run (--stdio; the gateway: --upstream-stdio -- CMD ARGS...)")
}

// addHeaders sets the headers of the configuration file, then --header's;
// a name mcpdrift owns, or a value with CR, LF or NUL, is refused.
func (l *liveFlags) addHeaders(cfg *mcpclient.Config, fileHeaders http.Header) error {
	if len(fileHeaders) > 0 {
		cfg.Headers = fileHeaders.Clone()
	}
	if len(l.headers) > 0 && cfg.Headers == nil {
		cfg.Headers = http.Header{}
	}
	for _, h := range l.headers {
		name, value, ok := strings.Cut(h, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return usageErr("--header must be NAME=VALUE")
		}
		if !httpToken(name) {
			return usageErr("--header %s: the name is not an HTTP token", safetext.Quote(name))
		}
		if c := http.CanonicalHeaderKey(name); strings.HasPrefix(c, "Mcp-") || c == "Content-Type" || c == "Accept" || c == "Content-Length" || c == "Host" || c == "User-Agent" {
			return usageErr("--header %s: mcpdrift owns that header (use --user-agent for User-Agent)", safetext.Quote(name))
		}
		cfg.Headers.Add(name, value)
	}
	for name, vs := range cfg.Headers {
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n\x00") {
				return usageErr("the value of header %s contains CR, LF or NUL (the value is not repeated here)", safetext.Quote(name))
			}
		}
	}
	return nil
}

// finish sets the OAuth session of an HTTP server, the extra CA, the
// preferred revision and the client capabilities.
func (l *liveFlags) finish(e *env, cfg *mcpclient.Config) error {
	if cfg.BaseURL != "" {
		a, err := l.oauth.auth(e, cfg.BaseURL, cfg.Headers)
		if err != nil {
			return err
		}
		if a != nil {
			cfg.Auth = a
		}
	}
	if l.caFile != "" {
		pem, err := os.ReadFile(l.caFile)
		if err != nil {
			return usageErr("--ca-file: %s", safetext.Inert(err.Error()))
		}
		pool, err := systemPoolWith(pem)
		if err != nil {
			return usageErr("--ca-file: %s", safetext.Inert(err.Error()))
		}
		cfg.RootCAs = pool
	}
	if l.preferLegacy {
		cfg.PreferredRevision = mcpwire.LegacyRevisions[0]
	}
	if l.clientCaps != "" {
		caps, err := mcpclient.ParseClientCapabilities(l.clientCaps)
		if err != nil {
			return usageErr("--client-capabilities: %s", strings.TrimPrefix(err.Error(), "client capabilities: "))
		}
		cfg.ClientCapabilities = caps
	}
	return nil
}

// short says, once per value, that a secret is too short to redact.
func (l *liveFlags) short(e *env, labels []string) { warnShort(e, labels) }

// warnShort says, once per value, that a secret is too short to redact.
func warnShort(e *env, labels []string) {
	for _, s := range labels {
		fmt.Fprintf(e.stderr, "mcpdrift: warning: %s is shorter than %d bytes: it is sent, but cannot be told apart from other text, so it is not redacted from output\n", s, redact.MinLen)
	}
}

func httpToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// observeLive runs one tools/list and keeps its tools (listing.go).
func observeLive(ctx context.Context, cfg mcpclient.Config) (*mcpclient.Observation, *manifest.ToolList, error) {
	return listFull(ctx, cfg)
}

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

// driftRun is one live drift: the server, the declared tools and what to
// do beyond listing.
type driftRun struct {
	cfg          mcpclient.Config
	manifestPath string
	declared     schemadiff.Input
	// declaredRead, when set, is the declared side being read while the
	// server is listed: declared is what it reads, once the primary
	// listing is done.
	declaredRead *declaredRead
	plan         []probe.PlannedCall
	seed         int64
	execute      bool
	skipAuth     bool
	skipSecond   bool
	cloakAs      string // "NAME/VERSION" to list as again; "" = no cloak check
	serverID     string // for the observed record
	suppressions *manifest.Suppressions
	capsNote     string // a warning about the client capabilities, for the report
	profile      *schemadiff.DecisionProfile
	classifier   func() *classify.Classifier // classifierBeside; nil: the built-in table
	// spans, when the run is traced, record each connection's spans for
	// the findings' trace_id and span_id (telemetry.go); nil otherwise.
	spans *driftSpans
	// pinned is the surface the declared side pins (surface.go).
	pinned pinnedOnce
}

// result of a live drift: the report, and the observed record built from
// the wire (the not-observed record when nothing was observed).
type driftResult struct {
	rep      *probe.Report
	observed func() *manifest.Observed
	// served is the primary listing's tools (nil when none was read): the
	// HTML report reads the readable deltas from them (driftDeltas).
	served []manifest.Tool
	// surface is the record of the surface observed (--surface-out).
	surface *surface.Evidence
}

// knownClients are the identities --cloak-check lists as. They are the
// clientInfo names these clients send; the User-Agent is NAME/VERSION (a
// server that keys on a User-Agent can be matched with --cloak-as and
// --user-agent).
var knownClients = []string{"claude-code/2.0.0", "cursor-vscode/1.0.0"}

// cloakIdentity picks the other well-known client for --cloak-check.
func cloakIdentity(primary string) string {
	for _, c := range knownClients {
		if n, _, _ := strings.Cut(c, "/"); n != primary {
			return c
		}
	}
	return knownClients[0]
}

// liveDrift observes the server and evaluates every rule. A server that
// cannot be observed gives a report that says so (exit 3), never an
// error; an error is a configuration the client refuses (exit 2).
func liveDrift(ctx context.Context, e *env, d *driftRun) (*driftResult, error) {
	cfg := d.cfg
	target, targetText := e.targetOf(cfg)
	var seedp *int64
	if len(d.plan) > 0 {
		seed := d.seed
		seedp = &seed
	}
	in := probe.Input{Target: targetText, TargetClass: target.Class, Declared: d.declared.Tools,
		AuthorizationPresented: len(cfg.Headers) > 0, SkipAuth: d.skipAuth}
	for name := range cfg.Headers {
		in.HeaderNames = append(in.HeaderNames, http.CanonicalHeaderKey(name))
	}
	slices.Sort(in.HeaderNames)
	in.HeaderNames = slices.Compact(in.HeaderNames)
	plan := append([]probe.PlannedCall(nil), d.plan...)
	rep := &probe.Report{Schema: probe.ReportSchemaID, Target: target, Warnings: []string{}, CallPlan: plan, Seed: seedp,
		Client:   probe.ClientIdentity{Name: cfg.ClientName, Version: cfg.ClientVersion, UserAgent: cfg.UserAgent, Capabilities: declaredCaps(cfg)},
		Declared: probe.Declared{Source: d.manifestPath, ManifestDigest: d.declared.ManifestDigest, ToolCount: len(d.declared.Tools)}}
	id := d.serverID
	res := &driftResult{rep: rep}
	if d.capsNote != "" {
		rep.Warnings = append(rep.Warnings, d.capsNote)
	}

	// The other listings run beside the primary one (listing.go); their
	// results are used as before, once the primary listing has succeeded.
	others := startOthers(ctx, cfg, d)
	defer others.stop()

	obs, tl, warning, err := others.primary(ctx, d.withSurface(cfg), listFull)
	if d.declaredRead != nil {
		// Whatever the listing found, a declared side that cannot be read
		// is the run's error (exit 2).
		declared, _, derr := d.declaredRead.wait()
		if derr != nil {
			return nil, derr
		}
		d.declared = declared
		in.Declared = declared.Tools
		rep.Declared = probe.Declared{Source: d.manifestPath, ManifestDigest: declared.ManifestDigest, ToolCount: len(declared.Tools)}
	}
	if warning != "" {
		rep.Warnings = append(rep.Warnings, warning)
	}
	var pe *mcpclient.ProtocolError
	var he *mcpclient.HTTPError
	switch {
	case err == nil:
		in.Primary = probeObservation(obs, tl)
		in.Calls = callChecks(obs, d.declared.Tools)
		in.Reflected = observe.Reflections(e.secrets, tl.Tools, obs)
		if in.Surface, err = d.surfaceCheck(e, obs); err != nil {
			return nil, err
		}
		for i := range rep.CallPlan {
			rep.CallPlan[i].Sent = d.execute
		}
	case errors.As(err, new(*mcpclient.ConfigError)):
		return nil, observe.Failed(targetText, err)
	case errors.As(err, &pe) && pe.Code == mcpwire.CodeUnsupportedProtocolVersion:
		in.ProtocolUnsupported = &probe.Unsupported{Requested: pe.Requested, Supported: pe.Supported}
	case errors.As(err, &he) && (he.Status == 401 || he.Status == 403):
		in.Refused = &probe.AnonProbe{Completed: true, Status: he.Status, Challenge: he.WWWAuthenticate, Method: he.Method}
	default:
		rep.NotObserved = "cannot observe " + safetext.Quote(targetText) + ": " + safetext.Inert(err.Error())
	}
	if obs != nil {
		rep.Protocol = probe.Protocol{Era: obs.Era, Transport: obs.Transport, Revision: obs.ProtocolRevision, Reason: obs.RevisionReason, LegacyVersion: obs.LegacyVersion}
		if rep.Protocol.Revision == "" {
			// Observing the absence of server/discover is evidence
			// about that method, not about a version.
			rep.Protocol.Revision = "unknown"
		}
		if obs.ServerInfo != nil {
			rep.Protocol.ServerName, rep.Protocol.ServerVersion = obs.ServerInfo.Name, obs.ServerInfo.Version
		}
		rep.Warnings = append(rep.Warnings, obs.Warnings...)
	}
	if id == "" {
		id = defaultServerID(obs, targetText)
	}
	if in.Primary != nil {
		res.served = in.Primary.Tools
		rep.Served = &probe.Served{ManifestDigest: in.Primary.ManifestDigest, ToolCount: len(in.Primary.Tools), Pages: obs.Pages, Completeness: obs.Completeness}
		if others.second != nil {
			// A second, independent connection: the list MUST NOT
			// vary per connection.
			o2, warning, err := secondListing(ctx, cfg, d.spans, others.second)
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
			// The same list, asked for as another well-known client.
			rep.Client.CloakCheckedAs = d.cloakAs
			o3, tl3, err := others.cloak.wait()
			if err != nil {
				in.Cloak = &probe.Cloak{Client: d.cloakAs, Error: safetext.Inert(err.Error())}
			} else {
				in.Cloak = &probe.Cloak{Client: d.cloakAs, Obs: probeObservation(o3, tl3)}
			}
		}
		// Built only when written (--observed-out): its field digests are
		// no part of the comparison.
		res.observed = func() *manifest.Observed {
			return manifest.BuildObserved(id, tl, manifest.Completeness(obs.Completeness), nil)
		}
		res.surface = surfaceEvidence(id, obs.Surface)
	} else {
		res.observed = func() *manifest.Observed { return manifest.NotObserved(id) }
		res.surface = surfaceEvidence(id, nil)
	}
	if others.anon != nil && in.Refused == nil && in.Primary != nil {
		in.Anonymous = anonymousProbe(others.anon, in.Primary)
	}
	if d.spans != nil {
		era, raw := "", []byte(nil)
		if obs != nil {
			era, raw = obs.Era, obs.DiscoverRaw
		}
		in.Spans = d.spans.spans(era, raw)
	}
	in.Suppressions, in.Today = d.suppressions, today()
	in.Profile = d.profile
	if d.classifier != nil { // nil: the built-in table
		in.Classifier = d.classifier()
	}
	if d.profile != nil {
		rep.Profile = d.profile.Name
	}
	in.ServerNames = []string{targetText, id}
	in.Pinned, in.Now = e.driftIdentities(cfg, obs, d.declared.Identity)
	if oauthHeld(cfg) {
		// A token the OAuth session put on the requests counts as a
		// credential presented, under its header's name.
		in.AuthorizationPresented = true
		in.HeaderNames = slices.Compact(slices.Sorted(slices.Values(append(in.HeaderNames, "Authorization"))))
	}
	pr := probe.Evaluate(in)
	rep.AuthPosture, rep.Compared, rep.Findings, rep.Notes, rep.ExitCode = pr.AuthPosture, pr.Compared, pr.Findings, pr.Notes, pr.ExitCode
	rep.Suppressed, rep.Tools, rep.Surface = pr.Suppressed, pr.Tools, pr.Surface
	rep.Warnings = append(rep.Warnings, pr.Warnings...)
	switch {
	case rep.NotObserved != "":
		// Nothing was compared: inconclusive, whatever else was learnt.
		rep.Notes = append(rep.Notes, "the server could not be observed, so nothing was compared: absence of evidence is not \"no drift\"")
		rep.ExitCode = ExitInconclusive
	case in.Primary == nil:
		// Refused (401/403, with or without a challenge) or no shared
		// protocol revision: no tool list, nothing compared. The findings
		// say why; the run is not observed (exit 3), as for a server that
		// cannot be reached.
		rep.ExitCode = ExitInconclusive
	}
	return res, nil
}

func newDrift(e *env) *cobra.Command {
	var (
		live                               liveFlags
		format, out, observedOut, serverID string
		surfaceOut                         string
		color                              string
		skipAuth, skipSecond, cloakCheck   bool
		cloakAs                            string
		profile, rules                     string
		invoke, invokeArgs                 []string
		execute, iKnowProduction           bool
		seed                               int64
		otlp                               *otlpFlags
	)
	reports := &extraReports{}
	cmd := &cobra.Command{
		Use:   "drift MANIFEST (--url URL | --stdio -- CMD ARGS...) [--header NAME=VALUE]... [--max-list-pages N] [--skip-auth-probe] [--cloak-check] [--format json|text|sarif|markdown|html] [--observed-out FILE]",
		Short: "Compare a declared manifest with what a running server serves: drift, conformance, authentication posture",
		Long: `MANIFEST is a saved tools/list in any form observe reads, a snapshot, or a
declared baseline (its snapshot beside it is used).
The run is read-only: server/discover (or initialize) and tools/list; nothing is
invoked. A second connection checks that the tool set does not vary per
connection; with credentials (--header), one more tools/list goes out with them
stripped, to learn whether they were doing anything (--skip-auth-probe turns
that off). Header names are recorded, values never, and every value sent is
redacted from every output. --cloak-check lists once more as another
well-known client (--cloak-as NAME/VERSION chooses it) and reports a list that
varies by client identity.

--stdio runs the command typed after -- as a child process: that is running
code on this machine, with a minimal environment (--pass-env NAME adds a
variable). A command read from --mcp-config runs only with
--allow-config-commands.

Exit: 0 no finding (INFO only), 1 findings, 2 bad usage or input, 3 the server
could not be reached or did not answer usably (the report, in every format,
then says so).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			manifestPath := args[0]
			var argv []string
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				if dash != 1 {
					return usageErr("give exactly one MANIFEST before --")
				}
				argv = args[1:]
			} else if len(args) != 1 {
				return usageErr("give exactly one MANIFEST (a stdio command goes after --)")
			}
			if !contains(report.DriftFormats(), format) {
				return usageErr("--format must be one of %s", strings.Join(report.DriftFormats(), ", "))
			}
			if err := checkColor(color); err != nil {
				return err
			}
			// First: a bad --otlp-endpoint is a usage error, and the
			// exporter's header values are secrets before anything prints.
			tr, err := otlp.start(e, telemetry.ModeRun)
			if err != nil {
				return err
			}
			defer tr.finish()
			cfg, err := live.config(e, argv)
			if err != nil {
				return err
			}
			if cloakAs != "" {
				if _, _, err := parseClientInfo("--cloak-as", cloakAs); err != nil {
					return err
				}
				cloakCheck = true
			} else if cloakCheck {
				cloakAs = cloakIdentity(cfg.ClientName)
			}
			// The declared side is read while the server is listed
			// (declared.go), unless a call plan needs its schemas first.
			var (
				declared   schemadiff.Input
				pinnedCaps []byte
				dr         *declaredRead
			)
			// Interrupts end the run gracefully from once the declared side
			// is read, as a signal ends any process until then; and before
			// its parse starts beside the run: the first signal.Notify
			// hands its signals to a goroutine of its own and waits for it,
			// which with that parse on a CPU is a wait for a free one.
			var (
				ctx  context.Context
				stop context.CancelFunc
			)
			signals := func() { ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM) }
			if len(invoke) > 0 || execute {
				if declared, pinnedCaps, err = diff.Load(manifestPath, plainReader(e, DefaultMaxInput)); err != nil {
					return err
				}
				signals()
			} else {
				dr = startDeclared(e, manifestPath, DefaultMaxInput, signals)
				pinnedCaps = dr.predicted
			}
			defer stop()
			ownCaps := cfg.ClientCapabilities
			capsNote := ""
			applyCaps := func(pinnedCaps []byte) {
				cfg.ClientCapabilities, capsNote = ownCaps, ""
				switch {
				case pinnedCaps == nil:
				case live.clientCaps == "":
					// What was pinned was listed to a client declaring these:
					// observe as that client, or its tools look removed.
					cfg.ClientCapabilities = pinnedCaps
					if string(pinnedCaps) != "{}" {
						fmt.Fprintf(e.stderr, "mcpdrift: %s was pinned declaring client capabilities %s; this run declares them too (--client-capabilities overrides)\n", safetext.Quote(manifestPath), safetext.Escape(string(pinnedCaps)))
					}
				case !bytes.Equal(cfg.ClientCapabilities, pinnedCaps):
					capsNote = "the declared tools were pinned declaring client capabilities " + safetext.Escape(string(pinnedCaps)) + " and this run declared " + safetext.Escape(string(cfg.ClientCapabilities)) + ": tools a server lists only to clients with some capability can look added or removed"
				}
			}
			applyCaps(pinnedCaps)
			sup, err := live.suppress.load(e)
			if err != nil {
				return err
			}
			prof, err := schemadiff.DecisionProfileByName(profile)
			if err != nil {
				return usageErr("--profile: %s", safetext.Inert(err.Error()))
			}
			classifier, err := classifierBeside(rules)
			if err != nil {
				return err
			}
			plan, err := callPlan(declared.Tools, invoke, invokeArgs, execute, seed)
			if err != nil {
				return err
			}
			if execute {
				if c := observe.TargetClass(cfg); c != probe.ClassLocal && c != probe.ClassDev && c != probe.ClassStaging && c != probe.ClassStdio && !iKnowProduction {
					return usageErr("refusing to call tools on a target classified %s; tools/call has side effects: pass --i-know-this-is-production if you mean it", c)
				}
				for _, p := range plan {
					cfg.Calls = append(cfg.Calls, mcpclient.ToolCall{Name: p.Tool, Arguments: p.Arguments, InputSchema: p.InputSchema})
				}
			}
			ctx, cancel := context.WithTimeout(ctx, live.timeout)
			defer cancel()
			ctx = tr.begin(ctx, "drift")
			run := func() (*driftResult, error) {
				return liveDrift(ctx, e, &driftRun{cfg: cfg, manifestPath: manifestPath, declared: declared, declaredRead: dr, plan: plan, seed: seed, execute: execute,
					skipAuth: skipAuth, skipSecond: skipSecond, cloakAs: cloakAs, serverID: serverID, suppressions: sup, capsNote: capsNote, profile: prof, classifier: classifier,
					spans: newDriftSpans(tr)})
			}
			res, err := run()
			if err != nil {
				return err
			}
			if dr != nil {
				declared, pinnedCaps, _ = dr.wait() // liveDrift returned no error: read
				if dr.mispredicted() {
					// The snapshot's capabilities were not in its head: the
					// listing was made declaring others. List again,
					// declaring those read.
					dr = nil
					applyCaps(pinnedCaps)
					if res, err = run(); err != nil {
						return err
					}
				}
			}
			rep := res.rep
			if rep.NotObserved != "" {
				fmt.Fprintf(e.stderr, "mcpdrift: %s\n", rep.NotObserved)
			}
			// The spans are exported before the report is written (at most
			// 2 s): a report names only spans a collector has.
			tr.after = "; the report carries no trace ids"
			if !tr.finish() {
				dropIDs(rep)
			}
			var buf bytes.Buffer
			if format == "html" {
				var deltas []delta.Tool
				if deltas, err = driftDeltas(declared.Tools, res.served, rep, prof, classifier()); err != nil {
					return err
				}
				err = writeHTML(&buf, "mcpdrift drift", report.DriftSection(rep, deltas))
			} else {
				err = report.RenderDrift(&buf, rep, format, report.Options{Color: useColor(e, out, color), ToolVersion: version(), ArtifactURI: manifestPath})
			}
			if err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			if observedOut != "" {
				b, err := manifest.MarshalArtifact(res.observed())
				if err != nil {
					return err
				}
				if err := e.emitAs("the observed record", observedOut, b); err != nil {
					return err
				}
			}
			if err := emitEvidence(e, surfaceOut, res.surface); err != nil {
				return err
			}
			if err := e.emitAs("the report", out, buf.Bytes()); err != nil {
				return err
			}
			if err := reports.emit(e, func(w *bytes.Buffer, f string) error {
				return report.RenderDrift(w, rep, f, report.Options{ToolVersion: version(), ArtifactURI: manifestPath})
			}); err != nil {
				return err
			}
			e.code = rep.ExitCode
			return nil
		},
	}
	live.register(cmd, "url")
	deprecatedAlias(cmd, "base-url", "url")
	otlp = registerOTLP(cmd)
	f := cmd.Flags()
	f.StringVar(&format, "format", "text", "json|text|sarif|markdown|html")
	f.StringVarP(&out, "output", "o", "", "write the report to FILE (atomically) instead of stdout")
	f.StringVar(&observedOut, "observed-out", "", "also write the observed record (assay.mcp_manifest_observed.v0) built from the wire (not_observed when the server could not be observed)")
	f.StringVar(&surfaceOut, "surface-out", "", "also write the record of the instructions, prompts and resource templates observed ("+surface.EvidenceSchemaID+": states and digests, never a value), which extends --observed-out's")
	f.StringVar(&serverID, "server-id", "", "server id for --observed-out (default: the server's reported name, or the target)")
	f.StringVar(&color, "color", "auto", "auto|always|never")
	f.BoolVar(&skipAuth, "skip-auth-probe", false, "do not send the credential-stripped tools/list")
	f.BoolVar(&skipSecond, "skip-second-connection", false, "do not open the second connection (per-connection stability is then not checked)")
	f.BoolVar(&cloakCheck, "cloak-check", false, "list once more as another well-known client ("+strings.Join(knownClients, ", ")+") and report a tool set that varies by client identity")
	f.StringVar(&cloakAs, "cloak-as", "", "NAME/VERSION of the client --cloak-check lists as (implies --cloak-check)")
	f.StringArrayVar(&invoke, "invoke-tool", nil, "plan a tools/call of this declared tool (exact name, repeatable); without --execute the plan is reported and nothing is sent")
	f.StringArrayVar(&invokeArgs, "invoke-arguments", nil, "NAME=JSON: the arguments of --invoke-tool NAME's call, a JSON object, instead of arguments generated from its declared schema (repeatable)")
	f.BoolVar(&execute, "execute", false, "send the planned tools/call requests (they have side effects)")
	f.Int64Var(&seed, "seed", 1, "seed of the generated arguments (recorded in the report)")
	f.BoolVar(&iKnowProduction, "i-know-this-is-production", false, "allow --execute on a target that does not classify as local, dev or staging")
	f.StringVar(&profile, "profile", "review", "decision profile of each tool's decision: review|fail-closed (the same as diff and proxy)")
	f.StringVar(&rules, "rules", "", "YAML privilege rules")
	reports.register(cmd, []string{"json", "text", "sarif", "markdown"})
	return cmd
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

func systemPoolWith(pem []byte) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no PEM certificate found")
	}
	return pool, nil
}

// shortOnly is label when ok is false (the value was too short to
// redact), else nothing.
func shortOnly(ok bool, label string) []string {
	if ok {
		return nil
	}
	return []string{label}
}
