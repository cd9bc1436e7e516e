package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/telemetry"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
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

func (a *approvalFlags) register(cmd *cobra.Command) {
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

func newLockAdd(e *env) *cobra.Command {
	var (
		lockPath, profile string
		autoApprove       []string
		publisherKey      string
		rules             string
		fromInventory     string
		all, pinResources bool
		live              liveFlags
		appr              approvalFlags
	)
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
				argv = args[n:]
				args = args[:n]
			}
			// What either form checks before it observes anything.
			prepare := func() (lock.Approval, *classify.Classifier, error) {
				if !lock.ValidProfile(profile) {
					return lock.Approval{}, nil, usageErr("--profile must be review or fail-closed")
				}
				for _, k := range autoApprove {
					if k != lock.AutoNotation {
						return lock.Approval{}, nil, usageErr("--auto-approve: the only kind is notation")
					}
				}
				a, err := appr.approval(e)
				if err != nil {
					return a, nil, err
				}
				c, err := loadClassifier(rules)
				return a, c, err
			}
			if fromInventory != "" || all {
				// The servers of an inventory (lockinventory.go).
				switch {
				case fromInventory == "":
					return usageErr("--all goes with --from-inventory FILE")
				case live.baseURL != "" || live.stdio || live.mcpConfig != "" || len(argv) > 0 || len(live.headers) > 0:
					return usageErr("--from-inventory reads each server from its configuration file: give no --url, --stdio, --mcp-config or --header with it")
				}
				a, c, err := prepare()
				if err != nil {
					return err
				}
				lf, err := openLockForWrite(e, lockPath, true)
				if err != nil {
					return err
				}
				return addFromInventory(e, lf, fromInventory, args, all, live.allowConfig, &live, profile, autoApprove, c, a)
			}
			if len(args) != 1 {
				return usageErr("lock add takes one NAME (the server's name in the lock); a stdio command goes after --")
			}
			name := args[0]
			if !lock.ValidName(name) {
				return usageErr("server name %s: use letters, digits, '.', '_' and '-' (at most 128), starting with a letter or digit", safetext.Quote(name))
			}
			a, c, err := prepare()
			if err != nil {
				return err
			}
			src, err := sourceOf(e, &live, argv)
			if err != nil {
				return err
			}
			// Refused before anything is sent: what the lock could not
			// store.
			if err := lock.CheckSource(src); err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			lf, err := openLockForWrite(e, lockPath, true)
			if err != nil {
				return err
			}
			if lf.lock.Server(name) != nil {
				return usageErr("server %s is already in %s: approve its changes with mcpdrift review or approve, or remove it first", safetext.Quote(name), safetext.Quote(lockPath))
			}
			// This observation sends what was typed (a literal header
			// too); the lock stores the source.
			obsLive := live
			if obsLive.baseURL, err = expandURLSegments(e, live.baseURL); err != nil {
				return err
			}
			obsLive.headers = nil
			for _, h := range live.headers {
				name, value, _ := strings.Cut(h, "=")
				if lock.HeaderTemplate(value) {
					v, _, err := expandPlaceholders(value, os.LookupEnv)
					if err != nil {
						return usageErr("--header %s: %s", safetext.Quote(name), err.Error())
					}
					value = v
				}
				obsLive.headers = append(obsLive.headers, name+"="+value)
			}
			o, err := observeTyped(e, &obsLive, argv, name, publisherKey, c, surfaceOptions(pinResources))
			if err != nil {
				return err
			}
			if err := o.complete(); err != nil {
				return err
			}
			src.Auth = obsLive.oauth.lockAuth(obsLive.baseURL)
			if err := e.vouchNames("add "+safetext.Quote(name)+" to the lock", toolNames(o.tools.Tools), []string{name, o.target}, &live.suppress); err != nil {
				return err
			}
			s, err := lock.NewServer(name, src, profile, o.served.Identity, o.obs.ClientCapabilities, o.tools.Tools, c, a)
			if err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			if len(autoApprove) > 0 {
				if err := s.SetProfile(profile, autoApprove, a); err != nil {
					return usageErr("%s", safetext.Inert(err.Error()))
				}
			}
			if err := pinLockSurface(e, s, o, a); err != nil {
				return err
			}
			if err := lf.lock.Add(s); err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			if err := lf.save(e); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "mcpdrift: pinned %s in %s: %d tools from %s, profile %s\n", safetext.Quote(name), safetext.Quote(lockPath), len(s.Tools), safetext.Quote(o.target), profile)
			return nil
		},
	}
	registerLockPath(cmd, &lockPath)
	live.register(cmd, "url")
	f := cmd.Flags()
	f.StringVar(&profile, "profile", lock.ProfileReview, "the decision profile: review|fail-closed")
	f.StringArrayVar(&autoApprove, "auto-approve", nil, "changes the profile approves by itself, each recorded as such: notation (changes of spelling that accept the same instances)")
	f.StringVar(&rules, "rules", "", "YAML privilege rules (default: the built-in table)")
	f.StringVar(&fromInventory, "from-inventory", "", "add the servers named (or --all) of this inventory (mcpdrift discover --format json), each read again from its configuration file; a stdio one only with --allow-config-commands")
	f.BoolVar(&all, "all", false, "with --from-inventory: every server of the inventory")
	f.BoolVar(&pinResources, "pin-resources", false, "pin what resources/list lists too (the instructions, prompts and resource templates are always pinned; many servers list data that changes all the time)")
	f.StringVar(&publisherKey, "publisher-key", "", "the publisher key (fingerprint) configured for this server, pinned in its identity")
	appr.register(cmd)
	return cmd
}

