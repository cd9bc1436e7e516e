package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/probe"
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

// classifierBeside is loadClassifier for a run that lists a server: a
// rules file is read now, so that its errors come before anything is sent,
// while the built-in table, whose compilation is work of its own, is
// compiled beside the listing's first requests rather than before them. wait
// returns the classifier.
func classifierBeside(rules string) (wait func() *classify.Classifier, err error) {
	if rules == "" {
		return par.Go(classify.Default), nil
	}
	c, err := loadClassifier(rules)
	return func() *classify.Classifier { return c }, err
}

func newObserve(e *env) *cobra.Command {
	var (
		input, serverID, complete, rules, out, snapshot string
		notObserved                                     bool
		maxInput                                        int64
		quiet                                           bool
		id                                              identityFlags
	)
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
			if serverID == "" {
				return usageErr("--server-id is required")
			}
			c, err := loadClassifier(rules)
			if err != nil {
				return err
			}
			var rec *manifest.Observed
			if notObserved {
				if input != "" || snapshot != "" {
					return usageErr("--not-observed takes no --input and no --snapshot")
				}
				rec = manifest.NotObserved(serverID)
			} else {
				if input == "" {
					return usageErr("--input is required (or --not-observed)")
				}
				tools, _, err := diff.Resolve(input, plainReader(e, maxInput))
				if err != nil {
					return err
				}
				tl := diff.ToolList(tools)
				comp := tl.Completeness
				if complete != "" {
					want, err := manifest.ParseCompleteness(complete)
					if err != nil {
						return usageErr("--complete: %s", err.Error())
					}
					if tl.Form != manifest.FormToolArray && rank(want) > rank(comp) {
						return usageErr("--complete %s: the input proves only %s (%s); --complete may lower completeness, never raise it", want, comp, tl.Reason)
					}
					comp = want
				}
				rec = manifest.BuildObserved(serverID, tl, comp, c)
				for _, w := range manifest.PrecisionWarnings("", tl.Tools) {
					fmt.Fprintf(e.stderr, "mcpdrift: warning: %s\n", w)
				}
				if snapshot != "" {
					var opt manifest.SnapshotOptions
					if rec.Observed.ManifestDigest != nil {
						opt.ManifestDigest = *rec.Observed.ManifestDigest // BuildObserved's, of tl's tools
					}
					sw, err := manifest.NewSnapshotWriter(serverID, id.identity(), tl, comp, opt)
					if err != nil {
						return err
					}
					if err := e.emitSnapshot(snapshot, func(w io.Writer) error { _, err := sw.WriteTo(w); return err }); err != nil {
						return err
					}
				}
				if !quiet {
					fmt.Fprintf(e.stderr, "mcpdrift: observed %d tools from %s (%s, %d page(s)); completeness %s: %s\n",
						len(tl.Tools), safetext.Escape(input), tl.Form, tl.Pages, comp, tl.Reason)
					if rec.Status == manifest.StatusAmbiguous {
						fmt.Fprintf(e.stderr, "mcpdrift: duplicate tool names: status ambiguous, manifest_digest null\n")
					}
				}
			}
			b, err := manifest.MarshalArtifact(rec)
			if err != nil {
				return err
			}
			return e.emitAs("the observed record", out, b)
		},
	}
	f := cmd.Flags()
	f.StringVar(&input, "input", "", "saved tools/list (file, or - for stdin)")
	f.StringVar(&serverID, "server-id", "", "server id recorded in the artifact")
	f.StringVar(&complete, "complete", "", "completeness: complete|partial|unknown (sets it for a bare tool array; can only lower it otherwise)")
	f.StringVar(&rules, "rules", "", "YAML privilege rules extending the built-in classifier")
	f.StringVarP(&out, "output", "o", "", "write the record to FILE (atomically) instead of stdout")
	f.BoolVar(&notObserved, "not-observed", false, "write the record of a tools/list that was not observed")
	f.StringVar(&snapshot, "snapshot", "", "also write the raw tool definitions (mcpdrift.tool_snapshot.v1) to FILE")
	id.register(f)
	f.Int64Var(&maxInput, "max-input-bytes", DefaultMaxInput, "refuse inputs larger than this")
	f.BoolVarP(&quiet, "quiet", "q", false, "no summary on stderr")
	return cmd
}

func rank(c manifest.Completeness) int {
	switch c {
	case manifest.Complete:
		return 2
	case manifest.Partial:
		return 1
	}
	return 0
}

