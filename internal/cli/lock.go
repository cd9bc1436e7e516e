package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/discover"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/lockrun"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/telemetry"
)

// The lock commands: lock add, profile, export, check and remove (this
// file), review and approve (review.go). See docs/lock.md.

func newLock(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lock",
		Short: "Pin many servers in one lock (mcpdrift.lock): add, check, profile, export, remove, sign, pin-ref",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageErr("lock needs a subcommand: add, check, profile, export, remove, sign or pin-ref (see mcpdrift lock --help)")
		},
	}
	cmd.AddCommand(newLockAdd(e), newLockCheck(e), newLockProfile(e), newLockExport(e), newLockRemove(e), newLockSign(e), newLockPinRef(e))
	return cmd
}

// approvalFlags say who approves and why.
type approvalFlags struct {
	by, note string
}

func (a *approvalFlags) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&a.by, "by", "", "who approves (default: git config user.email)")
	cmd.Flags().StringVar(&a.note, "note", "", "why, recorded with the approval")
}

// approval is the approval of this run: by whom (--by, else the git
// user's email) and now.
func (a *approvalFlags) approval(e *env) (lock.Approval, error) {
	by := a.by
	if by == "" {
		by = gitEmail()
	}
	switch {
	case by == "":
		return lock.Approval{}, usageErr("say who approves: --by WHO (git config user.email is not set)")
	case len(by) > 256 || strings.ContainsFunc(by, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return lock.Approval{}, usageErr("--by must be at most 256 characters, with no control characters")
	case len(a.note) > 4096:
		return lock.Approval{}, usageErr("--note must be at most 4096 bytes")
	}
	return lock.Approval{By: by, At: time.Now().UTC().Truncate(time.Second).Format(time.RFC3339), Note: a.note}, nil
}

// gitEmail is git config user.email, or "" (no git, not set, or slow).
func gitEmail() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "config", "--get", "user.email").Output()
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(out))
	if len(s) > 256 || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ""
	}
	return s
}

// lockAddOptions are lock add's flags: the server (its name and how to
// reach it, or the servers of an inventory), its profile and the approval.
type lockAddOptions struct {
	lockPath, profile   string
	autoApprove         []string
	publisherKey, rules string
	fromInventory       string
	all, pinResources   bool
	live                liveFlags
	appr                approvalFlags
}

func (o *lockAddOptions) AddFlags(cmd *cobra.Command) {
	registerLockPath(cmd, &o.lockPath)
	o.live.AddFlags(cmd, "url")
	f := cmd.Flags()
	f.StringVar(&o.profile, "profile", lock.ProfileReview, "the decision profile: review|fail-closed")
	f.StringArrayVar(&o.autoApprove, "auto-approve", nil, "changes the profile approves by itself, each recorded as such: notation (changes of spelling that accept the same instances)")
	f.StringVar(&o.rules, "rules", "", "YAML privilege rules (default: the built-in table)")
	f.StringVar(&o.fromInventory, "from-inventory", "", "add the servers named (or --all) of this inventory (mcpdrift discover --format json), each read again from its configuration file; a stdio one only with --allow-config-commands")
	f.BoolVar(&o.all, "all", false, "with --from-inventory: every server of the inventory")
	f.BoolVar(&o.pinResources, "pin-resources", false, "pin what resources/list lists too (the instructions, prompts and resource templates are always pinned; many servers list data that changes all the time)")
	f.StringVar(&o.publisherKey, "publisher-key", "", "the publisher key (fingerprint) configured for this server, pinned in its identity")
	o.appr.AddFlags(cmd)
}

