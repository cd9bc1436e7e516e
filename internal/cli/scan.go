package cli

import (
	"bytes"
	"context"
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

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/scan"
	"github.com/mcpdrift/mcpdrift/scanrun"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/telemetry"
)

// scanOptions are scan's flags: the fleet, the store and its retention,
// the worker, and the report.
type scanOptions struct {
	fleet            fleetFlags
	format, storeURL string
	rules            string
	concurrency      int
	worker           workerFlags
	noStore          bool
	maxRows          int
	keep             string
	observedDir      string
	otlp             *otlpFlags
}

func (o *scanOptions) AddFlags(cmd *cobra.Command) {
	o.fleet.AddFlags(cmd, 30*time.Second, true)
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "text", "text (a table, worst first) or json ("+scan.SchemaID+")")
	f.StringVar(&o.storeURL, "store", "", "the history store: sqlite:PATH or postgres://... (default for --inventory: $XDG_STATE_HOME/mcpdrift/history.db)")
	f.BoolVar(&o.noStore, "no-store", false, "keep no history (an inventory is then observed, never gated)")
	f.StringVar(&o.rules, "rules", "", "YAML privilege rules (default: the built-in table)")
	f.IntVar(&o.concurrency, "concurrency", 8, "servers observed at once")
	f.StringVar(&o.observedDir, "observed-dir", "", "also write each server's evidence into DIR: its observed record (assay.mcp_manifest_observed.v0), or the not-observed one, as NAME.observed.json")
	f.StringVar(&o.keep, "keep", "", "with a store: after the scan, keep the newest N scans, or those within an age (90d, 12w, 720h); each server's last complete observation is always kept")
	f.IntVar(&o.maxRows, "max-rows", 200, "rows of the text table at most (the worst ones; the JSON has every server)")
	o.worker.AddFlags(cmd)
	o.otlp = registerOTLP(cmd)
}

