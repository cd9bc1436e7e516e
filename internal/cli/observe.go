package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/pin"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/telemetry"
)

func loadClassifier(rules string) (*classify.Classifier, error) {
	if rules == "" {
		return classify.Default(), nil
	}
	c, err := classify.Load(rules)
	if err != nil {
		return nil, &exitError{ExitUsage, safetext.Inert(err.Error())}
	}
	return c, nil
}

// observeOptions are observe's flags.
type observeOptions struct {
	input, serverID, complete, rules, out, snapshot string
	notObserved                                     bool
	maxInput                                        int64
	quiet                                           bool
	id                                              identityFlags
}

func (o *observeOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.input, "input", "", "saved tools/list (file, or - for stdin)")
	f.StringVar(&o.serverID, "server-id", "", "server id recorded in the artifact")
	f.StringVar(&o.complete, "complete", "", "completeness: complete|partial|unknown (sets it for a bare tool array; can only lower it otherwise)")
	f.StringVar(&o.rules, "rules", "", "YAML privilege rules extending the built-in classifier")
	f.StringVarP(&o.out, "output", "o", "", "write the record to FILE (atomically) instead of stdout")
	f.BoolVar(&o.notObserved, "not-observed", false, "write the record of a tools/list that was not observed")
	f.StringVar(&o.snapshot, "snapshot", "", "also write the raw tool definitions (mcpdrift.tool_snapshot.v1) to FILE")
	o.id.AddFlags(f)
	f.Int64Var(&o.maxInput, "max-input-bytes", DefaultMaxInput, "refuse inputs larger than this")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no summary on stderr")
}