func newLockAdd(e *env) *cobra.Command {
	o := &lockAddOptions{}
	cmd := &cobra.Command{
		Use:   "add (NAME (--url URL | --stdio -- CMD ARGS...) | --from-inventory FILE (SERVER... | --all)) [--header NAME='Bearer ${env:TOKEN}']... [--pass-env NAME]... [--profile review|fail-closed] [--auto-approve notation]",
		Short: "Observe a server and pin it in the lock under NAME (every tool approved as served)",
		Long: `Observes the server once (read-only: initialize or server/discover, then tools/list)
and pins it in the lock: how to reach it, its identity tuple, the Assay declared baseline, the raw
tool definitions, the profile, and an approval of every tool (by --by, else git config user.email),
with what it puts before the model beside its tools (its instructions, prompts and resource
templates, and the resources it lists with --pin-resources: docs/surface.md), each approved too.

A header is stored only as a placeholder, --header 'Authorization=Bearer ${env:TOKEN}', expanded
from the environment on every observation; a literal value is sent this once and never stored. A
URL with user info or query values is refused: a lock never holds a credential; so is a path
segment that looks like one (a hosted server's key): write it --url 'https://host/mcp/${env:KEY}/sse'.
A listing that is not complete is refused (exit 3), as is a server already in the lock (exit 2).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var argv []string
			if n := cmd.ArgsLenAtDash(); n >= 0 {
				argv, args = args[n:], args[:n]
			}
			if o.fromInventory != "" || o.all {
				return o.addInventory(e, args, argv)
			}
			if len(args) != 1 {
				return usageErr("lock add takes one NAME (the server's name in the lock); a stdio command goes after --")
			}
			opt, lf, err := o.options(e, args[0], argv)
			if err != nil {
				return err
			}
			r, err := lockrun.Add(e.context(), opt)
			if err != nil {
				return err
			}
			for _, s := range r.Acknowledged {
				fmt.Fprintf(e.stderr, "mcpdrift: %s\n", s)
			}
			for _, w := range r.Warnings {
				fmt.Fprintf(e.stderr, "mcpdrift: warning: %s\n", w)
			}
			if err := lf.save(e); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "mcpdrift: pinned %s in %s: %d tools from %s, profile %s\n", safetext.Quote(opt.Name), safetext.Quote(o.lockPath), len(r.Server.Tools), safetext.Quote(r.Listing.Target), o.profile)
			return nil
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// prepare is what either form of lock add checks before it observes
// anything: the profile, what it auto-approves, the approval, the rules.
func (o *lockAddOptions) prepare(e *env) (lock.Approval, *classify.Classifier, error) {
	if !lock.ValidProfile(o.profile) {
		return lock.Approval{}, nil, usageErr("--profile must be review or fail-closed")
	}
	for _, k := range o.autoApprove {
		if k != lock.AutoNotation {
			return lock.Approval{}, nil, usageErr("--auto-approve: the only kind is notation")
		}
	}
	a, err := o.appr.approval(e)
	if err != nil {
		return a, nil, err
	}
	c, err := loadClassifier(o.rules)
	return a, c, err
}

// addInventory adds the servers of an inventory (lockinventory.go).
func (o *lockAddOptions) addInventory(e *env, names, argv []string) error {
	l := &o.live
	switch {
	case o.fromInventory == "":
		return usageErr("--all goes with --from-inventory FILE")
	case l.baseURL != "" || l.stdio || l.mcpConfig != "" || len(argv) > 0 || len(l.headers) > 0:
		return usageErr("--from-inventory reads each server from its configuration file: give no --url, --stdio, --mcp-config or --header with it")
	}
	a, c, err := o.prepare(e)
	if err != nil {
		return err
	}
	lf, err := openLockForWrite(e, o.lockPath, true)
	if err != nil {
		return err
	}
	return addFromInventory(e, lf, o, names, c, a)
}

// options are lockrun.Add's options of one server: the source the lock
// stores, and what this observation sends (every placeholder expanded, a
// literal header too); the lock is opened for writing.
func (o *lockAddOptions) options(e *env, name string, argv []string) (lockrun.AddOptions, *lockFile, error) {
	opt := lockrun.AddOptions{Name: name, Profile: o.profile, AutoApprove: o.autoApprove, PublisherKey: o.publisherKey, PinResources: o.pinResources, Secrets: e.secrets, Timeout: o.live.timeout}
	if !lock.ValidName(name) {
		return opt, nil, usageErr("server name %s: use letters, digits, '.', '_' and '-' (at most 128), starting with a letter or digit", safetext.Quote(name))
	}
	var err error
	if opt.Approval, opt.Classifier, err = o.prepare(e); err != nil {
		return opt, nil, err
	}
	if opt.Source, err = sourceOf(e, &o.live, argv); err != nil {
		return opt, nil, err
	}
	// Refused before anything is sent: what the lock could not store.
	if err := lock.CheckSource(opt.Source); err != nil {
		return opt, nil, usageErr("%s", safetext.Inert(err.Error()))
	}
	lf, err := openLockForWrite(e, o.lockPath, true)
	if err != nil {
		return opt, nil, err
	}
	if lf.lock.Server(name) != nil {
		return opt, nil, usageErr("server %s is already in %s: approve its changes with mcpdrift review or approve, or remove it first", safetext.Quote(name), safetext.Quote(o.lockPath))
	}
	opt.Lock = lf.lock
	obsLive := o.live
	if obsLive.baseURL, err = lockrun.ExpandURL(o.live.baseURL, os.LookupEnv, e.secrets); err != nil {
		return opt, nil, err
	}
	obsLive.headers = nil
	for _, h := range o.live.headers {
		hname, value, _ := strings.Cut(h, "=")
		if lock.HeaderTemplate(value) {
			v, _, err := discover.Expand(value, os.LookupEnv)
			if err != nil {
				return opt, nil, usageErr("--header %s: %s", safetext.Quote(hname), err.Error())
			}
			value = v
		}
		obsLive.headers = append(obsLive.headers, hname+"="+value)
	}
	if opt.Server, err = obsLive.config(e, argv); err != nil {
		return opt, nil, err
	}
	opt.Vouch = manifest.Vouch{Suppressions: func() (*manifest.Suppressions, error) { return o.live.suppress.load(e) }, Today: today()}
	opt.SourceAuth = obsLive.oauth.lockAuth
	return opt, lf, nil
}

// context is the run's context (Background when none was given).
func (e *env) context() context.Context {
	if e.ctx != nil {
		return e.ctx
	}
	return context.Background()
}

func newLockProfile(e *env) *cobra.Command {
	var (
		lockPath    string
		autoApprove []string
		appr        approvalFlags
	)
	cmd := &cobra.Command{
		Use:   "profile NAME review|fail-closed [--auto-approve notation]",
		Short: "Change a server's decision profile (and what it auto-approves); recorded in its history",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErr("lock profile takes NAME and PROFILE (review or fail-closed)")
			}
			if !lock.ValidProfile(args[1]) {
				return usageErr("profile %s: must be review or fail-closed", safetext.Quote(args[1]))
			}
			a, err := appr.approval(e)
			if err != nil {
				return err
			}
			lf, err := openLockForWrite(e, lockPath, false)
			if err != nil {
				return err
			}
			s, err := lf.server(args[0])
			if err != nil {
				return err
			}
			aa := autoApprove
			if !cmd.Flags().Changed("auto-approve") {
				aa = s.AutoApprove
			} else if len(aa) == 1 && aa[0] == "none" {
				aa = nil
			}
			if err := s.SetProfile(args[1], aa, a); err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			return lf.save(e)
		},
	}
	registerLockPath(cmd, &lockPath)
	cmd.Flags().StringArrayVar(&autoApprove, "auto-approve", nil, "notation, or none (default: unchanged)")
	appr.AddFlags(cmd)
	return cmd
}

func newLockExport(e *env) *cobra.Command {
	var (
		lockPath, out string
		assay         bool
	)
	cmd := &cobra.Command{
		Use:   "export NAME --assay [-o FILE]",
		Short: "Write a server's Assay declared baseline (assay.declared_mcp_manifest.v0) byte for byte as pinned",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("lock export takes one NAME")
			}
			if !assay {
				return usageErr("say what to export: --assay (the Assay declared baseline)")
			}
			lf, err := openLock(lockPath, false)
			if err != nil {
				return err
			}
			s, err := lf.server(args[0])
			if err != nil {
				return err
			}
			b, err := s.ExportDeclared()
			if err != nil {
				return err
			}
			return e.emitAs("the Assay declared baseline", out, b)
		},
	}
	registerLockPath(cmd, &lockPath)
	cmd.Flags().BoolVar(&assay, "assay", false, "export the Assay declared baseline")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to FILE (atomically) instead of stdout")
	return cmd
}

func newLockRemove(e *env) *cobra.Command {
	var lockPath string
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a server from the lock",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("lock remove takes one NAME")
			}
			lf, err := openLockForWrite(e, lockPath, false)
			if err != nil {
				return err
			}
			if _, err := lf.server(args[0]); err != nil {
				return err
			}
			lf.lock.Remove(args[0])
			return lf.save(e)
		},
	}
	registerLockPath(cmd, &lockPath)
	return cmd
}

// lockCheckOptions are lock check's flags: the lock, its signature, how
// each server is observed and the report.
type lockCheckOptions struct {
	lockPath, allowedSigners     string
	verifyRefs, allowPrivateRefs bool
	concurrency                  int
	verbose                      bool
	obs                          observeFlags
	otlp                         *otlpFlags
	report                       reportFlags
	reports                      extraReports
}

func (o *lockCheckOptions) AddFlags(cmd *cobra.Command) {
	o.reports.AddFlags(cmd, report.LockCheckFormats())
	registerLockPath(cmd, &o.lockPath)
	o.obs.AddFlags(cmd, 30*time.Second)
	o.report.AddFlags(cmd, report.LockCheckFormats())
	f := cmd.Flags()
	f.IntVar(&o.concurrency, "concurrency", 8, "how many servers are observed at once")
	f.BoolVar(&o.verbose, "verbose", false, "text and markdown: every server's details, clean ones too, uncapped (by default a table of the servers, then the details of those that are not clean, capped)")
	registerAllowedSigners(cmd, &o.allowedSigners)
	registerVerifyRefs(cmd, &o.verifyRefs, &o.allowPrivateRefs)
	o.otlp = registerOTLP(cmd)
}

func newLockCheck(e *env) *cobra.Command {
	o := &lockCheckOptions{}
	cmd := &cobra.Command{
		Use:   "check [NAME...] [--format text|json|sarif|markdown|html] [-o FILE] [--timeout 30s] [--concurrency N]",
		Short: "Re-observe every server of the lock (or those named), concurrently, and gate each against its entry; exit 0 clean, 1 findings, 3 inconclusive, 2 bad input",
		Long: `The text report is a table of the servers, worst first, then the details of each
server that is not clean: the tools to review and how each changed, capped (--verbose shows every
server and every line).

Each server is observed read-only, with its own deadline (--timeout), at most --concurrency at a
time, and gated against its lock entry: the Assay gate of its declared baseline, the structural
changes of every tool and the decision of its profile, and the identity tuple the gateway would
enforce. The exit code aggregates: 1 when any server has findings, else 3 when any is inconclusive
or could not be observed, else 0; a clean server never hides an inconclusive one.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			tr, err := o.otlp.start(e, telemetry.ModeRun)
			if err != nil {
				return err
			}
			defer tr.finish()
			opt, err := o.options(e, args, tr)
			if err != nil {
				return err
			}
			res, err := lockrun.Check(tr.begin(e.context(), "lock check"), opt)
			if err != nil {
				return err
			}
			rep := res.Report
			if o.allowedSigners != "" {
				rep.Signed = "verified against " + o.allowedSigners
			}
			// Spans are exported before the report is written (at most
			// 2 s; one warning when the collector is down).
			tr.finish()
			return o.render(e, rep, res.Deltas)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// options read the lock (its signature checked over the bytes read: the
// lock checked is the lock signed) and select its servers (those named,
// or all).
func (o *lockCheckOptions) options(e *env, names []string, tr *tracing) (lockrun.CheckOptions, error) {
	var opt lockrun.CheckOptions
	if err := o.report.check(); err != nil {
		return opt, err
	}
	if o.concurrency < 1 {
		return opt, usageErr("--concurrency must be at least 1")
	}
	c, err := loadClassifier(o.obs.rules)
	if err != nil {
		return opt, err
	}
	lf, err := openLock(o.lockPath, false)
	if err != nil {
		return opt, err
	}
	if err := verifyLockSignature(e, o.lockPath, lf.data, o.allowedSigners); err != nil {
		return opt, err
	}
	servers := lf.lock.Servers
	if len(names) > 0 {
		servers = nil
		seen := map[string]bool{}
		for _, n := range names {
			s, err := lf.server(n)
			if err != nil {
				return opt, err
			}
			if !seen[n] {
				seen[n] = true
				servers = append(servers, s)
			}
		}
	}
	base := o.obs.live()
	// A bound that is wrong is wrong for every server: refuse it once,
	// before anything runs.
	if len(servers) > 0 {
		if err := checkBounds(e, base); err != nil {
			return opt, err
		}
	}
	sup, err := o.obs.suppress.load(e)
	if err != nil {
		return opt, err
	}
	opt = lockrun.CheckOptions{Servers: servers, Concurrency: o.concurrency, LockFile: o.lockPath,
		ObserveOptions: lockrun.ObserveOptions{Connect: lockConnect(e, base), Classifier: c, Secrets: e.secrets, Timeout: base.timeout, Tracer: tr.tracer()},
		Check:          lock.CheckOptions{Today: today(), Suppressions: sup}}
	if o.verifyRefs {
		opt.Check.VerifiedRefs = verifiedRefs(e.context(), e, servers, o.allowPrivateRefs, base)
	}
	return opt, nil
}

// render writes the report and the extra reports.
func (o *lockCheckOptions) render(e *env, rep *lock.CheckReport, deltas map[string][]delta.Tool) error {
	var buf bytes.Buffer
	ropt := o.report.options(e, o.lockPath)
	ropt.Verbose = o.verbose
	err := report.RenderLockCheck(&buf, rep, deltas, o.report.format, ropt)
	if err := o.report.emit(e, buf.Bytes(), err); err != nil {
		return err
	}
	if err := o.reports.emit(e, func(w *bytes.Buffer, f string) error {
		return report.RenderLockCheck(w, rep, deltas, f, report.Options{ToolVersion: version(), ArtifactURI: o.lockPath, Verbose: o.verbose})
	}); err != nil {
		return err
	}
	e.code = rep.ExitCode
	return nil
}
