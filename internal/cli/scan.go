package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/lockrun"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/scan"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/telemetry"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// scanRun is one scan: the servers, the store, and how each is checked.
type scanRun struct {
	e          *env
	fleet      *fleetFlags
	servers    []*fleetServer
	st         *store.Store // nil: no history
	scanID     int64
	classifier *classify.Classifier
	// check observes and gates one server (checkFleetServer, or a lock
	// entry's check when scanning a lock).
	check func(ctx context.Context, s *fleetServer) (scan.Result, *store.ServerResult)
	// tracer traces every listing (nil: --otlp-endpoint not given).
	tracer mcptrace.Tracer
}

func newScan(e *env) *cobra.Command {
	var (
		fleet             fleetFlags
		format, storeURL  string
		rules             string
		concurrency       int
		worker            workerFlags
		noStore           bool
		maxTableRowsFlags int
		keep              string
		observedDir       string
		otlp              *otlpFlags
	)
	cmd := &cobra.Command{
		Use:   "scan (--lock FILE | --inventory FILE | --url URL ...) [--concurrency N] [--timeout 30s] [--store URL] [--format text|json]",
		Short: "Observe and gate every server of a fleet concurrently, each within its own deadline, and keep the history",
		Long: `scan observes every server of a fleet at once (--concurrency at a time), each
within its own --timeout, so a server that hangs, crashes or floods cannot
hold the others. With a lock, each server is gated against its lock entry.
Without one (an inventory, or --url), the first scan records the history
and each later scan is gated against the server's last complete
observation in the store.

Every result goes into the store: --store sqlite:PATH or postgres://...
(an inventory scan uses the default store, $XDG_STATE_HOME/mcpdrift/history.db,
unless --no-store). The summary is a table, worst first; the exit code is 1
when any server has findings, else 3 when any is inconclusive or could not
be observed, else 0. A progress bar is drawn when stdout and stderr are a
terminal and CI is not set.

--worker shares the work of one fleet between processes through the
PostgreSQL store's queue: every worker is given the same lock, inventory or
URLs, seeds the round (idempotently) and claims servers one at a time with
a lease; --once exits when the round is drained, --interval starts a round
every DUR; --shard I/N claims only the servers of shard I of N.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case format != "text" && format != "json":
				return usageErr("--format must be text or json")
			case concurrency < 1:
				return usageErr("--concurrency must be at least 1")
			case fleet.timeout <= 0:
				return usageErr("--timeout must be more than 0")
			case noStore && storeURL != "":
				return usageErr("--no-store and --store exclude each other")
			case keep != "" && noStore:
				return usageErr("--keep is the store's retention: it does not go with --no-store")
			case observedDir != "" && worker.on:
				return usageErr("--observed-dir writes one scan's evidence: it does not go with --worker")
			}
			if observedDir != "" {
				if st, err := os.Stat(observedDir); err != nil || !st.IsDir() {
					return usageErr("--observed-dir %s is not a directory", safetext.Quote(observedDir))
				}
			}
			var keepFor store.Keep
			if keep != "" {
				var err error
				if keepFor, err = store.ParseKeep(keep); err != nil {
					return usageErr("%s", err.Error())
				}
			}
			// A bad --otlp-endpoint is a usage error before anything runs;
			// the spans are exported when the scan ends (at most 2 s).
			tr, err := otlp.start(e, telemetry.ModeRun)
			if err != nil {
				return err
			}
			defer tr.finish()
			c, err := loadClassifier(rules)
			if err != nil {
				return usageErr("--rules: %s", safetext.Inert(err.Error()))
			}
			src, err := fleet.selected()
			if err != nil {
				return err
			}
			if err := worker.check(storeURL); err != nil {
				return err
			}
			servers, err := fleet.servers(e)
			if err != nil {
				return err
			}
			if len(servers) == 0 {
				return usageErr("the %s lists no server", strings.TrimPrefix(src, "--"))
			}
			sr := &scanRun{e: e, fleet: &fleet, servers: servers, classifier: c, tracer: tr.tracer()}
			for _, s := range servers {
				s.cfg.Tracer = sr.tracer
			}
			sr.check = sr.checkFleetServer
			if fleet.lockPath != "" {
				sr.check = sr.checkLockServer
			}
			if storeURL == "" && src == "--inventory" && !noStore {
				if storeURL, err = store.DefaultURL(); err != nil {
					return usageErr("the default store: %s", safetext.Inert(err.Error()))
				}
			}
			parent := e.ctx
			if parent == nil {
				parent = context.Background()
			}
			ctx, stop := signal.NotifyContext(tr.begin(parent, "scan"), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if storeURL != "" {
				storeSecrets(e, storeURL)
				st, err := store.Open(ctx, storeURL, store.Options{Secrets: e.secrets})
				if err != nil {
					return usageErr("--store: %s", safetext.Inert(err.Error()))
				}
				defer st.Close()
				sr.st = st
			}
			if worker.on {
				return sr.work(ctx, &worker, concurrency, format, maxTableRowsFlags)
			}
			if sr.st != nil {
				if sr.scanID, err = sr.st.BeginScan(ctx, "scan "+src); err != nil {
					return usageErr("--store: %s", safetext.Inert(err.Error()))
				}
			}
			results := sr.runAll(ctx, concurrency)
			code := scan.ExitCode(results)
			if sr.st != nil {
				if err := sr.st.FinishScan(context.WithoutCancel(ctx), sr.scanID, code); err != nil {
					fmt.Fprintf(e.stderr, "mcpdrift scan: warning: the store did not record the end of the scan: %s\n", safetext.Inert(err.Error()))
				}
				// Retention after the scan is recorded: each server's last
				// complete observation (the next scan's baseline) is kept
				// whatever --keep says.
				if keep != "" {
					res, err := sr.st.Prune(context.WithoutCancel(ctx), keepFor)
					if err != nil {
						fmt.Fprintf(e.stderr, "mcpdrift scan: warning: retention (--keep) failed: %s\n", safetext.Inert(err.Error()))
					} else if res.Scans > 0 {
						fmt.Fprintf(e.stderr, "mcpdrift scan: kept %s: removed %d scans, %d observations, %d tool versions, %d definitions\n",
							keepFor, res.Scans, res.Observations, res.Versions, res.Definitions)
					}
				}
			}
			if observedDir != "" {
				if err := emitObserved(e, observedDir, servers); err != nil {
					return err
				}
			}
			scan.Sort(results)
			var out []byte
			if format == "json" {
				out = scanJSON(results, code)
			} else {
				out = scanText(results, code, maxTableRowsFlags)
			}
			if err := e.emit("-", out); err != nil {
				return err
			}
			e.code = code
			return nil
		},
	}
	fleet.register(cmd, 30*time.Second, true)
	f := cmd.Flags()
	f.StringVar(&format, "format", "text", "text (a table, worst first) or json ("+scan.SchemaID+")")
	f.StringVar(&storeURL, "store", "", "the history store: sqlite:PATH or postgres://... (default for --inventory: $XDG_STATE_HOME/mcpdrift/history.db)")
	f.BoolVar(&noStore, "no-store", false, "keep no history (an inventory is then observed, never gated)")
	f.StringVar(&rules, "rules", "", "YAML privilege rules (default: the built-in table)")
	f.IntVar(&concurrency, "concurrency", 8, "servers observed at once")
	f.StringVar(&observedDir, "observed-dir", "", "also write each server's evidence into DIR: its observed record (assay.mcp_manifest_observed.v0), or the not-observed one, as NAME.observed.json")
	f.StringVar(&keep, "keep", "", "with a store: after the scan, keep the newest N scans, or those within an age (90d, 12w, 720h); each server's last complete observation is always kept")
	f.IntVar(&maxTableRowsFlags, "max-rows", 200, "rows of the text table at most (the worst ones; the JSON has every server)")
	worker.register(cmd)
	otlp = registerOTLP(cmd)
	return cmd
}

// runAll checks every server within its deadline, recording each result
// as it is known, with a progress bar on a terminal.
func (sr *scanRun) runAll(ctx context.Context, concurrency int) []scan.Result {
	var bar *mpb.Bar
	var prog *mpb.Progress
	if sr.e.tty && os.Getenv("CI") == "" && isTerminal(os.Stderr) {
		prog = mpb.New(mpb.WithOutput(sr.e.stderr), mpb.WithWidth(40))
		bar = prog.AddBar(int64(len(sr.servers)), mpb.PrependDecorators(decor.Name("scan "), decor.CountersNoUnit("%d/%d")),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
	}
	rs := scan.Run(ctx, len(sr.servers), scan.Options{Concurrency: concurrency, Timeout: sr.fleet.timeout, Done: func(int, scan.Result) {
		if bar != nil {
			bar.Increment()
		}
	}}, func(ctx context.Context, i int) scan.Result {
		s := sr.servers[i]
		r, rec := sr.check(ctx, s)
		r.Server, r.Target = safetext.Escape(s.name), safetext.Escape(s.target)
		if rec != nil && sr.st != nil {
			if err := sr.st.RecordServer(context.WithoutCancel(ctx), sr.scanID, *rec); err != nil {
				r.Status = scan.StatusInconclusive
				r.Error = "the result could not be recorded in the store: " + safetext.Inert(err.Error())
			}
		}
		return r
	})
	if prog != nil {
		prog.Wait()
	}
	return nameResults(rs, sr.servers)
}

// nameResults gives each result its server's name and target when the
// check did not (scan.Run's own results: a server the stopped scan never
// started, a check abandoned past its deadline, one that panicked), so
// that no row of the table or the JSON is a server nobody can tell.
func nameResults(rs []scan.Result, servers []*fleetServer) []scan.Result {
	for i := range rs {
		if rs[i].Server == "" && i < len(servers) {
			rs[i].Server, rs[i].Target = safetext.Escape(servers[i].name), safetext.Escape(servers[i].target)
		}
	}
	return rs
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// errorClass is a fixed class of why a server was not observed.
func errorClass(err error) string {
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

// notObserved is the result of a server that could not be observed.
func (sr *scanRun) notObserved(s *fleetServer, class, msg string) (scan.Result, *store.ServerResult) {
	return scan.Result{Status: scan.StatusNotObserved, Error: msg},
		&store.ServerResult{Server: s.name, Target: s.target, Status: manifest.StatusNotObserved, Completeness: "unknown", ErrorClass: class, ErrorDetail: msg}
}

// checkFleetServer observes a server of an inventory or a --url, and
// gates it against its last complete observation in the store (none: the
// first record).
func (sr *scanRun) checkFleetServer(ctx context.Context, s *fleetServer) (scan.Result, *store.ServerResult) {
	if s.err != "" {
		return sr.notObserved(s, "config", s.err)
	}
	obs, tl, err := listServer(ctx, sr.e, s.cfg)
	if err != nil {
		msg := safetext.Inert(err.Error())
		if ce, ok := errors.AsType[*mcpclient.ConfigError](err); ok {
			msg = safetext.Inert(ce.Msg)
		}
		return sr.notObserved(s, errorClass(err), msg)
	}
	s.observed = manifest.BuildObserved(s.name, tl, manifest.Completeness(obs.Completeness), sr.classifier)
	rec, ok, why := observedRecord(s.name, s.target, fleetIdentity(s, obs), obs, tl)
	r := scan.Result{ToolCount: len(tl.Tools)}
	if !ok {
		r.Status, r.Error = scan.StatusInconclusive, "the listing cannot be compared: "+safetext.Inert(why)
		return r, rec
	}
	digest := rec.ManifestDigest
	r.ManifestDigest = digest
	if sr.st == nil {
		// No store: no history to gate against, and none kept.
		r.Status = scan.StatusObserved
		return r, nil
	}
	last, err := sr.st.LastComplete(ctx, s.name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		r.Status = scan.StatusRecorded
		return r, rec
	case err != nil:
		r.Status, r.Error = scan.StatusInconclusive, "the store could not give the last observation: "+safetext.Inert(err.Error())
		return r, rec
	}
	r.Baseline = "history"
	if last.ManifestDigest == digest {
		r.Status = scan.StatusClean
		return r, rec
	}
	prev, err := manifest.ParseToolList(last.ToolArray())
	if err != nil {
		r.Status, r.Error = scan.StatusInconclusive, "the last observation in the store cannot be read: "+safetext.Inert(err.Error())
		return r, rec
	}
	r.Findings = scan.Against(prev.Tools, tl.Tools, decide.Options{Classifier: sr.classifier})
	r.Status = scan.StatusClean
	if len(r.Findings) > 0 {
		r.Status = scan.StatusFindings
	}
	for _, f := range r.Findings {
		rec.Findings = append(rec.Findings, store.Finding{RuleID: f.Rule, Severity: f.Severity, Tool: f.Tool, Message: f.Message, ObservedDigest: f.Observed, DeclaredDigest: f.Declared})
	}
	return r, rec
}

// fleetIdentity is the identity tuple a listing of s established: its
// target, the names and digests of the env a stdio child was given, and
// the server's name and version.
func fleetIdentity(s *fleetServer, obs *mcpclient.Observation) manifest.Identity {
	id := manifest.Identity{Endpoint: s.target, Env: observe.EnvIdentity(s.cfg)}
	if obs.ServerInfo != nil {
		id.ServerName, id.ServerVersion = obs.ServerInfo.Name, obs.ServerInfo.Version
	}
	return id
}

// observedRecord is the store's record of a listing: its status,
// completeness, identity, revision and raw tools, and the manifest digest
// when the listing can be compared (ok; why not, otherwise). It is the one
// way every scan kind records what a server listed (an inventory, --url, a
// lock, the workers of each, watch), so that history and a diff from it
// are the same whichever way a server was scanned.
func observedRecord(name, target string, id manifest.Identity, obs *mcpclient.Observation, tl *manifest.ToolList) (rec *store.ServerResult, ok bool, why string) {
	rec = &store.ServerResult{Server: name, Target: target, Status: manifest.StatusObserved, Completeness: string(tl.Completeness),
		ProtocolRevision: obs.ProtocolRevision, Identity: id}
	digest, unique := manifest.ManifestDigestOf(tl.Tools)
	rec.Tools = make([]store.Tool, 0, len(tl.Tools))
	for i := range tl.Tools {
		t := &tl.Tools[i]
		rec.Tools = append(rec.Tools, store.Tool{Name: t.Name, Digest: t.ToolDigest(), Raw: t.Value.Raw()})
	}
	ok, why = complete(obs, tl)
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

// scanJSON is the summary as JSON (mcpdrift.scan.v1), worst first.
func scanJSON(rs []scan.Result, code int) []byte {
	doc := struct {
		Schema   string         `json:"schema"`
		ExitCode int            `json:"exit_code"`
		Counts   map[string]int `json:"counts"`
		Servers  []scan.Result  `json:"servers"`
	}{scan.SchemaID, code, scan.Counts(rs), rs}
	if doc.Servers == nil {
		doc.Servers = []scan.Result{}
	}
	for i := range doc.Servers {
		if doc.Servers[i].Findings == nil { // the contract has an array (a worker's foreign server, a stopped scan)
			doc.Servers[i].Findings = []scan.Finding{}
		}
	}
	var b bytes.Buffer
	_ = report.WriteJSON(&b, doc) // a bytes.Buffer does not fail, nor do these types
	return b.Bytes()
}

// scanText is the summary table, worst first, at most maxRows rows.
func scanText(rs []scan.Result, code, maxRows int) []byte {
	var b strings.Builder
	w := []int{len("STATUS"), len("SERVER"), len("FINDINGS"), len("TOOLS")}
	rows := rs
	if maxRows > 0 && len(rows) > maxRows {
		rows = rows[:maxRows]
	}
	for _, r := range rows {
		w[0] = max(w[0], len(r.Status))
		w[1] = max(w[1], min(len(r.Server), 48))
	}
	line := func(cols ...string) {
		for i, c := range cols[:4] {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", max(w[i]-len(c), 0)+2))
		}
		b.WriteString(cols[4])
		b.WriteByte('\n')
	}
	line("STATUS", "SERVER", "FINDINGS", "TOOLS", "DETAIL")
	for _, r := range rows {
		detail := r.Target
		switch {
		case r.Error != "":
			detail = r.Error
		case len(r.Findings) > 0:
			var parts []string
			for i, f := range r.Findings {
				if i == 3 {
					parts = append(parts, fmt.Sprintf("and %d more", len(r.Findings)-3))
					break
				}
				parts = append(parts, f.Rule+" "+f.Tool)
			}
			detail = strings.Join(parts, "; ")
		}
		line(r.Status, safetext.Clip(r.Server, 48), strconv.Itoa(len(r.Findings)), strconv.Itoa(r.ToolCount), safetext.ClipEscaped(detail, 300))
	}
	if len(rows) < len(rs) {
		fmt.Fprintf(&b, "... %d more servers (see --format json)\n", len(rs)-len(rows))
	}
	c := scan.Counts(rs)
	fmt.Fprintf(&b, "\n%d servers: %d with findings, %d inconclusive, %d not observed, %d observed only, %d recorded, %d clean (exit %d)\n",
		len(rs), c[scan.StatusFindings], c[scan.StatusInconclusive], c[scan.StatusNotObserved], c[scan.StatusObserved], c[scan.StatusRecorded], c[scan.StatusClean], code)
	if c[scan.StatusObserved] > 0 {
		b.WriteString("no store: the servers observed only were neither gated nor recorded, so the next scan has no history to gate them against (--store)\n")
	}
	return []byte(b.String())
}

// checkLockServer gates a lock's server against its entry with lock
// check's own per-server check (checkServerListing), and records the
// listing it gated as every scan kind records one (observedRecord: the
// raw tools, their digests, completeness, identity and revision), with
// the gate's findings.
func (sr *scanRun) checkLockServer(ctx context.Context, s *fleetServer) (scan.Result, *store.ServerResult) {
	base := sr.fleet.base()
	c := lockrun.CheckServer(ctx, s.lockServer, lockrun.CheckOptions{Check: lock.CheckOptions{Today: today()},
		ObserveOptions: lockrun.ObserveOptions{Connect: lockConnect(sr.e, base), Classifier: sr.classifier, Secrets: sr.e.secrets, Timeout: base.timeout, Tracer: sr.tracer}})
	lr, o := c.Result, c.Listing
	if o != nil {
		s.observed = o.Observed
	}
	if lr.Target != "" {
		s.target = lr.Target
	}
	r := scan.Result{Baseline: "lock", Error: lr.Error}
	if lr.Status == lock.StatusNotObserved || o == nil {
		r.Status = scan.StatusNotObserved
		return r, &store.ServerResult{Server: s.name, Target: s.target, Status: manifest.StatusNotObserved, Completeness: "unknown", ErrorClass: "observe", ErrorDetail: r.Error}
	}
	rec, _, _ := observedRecord(s.name, s.target, o.Identity, o.Observation, o.Tools)
	switch lr.ExitCode {
	case ExitFindings:
		r.Status = scan.StatusFindings
	case ExitInconclusive:
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
	return r, rec
}

// catalogTitle is a code's title in the catalogue ("" for a code it does
// not know, which the gate never produces).
func catalogTitle(code string) string {
	c, _ := catalog.Lookup(code)
	return c.Title
}

// storeSecrets holds the store URL's password (in its user info or its
// password parameter) as a secret of the run; the user name, host and
// schema are not secrets, and redacting them would garble every message
// that names the database's user.
func storeSecrets(e *env, raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			warnShort(e, shortOnly(e.secrets.Add("the password of the store URL", p), "the password of the store URL"))
		}
	}
	for _, p := range u.Query()["password"] {
		warnShort(e, shortOnly(e.secrets.Add("the password of the store URL", p), "the password of the store URL"))
	}
}

// emitObserved queues each server's observed record (the not-observed
// record when nothing was observed) as DIR/NAME.observed.json, the name
// reduced to letters, digits, '.', '_' and '-' (an inventory name holds
// ':' and '@'), a repeat numbered. They are written with the report, only
// when the scan succeeded, redacted like every output.
func emitObserved(e *env, dir string, servers []*fleetServer) error {
	used := map[string]int{}
	for _, s := range servers {
		o := s.observed
		if o == nil {
			o = manifest.NotObserved(s.name)
		}
		b, err := manifest.MarshalArtifact(o)
		if err != nil {
			return err
		}
		base := strings.Map(func(r rune) rune {
			if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
				return r
			}
			return '_'
		}, s.name)
		base = strings.TrimLeft(base, ".")
		if base == "" {
			base = "server"
		}
		name := base
		for i := 2; used[name] > 0; i++ {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		used[name]++
		base = name
		if err := e.emitMany("the observed record of "+safetext.Quote(s.name), "observed records", filepath.Join(dir, base+".observed.json"), b); err != nil {
			return err
		}
	}
	return nil
}
