package gate_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// snapshotOf is the snapshot of a bare tool array, as pin writes it.
func snapshotOf(t *testing.T, tools string) *manifest.Snapshot {
	t.Helper()
	tl, err := manifest.ParseToolList([]byte(tools))
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifest.MarshalSnapshot("srv", manifest.Identity{Endpoint: "http://127.0.0.1/mcp"}, tl, manifest.Complete)
	if err != nil {
		t.Fatal(err)
	}
	s, err := manifest.ParseSnapshot(b, "snap.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const widened = `[
 {"name":"search","description":"find things","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"callback_url":{"type":"string"}}},"annotations":{"readOnlyHint":true}},
 {"name":"add_deploy_key","description":"add a key","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}
]`

// TestRunExplainsWithSnapshots: Run is Evaluate, and with both snapshots
// the report also carries the structural changes and each tool's
// decision; the verdict stays the digests'.
func TestRunExplainsWithSnapshots(t *testing.T) {
	in := gate.Input{Observed: observe(t, widened, manifest.Complete), Declared: pin(t, base)}
	want, err := gate.Evaluate(in)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := gate.Run(context.Background(), gate.Options{Input: in})
	if err != nil || !slices.Equal(findings(plain), findings(want)) || plain.StructuralChanges != nil || plain.Tools != nil {
		t.Fatalf("Run without snapshots is not Evaluate: %v %v", err, findings(plain))
	}
	snaps := &gate.Snapshots{Declared: snapshotOf(t, base), Observed: snapshotOf(t, widened), DeclaredName: "d.snapshot.json", ObservedName: "o.snapshot.json"}
	r, err := gate.Run(context.Background(), gate.Options{Input: in, Snapshots: snaps, DecisionProfile: schemadiff.FailClosedProfile})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(findings(r), findings(want)) || r.Verdict != want.Verdict || r.ExitCode != want.ExitCode {
		t.Errorf("the snapshots changed the verdict: %v, want %v", findings(r), findings(want))
	}
	if len(r.StructuralChanges) == 0 || len(r.Tools) != 2 || r.DecisionProfile != "fail-closed" {
		t.Errorf("no explanation: %d changes, %d tools, profile %q", len(r.StructuralChanges), len(r.Tools), r.DecisionProfile)
	}
	// A declared snapshot that is not the baseline's makes the baseline
	// invalid (inconclusive, nothing diffed); an observed snapshot that
	// is not the record's is refused.
	r, err = gate.Run(context.Background(), gate.Options{Input: in, Snapshots: &gate.Snapshots{Declared: snaps.Observed, Observed: snaps.Observed}})
	if err != nil || !slices.Contains(r.Inconclusive, manifest.BaselineDefinitionsMismatch) || r.StructuralChanges != nil {
		t.Errorf("the observed snapshot as the declared one: %v, inconclusive %v, %d changes", err, r.Inconclusive, len(r.StructuralChanges))
	}
	if _, err := gate.Run(context.Background(), gate.Options{Input: in, Snapshots: &gate.Snapshots{Declared: snaps.Declared, Observed: snaps.Declared}}); !isArtifactError(err) {
		t.Errorf("the declared snapshot as the observed one: %v", err)
	}
	// One snapshot alone is an input error.
	if _, err := gate.Run(context.Background(), gate.Options{Input: in, Snapshots: &gate.Snapshots{Declared: snaps.Declared}}); !isInputError(err) {
		t.Errorf("one snapshot: %v", err)
	}
}

func isArtifactError(err error) bool {
	_, ok := errors.AsType[*manifest.ArtifactError](err)
	return ok
}

func isInputError(err error) bool {
	_, ok := errors.AsType[*gate.InputError](err)
	return ok
}
