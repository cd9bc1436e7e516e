package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

func loadClassifier(rules string) (*classify.Classifier, error) {
	if rules == "" {
		return classify.Default(), nil
	}
	c, err := classify.Load(rules)
	if err != nil {
		return nil, &exitError{ExitUsage, safetext.Escape(err.Error())}
	}
	return c, nil
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
				src, err := readInput(e, input, maxInput)
				if err != nil {
					return err
				}
				tl, err := manifest.ParseToolList(src)
				if err != nil {
					return inputErr(input, err)
				}
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
				if snapshot != "" {
					sb, err := manifest.MarshalSnapshot(serverID, id.identity(), tl, comp)
					if err != nil {
						return err
					}
					if err := writeOutput(e, snapshot, sb); err != nil {
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
			return writeOutput(e, out, b)
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
		allowEmpty, noSnapshot                          bool
		maxInput                                        int64
		id                                              identityFlags
	)
	cmd := &cobra.Command{
		Use:   "pin (--observed FILE | --input FILE --server-id ID) [-o FILE] [--snapshot FILE | --no-snapshot]",
		Short: "Promote a clean, complete observation to a declared baseline (assay.declared_mcp_manifest.v0)",
		Long: `With --observed, promotes an observed record (digests only).
With --input, observes a saved tools/list and pins it in one step, and keeps the
raw tool definitions in a snapshot beside the baseline (declared.json →
declared.snapshot.json) so that later checks can say how tools changed;
--no-snapshot turns that off, --snapshot FILE chooses the path.
Pin refuses an observation that is partial, of unknown completeness, ambiguous,
empty (unless --allow-empty) or not observed, and says why.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (observed == "") == (input == "") {
				return usageErr("give exactly one of --observed or --input")
			}
			var (
				o  *manifest.Observed
				tl *manifest.ToolList
			)
			if observed != "" {
				if snapshot != "" {
					return usageErr("--snapshot needs --input: an observed record holds digests, not tool definitions")
				}
				src, err := readInput(e, observed, maxInput)
				if err != nil {
					return err
				}
				if o, err = manifest.ParseObserved(src, observed); err != nil {
					return &exitError{ExitUsage, err.Error()}
				}
			} else {
				if serverID == "" {
					return usageErr("--server-id is required with --input")
				}
				c, err := loadClassifier(rules)
				if err != nil {
					return err
				}
				src, err := readInput(e, input, maxInput)
				if err != nil {
					return err
				}
				if tl, err = manifest.ParseToolList(src); err != nil {
					return inputErr(input, err)
				}
				o = manifest.BuildObserved(serverID, tl, tl.Completeness, c)
			}
			d, err := manifest.Pin(o, manifest.PinOptions{AllowEmpty: allowEmpty})
			if err != nil {
				src := observed
				if src == "" {
					src = input
				}
				return inputErr(src, err)
			}
			b, err := manifest.MarshalArtifact(d)
			if err != nil {
				return err
			}
			if tl != nil && !noSnapshot {
				path := snapshot
				if path == "" && out != "" && out != "-" {
					path = snapshotPathFor(out)
				}
				if path == "" {
					fmt.Fprintf(e.stderr, "mcpdrift: no snapshot written (the baseline goes to stdout); use --snapshot FILE to keep the tool definitions\n")
				} else {
					sb, err := manifest.MarshalSnapshot(o.Server.ID, id.identity(), tl, tl.Completeness)
					if err != nil {
						return err
					}
					if err := writeOutput(e, path, sb); err != nil {
						return err
					}
				}
			}
			return writeOutput(e, out, b)
		},
	}
	f := cmd.Flags()
	f.StringVar(&observed, "observed", "", "observed record (file, or - for stdin)")
	f.StringVar(&input, "input", "", "saved tools/list to observe and pin in one step")
	f.StringVar(&serverID, "server-id", "", "server id (with --input)")
	f.StringVar(&rules, "rules", "", "YAML privilege rules (with --input)")
	f.StringVarP(&out, "output", "o", "", "write the baseline to FILE (atomically) instead of stdout")
	f.StringVar(&snapshot, "snapshot", "", "write the snapshot to FILE (default: beside -o, NAME.snapshot.json)")
	f.BoolVar(&noSnapshot, "no-snapshot", false, "do not keep the raw tool definitions")
	f.BoolVar(&allowEmpty, "allow-empty", false, "pin a server that serves no tools")
	f.Int64Var(&maxInput, "max-input-bytes", DefaultMaxInput, "refuse inputs larger than this")
	id.register(f)
	return cmd
}
