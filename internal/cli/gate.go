package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

type gateFlags struct {
	observed, declared, policy, profile, format, out, rules, color string
	declaredSnapshot, observedSnapshot                             string
	maxInput                                                       int64
	suppress                                                       suppressionFlags
	decisionProfile                                                string
}

func newGate(e *env) *cobra.Command {
	var g gateFlags
	cmd := &cobra.Command{
		Use:   "gate --observed FILE [--declared FILE] [--policy FILE] [--profile default|strict] [--format text|json|sarif|markdown|html] [-o FILE]",
		Short: "Compare an observed record with the declared baseline and/or the policy map; exit 0 clean, 1 findings, 3 inconclusive, 2 bad input",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, snaps, err := runGate(e, &g)
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			opt := report.Options{ToolVersion: version(), ArtifactURI: g.observed, Color: useColor(e, g.out, g.color)}
			if g.format == "html" {
				// With the snapshots, each card has what only the
				// definitions say; without them, what the report says.
				var deltas []delta.Tool
				if snaps != nil {
					deltas = delta.Build(snaps.declared, snaps.observed, r.StructuralChanges, r.Tools)
				}
				err = writeHTML(&buf, "mcpdrift gate", report.GateSection(r, deltas))
			} else {
				err = report.Render(&buf, r, g.format, opt)
			}
			if err != nil {
				return usageErr("%s", safetext.Inert(err.Error()))
			}
			if err := e.emitAs("the report", g.out, buf.Bytes()); err != nil {
				return err
			}
			e.code = r.ExitCode
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&g.observed, "observed", "", "observed record (assay.mcp_manifest_observed.v0)")
	f.StringVar(&g.declared, "declared", "", "declared per-tool baseline (assay.declared_mcp_manifest.v0)")
	f.StringVar(&g.policy, "policy", "", "YAML policy with declared_mcp_manifests")
	f.StringVar(&g.profile, "profile", "default", "severity profile: "+strings.Join(gate.ProfileNames(), "|"))
	f.StringVar(&g.format, "format", "text", "report format: "+strings.Join(report.Formats(), "|"))
	f.StringVarP(&g.out, "output", "o", "", "write the report to FILE (atomically) instead of stdout")
	f.StringVar(&g.rules, "rules", "", "YAML privilege rules; the gate re-classifies tool names and takes either side's privilege")
	f.StringVar(&g.color, "color", "auto", "colour in text output: auto|always|never (auto: only on a terminal, and never with NO_COLOR)")
	f.StringVar(&g.declaredSnapshot, "declared-snapshot", "", "snapshot pinned with the baseline; with --observed-snapshot, structural changes are shown beside the findings")
	f.StringVar(&g.observedSnapshot, "observed-snapshot", "", "snapshot of the observation (observe --snapshot)")
	f.Int64Var(&g.maxInput, "max-input-bytes", DefaultMaxInput, "refuse inputs larger than this")
	g.suppress.register(f)
	f.StringVar(&g.decisionProfile, "decision-profile", "review", "with the snapshots, the decision profile of each tool's decision: review|fail-closed (the same as diff, drift and proxy)")
	return cmd
}

func useColor(e *env, out, mode string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if out != "" && out != "-" {
		return false
	}
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
	}
	return e.tty
}

// gateSnapshots are the tools of the two snapshots a gate was given
// (--declared-snapshot, --observed-snapshot).
type gateSnapshots struct{ declared, observed []manifest.Tool }