func newPin(e *env) *cobra.Command {
	var (
		observed, input, serverID, rules, out, snapshot string
		allowEmpty, noSnapshot, pinResources            bool
		maxInput                                        int64
		id                                              identityFlags
		live                                            liveFlags
		otlp                                            *otlpFlags
	)
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
			var argv []string
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				if dash != 0 {
					return usageErr("pin takes no positional arguments (a stdio command goes after --)")
				}
				argv = args
			} else if len(args) > 0 {
				return usageErr("pin takes no positional arguments (a stdio command goes after --)")
			}
			// A bad --otlp-endpoint is a usage error whatever pin reads;
			// only a live pin makes requests to trace.
			tr, err := otlp.start(e, telemetry.ModeRun)
			if err != nil {
				return err
			}
			isLive := live.baseURL != "" || live.stdio || live.mcpConfig != ""
			sources := 0
			for _, b := range []bool{observed != "", input != "", isLive} {
				if b {
					sources++
				}
			}
			if sources != 1 {
				return usageErr("give exactly one of --observed, --input, --url or --stdio")
			}
			var (
				o      *manifest.Observed
				tl     *manifest.ToolList
				source string
				ident  = id.identity()
			)
			var snapOpt manifest.SnapshotOptions // live pins: the client capabilities
			checks := &pinChecks{e: e}
			noSnapshotNote := false
			switch {
			case observed != "":
				source = observed
				if snapshot != "" {
					return usageErr("--snapshot needs --input, --url or --stdio: an observed record holds digests, not tool definitions")
				}
				src, err := readInput(e, observed, maxInput)
				if err != nil {
					return err
				}
				if o, err = manifest.ParseObserved(src, observed); err != nil {
					return &exitError{ExitUsage, err.Error()}
				}
			default:
				if serverID == "" {
					return usageErr("--server-id is required with --input, --url and --stdio")
				}
				classifier, err := classifierBeside(rules)
				if err != nil {
					return err
				}
				comp := manifest.Unknown
				if input != "" {
					source = input
					tools, _, err := diff.Resolve(input, plainReader(e, maxInput))
					if err != nil {
						return err
					}
					tl = diff.ToolList(tools)
					comp = tl.Completeness
					checks.check(tl.Tools)
				} else {
					// Exported when the run ends, whatever its outcome:
					// at most 2 s, one warning if the collector is down.
					defer tr.finish()
					ctx := tr.begin(context.Background(), "pin")
					cfg, err := live.config(e, argv)
					if err != nil {
						return err
					}
					cfg.Tracer, cfg.Surface = tr.tracer(), surfaceOptions(pinResources)
					_, target := e.targetOf(cfg)
					source = target
					ctx, cancel := context.WithTimeout(ctx, live.timeout)
					defer cancel()
					obs, ltl, err := listFull(ctx, cfg)
					if err != nil {
						return observe.Failed(target, err)
					}
					tl, comp = ltl, manifest.Completeness(obs.Completeness)
					checks.check(tl.Tools)
					if obs.Era == mcpclient.EraModern && len(cfg.Command) == 0 {
						checks.paramHeaders(tl.Tools)
					}
					// Part of what was pinned: the tools a server lists can
					// depend on the client capabilities declared.
					snapOpt.ClientCapabilities = obs.ClientCapabilities
					if snapOpt.Surface, err = pinSurface(e, target, obs.Surface); err != nil {
						return err
					}
					if obs.CapReached {
						return &exitError{ExitUsage, fmt.Sprintf("refusing to pin %s: the listing was capped at %d pages, so it is partial (raise --max-list-pages)", safetext.Quote(target), live.maxPages)}
					}
					if obs.CursorCycle {
						return &exitError{ExitUsage, fmt.Sprintf("refusing to pin %s: the server's cursors cycle, so the listing is partial", safetext.Quote(target))}
					}
					// A snapshot stores the bytes it pinned, so a list that
					// carries a secret this run sent cannot be pinned.
					if refl := append(checks.reflected, observe.IdentityReflections(e.secrets, obs)...); len(refl) > 0 {
						where := "its reported identity (serverInfo)"
						if refl[0].Tool != "" {
							where = "tool " + safetext.Quote(refl[0].Tool) + " at JSON pointer " + safetext.Quote(refl[0].Pointer)
						}
						return &exitError{ExitUsage, fmt.Sprintf("refusing to pin %s: the server reflects credentials into its tool list: %s carries %s (%d place(s) in all). Rotate the credential and fix the server", safetext.Quote(target), where, refl[0].Source, len(refl))}
					}
					if ident.Endpoint == "" {
						ident.Endpoint, ident.ResolvedEndpoint = target, e.resolvedEndpoint(cfg)
					}
					ident.Env = observe.EnvIdentity(cfg)
					if obs.ServerInfo != nil {
						if ident.ServerName == "" {
							ident.ServerName = obs.ServerInfo.Name
						}
						if ident.ServerVersion == "" {
							ident.ServerVersion = obs.ServerInfo.Version
						}
					}
				}
				// The snapshot is queued first: a large one is written while
				// the baseline is built (emitStream), and removed if pin
				// refuses. Its head is computed there too.
				if !noSnapshot {
					path := pinSnapshotPath(noSnapshot, snapshot, out)
					if path == "" {
						noSnapshotNote = true // said once pin has succeeded
					} else {
						snapID, snapIdent, snapTL, snapComp, snapOpts := serverID, ident, tl, comp, snapOpt
						err := e.emitSnapshot(path, func(w io.Writer) error {
							sw, err := manifest.NewSnapshotWriter(snapID, snapIdent, snapTL, snapComp, snapOpts)
							if err != nil {
								return err
							}
							_, err = sw.WriteTo(w)
							return err
						})
						if err != nil {
							return err
						}
					}
				}
				o = manifest.BuildObserved(serverID, tl, comp, classifier())
				for _, w := range manifest.PrecisionWarningsOf("", checks.imprecise, checks.impreciseTotal) {
					fmt.Fprintf(e.stderr, "mcpdrift: warning: %s\n", w)
				}
			}
			d, err := e.pinBaseline(o, source, allowEmpty, &live.suppress, checks, tl != nil)
			if err != nil {
				return err
			}
			if noSnapshotNote {
				fmt.Fprintf(e.stderr, "mcpdrift: no snapshot written (the baseline goes to stdout); use --snapshot FILE to keep the tool definitions\n")
			}
			b, err := manifest.MarshalArtifact(d)
			if err != nil {
				return err
			}
			return e.emitAs("the declared baseline", out, b)
		},
	}
	live.register(cmd, "url")
	otlp = registerOTLP(cmd)
	f := cmd.Flags()
	f.StringVar(&observed, "observed", "", "observed record (file, or - for stdin)")
	f.StringVar(&input, "input", "", "saved tools/list to observe and pin in one step")
	f.StringVar(&serverID, "server-id", "", "server id (with --input, --url, --stdio)")
	f.StringVar(&rules, "rules", "", "YAML privilege rules (with --input, --url, --stdio)")
	f.StringVarP(&out, "output", "o", "", "write the baseline to FILE (atomically) instead of stdout")
	f.StringVar(&snapshot, "snapshot", "", "write the snapshot to FILE (default: beside -o, NAME.snapshot.json)")
	f.BoolVar(&noSnapshot, "no-snapshot", false, "do not keep the raw tool definitions")
	f.BoolVar(&allowEmpty, "allow-empty", false, "pin a server that serves no tools")
	f.BoolVar(&pinResources, "pin-resources", false, "with --url or --stdio, pin what resources/list lists too (instructions, prompts and resource templates are always pinned; many servers list data that changes all the time)")
	f.Int64Var(&maxInput, "max-input-bytes", DefaultMaxInput, "refuse inputs larger than this")
	id.register(f)
	return cmd
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

