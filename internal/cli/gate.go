package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// gateOptions are gate's flags: the artifacts it reads, how it judges
// them, and its report.
type gateOptions struct {
	observed, declared, policy, profile, rules string
	declaredSnapshot, observedSnapshot         string
	decisionProfile                            string
	maxInput                                   int64
	suppress                                   suppressionFlags
	report                                     reportFlags
}

func (o *gateOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.observed, "observed", "", "observed record (assay.mcp_manifest_observed.v0)")
	f.StringVar(&o.declared, "declared", "", "declared per-tool baseline (assay.declared_mcp_manifest.v0)")
	f.StringVar(&o.policy, "policy", "", "YAML policy with declared_mcp_manifests")
	f.StringVar(&o.profile, "profile", "default", "severity profile: "+strings.Join(gate.ProfileNames(), "|"))
	o.report.AddFlags(cmd, report.Formats())
	f.StringVar(&o.rules, "rules", "", "YAML privilege rules; the gate re-classifies tool names and takes either side's privilege")
	f.StringVar(&o.declaredSnapshot, "declared-snapshot", "", "snapshot pinned with the baseline; with --observed-snapshot, structural changes are shown beside the findings")
	f.StringVar(&o.observedSnapshot, "observed-snapshot", "", "snapshot of the observation (observe --snapshot)")
	f.Int64Var(&o.maxInput, "max-input-bytes", DefaultMaxInput, "refuse inputs larger than this")
	o.suppress.AddFlags(f)
	f.StringVar(&o.decisionProfile, "decision-profile", "review", "with the snapshots, the decision profile of each tool's decision: review|fail-closed (the same as diff, drift and proxy)")
}