// runGate gates the artifacts; with the two snapshots it also returns
// their tools (nil without them).
func runGate(e *env, g *gateFlags) (*gate.Report, *gateSnapshots, error) {
	if g.observed == "" {
		return nil, nil, usageErr("--observed is required")
	}
	if g.declared == "" && g.policy == "" {
		return nil, nil, usageErr("give --declared, --policy, or both")
	}
	if !contains(report.Formats(), g.format) {
		return nil, nil, usageErr("--format must be one of %s", strings.Join(report.Formats(), ", "))
	}
	if g.color != "auto" && g.color != "always" && g.color != "never" {
		return nil, nil, usageErr("--color must be auto, always or never")
	}
	prof, err := gate.ProfileByName(g.profile)
	if err != nil {
		return nil, nil, usageErr("--profile: %s", err.Error())
	}
	c, err := loadClassifier(g.rules)
	if err != nil {
		return nil, nil, err
	}
	in := gate.Input{Profile: prof, Classifier: c, Today: today()}
	if in.Suppressions, err = g.suppress.load(e); err != nil {
		return nil, nil, err
	}
	src, err := readInput(e, g.observed, g.maxInput)
	if err != nil {
		return nil, nil, err
	}
	if in.Observed, err = manifest.ParseObserved(src, g.observed); err != nil {
		return nil, nil, &exitError{ExitUsage, err.Error()}
	}
	if g.declared != "" {
		src, err := readInput(e, g.declared, g.maxInput)
		if err != nil {
			return nil, nil, err
		}
		if in.Declared, err = manifest.ParseDeclared(src, g.declared); err != nil {
			return nil, nil, &exitError{ExitUsage, err.Error()}
		}
	}
	if g.policy != "" {
		src, err := readInput(e, g.policy, g.maxInput)
		if err != nil {
			return nil, nil, err
		}
		if in.Policy, err = manifest.ParsePolicy(src, g.policy); err != nil {
			return nil, nil, &exitError{ExitUsage, err.Error()}
		}
	}
	if (g.declaredSnapshot == "") != (g.observedSnapshot == "") {
		return nil, nil, usageErr("structural changes need both --declared-snapshot and --observed-snapshot")
	}
	dprof, err := schemadiff.DecisionProfileByName(g.decisionProfile)
	if err != nil {
		return nil, nil, usageErr("--decision-profile: %s", safetext.Inert(err.Error()))
	}
	var ds *manifest.Snapshot
	if g.declaredSnapshot != "" {
		if ds, err = loadGateSnapshot(e, g, g.declaredSnapshot); err != nil {
			return nil, nil, err
		}
		if in.Declared != nil {
			// Its definitions are part of the baseline's validity.
			in.Definitions = &manifest.Definitions{Tools: ds.Tools, From: "the declared snapshot", ServerID: ds.ServerID}
		}
	}
	r, err := gate.Run(in)
	if err != nil {
		var ie *gate.InputError
		if errors.As(err, &ie) {
			return nil, nil, usageErr("%s", safetext.Inert(ie.Msg))
		}
		return nil, nil, err
	}
	if ds == nil || baselineInvalid(r) {
		return r, nil, nil
	}
	changes, tools, snaps, err := structuralChanges(e, g, in, ds, c, dprof)
	if err != nil {
		return nil, nil, err
	}
	r.StructuralChanges, r.Tools, r.DecisionProfile = changes, tools, dprof.Name
	return r, snaps, nil
}

// structuralChanges diffs the two snapshots after checking that each one
// belongs to the artifact it stands beside (same manifest digest), so the
// explanation can never describe other tools than the digests judged.
func structuralChanges(e *env, g *gateFlags, in gate.Input, ds *manifest.Snapshot, c *classify.Classifier, dprof *schemadiff.DecisionProfile) ([]schemadiff.Change, []schemadiff.ToolVerdict, *gateSnapshots, error) {
	obsSnap, err := loadGateSnapshot(e, g, g.observedSnapshot)
	if err != nil {
		return nil, nil, nil, err
	}
	// Each snapshot must belong to the artifact it stands beside: the same
	// server id and manifest digest.
	declaredID, declaredDigest := in.Observed.Server.ID, ""
	switch {
	case in.Declared != nil:
		declaredID, declaredDigest = in.Declared.Server.ID, in.Declared.ManifestDigest
	case in.Policy != nil:
		declaredDigest = in.Policy.DeclaredMCPManifests[in.Observed.Server.ID].ManifestDigest
	}
	if err := ds.CheckPair(g.declaredSnapshot, "the baseline", declaredID, declaredDigest); err != nil {
		return nil, nil, nil, &exitError{ExitUsage, err.Error()}
	}
	od := ""
	if in.Observed.Observed.ManifestDigest != nil {
		od = *in.Observed.Observed.ManifestDigest
	}
	if err := obsSnap.CheckPair(g.observedSnapshot, "the observed record", in.Observed.Server.ID, od); err != nil {
		return nil, nil, nil, &exitError{ExitUsage, err.Error()}
	}
	old := schemadiff.Input{Side: schemadiff.Side{Identity: &ds.Identity}, Tools: ds.Tools}
	nw := schemadiff.Input{Side: schemadiff.Side{Identity: &obsSnap.Identity, ServerID: obsSnap.ServerID, Completeness: string(obsSnap.Completeness)}, Tools: obsSnap.Tools}
	var tools []schemadiff.ToolVerdict
	decisions, changes := decide.DecideAndDiff(old, nw, decide.Options{Profile: dprof, Classifier: c})
	for _, d := range decisions {
		tools = append(tools, d.Verdict())
	}
	return changes, tools, &gateSnapshots{ds.Tools, obsSnap.Tools}, nil
}

// loadGateSnapshot reads a snapshot gate was given.
func loadGateSnapshot(e *env, g *gateFlags, path string) (*manifest.Snapshot, error) {
	src, err := readInput(e, path, g.maxInput)
	if err != nil {
		return nil, err
	}
	s, err := manifest.ParseSnapshot(src, path)
	if err != nil {
		return nil, &exitError{ExitUsage, err.Error()}
	}
	return s, nil
}

// baselineInvalid reports whether the gate found the declared baseline
// invalid (manifest.CheckBaseline): no structural diff is made against it.
func baselineInvalid(r *gate.Report) bool {
	return slices.ContainsFunc(r.Inconclusive, func(code string) bool {
		return code == manifest.BaselineDigestMismatch || code == manifest.BaselineAmbiguous || code == manifest.BaselineDefinitionsMismatch
	})
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

func (s *suppressionFlags) register(fs *pflag.FlagSet) {
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
