package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/telemetry"
)

// proxyOptions are the gateway's flags: the upstream, the baseline and
// how it is enforced, the downstream, and what the gateway records.
type proxyOptions struct {
	live                                         liveFlags
	listen, tokenFile, declared, mode, profile   string
	observedOut, decisionLog, metricsListen, sid string
	strict, noStrict, serveStale, quiet          bool
	relist, listTimeout                          time.Duration
	rules, lockPath, allowedSigners              string
	verifyRefs, allowPrivateRefs, upstreamOAuth  bool
	otlp                                         *otlpFlags
	http                                         proxy.HTTPOptions
	state                                        proxyState
}

func (o *proxyOptions) AddFlags(cmd *cobra.Command) {
	o.live.AddFlagsAs(cmd, "upstream-url", "upstream-stdio")
	o.otlp = registerOTLP(cmd)
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "", "serve the downstream over Streamable HTTP at ADDR/mcp instead of stdio (port 0: a free port)")
	f.BoolVar(&o.upstreamOAuth, "upstream-oauth", false, "hold the gateway's own OAuth token for the upstream (the client_credentials grant of --oauth-client-id and its secret) and strip the downstream's Authorization")
	f.StringVar(&o.tokenFile, "listen-token-file", "", "a file holding the bearer token every downstream HTTP request must carry (required off loopback)")
	f.StringVar(&o.declared, "declared", "", "the approved baseline: a declared baseline with its snapshot beside it, or a snapshot")
	f.StringVar(&o.mode, "mode", "", "observe|audit|enforce (default: enforce with --declared, else observe)")
	f.StringVar(&o.profile, "profile", "review", "decision profile: review|fail-closed")
	f.BoolVar(&o.strict, "strict-arguments", false, "refuse call arguments the pinned inputSchema does not declare (default under fail-closed)")
	f.BoolVar(&o.noStrict, "no-strict-arguments", false, "accept undeclared properties the pinned schema allows, even under fail-closed")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no line on stderr when what is served changes (what is served and hidden, by reason; why the server is withheld)")
	f.BoolVar(&o.serveStale, "serve-stale", false, "when the upstream cannot be listed completely, keep serving the last gated list (default: serve nothing)")
	f.DurationVar(&o.relist, "relist-interval", 0, "re-observe the upstream when the gated list is older than this (0: on list_changed and ttlMs only)")
	f.DurationVar(&o.listTimeout, "list-timeout", 30*time.Second, "bound on the gateway's whole listing of the upstream")
	f.StringVar(&o.observedOut, "observed-out", "", "keep the observed record (assay.mcp_manifest_observed.v0) of the latest fully observed list in FILE (rewritten atomically)")
	f.StringVar(&o.decisionLog, "decision-log", "", "append one NDJSON record per decision to FILE (mcpdrift.proxy_decision.v1; never arguments, results or header values)")
	f.StringVar(&o.metricsListen, "metrics-listen", "", "serve Prometheus metrics at ADDR/metrics")
	f.StringVar(&o.sid, "server-id", "", "server id in the log and records (default: the baseline's, else the upstream)")
	f.StringVar(&o.rules, "rules", "", "YAML privilege rules")
	f.StringVar(&o.lockPath, "lock", "", "front server --server NAME of this lock: its upstream, approved tools and profile (reloaded when the lock changes)")
	registerAllowedSigners(cmd, &o.allowedSigners)
	registerVerifyRefs(cmd, &o.verifyRefs, &o.allowPrivateRefs)
}