func newGate(e *env) *cobra.Command {
	o := &gateOptions{}
	cmd := &cobra.Command{
		Use:   "gate --observed FILE [--declared FILE] [--policy FILE] [--profile default|strict] [--format text|json|sarif|markdown|html] [-o FILE]",
		Short: "Compare an observed record with the declared baseline and/or the policy map; exit 0 clean, 1 findings, 3 inconclusive, 2 bad input",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := o.options(e)
			if err != nil {
				return err
			}
			r, err := gate.Run(e.context(), opt)
			if err != nil {
				return gateErr(err)
			}
			var buf bytes.Buffer
			if o.report.format == "html" {
				// With the snapshots, each card has what only the
				// definitions say; without them, what the report says.
				var deltas []delta.Tool
				if s := opt.Snapshots; s != nil && r.Tools != nil {
					deltas = delta.Build(s.Declared.Tools, s.Observed.Tools, r.StructuralChanges, r.Tools)
				}
				err = writeHTML(&buf, "mcpdrift gate", report.GateSection(r, deltas))
			} else {
				err = report.Render(&buf, r, o.report.format, o.report.options(e, o.observed))
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

// options reads the artifacts and turns the flags into gate.Options.
func (o *gateOptions) options(e *env) (gate.Options, error) {
	var opt gate.Options
	switch {
	case o.observed == "":
		return opt, usageErr("--observed is required")
	case o.declared == "" && o.policy == "":
		return opt, usageErr("give --declared, --policy, or both")
	case (o.declaredSnapshot == "") != (o.observedSnapshot == ""):
		return opt, usageErr("structural changes need both --declared-snapshot and --observed-snapshot")
	}
	if err := o.report.check(); err != nil {
		return opt, err
	}
	prof, err := gate.ProfileByName(o.profile)
	if err != nil {
		return opt, usageErr("--profile: %s", err.Error())
	}
	if opt.DecisionProfile, err = schemadiff.DecisionProfileByName(o.decisionProfile); err != nil {
		return opt, usageErr("--decision-profile: %s", safetext.Inert(err.Error()))
	}
	c, err := loadClassifier(o.rules)
	if err != nil {
		return opt, err
	}
	opt.Input = gate.Input{Profile: prof, Classifier: c, Today: today()}
	if opt.Suppressions, err = o.suppress.load(e); err != nil {
		return opt, err
	}
	if opt.Observed, err = readArtifact(e, o.observed, o.maxInput, manifest.ParseObserved); err != nil {
		return opt, err
	}
	if o.declared != "" {
		if opt.Declared, err = readArtifact(e, o.declared, o.maxInput, manifest.ParseDeclared); err != nil {
			return opt, err
		}
	}
	if o.policy != "" {
		if opt.Policy, err = readArtifact(e, o.policy, o.maxInput, manifest.ParsePolicy); err != nil {
			return opt, err
		}
	}
	if o.declaredSnapshot != "" {
		s := &gate.Snapshots{DeclaredName: o.declaredSnapshot, ObservedName: o.observedSnapshot}
		if s.Declared, err = readArtifact(e, o.declaredSnapshot, o.maxInput, manifest.ParseSnapshot); err != nil {
			return opt, err
		}
		if s.Observed, err = readArtifact(e, o.observedSnapshot, o.maxInput, manifest.ParseSnapshot); err != nil {
			return opt, err
		}
		opt.Snapshots = s
	}
	return opt, nil
}

// readArtifact reads the file at path (or stdin) and parses it with
// parse; a parse error names the file (exit 2).
func readArtifact[T any](e *env, path string, max int64, parse func([]byte, string) (T, error)) (T, error) {
	var zero T
	src, err := readInput(e, path, max)
	if err != nil {
		return zero, err
	}
	v, err := parse(src, path)
	if err != nil {
		return zero, &exitError{ExitUsage, err.Error()}
	}
	return v, nil
}

// gateErr is the exit of a gate's error: an input the gate cannot
// evaluate, or a snapshot that is not its artifact's, is exit 2.
func gateErr(err error) error {
	if ie, ok := errors.AsType[*gate.InputError](err); ok {
		return usageErr("%s", safetext.Inert(ie.Msg))
	}
	if _, ok := errors.AsType[*manifest.ArtifactError](err); ok {
		return &exitError{ExitUsage, err.Error()}
	}
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func newCodes(e *env) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "codes [--format text|markdown]",
		Short: "List every reason code mcpdrift can emit (the rule catalogue)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "markdown":
				return e.emit("-", catalog.Markdown())
			case "text":
				var b strings.Builder
				for _, c := range catalog.All() {
					sev := string(c.Severity)
					if c.Kind != catalog.Finding {
						sev = "-"
					}
					b.WriteString(padRight(c.Code, 42) + padRight(string(c.Kind), 13) + padRight(sev, 8) + c.Title + "\n")
				}
				return e.emit("-", []byte(b.String()))
			}
			return usageErr("--format must be text or markdown")
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text|markdown")
	return cmd
}

func padRight(s string, n int) string {
	if len(s) >= n {
		return s + " "
	}
	return s + strings.Repeat(" ", n-len(s))
}

// suppressionFlags select the suppression file: the findings gate, drift
// and lock check accept, and the colliding tool names pin, lock add,
// approve and the gateway accept (manifest.NameCollisionRule).
type suppressionFlags struct {
	file string
	none bool
}

func (s *suppressionFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.file, "suppressions", "", "per-rule suppression file (default: "+manifest.SuppressionsFile+" in the current directory, when there is one); suppressed findings are listed in every report")
	fs.BoolVar(&s.none, "no-suppressions", false, "ignore any suppression file")
}

// load reads the suppression file: the one given, else mcpdrift.yaml in
// the current directory when it exists (said on stderr), else none.
func (s *suppressionFlags) load(e *env) (*manifest.Suppressions, error) {
	if s.none {
		if s.file != "" {
			return nil, usageErr("--suppressions and --no-suppressions exclude each other")
		}
		return nil, nil
	}
	path := s.file
	if path == "" {
		st, err := os.Stat(manifest.SuppressionsFile)
		if err != nil || !st.Mode().IsRegular() {
			return nil, nil
		}
		path = manifest.SuppressionsFile
	}
	src, err := readInput(e, path, DefaultMaxInput)
	if err != nil {
		return nil, err
	}
	sup, err := manifest.ParseSuppressions(src, path)
	if err != nil {
		return nil, &exitError{ExitUsage, err.Error()}
	}
	if s.file == "" {
		fmt.Fprintf(e.stderr, "mcpdrift: using %d suppression(s) from %s (--no-suppressions ignores it)\n", len(sup.Items), safetext.Quote(path))
	}
	return sup, nil
}

// today is the UTC day suppressions expire against.
func today() string { return time.Now().UTC().Format("2006-01-02") }
