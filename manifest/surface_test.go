package manifest_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/surface"
)

// TestSnapshotSurface: a snapshot carries the pinned surface as its
// "surface" member, read back by every way a snapshot is read (whole,
// lean one tool at a time, framed), and the tools' digests are the same
// with or without it.
func TestSnapshotSurface(t *testing.T) {
	tl, err := manifest.ParseToolList([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := jcs.Parse([]byte(`"Follow the rules."`))
	sf := surface.New(surface.NotAdvertised, "")
	sf.Instructions = surface.NewInstr(doc.Root(), true, 0)
	pinned, err := surface.Marshal(sf, "  ")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := manifest.MarshalSnapshot("srv", manifest.Identity{}, tl, manifest.Complete)
	if err != nil {
		t.Fatal(err)
	}
	with, err := manifest.MarshalSnapshotWith("srv", manifest.Identity{}, tl, manifest.Complete, manifest.SnapshotOptions{Surface: pinned})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(with, []byte("\n  \"surface\": {\n    \"projections\"")) {
		t.Fatalf("the surface member is not where it belongs:\n%s", with)
	}
	reads := map[string]func() (*manifest.Snapshot, error){
		"whole": func() (*manifest.Snapshot, error) { return manifest.ParseSnapshot(with, "s.json") },
		"tools": func() (*manifest.Snapshot, error) {
			ts, err := manifest.ReadTools(with, "s.json")
			if err != nil {
				return nil, err
			}
			return ts.Snapshot, nil
		},
	}
	p, _ := manifest.ParseSnapshot(plain, "p.json")
	for name, read := range reads {
		s, err := read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(s.Surface, pinned) {
			t.Fatalf("%s: surface %q", name, s.Surface)
		}
		back, err := surface.ParseBytes(s.Surface)
		if err != nil || back.Instructions.Text() != "Follow the rules." {
			t.Fatalf("%s: %v %+v", name, err, back)
		}
		if s.ManifestDigest != p.ManifestDigest {
			t.Fatalf("%s: the surface moved the manifest digest", name)
		}
	}
	if p.Surface != nil {
		t.Fatal("a snapshot without a surface has one")
	}
	// A surface that does not validate refuses the snapshot.
	bad := bytes.Replace(with, []byte(`"state":"observed","digest"`), []byte(`"state":"observed","bogus":1,"digest"`), 1)
	if _, err := manifest.ParseSnapshot(bad, "bad.json"); err == nil || !strings.Contains(err.Error(), "surface") {
		t.Fatalf("a bad surface member was read: %v", err)
	}
}
