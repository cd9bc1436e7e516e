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
		input, serverID, complete, rules, out string
		notObserved                           bool
		maxInput                              int64
		quiet                                 bool
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
				if input != "" {
					return usageErr("--not-observed takes no --input")
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
	var observed, out string
	var allowEmpty bool
	var maxInput int64
	cmd := &cobra.Command{
		Use:   "pin --observed FILE [-o FILE]",
		Short: "Promote a clean, complete observed record to a declared baseline (assay.declared_mcp_manifest.v0)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if observed == "" {
				return usageErr("--observed is required")
			}
			src, err := readInput(e, observed, maxInput)
			if err != nil {
				return err
			}
			o, err := manifest.ParseObserved(src, observed)
			if err != nil {
				return &exitError{ExitUsage, err.Error()}
			}
			d, err := manifest.Pin(o, manifest.PinOptions{AllowEmpty: allowEmpty})
			if err != nil {
				return inputErr(observed, err)
			}
			b, err := manifest.MarshalArtifact(d)
			if err != nil {
				return err
			}
			return writeOutput(e, out, b)
		},
	}
	f := cmd.Flags()
	f.StringVar(&observed, "observed", "", "observed record (file, or - for stdin)")
	f.StringVarP(&out, "output", "o", "", "write the baseline to FILE (atomically) instead of stdout")
	f.BoolVar(&allowEmpty, "allow-empty", false, "pin a server that serves no tools")
	f.Int64Var(&maxInput, "max-input-bytes", DefaultMaxInput, "refuse inputs larger than this")
	return cmd
}
