package diff_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

var (
	acmeV1 = filepath.Join("..", "examples", "acme-github.v1.tools-list.json")
	acmeV2 = filepath.Join("..", "examples", "acme-github.v2-rugpull.tools-list.json")
)

var read = diff.ReadFile(1 << 20)

// TestRun: two lists compared through the library: nothing changed is
// exit 0, the rug pull exit 1 with its changes; fail-closed denies it.
func TestRun(t *testing.T) {
	v1, _, err := diff.Load(acmeV1, read)
	if err != nil {
		t.Fatal(err)
	}
	v2, _, err := diff.Load(acmeV2, read)
	if err != nil {
		t.Fatal(err)
	}
	same, err := diff.Run(context.Background(), diff.Options{Old: v1, New: v1})
	if err != nil || same.Report.ExitCode != 0 || len(same.Report.Changes) != 0 {
		t.Fatalf("the same list: %v exit %d, %d changes", err, same.Report.ExitCode, len(same.Report.Changes))
	}
	r, err := diff.Run(context.Background(), diff.Options{Old: v1, New: v2, Profile: schemadiff.FailClosedProfile})
	if err != nil || r.Report.ExitCode != 1 || len(r.Report.Changes) == 0 || r.Report.Decision != schemadiff.Deny {
		t.Fatalf("the rug pull: %v exit %d, %d changes, decision %s", err, r.Report.ExitCode, len(r.Report.Changes), r.Report.Decision)
	}
}

// TestLoadThroughBaseline: a declared baseline is read through the
// snapshot pinned beside it, which must be its own; without the snapshot,
// or from stdin, it is refused.
func TestLoadThroughBaseline(t *testing.T) {
	decl, snap, db, tl := pinnedAcme(t)
	if _, _, err := diff.Load(decl, read); runerr.KindOf(err) != runerr.Usage || !strings.Contains(err.Error(), "is not there") {
		t.Errorf("no snapshot beside: %v", err)
	}
	if err := os.WriteFile(diff.SnapshotPathFor(decl), snap, 0o644); err != nil {
		t.Fatal(err)
	}
	in, _, err := diff.Load(decl, read)
	if err != nil || in.Form != "declared baseline + snapshot" || in.ToolCount != len(tl.Tools) || in.Identity == nil || in.Identity.Endpoint != "http://127.0.0.1/mcp" {
		t.Fatalf("through the baseline: %v %+v", err, in.Side)
	}
	if _, _, err := diff.Load("-", func(string) ([]byte, error) { return db, nil }); runerr.KindOf(err) != runerr.Usage {
		t.Errorf("a baseline from stdin: %v", err)
	}
	if _, _, err := diff.Load(filepath.Join(filepath.Dir(decl), "missing.json"), read); err == nil {
		t.Error("a file that is not there was read")
	}
}

// pinnedAcme pins the acme list (v1) into a new directory: the declared
// baseline's path, the snapshot to put beside it, the baseline's bytes and
// the list.
func pinnedAcme(t *testing.T) (decl string, snap, db []byte, tl *manifest.ToolList) {
	t.Helper()
	src, err := os.ReadFile(acmeV1)
	if err != nil {
		t.Fatal(err)
	}
	if tl, err = manifest.ParseToolList(src); err != nil {
		t.Fatal(err)
	}
	d, err := manifest.Pin(manifest.BuildObserved("acme", tl, tl.Completeness, nil), manifest.PinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db, _ = manifest.MarshalArtifact(d)
	if snap, err = manifest.MarshalSnapshot("acme", manifest.Identity{Endpoint: "http://127.0.0.1/mcp"}, tl, tl.Completeness); err != nil {
		t.Fatal(err)
	}
	decl = filepath.Join(t.TempDir(), "acme.json")
	if err := os.WriteFile(decl, db, 0o644); err != nil {
		t.Fatal(err)
	}
	return decl, snap, db, tl
}

// TestResolveKnown: with the listed tools known, the snapshot beside a
// baseline is opened and read as it is cut, and resolves as Resolve
// resolves it; a file OpenFile does not open (too large, stdin) is left
// to the FileReader, whose refusal is the error.
func TestResolveKnown(t *testing.T) {
	decl, snap, _, tl := pinnedAcme(t)
	if err := os.WriteFile(diff.SnapshotPathFor(decl), snap, 0o644); err != nil {
		t.Fatal(err)
	}
	known := manifest.NewKnown(tl)
	opened := map[string]bool{}
	open := func(p string) (io.ReadCloser, bool, error) {
		f, ok, err := diff.OpenFile(1 << 20)(p)
		opened[p] = opened[p] || ok
		return f, ok, err
	}
	want, wantVia, err := diff.Resolve(decl, read)
	if err != nil {
		t.Fatal(err)
	}
	got, via, err := diff.ResolveKnown(decl, read, open, known)
	if err != nil || via != wantVia || !opened[diff.SnapshotPathFor(decl)] {
		t.Fatalf("resolved %v %v, the snapshot opened: %v", via, err, opened)
	}
	if got.Snapshot.ManifestDigest != want.Snapshot.ManifestDigest || len(got.Snapshot.Tools) != len(want.Snapshot.Tools) {
		t.Fatal("the snapshot read as it was cut differs from the one read whole")
	}
	for i := range got.Snapshot.Tools {
		g, w := &got.Snapshot.Tools[i], &want.Snapshot.Tools[i]
		if g.Name != w.Name || g.Pointer != w.Pointer || g.ToolDigest() != w.ToolDigest() || string(g.Raw()) != string(w.Raw()) {
			t.Fatalf("tool %d differs", i)
		}
	}
	small := func(string) ([]byte, error) { return nil, errors.New("refused by the reader") }
	if _, _, err := diff.ResolveKnown(decl, small, diff.OpenFile(10), known); err == nil || !strings.Contains(err.Error(), "refused by the reader") {
		t.Errorf("a file larger than OpenFile's bound: %v", err)
	}
	if f, ok, err := diff.OpenFile(1 << 20)("-"); f != nil || ok || err != nil {
		t.Error("OpenFile opened -")
	}
}