func newObserve(e *env) *cobra.Command {
	o := &observeOptions{}
	cmd := &cobra.Command{
		Use:   "observe --input FILE --server-id ID [--complete complete|partial|unknown] [--rules FILE] [-o FILE]",
		Short: "Build the observed record (assay.mcp_manifest_observed.v0) from a saved tools/list",
		Long: `Reads a saved tools/list in any of these forms (FILE, or - for stdin):
  a JSON-RPC response to tools/list; a bare result {"tools":[...],"nextCursor"?:...};
  a JSON array of such responses or results (the pages, in order, optionally with
  the tools/list requests between them); or a bare JSON array of tool objects.
Completeness is derived for pages (complete only when the chain starts without a
cursor and the last page has no nextCursor) and is unknown for a bare tool array;
--complete sets it for a bare array and may only lower it otherwise.
--not-observed writes the record of a server whose tools/list was not observed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rec, err := o.observe(e)
			if err != nil {
				return err
			}
			b, err := manifest.MarshalArtifact(rec)
			if err != nil {
				return err
			}
			return e.emitAs("the observed record", o.out, b)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// observe is the record of the flags: the not-observed one, or the
// observation of --input (observe.File), with its snapshot queued.
func (o *observeOptions) observe(e *env) (*manifest.Observed, error) {
	if o.serverID == "" {
		return nil, usageErr("--server-id is required")
	}
	c, err := loadClassifier(o.rules)
	if err != nil {
		return nil, err
	}
	if o.notObserved {
		if o.input != "" || o.snapshot != "" {
			return nil, usageErr("--not-observed takes no --input and no --snapshot")
		}
		return manifest.NotObserved(o.serverID), nil
	}
	if o.input == "" {
		return nil, usageErr("--input is required (or --not-observed)")
	}
	opt := observe.FileOptions{ServerID: o.serverID, Classifier: c}
	if o.complete != "" {
		if opt.Complete, err = manifest.ParseCompleteness(o.complete); err != nil {
			return nil, usageErr("--complete: %s", err.Error())
		}
	}
	tools, _, err := diff.Resolve(o.input, plainReader(e, o.maxInput))
	if err != nil {
		return nil, err
	}
	tl := diff.ToolList(tools)
	opt.Tools = tl
	r, err := observe.File(e.context(), opt)
	if err != nil {
		return nil, err
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(e.stderr, "mcpdrift: warning: %s\n", w)
	}
	if o.snapshot != "" {
		var sopt manifest.SnapshotOptions
		if r.Observed.Observed.ManifestDigest != nil {
			sopt.ManifestDigest = *r.Observed.Observed.ManifestDigest // the record's, of tl's tools
		}
		sw, err := manifest.NewSnapshotWriter(o.serverID, o.id.identity(), tl, r.Completeness, sopt)
		if err != nil {
			return nil, err
		}
		if err := e.emitSnapshot(o.snapshot, func(w io.Writer) error { _, err := sw.WriteTo(w); return err }); err != nil {
			return nil, err
		}
	}
	if !o.quiet {
		fmt.Fprintf(e.stderr, "mcpdrift: observed %d tools from %s (%s, %d page(s)); completeness %s: %s\n",
			len(tl.Tools), safetext.Escape(o.input), tl.Form, tl.Pages, r.Completeness, tl.Reason)
		if r.Observed.Status == manifest.StatusAmbiguous {
			fmt.Fprintf(e.stderr, "mcpdrift: duplicate tool names: status ambiguous, manifest_digest null\n")
		}
	}
	return r.Observed, nil
}

// pinOptions are pin's flags: one source (a record, a list, or a live
// server), what is pinned, and where it goes.
type pinOptions struct {
	observed, input, serverID, rules, out, snapshot string
	allowEmpty, noSnapshot, pinResources            bool
	maxInput                                        int64
	id                                              identityFlags
	live                                            liveFlags
	otlp                                            *otlpFlags
}

func (o *pinOptions) AddFlags(cmd *cobra.Command) {
	o.live.AddFlags(cmd, "url")
	o.otlp = registerOTLP(cmd)
	f := cmd.Flags()
	f.StringVar(&o.observed, "observed", "", "observed record (file, or - for stdin)")
	f.StringVar(&o.input, "input", "", "saved tools/list to observe and pin in one step")
	f.StringVar(&o.serverID, "server-id", "", "server id (with --input, --url, --stdio)")
	f.StringVar(&o.rules, "rules", "", "YAML privilege rules (with --input, --url, --stdio)")
	f.StringVarP(&o.out, "output", "o", "", "write the baseline to FILE (atomically) instead of stdout")
	f.StringVar(&o.snapshot, "snapshot", "", "write the snapshot to FILE (default: beside -o, NAME.snapshot.json)")
	f.BoolVar(&o.noSnapshot, "no-snapshot", false, "do not keep the raw tool definitions")
	f.BoolVar(&o.allowEmpty, "allow-empty", false, "pin a server that serves no tools")
	f.BoolVar(&o.pinResources, "pin-resources", false, "with --url or --stdio, pin what resources/list lists too (instructions, prompts and resource templates are always pinned; many servers list data that changes all the time)")
	f.Int64Var(&o.maxInput, "max-input-bytes", DefaultMaxInput, "refuse inputs larger than this")
	o.id.AddFlags(f)
}

func newPin(e *env) *cobra.Command {
	o := &pinOptions{}
	cmd := &cobra.Command{
		Use:   "pin (--observed FILE | --input FILE --server-id ID | --url URL | --stdio -- CMD ARGS...) [-o FILE] [--snapshot FILE | --no-snapshot]",
		Short: "Promote a clean, complete observation to a declared baseline (assay.declared_mcp_manifest.v0)",
		Long: `With --observed, promotes an observed record (digests only).
With --input, observes a saved tools/list and pins it in one step.
With --url or --stdio, captures a live baseline from a running server; the
server's reported name and version and the endpoint are kept in the snapshot.
--input, --url and --stdio keep the raw tool definitions in a snapshot beside
the baseline (declared.json → declared.snapshot.json) so that later checks can
say how tools changed; --no-snapshot turns that off, --snapshot FILE chooses the
path. A live pin also keeps in the snapshot what the server puts before the
model beside its tools (docs/surface.md): its instructions, prompts and resource
templates, and with --pin-resources the resources it lists; a part that is
partial, lists a name twice or reflects a credential is refused.
Pin refuses an observation that is partial (a capped or cyclic page chain
included), of unknown completeness, ambiguous, empty (unless --allow-empty) or
not observed, and says why.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			argv, err := stdioArgv(cmd, args, "pin")
			if err != nil {
				return err
			}
			// A bad --otlp-endpoint is a usage error whatever pin reads;
			// only a live pin makes requests to trace.
			tr, err := o.otlp.start(e, telemetry.ModeRun)
			if err != nil {
				return err
			}
			defer tr.finish()
			r, err := o.pin(e, argv, tr)
			if err != nil {
				return err
			}
			return o.write(e, r)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// stdioArgv is the stdio command after -- (cmd takes no positional
// arguments).
func stdioArgv(cmd *cobra.Command, args []string, name string) ([]string, error) {
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		if dash != 0 {
			return nil, usageErr("%s takes no positional arguments (a stdio command goes after --)", name)
		}
		return args, nil
	}
	if len(args) > 0 {
		return nil, usageErr("%s takes no positional arguments (a stdio command goes after --)", name)
	}
	return nil, nil
}

// pin pins the one source given: the record (pin.Observed), the list
// (pin.File) or the live server (pin.Server).
func (o *pinOptions) pin(e *env, argv []string, tr *tracing) (*pin.Result, error) {
	isLive := o.live.baseURL != "" || o.live.stdio || o.live.mcpConfig != ""
	sources := 0
	for _, b := range []bool{o.observed != "", o.input != "", isLive} {
		if b {
			sources++
		}
	}
	if sources != 1 {
		return nil, usageErr("give exactly one of --observed, --input, --url or --stdio")
	}
	vouch := manifest.Vouch{Suppressions: func() (*manifest.Suppressions, error) { return o.live.suppress.load(e) }, Today: today()}
	if o.observed != "" {
		if o.snapshot != "" {
			return nil, usageErr("--snapshot needs --input, --url or --stdio: an observed record holds digests, not tool definitions")
		}
		rec, err := readArtifact(e, o.observed, o.maxInput, manifest.ParseObserved)
		if err != nil {
			return nil, err
		}
		return pin.Observed(e.context(), pin.ObservedOptions{Observed: rec, Source: o.observed, AllowEmpty: o.allowEmpty, Vouch: vouch})
	}
	if o.serverID == "" {
		return nil, usageErr("--server-id is required with --input, --url and --stdio")
	}
	var c *classify.Classifier // nil: the built-in table, compiled beside the listing
	if o.rules != "" {
		var err error
		if c, err = loadClassifier(o.rules); err != nil {
			return nil, err
		}
	}
	if o.input != "" {
		tools, _, err := diff.Resolve(o.input, plainReader(e, o.maxInput))
		if err != nil {
			return nil, err
		}
		return pin.File(e.context(), pin.FileOptions{Tools: diff.ToolList(tools), Source: o.input, ServerID: o.serverID, Identity: o.id.identity(),
			Classifier: c, AllowEmpty: o.allowEmpty, Vouch: vouch})
	}
	cfg, err := o.live.config(e, argv)
	if err != nil {
		return nil, err
	}
	cfg.Tracer = tr.tracer()
	return pin.Server(tr.begin(e.context(), "pin"), pin.ServerOptions{Server: cfg, ServerID: o.serverID, Identity: o.id.identity(), PinResources: o.pinResources,
		Classifier: c, Secrets: e.secrets, Timeout: o.live.timeout, AllowEmpty: o.allowEmpty, Vouch: vouch})
}

// write says what the pin acknowledged and warns of, and queues the
// snapshot (beside -o, or --snapshot) and the baseline.
func (o *pinOptions) write(e *env, r *pin.Result) error {
	for _, s := range r.Acknowledged {
		fmt.Fprintf(e.stderr, "mcpdrift: %s\n", s)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(e.stderr, "mcpdrift: warning: %s\n", w)
	}
	if r.HasSnapshot() && !o.noSnapshot {
		if path := pinSnapshotPath(o.noSnapshot, o.snapshot, o.out); path != "" {
			if err := e.emitSnapshot(path, r.WriteSnapshot); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(e.stderr, "mcpdrift: no snapshot written (the baseline goes to stdout); use --snapshot FILE to keep the tool definitions\n")
		}
	}
	b, err := manifest.MarshalArtifact(r.Declared)
	if err != nil {
		return err
	}
	return e.emitAs("the declared baseline", o.out, b)
}

// pinSnapshotPath is where pin writes its snapshot: --snapshot, else
// beside -o; "" for none (--no-snapshot, or the baseline to stdout).
func pinSnapshotPath(noSnapshot bool, snapshot, out string) string {
	switch {
	case noSnapshot:
		return ""
	case snapshot != "":
		return snapshot
	case out != "" && out != "-":
		return snapshotPathFor(out)
	}
	return ""
}
