package cli

import (
	"bytes"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// plainReader reads each input file with readInput (stdin for "-").
func plainReader(e *env, max int64) diff.FileReader {
	return func(p string) ([]byte, error) { return readInput(e, p, max) }
}

// loadTools reads one side of a comparison (diff.Load).
func loadTools(e *env, path string, max int64) (schemadiff.Input, error) {
	in, _, err := diff.Load(path, plainReader(e, max))
	return in, err
}

// diffOptions are diff's flags.
type diffOptions struct {
	profile, rules string
	maxInput       int64
	report         reportFlags
}

func (o *diffOptions) AddFlags(cmd *cobra.Command) {
	o.report.AddFlags(cmd, report.DiffFormats())
	f := cmd.Flags()
	f.StringVar(&o.profile, "profile", "review", "decision profile: review|fail-closed")
	f.StringVar(&o.rules, "rules", "", "YAML privilege rules (grades added and removed tools)")
	f.Int64Var(&o.maxInput, "max-input-bytes", DefaultMaxInput, "refuse inputs larger than this")
}

func newDiff(e *env) *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff OLD NEW [--format text|json|markdown|html] [--profile review|fail-closed] [-o FILE]",
		Short: "Say how tools changed between two manifests or snapshots; exit 0 nothing changed (or notation only), 1 changed, 2 bad input, 3 new list partial",
		Long: `OLD and NEW are saved tools/list manifests in any form observe accepts,
snapshots (mcpdrift.tool_snapshot.v1), or declared baselines (read through the
snapshot beside them). Changes are graded by direction (widening, narrowing,
neutral) and severity; the profile decides: review (default) makes every change
reviewable; fail-closed denies schema drift under a stable description, external
$refs, endpoint or publisher churn, and new optional parameters. Under both, a
tool whose every change is notation (schemas that accept the same instances) is
allowed ("notation only"), and a partial NEW list is never allowed. When both
sides are snapshots with identities, the endpoint, publisher key, server
name/version and a stdio server's environment are compared too, and when they
pin the server's instructions, prompts and resource templates (docs/surface.md),
those too: a change needs review, changed instructions are denied under
fail-closed.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := o.options(e, args[0], args[1])
			if err != nil {
				return err
			}
			res, err := diff.Run(e.context(), opt)
			if err != nil {
				return err
			}
			r := res.Report
			var buf bytes.Buffer
			if o.report.format == "html" {
				err = writeHTML(&buf, "mcpdrift diff", report.DiffSection(r, delta.Build(opt.Old.Tools, opt.New.Tools, r.Changes, r.Tools)))
			} else {
				err = report.RenderDiff(&buf, r, o.report.format, o.report.options(e, ""))
			}
			if err := o.report.emit(e, buf.Bytes(), err); err != nil {
				return err
			}
			e.code = r.ExitCode
			return nil
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// options read the two sides and turn the flags into diff.Options.
func (o *diffOptions) options(e *env, oldPath, newPath string) (diff.Options, error) {
	var opt diff.Options
	if err := o.report.check(); err != nil {
		return opt, err
	}
	prof, err := schemadiff.DecisionProfileByName(o.profile)
	if err != nil {
		return opt, usageErr("--profile: %s", safetext.Inert(err.Error()))
	}
	c, err := loadClassifier(o.rules)
	if err != nil {
		return opt, err
	}
	opt = diff.Options{Profile: prof, Classifier: c}
	if opt.Old, err = loadTools(e, oldPath, o.maxInput); err != nil {
		return opt, err
	}
	opt.New, err = loadTools(e, newPath, o.maxInput)
	return opt, err
}
