package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckBaseline: the one validity check of a baseline finds nothing
// in a clean pin and its definitions, and each edit gate calls
// inconclusive is one problem with its code.
func TestCheckBaseline(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "examples", "acme-github.v1.tools-list.json"))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := ParseToolList(src)
	if err != nil {
		t.Fatal(err)
	}
	pin := func() *Declared {
		d, err := Pin(BuildObserved("acme", tl, Complete, nil), PinOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	defs := &Definitions{Tools: tl.Tools, From: "the snapshot", ServerID: "acme"}
	if ps := CheckBaseline(pin(), defs); len(ps) != 0 {
		t.Fatalf("a clean pin: %v", ps)
	}
	zero := "sha256:" + strings.Repeat("0", 64)
	for _, c := range []struct {
		name string
		edit func(d *Declared) *Definitions
		want []string
	}{
		{"a tool listed twice", func(d *Declared) *Definitions {
			d.Tools = append(d.Tools, d.Tools[2])
			d.ManifestDigest = ManifestDigest(d.NameDigests())
			return defs
		}, []string{BaselineAmbiguous}},
		{"an edited tool_digest", func(d *Declared) *Definitions { d.Tools[0].ToolDigest = zero; return nil }, []string{BaselineDigestMismatch}},
		{"the snapshot disagrees", func(d *Declared) *Definitions {
			d.Tools[0].ToolDigest = zero
			d.ManifestDigest = ManifestDigest(d.NameDigests())
			return defs
		}, []string{BaselineDefinitionsMismatch}},
		{"a tool the snapshot lacks", func(*Declared) *Definitions {
			return &Definitions{Tools: tl.Tools[1:], From: "the snapshot"}
		}, []string{BaselineDefinitionsMismatch}},
		{"the snapshot of another server", func(*Declared) *Definitions {
			return &Definitions{Tools: tl.Tools, From: "the snapshot", ServerID: "other"}
		}, []string{BaselineDefinitionsMismatch}},
		{"definitions that name a tool twice", func(*Declared) *Definitions {
			return &Definitions{Tools: append(append([]Tool(nil), tl.Tools...), tl.Tools[0]), From: "the snapshot"}
		}, []string{BaselineAmbiguous}},
	} {
		d := pin()
		ps := CheckBaseline(d, c.edit(d))
		var got []string
		for _, p := range ps {
			got = append(got, p.Code)
			if p.Message == "" {
				t.Errorf("%s: %s has no message", c.name, p.Code)
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: %v, want %v (%v)", c.name, got, c.want, ps)
		}
	}
}