// pinChecks are what pin reads of every tool's parse: secrets this run
// sent reflected into a tool, numbers the digests cannot tell apart, and
// tools that break the specification's shape.
type pinChecks struct {
	e              *env
	reflected      []probe.Reflection
	imprecise      []manifest.ImpreciseNumber // the first MaxPrecisionWarnings
	impreciseTotal int
	shapes         []string // the first maxShapeWarnings warnings
	shapeTotal     int
}

// maxShapeWarnings bounds the shape warnings pin prints.
const maxShapeWarnings = 50

// check checks tools.
func (c *pinChecks) check(tools []manifest.Tool) {
	c.reflected = append(c.reflected, observe.ToolReflections(c.e.secrets, tools)...)
	found, total := manifest.ImpreciseNumbers(tools, max(manifest.MaxPrecisionWarnings-len(c.imprecise), 0))
	c.imprecise = append(c.imprecise, found...)
	c.impreciseTotal += total
	for i := range tools {
		msg := probe.ShapeProblem(&tools[i])
		if msg == "" {
			continue
		}
		if c.shapeTotal++; c.shapeTotal <= maxShapeWarnings {
			c.shapes = append(c.shapes, fmt.Sprintf("tool %s breaks the specification: %s; it is pinned as served, and every drift against this baseline will report MCP-CONF-TOOL-SHAPE for it", safetext.Quote(tools[i].Name), msg))
		}
	}
}

// paramHeaders notes the tools a 2026-07-28 Streamable HTTP client
// excludes for their x-mcp-header annotations (a live pin over HTTP in
// that era): warned with the shape warnings, in their bound.
func (c *pinChecks) paramHeaders(tools []manifest.Tool) {
	for i := range tools {
		msg := tools[i].ParamHeaderProblem()
		if msg == "" {
			continue
		}
		if c.shapeTotal++; c.shapeTotal <= maxShapeWarnings {
			c.shapes = append(c.shapes, fmt.Sprintf("tool %s: %s; it is pinned as served, and every drift over HTTP will report MCP-CONF-PARAM-HEADER for it (the gateway does not serve it)", safetext.Quote(tools[i].Name), msg))
		}
	}
}

// warnShape warns, at pin time, of the tools that break the
// specification's tool shape: every later drift reports them as
// MCP-CONF-TOOL-SHAPE.
func (c *pinChecks) warnShape() {
	for _, w := range c.shapes {
		fmt.Fprintf(c.e.stderr, "mcpdrift: warning: %s\n", w)
	}
	if n := c.shapeTotal - len(c.shapes); n > 0 {
		fmt.Fprintf(c.e.stderr, "mcpdrift: warning: and %d more tools that break the specification\n", n)
	}
}