func newProxy(e *env) *cobra.Command {
	o := &proxyOptions{}
	cmd := &cobra.Command{
		Use:   "proxy (--upstream-url URL | --upstream-stdio -- CMD ARGS... | --mcp-config FILE --server NAME) [--listen ADDR] [--declared FILE] [--mode observe|audit|enforce] [--profile review|fail-closed] [--observed-out FILE] [--decision-log FILE] [--metrics-listen ADDR]",
		Short: "Run the gateway: observe tools/list on the wire and serve only the pinned, approved tools (fail-closed)",
		Long: `Sits between an agent (downstream) and an MCP server (upstream).

Downstream: stdio by default (a client configuration whose command is
"mcpdrift proxy --declared d.json --upstream-stdio -- npx some-server"), or
Streamable HTTP at /mcp with --listen ADDR (port 0 picks a free port; the
address is printed on stderr). Binding to a non-loopback address needs
--listen-token-file: every downstream request must then carry that bearer
token, which is never forwarded.

Modes: observe (the default without --declared) forwards only the listing
methods and records the latest fully observed list in --observed-out; audit
forwards everything and logs what enforce would have hidden or refused;
enforce (the default with --declared) lists the upstream itself, serves only
approved, unchanged tools byte for byte, and refuses every other tools/call
with -32602 before it reaches the upstream, as it refuses arguments the
pinned inputSchema does not accept (--strict-arguments, the default under
fail-closed, also refuses undeclared properties).

SIGHUP (or a change of the --declared file) reloads the baseline without
dropping sessions. A baseline that fails the validity check gate makes (a
tool named twice, a manifest_digest that does not recompute, a snapshot
that is not the baseline's), at start or on reload, withholds the server
until a valid one is loaded: fail-closed, said on stderr and in the
decision log.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			argv, err := proxyArgv(cmd, args)
			if err != nil {
				return err
			}
			// Spans go out in batches while the gateway runs, each export
			// bounded to 2 s; the last ones when it stops (after its
			// sessions, deferred first).
			tr, err := o.otlp.start(e, telemetry.ModeService)
			if err != nil {
				return err
			}
			defer tr.finish()
			opt, closeLog, err := o.options(e, cmd, argv, tr)
			if err != nil {
				return err
			}
			defer closeLog()
			ctx, stop := signal.NotifyContext(e.context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opt.Reloads = o.reloads(ctx)
			return proxy.Run(ctx, opt)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// proxyArgv is the upstream command after -- (the proxy takes no
// positional arguments).
func proxyArgv(cmd *cobra.Command, args []string) ([]string, error) {
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		if dash != 0 {
			return nil, usageErr("proxy takes no positional arguments (the upstream command goes after --)")
		}
		return args, nil
	}
	if len(args) > 0 {
		return nil, usageErr("proxy takes no positional arguments (the upstream command goes after --)")
	}
	return nil, nil
}

// proxyState is what the options of a gateway run read at start that its
// reloads read again.
type proxyState struct {
	locked *lock.Server // --lock: the server fronted
	stamp  string       // the watched files as they were when read
	verify func(*lock.Server) map[string]string
}

// options turns the flags into the gateway's run: the upstream (from the
// lock, with --lock), the baseline, the mode, the downstream's token and
// what is recorded. closeLog closes the decision log.
func (o *proxyOptions) options(e *env, cmd *cobra.Command, argv []string, tr *tracing) (opt proxy.Options, closeLog func(), err error) {
	closeLog = func() {}
	st := &o.state
	if argv, err = o.fromLock(e, cmd, argv); err != nil {
		return opt, closeLog, err
	}
	pc, err := o.gatewayConfig(e)
	if err != nil {
		return opt, closeLog, err
	}
	cfg, err := o.live.config(e, argv)
	if err != nil {
		return opt, closeLog, err
	}
	if pc.Classifier, err = loadClassifier(o.rules); err != nil {
		return opt, closeLog, err
	}
	_, target := e.targetOf(cfg)
	serverID := o.sid
	if o.declared != "" {
		st.stamp = fileStamp(o.declared)
		if pc.Baseline, serverID, err = loadBaseline(e, o.declared, o.sid, &o.live.suppress); err != nil {
			return opt, closeLog, err
		}
	}
	// With --verify-refs the pinned documents are fetched (bounded) at
	// start and at every reload; nothing is fetched otherwise.
	st.verify = func(s *lock.Server) map[string]string {
		if !o.verifyRefs {
			return nil
		}
		return verifiedRefs(e.context(), e, []*lock.Server{s}, o.allowPrivateRefs, nil)
	}
	if st.locked != nil {
		pc.Baseline = st.locked.Baseline(st.verify(st.locked))
	}
	if serverID == "" {
		serverID = target
	}
	if pc.Baseline != nil {
		withholdWarning(e, pc.Mode, "at start", pc.Baseline)
	}
	if o.decisionLog != "" {
		f, err := openAppend(o.decisionLog)
		if err != nil {
			return opt, closeLog, err
		}
		closeLog = func() { f.Close() }
		pc.Log = proxy.NewDecisionLog(f)
	}
	pc.Upstream = proxy.Upstream{URL: cfg.BaseURL, Command: cfg.Command, PassEnv: cfg.PassEnv, Env: cfg.Env, Headers: cfg.Headers,
		ForwardAuthorization: o.http.Token == "", ClientName: cfg.ClientName, ClientVersion: cfg.ClientVersion}
	pc.ServerID, pc.Target, pc.TargetResolved = serverID, target, e.resolvedEndpoint(cfg)
	pc.Metrics, pc.Secrets, pc.Tracer = proxy.NewMetrics(), e.secrets, tr.tracer()
	if err := proxyOAuth(e, &o.live, o.upstreamOAuth, &pc, &o.http); err != nil {
		return opt, closeLog, err
	}
	if err := o.recordObserved(e, &pc); err != nil {
		return opt, closeLog, err
	}
	opt = proxy.Options{Config: pc, Listen: o.listen, HTTP: o.http, Stdin: e.stdin, Stdout: e.stdout, MetricsListen: o.metricsListen,
		Reload: o.reload(e), OnReload: func(why string, b *decide.Baseline) {
			if !withholdWarning(e, pc.Mode, why, b) {
				fmt.Fprintf(e.stderr, "mcpdrift proxy: %s: baseline reloaded\n", why)
			}
		}, OnListening: func(what string, addr net.Addr) {
			fmt.Fprintf(e.stderr, "mcpdrift proxy: %s on http://%s/%s\n", map[string]string{"mcp": "listening", "metrics": "metrics"}[what], addr, what)
		}}
	return opt, closeLog, nil
}

// fromLock, with --lock FILE --server NAME, takes the upstream, the
// baseline and the profile from the lock (proxylock.go) and returns the
// upstream's command (argv otherwise).
func (o *proxyOptions) fromLock(e *env, cmd *cobra.Command, argv []string) ([]string, error) {
	if o.lockPath == "" {
		if o.allowedSigners != "" || o.verifyRefs {
			return nil, usageErr("--allowed-signers and --verify-refs check a lock: they go with --lock FILE")
		}
		return argv, nil
	}
	if o.declared != "" || o.live.baseURL != "" || o.live.stdio || o.live.mcpConfig != "" {
		return nil, usageErr("--lock gives the upstream and the baseline: give no --declared, --upstream-url, --upstream-stdio or --mcp-config with it")
	}
	if o.live.configServer == "" {
		return nil, usageErr("--lock needs --server NAME (the server of the lock to front)")
	}
	o.state.stamp = fileStamp(o.lockPath, o.lockPath+".sig") // before it is read: a change meanwhile is seen
	s, _, err := loadLockBaseline(e, o.lockPath, o.live.configServer, o.allowedSigners, &o.live.suppress)
	if err != nil {
		return nil, err
	}
	o.state.locked = s
	if !cmd.Flags().Changed("profile") {
		o.profile = s.Profile
	}
	if o.sid == "" {
		o.sid = s.Name
	}
	l2, argv2, err := liveFor(e, &o.live, s.Source)
	if err != nil {
		return nil, err
	}
	l2.configServer = ""
	o.live = *l2
	return argv2, nil
}

// gatewayConfig is the gateway's decision settings (mode, profile,
// arguments, relisting) and the downstream's token.
func (o *proxyOptions) gatewayConfig(e *env) (proxy.Config, error) {
	var pc proxy.Config
	prof, err := schemadiff.DecisionProfileByName(o.profile)
	if err != nil {
		return pc, usageErr("--profile: %s", safetext.Inert(err.Error()))
	}
	hasBaseline := o.declared != "" || o.state.locked != nil
	m := proxy.Mode(o.mode)
	switch {
	case o.mode == "" && hasBaseline:
		m = proxy.Enforce
	case o.mode == "":
		m = proxy.Observe
	case m != proxy.Observe && m != proxy.Audit && m != proxy.Enforce:
		return pc, usageErr("--mode must be observe, audit or enforce")
	}
	if m != proxy.Observe && !hasBaseline {
		return pc, usageErr("--mode %s needs --declared FILE (the approved baseline)", m)
	}
	if o.strict && o.noStrict {
		return pc, usageErr("--strict-arguments and --no-strict-arguments exclude each other")
	}
	if o.tokenFile != "" {
		if o.listen == "" {
			return pc, usageErr("--listen-token-file goes with --listen")
		}
		b, err := readInput(e, o.tokenFile, 4096)
		if err != nil {
			return pc, err
		}
		token := strings.TrimSpace(string(b))
		if len(token) < 16 {
			return pc, usageErr("--listen-token-file: the token must be at least 16 characters")
		}
		e.secrets.Add("the gateway's listen token", token)
		o.http.Token = token
	}
	if o.listen != "" {
		if err := checkListen(o.listen, o.http.Token != ""); err != nil {
			return pc, err
		}
	}
	pc.Mode, pc.Profile, pc.ServeStale = m, prof, o.serveStale
	pc.StrictArguments = o.strict || (prof == schemadiff.FailClosedProfile && !o.noStrict)
	pc.RelistInterval, pc.ListTimeout = o.relist, o.listTimeout
	if !o.quiet {
		pc.Status = e.stderr
	}
	return pc, nil
}

// recordObserved keeps the observed record of the latest fully observed
// list in --observed-out, rewritten atomically.
func (o *proxyOptions) recordObserved(e *env, pc *proxy.Config) error {
	if o.observedOut == "" {
		return nil
	}
	if _, _, err := classifyTarget(o.observedOut); err != nil {
		return err
	}
	var mu sync.Mutex
	pc.OnObserved = func(obs *manifest.Observed) {
		b, err := manifest.MarshalArtifact(obs)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if err := e.writeNow(o.observedOut, b); err != nil {
			fmt.Fprintf(e.stderr, "mcpdrift proxy: %s\n", err.Error())
		}
	}
	return nil
}

// reload reads the baseline again: the --declared file, or the server's
// entry of the lock (nil: neither, nothing to reload).
func (o *proxyOptions) reload(e *env) func() (*decide.Baseline, error) {
	switch {
	case o.declared != "":
		return func() (*decide.Baseline, error) {
			b, _, err := loadBaseline(e, o.declared, o.sid, &o.live.suppress)
			return b, err
		}
	case o.state.locked != nil:
		name := o.state.locked.Name
		return func() (*decide.Baseline, error) {
			s, _, err := loadLockBaseline(e, o.lockPath, name, o.allowedSigners, &o.live.suppress)
			if err != nil {
				return nil, err
			}
			return s.Baseline(o.state.verify(s)), nil
		}
	}
	return nil
}

// reloads gives a reason each time the baseline is to be read again: on
// SIGHUP, and when a watched file (the baseline, or a lock and its
// signature) changes; nil when there is nothing to reload.
func (o *proxyOptions) reloads(ctx context.Context) <-chan string {
	var paths []string
	switch {
	case o.declared != "":
		paths = []string{o.declared}
	case o.state.locked != nil:
		paths = []string{o.lockPath, o.lockPath + ".sig"}
	default:
		return nil
	}
	ch := make(chan string)
	go watchFiles(ctx, paths, o.state.stamp, ch)
	return ch
}

// checkListen refuses a non-loopback bind without a token: a gateway is
// never an open relay.
func checkListen(addr string, haveToken bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErr("--listen %s is not HOST:PORT", safetext.Quote(addr))
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || ip != nil && ip.IsLoopback()
	if !loopback && !haveToken {
		return usageErr("--listen %s is not a loopback address: give --listen-token-file so every downstream request must carry a token (a gateway is never an open relay)", safetext.Quote(addr))
	}
	return nil
}

// loadBaseline reads the approved baseline: a declared baseline through
// its snapshot, or a snapshot (the pinned tool definitions and identity).
// A file that cannot be read as one is an error; a baseline that reads
// but fails the validity check gate makes (manifest.CheckBaseline: the
// declared entries against their manifest_digest and the snapshot beside
// them, no name twice) is returned invalid, and the gateway withholds the
// server with the reason. Colliding names the suppression file
// acknowledges are served (acknowledgeNames).
func loadBaseline(e *env, path, sid string, sf *suppressionFlags) (*decide.Baseline, string, error) {
	read := plainReader(e, DefaultMaxInput)
	tools, err := diff.ReadTools(read, path)
	if err != nil {
		return nil, "", err
	}
	d := tools.Declared
	if d != nil {
		if tools, _, err = diff.SnapshotBeside(path, read); err != nil {
			return nil, "", err
		}
	}
	snap := tools.Snapshot
	if snap == nil {
		return nil, "", usageErr("%s holds no pinned identity: give a declared baseline with its snapshot (pin --url or --stdio writes both), or a snapshot", safetext.Quote(path))
	}
	id := sid
	switch {
	case id == "" && d != nil:
		id = d.Server.ID
	case id == "":
		id = snap.ServerID
	}
	var b *decide.Baseline
	if d == nil {
		b = decide.NewBaseline(id, snap.Identity, snap.Tools)
	} else {
		b = decide.NewDeclaredBaseline(id, snap.Identity, d, &manifest.Definitions{Tools: snap.Tools, From: "the snapshot", ServerID: snap.ServerID})
	}
	if b.Surface, err = diff.PinnedSurface(path, snap.Surface); err != nil {
		return nil, "", err
	}
	return b, id, e.acknowledgeNames(b, []string{id, snap.Identity.Endpoint}, sf)
}

// withholdWarning says loudly, on stderr, that the baseline in force
// (when: "at start", or what made the reload) is not valid, and what the
// gateway does about it in mode m. It reports whether it said so.
func withholdWarning(e *env, m proxy.Mode, when string, b *decide.Baseline) bool {
	why := b.Invalid()
	if why == "" {
		return false
	}
	does := "the server is WITHHELD: no tool is served, every call is refused (call_server_withheld) and /healthz answers 503"
	switch m {
	case proxy.Audit:
		does = "audit forwards as ever, and logs every call as withheld, which is what enforce would do"
	case proxy.Observe:
		does = "observe mode does not use it"
	}
	fmt.Fprintf(e.stderr, "mcpdrift proxy: %s: the baseline is NOT VALID: %s; %s, until a valid baseline is loaded (fix it, then SIGHUP or save the file)\n", when, why, does)
	return true
}

// watchFiles says why to reload (on ch) on SIGHUP and when one of the
// files changes (their fileStamp differs from last), until ctx ends.
//
// A reload is fail-closed (proxy.Options.Reload): a new baseline that
// cannot be read, or reads but is not valid, is put in force as an
// invalid one, so the server is withheld until a valid one is loaded.
func watchFiles(ctx context.Context, paths []string, last string, ch chan<- string) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		why := ""
		select {
		case <-ctx.Done():
			return
		case <-hup:
			last, why = fileStamp(paths...), "SIGHUP"
		case <-tick.C:
			t := fileStamp(paths...)
			if t == last {
				continue
			}
			last, why = t, "the baseline file changed"
		}
		select {
		case ch <- why:
		case <-ctx.Done():
			return
		}
	}
}

// fileStamp is what the watch compares: each file's modification time
// and size. The stamp a watch starts from is taken before the files are
// first read (last), so that a change made while they were read, or
// before the watch's goroutine ran, is reloaded.
func fileStamp(paths ...string) string {
	var b strings.Builder
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%d/%d;", st.ModTime().UnixNano(), st.Size())
		} else {
			b.WriteString("-;")
		}
	}
	return b.String()
}

// openAppend opens the decision log for appending, by the output rules
// (no directory, no symlink to a file).
func openAppend(path string) (*os.File, error) {
	kind, _, err := classifyTarget(path)
	if err != nil {
		return nil, err
	}
	if kind == toStdout {
		return os.Stdout, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, cannotWrite(path, safetext.Inert(errText(err)))
	}
	return f, nil
}
