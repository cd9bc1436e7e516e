package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/telemetry"
)

func newProxy(e *env) *cobra.Command {
	var (
		live                                         liveFlags
		listen, tokenFile, declared, mode, profile   string
		observedOut, decisionLog, metricsListen, sid string
		strict, noStrict, serveStale, quiet          bool
		relist, listTimeout                          time.Duration
		rules                                        string
		lockPath, allowedSigners                     string
		verifyRefs, allowPrivateRefs                 bool
		otlp                                         *otlpFlags
		stamp                                        string // the watched files as they were when read
		upstreamOAuth                                bool
		hopts                                        proxy.HTTPOptions
	)
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
			var argv []string
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				if dash != 0 {
					return usageErr("proxy takes no positional arguments (the upstream command goes after --)")
				}
				argv = args
			} else if len(args) > 0 {
				return usageErr("proxy takes no positional arguments (the upstream command goes after --)")
			}
			// --lock FILE --server NAME: the upstream, the baseline and the
			// profile come from the lock (proxylock.go).
			var locked *lock.Server
			if lockPath != "" {
				if declared != "" || live.baseURL != "" || live.stdio || live.mcpConfig != "" {
					return usageErr("--lock gives the upstream and the baseline: give no --declared, --upstream-url, --upstream-stdio or --mcp-config with it")
				}
				if live.configServer == "" {
					return usageErr("--lock needs --server NAME (the server of the lock to front)")
				}
				stamp = fileStamp(lockPath, lockPath+".sig") // before it is read: a change meanwhile is seen
				s, _, err := loadLockBaseline(e, lockPath, live.configServer, allowedSigners, &live.suppress)
				if err != nil {
					return err
				}
				locked = s
				if !cmd.Flags().Changed("profile") {
					profile = s.Profile
				}
				if sid == "" {
					sid = s.Name
				}
				l2, argv2, err := liveFor(e, &live, s.Source)
				if err != nil {
					return err
				}
				l2.configServer = ""
				live, argv = *l2, argv2
			} else if allowedSigners != "" || verifyRefs {
				return usageErr("--allowed-signers and --verify-refs check a lock: they go with --lock FILE")
			}
			prof, err := schemadiff.DecisionProfileByName(profile)
			if err != nil {
				return usageErr("--profile: %s", safetext.Inert(err.Error()))
			}
			m := proxy.Mode(mode)
			switch {
			case mode == "" && (declared != "" || locked != nil):
				m = proxy.Enforce
			case mode == "":
				m = proxy.Observe
			case m != proxy.Observe && m != proxy.Audit && m != proxy.Enforce:
				return usageErr("--mode must be observe, audit or enforce")
			}
			if m != proxy.Observe && declared == "" && locked == nil {
				return usageErr("--mode %s needs --declared FILE (the approved baseline)", m)
			}
			if strict && noStrict {
				return usageErr("--strict-arguments and --no-strict-arguments exclude each other")
			}
			strictArgs := strict || (prof == schemadiff.FailClosedProfile && !noStrict)
			// Spans go out in batches while the gateway runs, each export
			// bounded to 2 s; the last ones when it stops (after its
			// sessions, deferred first).
			tr, err := otlp.start(e, telemetry.ModeService)
			if err != nil {
				return err
			}
			defer tr.finish()
			var token string
			if tokenFile != "" {
				if listen == "" {
					return usageErr("--listen-token-file goes with --listen")
				}
				b, err := readInput(e, tokenFile, 4096)
				if err != nil {
					return err
				}
				token = strings.TrimSpace(string(b))
				if len(token) < 16 {
					return usageErr("--listen-token-file: the token must be at least 16 characters")
				}
				e.secrets.Add("the gateway's listen token", token)
			}
			if listen != "" {
				if err := checkListen(listen, token != ""); err != nil {
					return err
				}
			}
			cfg, err := live.config(e, argv)
			if err != nil {
				return err
			}
			c, err := loadClassifier(rules)
			if err != nil {
				return err
			}
			_, target := e.targetOf(cfg)
			var baseline *decide.Baseline
			serverID := sid
			if declared != "" {
				stamp = fileStamp(declared)
				if baseline, serverID, err = loadBaseline(e, declared, sid, &live.suppress); err != nil {
					return err
				}
			}
			// With --verify-refs the pinned documents are fetched (bounded)
			// at start and at every reload; nothing is fetched otherwise.
			verify := func(s *lock.Server) map[string]string {
				if !verifyRefs {
					return nil
				}
				return verifiedRefs(e.context(), e, []*lock.Server{s}, allowPrivateRefs, nil)
			}
			if locked != nil {
				baseline = locked.Baseline(verify(locked))
			}
			if serverID == "" {
				serverID = target
			}
			if baseline != nil {
				withholdWarning(e, m, "at start", baseline)
			}
			var logw *proxy.DecisionLog
			if decisionLog != "" {
				f, err := openAppend(decisionLog)
				if err != nil {
					return err
				}
				defer f.Close()
				logw = proxy.NewDecisionLog(f)
			}
			if observedOut != "" {
				if _, _, err := classifyTarget(observedOut); err != nil {
					return err
				}
			}
			var omu sync.Mutex
			metrics := proxy.NewMetrics()
			pc := proxy.Config{
				Upstream: proxy.Upstream{URL: cfg.BaseURL, Command: cfg.Command, PassEnv: cfg.PassEnv, Env: cfg.Env, Headers: cfg.Headers,
					ForwardAuthorization: token == "", ClientName: cfg.ClientName, ClientVersion: cfg.ClientVersion},
				Mode: m, Baseline: baseline, Profile: prof, StrictArguments: strictArgs, ServeStale: serveStale,
				RelistInterval: relist, ListTimeout: listTimeout, ServerID: serverID, Target: target, TargetResolved: e.resolvedEndpoint(cfg), Classifier: c,
				Log: logw, Metrics: metrics, Secrets: e.secrets, Tracer: tr.tracer(),
			}
			if err := proxyOAuth(e, &live, upstreamOAuth, &pc, &hopts); err != nil {
				return err
			}
			if !quiet {
				pc.Status = e.stderr
			}
			if observedOut != "" {
				pc.OnObserved = func(o *manifest.Observed) {
					b, err := manifest.MarshalArtifact(o)
					if err != nil {
						return
					}
					omu.Lock()
					defer omu.Unlock()
					if err := e.writeNow(observedOut, b); err != nil {
						fmt.Fprintf(e.stderr, "mcpdrift proxy: %s\n", err.Error())
					}
				}
			}
			g, err := proxy.New(pc)
			if err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			defer g.Close()
			parent := e.ctx
			if parent == nil {
				parent = context.Background()
			}
			ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
			defer stop()
			switch {
			case declared != "":
				go watchBaseline(ctx, e, g, m, serverID, []string{declared}, stamp, func() (*decide.Baseline, error) {
					b, _, err := loadBaseline(e, declared, sid, &live.suppress)
					return b, err
				})
			case locked != nil:
				go watchLock(ctx, e, g, m, serverID, lockPath, locked.Name, allowedSigners, stamp, verify, &live.suppress)
			}
			if metricsListen != "" {
				ln, err := net.Listen("tcp", metricsListen)
				if err != nil {
					return usageErr("--metrics-listen: %s", safetext.Inert(err.Error()))
				}
				ms := &http.Server{Handler: metrics.Handler(), ReadHeaderTimeout: 5 * time.Second}
				go ms.Serve(ln)
				defer ms.Close()
				fmt.Fprintf(e.stderr, "mcpdrift proxy: metrics on http://%s/metrics\n", ln.Addr())
			}
			if listen == "" {
				return g.ServeStdio(ctx, e.stdin, e.stdout)
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return usageErr("--listen: %s", safetext.Inert(err.Error()))
			}
			// The gateway's own server: the bounds its hostile-downstream
			// tests hold it to (header and body deadlines, stream writes).
			hopts.Token = token
			hs := g.Server(hopts)
			// Ready (/healthz) without waiting for an agent: a readiness
			// probe keeps an unready replica from its agents.
			go g.Observe(ctx)
			fmt.Fprintf(e.stderr, "mcpdrift proxy: listening on http://%s/mcp\n", ln.Addr())
			go func() {
				<-ctx.Done()
				sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
				defer c()
				_ = hs.Shutdown(sctx)
			}()
			if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
				return &exitError{ExitInconclusive, "mcpdrift proxy: " + safetext.Inert(err.Error())}
			}
			return nil
		},
	}
	live.registerAs(cmd, "upstream-url", "upstream-stdio")
	otlp = registerOTLP(cmd)
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "", "serve the downstream over Streamable HTTP at ADDR/mcp instead of stdio (port 0: a free port)")
	f.BoolVar(&upstreamOAuth, "upstream-oauth", false, "hold the gateway's own OAuth token for the upstream (the client_credentials grant of --oauth-client-id and its secret) and strip the downstream's Authorization")
	f.StringVar(&tokenFile, "listen-token-file", "", "a file holding the bearer token every downstream HTTP request must carry (required off loopback)")
	f.StringVar(&declared, "declared", "", "the approved baseline: a declared baseline with its snapshot beside it, or a snapshot")
	f.StringVar(&mode, "mode", "", "observe|audit|enforce (default: enforce with --declared, else observe)")
	f.StringVar(&profile, "profile", "review", "decision profile: review|fail-closed")
	f.BoolVar(&strict, "strict-arguments", false, "refuse call arguments the pinned inputSchema does not declare (default under fail-closed)")
	f.BoolVar(&noStrict, "no-strict-arguments", false, "accept undeclared properties the pinned schema allows, even under fail-closed")
	f.BoolVarP(&quiet, "quiet", "q", false, "no line on stderr when what is served changes (what is served and hidden, by reason; why the server is withheld)")
	f.BoolVar(&serveStale, "serve-stale", false, "when the upstream cannot be listed completely, keep serving the last gated list (default: serve nothing)")
	f.DurationVar(&relist, "relist-interval", 0, "re-observe the upstream when the gated list is older than this (0: on list_changed and ttlMs only)")
	f.DurationVar(&listTimeout, "list-timeout", 30*time.Second, "bound on the gateway's whole listing of the upstream")
	f.StringVar(&observedOut, "observed-out", "", "keep the observed record (assay.mcp_manifest_observed.v0) of the latest fully observed list in FILE (rewritten atomically)")
	f.StringVar(&decisionLog, "decision-log", "", "append one NDJSON record per decision to FILE (mcpdrift.proxy_decision.v1; never arguments, results or header values)")
	f.StringVar(&metricsListen, "metrics-listen", "", "serve Prometheus metrics at ADDR/metrics")
	f.StringVar(&sid, "server-id", "", "server id in the log and records (default: the baseline's, else the upstream)")
	f.StringVar(&rules, "rules", "", "YAML privilege rules")
	f.StringVar(&lockPath, "lock", "", "front server --server NAME of this lock: its upstream, approved tools and profile (reloaded when the lock changes)")
	registerAllowedSigners(cmd, &allowedSigners)
	registerVerifyRefs(cmd, &verifyRefs, &allowPrivateRefs)
	return cmd
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
	tools, err := readToolsWith(read, path)
	if err != nil {
		return nil, "", err
	}
	d := tools.Declared
	if d != nil {
		if tools, _, err = snapshotBeside(path, read); err != nil {
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
	if b.Surface, err = pinnedSurface(path, snap.Surface); err != nil {
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

// watchBaseline reloads the baseline on SIGHUP and when one of the files
// changes (the baseline, or a lock and its signature).
//
// A reload is fail-closed: a new baseline that cannot be read, or reads
// but is not valid, is put in force as an invalid one, so the server is
// withheld until a valid one is loaded — the operator replaced the
// approvals, and the old ones are no longer what they declare.
func watchBaseline(ctx context.Context, e *env, g *proxy.Gateway, m proxy.Mode, serverID string, paths []string, last string, load func() (*decide.Baseline, error)) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	mtime := func() string { return fileStamp(paths...) }
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	reload := func(why string) {
		b, err := load()
		if err != nil {
			b = decide.InvalidBaseline(serverID, "it cannot be read: "+errMessage(err))
		}
		_ = g.Reload(b) // an invalid one too: it withholds the server
		if !withholdWarning(e, m, why, b) {
			fmt.Fprintf(e.stderr, "mcpdrift proxy: %s: baseline reloaded\n", why)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			last = mtime()
			reload("SIGHUP")
		case <-tick.C:
			if t := mtime(); t != last {
				last = t
				reload("the baseline file changed")
			}
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

// watchLock reloads the baseline of server name from the lock (and its
// signature): a newly approved tool is served once the lock says so
// (and, with --allowed-signers, once it is signed again).
func watchLock(ctx context.Context, e *env, g *proxy.Gateway, m proxy.Mode, serverID, lockPath, name, allowedSigners, stamp string, verify func(*lock.Server) map[string]string, sf *suppressionFlags) {
	watchBaseline(ctx, e, g, m, serverID, []string{lockPath, lockPath + ".sig"}, stamp, func() (*decide.Baseline, error) {
		s, _, err := loadLockBaseline(e, lockPath, name, allowedSigners, sf)
		if err != nil {
			return nil, err
		}
		return s.Baseline(verify(s)), nil
	})
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
