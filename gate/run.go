package gate

import (
	"context"
	"slices"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Options is what a gate run reads: the artifacts of Input, and, when
// both snapshots are given, the tool definitions beside them, which add
// the structural changes and each tool's decision to the report.
type Options struct {
	Input
	// Snapshots, when not nil, are the snapshot pinned with the baseline
	// and the snapshot of the observation: each must belong to the
	// artifact it stands beside (the same server id and manifest
	// digest), and their structural diff explains the findings. It never
	// changes the verdict.
	Snapshots *Snapshots
	// DecisionProfile decides each tool of the snapshots (nil: review,
	// as diff, drift and the gateway decide).
	DecisionProfile *schemadiff.DecisionProfile
}

// Snapshots are the two snapshots of a gate, and the names their errors
// give them (their files).
type Snapshots struct {
	Declared, Observed         *manifest.Snapshot
	DeclaredName, ObservedName string
}

// Run gates the observed record against the declared baseline and/or the
// policy (Evaluate), then, with both snapshots, explains the findings with
// the structural changes of every tool and its decision. A baseline the
// gate finds invalid is not diffed against. An error is an input the gate
// cannot evaluate (*InputError), or a snapshot that is not its artifact's
// (*manifest.ArtifactError).
func Run(ctx context.Context, opt Options) (*Report, error) {
	in := opt.Input
	if s := opt.Snapshots; s != nil && s.Declared != nil && in.Declared != nil && in.Definitions == nil {
		// Its definitions are part of the baseline's validity.
		in.Definitions = &manifest.Definitions{Tools: s.Declared.Tools, From: "the declared snapshot", ServerID: s.Declared.ServerID}
	}
	r, err := Evaluate(in)
	if err != nil || opt.Snapshots == nil || baselineInvalid(r) {
		return r, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prof := opt.DecisionProfile
	if prof == nil {
		prof = schemadiff.ReviewProfile
	}
	if err := checkSnapshots(in, opt.Snapshots); err != nil {
		return nil, err
	}
	ds, os := opt.Snapshots.Declared, opt.Snapshots.Observed
	old := schemadiff.Input{Side: schemadiff.Side{Identity: &ds.Identity}, Tools: ds.Tools}
	nw := schemadiff.Input{Side: schemadiff.Side{Identity: &os.Identity, ServerID: os.ServerID, Completeness: string(os.Completeness)}, Tools: os.Tools}
	decisions, changes := decide.DecideAndDiff(old, nw, decide.Options{Profile: prof, Classifier: in.Classifier})
	r.Tools = make([]schemadiff.ToolVerdict, 0, len(decisions))
	for _, d := range decisions {
		r.Tools = append(r.Tools, d.Verdict())
	}
	r.StructuralChanges, r.DecisionProfile = changes, prof.Name
	return r, nil
}

// checkSnapshots checks that each snapshot belongs to the artifact it
// stands beside (the same server id and manifest digest), so the
// explanation can never describe other tools than the digests judged.
func checkSnapshots(in Input, s *Snapshots) error {
	if s.Declared == nil || s.Observed == nil {
		return &InputError{"structural changes need both snapshots: the declared and the observed"}
	}
	declaredID, declaredDigest := in.Observed.Server.ID, ""
	switch {
	case in.Declared != nil:
		declaredID, declaredDigest = in.Declared.Server.ID, in.Declared.ManifestDigest
	case in.Policy != nil:
		declaredDigest = in.Policy.DeclaredMCPManifests[in.Observed.Server.ID].ManifestDigest
	}
	if err := s.Declared.CheckPair(s.DeclaredName, "the baseline", declaredID, declaredDigest); err != nil {
		return err
	}
	od := ""
	if in.Observed.Observed.ManifestDigest != nil {
		od = *in.Observed.Observed.ManifestDigest
	}
	return s.Observed.CheckPair(s.ObservedName, "the observed record", in.Observed.Server.ID, od)
}

// baselineInvalid reports whether the gate found the declared baseline
// invalid (manifest.CheckBaseline): no structural diff is made against it.
func baselineInvalid(r *Report) bool {
	return slices.ContainsFunc(r.Inconclusive, func(code string) bool {
		return code == manifest.BaselineDigestMismatch || code == manifest.BaselineAmbiguous || code == manifest.BaselineDefinitionsMismatch
	})
}