func newScan(e *env) *cobra.Command {
	o := &scanOptions{}
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
			// A bad --otlp-endpoint is a usage error before anything runs;
			// the spans are exported when the scan ends (at most 2 s).
			tr, err := o.otlp.start(e, telemetry.ModeRun)
			if err != nil {
				return err
			}
			defer tr.finish()
			opt, src, err := o.options(e, tr)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(tr.begin(e.context(), "scan"), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if o.storeURL != "" {
				storeSecrets(e, o.storeURL)
				st, err := store.Open(ctx, o.storeURL, store.Options{Secrets: e.secrets})
				if err != nil {
					return usageErr("--store: %s", safetext.Inert(err.Error()))
				}
				defer st.Close()
				opt.Store = st
			}
			if o.worker.on {
				return o.work(ctx, e, opt)
			}
			opt.Label = "scan " + src
			return o.run(ctx, e, opt)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// options check the flags and read the fleet into scanrun.Options; src
// names the fleet's source (--lock, --inventory, --url).
func (o *scanOptions) options(e *env, tr *tracing) (opt scanrun.Options, src string, err error) {
	switch {
	case o.format != "text" && o.format != "json":
		return opt, "", usageErr("--format must be text or json")
	case o.concurrency < 1:
		return opt, "", usageErr("--concurrency must be at least 1")
	case o.fleet.timeout <= 0:
		return opt, "", usageErr("--timeout must be more than 0")
	case o.noStore && o.storeURL != "":
		return opt, "", usageErr("--no-store and --store exclude each other")
	case o.keep != "" && o.noStore:
		return opt, "", usageErr("--keep is the store's retention: it does not go with --no-store")
	case o.observedDir != "" && o.worker.on:
		return opt, "", usageErr("--observed-dir writes one scan's evidence: it does not go with --worker")
	}
	if o.observedDir != "" {
		if st, err := os.Stat(o.observedDir); err != nil || !st.IsDir() {
			return opt, "", usageErr("--observed-dir %s is not a directory", safetext.Quote(o.observedDir))
		}
	}
	if o.keep != "" {
		if opt.Keep, err = store.ParseKeep(o.keep); err != nil {
			return opt, "", usageErr("%s", err.Error())
		}
	}
	if opt.Classifier, err = loadClassifier(o.rules); err != nil {
		return opt, "", usageErr("--rules: %s", safetext.Inert(err.Error()))
	}
	if src, err = o.fleet.selected(); err != nil {
		return opt, "", err
	}
	if err := o.worker.check(o.storeURL); err != nil {
		return opt, "", err
	}
	servers, err := o.fleet.servers(e)
	if err != nil {
		return opt, "", err
	}
	if len(servers) == 0 {
		return opt, "", usageErr("the %s lists no server", strings.TrimPrefix(src, "--"))
	}
	opt.Servers = make([]scanrun.Server, len(servers))
	for i, s := range servers {
		opt.Servers[i] = scanrun.Server{Name: s.name, Target: s.target, Config: s.cfg, Lock: s.lockServer, Err: s.err}
	}
	if o.storeURL == "" && src == "--inventory" && !o.noStore {
		if o.storeURL, err = store.DefaultURL(); err != nil {
			return opt, "", usageErr("the default store: %s", safetext.Inert(err.Error()))
		}
	}
	opt.Concurrency, opt.Timeout, opt.Secrets, opt.Tracer, opt.Today = o.concurrency, o.fleet.timeout, e.secrets, tr.tracer(), today()
	opt.Connect = lockConnect(e, o.fleet.base())
	opt.Warn = func(msg string) { fmt.Fprintf(e.stderr, "mcpdrift scan: warning: %s\n", msg) }
	return opt, src, nil
}

// run scans the fleet once, with a progress bar on a terminal, and writes
// the summary (and the evidence of --observed-dir).
func (o *scanOptions) run(ctx context.Context, e *env, opt scanrun.Options) error {
	var prog *mpb.Progress
	if e.tty && os.Getenv("CI") == "" && isTerminal(os.Stderr) {
		prog = mpb.New(mpb.WithOutput(e.stderr), mpb.WithWidth(40))
		bar := prog.AddBar(int64(len(opt.Servers)), mpb.PrependDecorators(decor.Name("scan "), decor.CountersNoUnit("%d/%d")),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
		opt.Done = func(int, scan.Result) { bar.Increment() }
	}
	res, err := scanrun.Run(ctx, opt)
	if prog != nil {
		prog.Wait()
	}
	if err != nil {
		return err
	}
	if p := res.Pruned; p.Scans > 0 {
		fmt.Fprintf(e.stderr, "mcpdrift scan: kept %s: removed %d scans, %d observations, %d tool versions, %d definitions\n",
			opt.Keep, p.Scans, p.Observations, p.Versions, p.Definitions)
	}
	if o.observedDir != "" {
		if err := emitObserved(e, o.observedDir, opt.Servers, res.Observed); err != nil {
			return err
		}
	}
	return o.summary(e, res.Results, res.ExitCode)
}

// summary writes the table (or the JSON) and sets the exit code.
func (o *scanOptions) summary(e *env, rs []scan.Result, code int) error {
	out := scanText(rs, code, o.maxRows)
	if o.format == "json" {
		out = scanJSON(rs, code)
	}
	if err := e.emit("-", out); err != nil {
		return err
	}
	e.code = code
	return nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
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
func emitObserved(e *env, dir string, servers []scanrun.Server, observed []*manifest.Observed) error {
	used := map[string]int{}
	for i, s := range servers {
		o := observed[i]
		if o == nil {
			o = manifest.NotObserved(s.Name)
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
		}, s.Name)
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
		if err := e.emitMany("the observed record of "+safetext.Quote(s.Name), "observed records", filepath.Join(dir, base+".observed.json"), b); err != nil {
			return err
		}
	}
	return nil
}