// observeTyped observes with what lock add was given on its command line.
func observeTyped(e *env, l *liveFlags, argv []string, name, publisherKey string, c *classify.Classifier, surf *mcpclient.SurfaceOptions) (*observation, error) {
	cfg, err := l.config(e, argv)
	if err != nil {
		return nil, err
	}
	cfg.Surface = surf
	o, reflected, err := observeConfig(e.context(), e, cfg, l.timeout, name, publisherKey, c)
	if err != nil {
		return nil, err
	}
	if reflected > 0 {
		return nil, &exitError{ExitUsage, fmt.Sprintf("refusing to pin %s: the server reflects credentials into its tool list (%d place(s)). Rotate the credential and fix the server", safetext.Quote(o.target), reflected)}
	}
	return o, nil
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
	appr.register(cmd)
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

// checked is one server's check with what its readable delta needs.
type checked struct {
	result *lock.ServerResult
	deltas []delta.Tool
	// observed is the observed record of the listing (nil when nothing
	// was observed).
	observed *manifest.Observed
}

// checkServer observes s and gates it against its lock entry: the one
// per-server check of lock check (and of scan over a lock). A server that
// cannot be observed is a not-observed result, never an error of the
// whole run; a usage error (a placeholder whose variable is not set)
// is reported the same way, for that server alone.
func checkServer(ctx context.Context, e *env, base *liveFlags, s *lock.Server, opt lock.CheckOptions, tr mcptrace.Tracer) checked {
	c, _ := checkServerListing(ctx, e, base, s, opt, tr)
	return c
}

// checkServerListing is checkServer with the listing it gated, for scan,
// which records it as every scan records a listing (nil when the server
// was not observed, its listing reflected a credential, or the check
// failed). lock check keeps no listing past its server's check.
func checkServerListing(ctx context.Context, e *env, base *liveFlags, s *lock.Server, opt lock.CheckOptions, tr mcptrace.Tracer) (checked, *observation) {
	o, err := observeSource(ctx, e, base, s.Name, s.Source, s.ClientCapabilities, s.Identity.PublisherKey, opt.Classifier, tr, surfaceOptionsFor(s.Surface))
	target := ""
	if o != nil {
		target = o.target
	}
	if err != nil {
		return checked{result: s.NotObserved(target, errMessage(err), opt)}, nil
	}
	r, err := s.Check(o.served, opt)
	if err != nil {
		return checked{result: s.NotObserved(target, "the check failed: "+safetext.Inert(err.Error()), opt)}, nil
	}
	r.Target = target
	var ds []delta.Tool
	if r.Gate != nil && len(r.Pending)+len(r.AutoApprovable) > 0 {
		ds = changedDeltas(delta.Build(s.ToolValues(), o.served.Tools, r.Gate.StructuralChanges, r.Gate.Tools))
	}
	return checked{result: r, deltas: ds, observed: o.served.Observed}, o
}

// changedDeltas keeps the deltas of tools that changed.
func changedDeltas(ds []delta.Tool) []delta.Tool {
	out := ds[:0]
	for _, d := range ds {
		if d.Status != "unchanged" {
			out = append(out, d)
		}
	}
	return out
}

func newLockCheck(e *env) *cobra.Command {
	var (
		lockPath, format, out, color string
		allowedSigners               string
		verifyRefs, allowPrivateRefs bool
		concurrency                  int
		verbose                      bool
		obs                          observeFlags
		otlp                         *otlpFlags
	)
	reports := &extraReports{}
	cmd := &cobra.Command{
		Use:   "check [NAME...] [--format json|text|sarif|markdown|html] [-o FILE] [--timeout 30s] [--concurrency N]",
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
			if !contains(report.LockCheckFormats(), format) {
				return usageErr("--format must be one of %s", strings.Join(report.LockCheckFormats(), ", "))
			}
			if color != "auto" && color != "always" && color != "never" {
				return usageErr("--color must be auto, always or never")
			}
			if concurrency < 1 {
				return usageErr("--concurrency must be at least 1")
			}
			c, err := loadClassifier(obs.rules)
			if err != nil {
				return err
			}
			tr, err := otlp.start(e, telemetry.ModeRun)
			if err != nil {
				return err
			}
			lf, err := openLock(lockPath, false)
			if err != nil {
				return err
			}
			// The signature is over the bytes read: the lock checked is
			// the lock signed.
			if err := verifyLockSignature(e, lockPath, lf.data, allowedSigners); err != nil {
				return err
			}
			servers := lf.lock.Servers
			if len(args) > 0 {
				servers = nil
				seen := map[string]bool{}
				for _, n := range args {
					s, err := lf.server(n)
					if err != nil {
						return err
					}
					if !seen[n] {
						seen[n] = true
						servers = append(servers, s)
					}
				}
			}
			if len(servers) == 0 {
				return usageErr("%s has no servers to check: add one with mcpdrift lock add", safetext.Quote(lockPath))
			}
			base := obs.live()
			// A bound that is wrong is wrong for every server: refuse it
			// once, before anything runs.
			if err := checkBounds(e, base); err != nil {
				return err
			}
			sup, err := obs.suppress.load(e)
			if err != nil {
				return err
			}
			opt := lock.CheckOptions{Classifier: c, Today: today(), Suppressions: sup}
			if verifyRefs {
				opt.VerifiedRefs = verifiedRefs(e.context(), e, servers, allowPrivateRefs, base)
			}
			results := make([]checked, len(servers))
			sem := make(chan struct{}, concurrency)
			var wg sync.WaitGroup
			defer tr.finish()
			ctx := tr.begin(e.context(), "lock check")
			for i, s := range servers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					results[i] = checkServer(ctx, e, base, s, opt, tr.tracer())
				}()
			}
			wg.Wait()
			rs := make([]*lock.ServerResult, len(results))
			deltas := map[string][]delta.Tool{}
			for i, r := range results {
				rs[i] = r.result
				if len(r.deltas) > 0 {
					deltas[r.result.Name] = r.deltas
				}
			}
			rep := lock.NewCheckReport(lockPath, rs)
			if allowedSigners != "" {
				rep.Signed = "verified against " + allowedSigners
			}
			// Spans are exported before the report is written (at most
			// 2 s; one warning when the collector is down).
			tr.finish()
			var buf bytes.Buffer
			opt2 := report.Options{ToolVersion: version(), ArtifactURI: lockPath, Color: useColor(e, out, color), Verbose: verbose}
			if err := report.RenderLockCheck(&buf, rep, deltas, format, opt2); err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			if err := e.emitAs("the report", out, buf.Bytes()); err != nil {
				return err
			}
			if err := reports.emit(e, func(w *bytes.Buffer, f string) error {
				return report.RenderLockCheck(w, rep, deltas, f, report.Options{ToolVersion: version(), ArtifactURI: lockPath, Verbose: verbose})
			}); err != nil {
				return err
			}
			e.code = rep.ExitCode
			return nil
		},
	}
	reports.register(cmd, report.LockCheckFormats())
	registerLockPath(cmd, &lockPath)
	obs.register(cmd, 30*time.Second)
	f := cmd.Flags()
	f.StringVar(&format, "format", "text", "report format: "+strings.Join(report.LockCheckFormats(), "|"))
	f.StringVarP(&out, "output", "o", "", "write the report to FILE (atomically) instead of stdout")
	f.StringVar(&color, "color", "auto", "colour in text output: auto|always|never")
	f.IntVar(&concurrency, "concurrency", 8, "how many servers are observed at once")
	f.BoolVar(&verbose, "verbose", false, "text and markdown: every server's details, clean ones too, uncapped (by default a table of the servers, then the details of those that are not clean, capped)")
	registerAllowedSigners(cmd, &allowedSigners)
	registerVerifyRefs(cmd, &verifyRefs, &allowPrivateRefs)
	otlp = registerOTLP(cmd)
	return cmd
}
