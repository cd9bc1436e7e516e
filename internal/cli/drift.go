package cli

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/drift"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mcpwire"
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

func (l *liveFlags) AddFlags(cmd *cobra.Command, urlFlag string) {
	l.AddFlagsAs(cmd, urlFlag, "stdio")
}

// AddFlagsAs registers the flags with the URL and stdio flags named as
// given (the proxy's are --upstream-url and --upstream-stdio).
func (l *liveFlags) AddFlagsAs(cmd *cobra.Command, urlFlag, stdioFlag string) {
	f := cmd.Flags()
	f.StringVar(&l.baseURL, urlFlag, "", "Streamable HTTP endpoint of the server")
	f.BoolVar(&l.stdio, stdioFlag, false, "run the server given after -- as a child process and speak stdio (it runs with a minimal environment; see README)")
	f.StringArrayVar(&l.headers, "header", nil, "NAME=VALUE sent on every HTTP request (repeatable); names are recorded, values never, and values are redacted from every output")
	f.StringArrayVar(&l.passEnv, "pass-env", nil, "environment variable the stdio child inherits (repeatable); its value is redacted from every output")
	l.flags = f
	l.suppress.AddFlags(f)
	l.oauth.AddFlags(f)
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

// driftOptions are drift's flags: the server, the declared side, what to
// do beyond listing, and the report.
type driftOptions struct {
	live                             liveFlags
	report                           reportFlags
	reports                          extraReports
	observedOut, surfaceOut          string
	serverID                         string
	skipAuth, skipSecond, cloakCheck bool
	cloakAs                          string
	profile, rules                   string
	invoke, invokeArgs               []string
	execute, iKnowProduction         bool
	seed                             int64
	otlp                             *otlpFlags
}

func (o *driftOptions) AddFlags(cmd *cobra.Command) {
	o.live.AddFlags(cmd, "url")
	deprecatedAlias(cmd, "base-url", "url")
	o.otlp = registerOTLP(cmd)
	o.report.AddFlags(cmd, report.DriftFormats())
	f := cmd.Flags()
	f.StringVar(&o.observedOut, "observed-out", "", "also write the observed record (assay.mcp_manifest_observed.v0) built from the wire (not_observed when the server could not be observed)")
	f.StringVar(&o.surfaceOut, "surface-out", "", "also write the record of the instructions, prompts and resource templates observed ("+surface.EvidenceSchemaID+": states and digests, never a value), which extends --observed-out's")
	f.StringVar(&o.serverID, "server-id", "", "server id for --observed-out (default: the server's reported name, or the target)")
	f.BoolVar(&o.skipAuth, "skip-auth-probe", false, "do not send the credential-stripped tools/list")
	f.BoolVar(&o.skipSecond, "skip-second-connection", false, "do not open the second connection (per-connection stability is then not checked)")
	f.BoolVar(&o.cloakCheck, "cloak-check", false, "list once more as another well-known client ("+strings.Join(drift.KnownClients(), ", ")+") and report a tool set that varies by client identity")
	f.StringVar(&o.cloakAs, "cloak-as", "", "NAME/VERSION of the client --cloak-check lists as (implies --cloak-check)")
	f.StringArrayVar(&o.invoke, "invoke-tool", nil, "plan a tools/call of this declared tool (exact name, repeatable); without --execute the plan is reported and nothing is sent")
	f.StringArrayVar(&o.invokeArgs, "invoke-arguments", nil, "NAME=JSON: the arguments of --invoke-tool NAME's call, a JSON object, instead of arguments generated from its declared schema (repeatable)")
	f.BoolVar(&o.execute, "execute", false, "send the planned tools/call requests (they have side effects)")
	f.Int64Var(&o.seed, "seed", 1, "seed of the generated arguments (recorded in the report)")
	f.BoolVar(&o.iKnowProduction, "i-know-this-is-production", false, "allow --execute on a target that does not classify as local, dev or staging")
	f.StringVar(&o.profile, "profile", "review", "decision profile of each tool's decision: review|fail-closed (the same as diff and proxy)")
	f.StringVar(&o.rules, "rules", "", "YAML privilege rules")
	o.reports.AddFlags(cmd, []string{"json", "text", "sarif", "markdown"})
}

func newDrift(e *env) *cobra.Command {
	o := &driftOptions{}
	cmd := &cobra.Command{
		Use:   "drift MANIFEST (--url URL | --stdio -- CMD ARGS...) [--header NAME=VALUE]... [--max-list-pages N] [--skip-auth-probe] [--cloak-check] [--format text|json|sarif|markdown|html] [--observed-out FILE]",
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
			manifestPath, argv, err := driftArgs(cmd, args)
			if err != nil {
				return err
			}
			if err := o.report.check(); err != nil {
				return err
			}
			// First: a bad --otlp-endpoint is a usage error, and the
			// exporter's header values are secrets before anything prints.
			tr, err := o.otlp.start(e, telemetry.ModeRun)
			if err != nil {
				return err
			}
			defer tr.finish()
			opt, ctx, stop, err := o.options(e, manifestPath, argv, tr)
			if err != nil {
				return err
			}
			defer stop()
			res, err := drift.Run(tr.begin(ctx, "drift"), opt)
			if err != nil {
				return err
			}
			if c := res.PinnedCapabilities; c != nil && string(c) != "{}" {
				fmt.Fprintf(e.stderr, "mcpdrift: %s was pinned declaring client capabilities %s; this run declares them too (--client-capabilities overrides)\n", safetext.Quote(manifestPath), safetext.Escape(string(c)))
			}
			return o.render(e, res, opt, manifestPath, tr)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// driftArgs are MANIFEST and the stdio command after --.
func driftArgs(cmd *cobra.Command, args []string) (string, []string, error) {
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		if dash != 1 {
			return "", nil, usageErr("give exactly one MANIFEST before --")
		}
		return args[0], args[1:], nil
	}
	if len(args) != 1 {
		return "", nil, usageErr("give exactly one MANIFEST (a stdio command goes after --)")
	}
	return args[0], nil, nil
}

// options turn the flags into drift.Options: the server, the declared side
// (read beside the listing: drift.Read), the cloak check, the call plan's
// tools and arguments, and how each tool is decided. ctx ends on SIGINT
// and SIGTERM from once the declared side's files are read (as a signal
// ends any process until then); stop releases it.
func (o *driftOptions) options(e *env, manifestPath string, argv []string, tr *tracing) (opt drift.Options, ctx context.Context, stop context.CancelFunc, err error) {
	ctx, stop = e.context(), func() {}
	cfg, err := o.live.config(e, argv)
	if err != nil {
		return opt, ctx, stop, err
	}
	cfg.Tracer = tr.tracer()
	opt = drift.Options{Server: cfg, OwnCapabilities: o.live.clientCaps != "", ServerID: o.serverID, Invoke: o.invoke, Seed: o.seed,
		Execute: o.execute, AllowProduction: o.iKnowProduction, SkipAuthProbe: o.skipAuth, SkipSecond: o.skipSecond,
		Secrets: e.secrets, Tracer: tr.tracer(), Timeout: o.live.timeout, Today: today()}
	switch {
	case o.cloakAs != "":
		if _, _, err := parseClientInfo("--cloak-as", o.cloakAs); err != nil {
			return opt, ctx, stop, err
		}
		opt.CloakAs = o.cloakAs
	case o.cloakCheck:
		opt.CloakAs = drift.CloakClient(cfg.ClientName)
	}
	if opt.Arguments, err = givenArguments(o.invokeArgs, o.invoke); err != nil {
		return opt, ctx, stop, err
	}
	if o.execute && len(o.invoke) == 0 {
		return opt, ctx, stop, usageErr("--execute needs --invoke-tool NAME: there is no wildcard")
	}
	// Interrupts end the run gracefully from once the declared side is
	// read; the signal handler starts before its parse does beside the
	// run (the first signal.Notify waits for a goroutine of its own,
	// which with that parse on a CPU is a wait for a free one).
	opt.Reading = drift.Read(manifestPath, plainReader(e, DefaultMaxInput), diff.OpenFile(DefaultMaxInput), func() {
		ctx, stop = signal.NotifyContext(e.context(), os.Interrupt, syscall.SIGTERM)
	})
	if opt.Suppressions, err = o.live.suppress.load(e); err != nil {
		return opt, ctx, stop, err
	}
	if opt.Profile, err = schemadiff.DecisionProfileByName(o.profile); err != nil {
		return opt, ctx, stop, usageErr("--profile: %s", safetext.Inert(err.Error()))
	}
	if o.rules != "" {
		opt.Classifier, err = loadClassifier(o.rules)
	}
	return opt, ctx, stop, err
}

// render writes the report (and the observed record, the surface's record
// and the extra reports) once the spans are exported: a report names only
// spans a collector has.
func (o *driftOptions) render(e *env, res *drift.Result, opt drift.Options, manifestPath string, tr *tracing) error {
	rep := res.Report
	if rep.NotObserved != "" {
		fmt.Fprintf(e.stderr, "mcpdrift: %s\n", rep.NotObserved)
	}
	tr.after = "; the report carries no trace ids"
	if !tr.finish() {
		dropIDs(rep)
	}
	var buf bytes.Buffer
	var err error
	if o.report.format == "html" {
		var deltas []delta.Tool
		if deltas, err = driftDeltas(res.Declared.Tools, res.Served, rep, opt.Profile, res.Classifier); err != nil {
			return err
		}
		err = writeHTML(&buf, "mcpdrift drift", report.DriftSection(rep, deltas))
	} else {
		err = report.RenderDrift(&buf, rep, o.report.format, o.report.options(e, manifestPath))
	}
	if err != nil {
		return usageErr("%s", safetext.Inert(err.Error()))
	}
	if o.observedOut != "" {
		b, err := manifest.MarshalArtifact(res.Observed())
		if err != nil {
			return err
		}
		if err := e.emitAs("the observed record", o.observedOut, b); err != nil {
			return err
		}
	}
	if err := emitEvidence(e, o.surfaceOut, res.Surface); err != nil {
		return err
	}
	if err := e.emitAs("the report", o.report.out, buf.Bytes()); err != nil {
		return err
	}
	if err := o.reports.emit(e, func(w *bytes.Buffer, f string) error {
		return report.RenderDrift(w, rep, f, report.Options{ToolVersion: version(), ArtifactURI: manifestPath})
	}); err != nil {
		return err
	}
	e.code = rep.ExitCode
	return nil
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
