package schemadiff_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Golden cases for the tool-level and identity kinds, each run in both
// directions (DiffSchema's kinds have their own files under testdata/schema).
func TestToolKindsGoldenBothDirections(t *testing.T) {
	b, err := os.ReadFile("testdata/tools/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name             string
		Old, New         json.RawMessage
		Forward, Reverse []string
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	records := func(cs []schemadiff.Change) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name+" "+c.Kind+" "+c.Pointer+" "+string(c.Direction))
		}
		slices.Sort(out)
		return out
	}
	list := func(raw json.RawMessage) []manifest.Tool {
		tl, err := manifest.ParseToolList(raw)
		if err != nil {
			t.Fatal(err)
		}
		return tl.Tools
	}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			fwd := records(schemadiff.DiffTools(list(c.Old), list(c.New), schemadiff.ToolOptions{}))
			rev := records(schemadiff.DiffTools(list(c.New), list(c.Old), schemadiff.ToolOptions{}))
			slices.Sort(c.Forward)
			slices.Sort(c.Reverse)
			if !slices.Equal(fwd, c.Forward) {
				t.Errorf("old→new %v, want %v", fwd, c.Forward)
			}
			if !slices.Equal(rev, c.Reverse) {
				t.Errorf("new→old %v, want %v", rev, c.Reverse)
			}
		})
		for _, r := range append(c.Forward, c.Reverse...) {
			seen[strings.Fields(r)[1]] = true
		}
	}
	// Identity kinds, both directions (each is its own mirror).
	a := manifest.Identity{Endpoint: "https://a/mcp", PublisherKey: "k1", ServerName: "s", ServerVersion: "1"}
	z := manifest.Identity{Endpoint: "https://b/mcp", PublisherKey: "k2", ServerName: "t", ServerVersion: "2"}
	for _, pair := range [][2]manifest.Identity{{a, z}, {z, a}} {
		cs, _ := schemadiff.DiffIdentity(pair[0], pair[1])
		for _, c := range cs {
			seen[c.Kind] = true
		}
		if len(cs) != 4 {
			t.Errorf("identity: %d changes", len(cs))
		}
	}
	for _, k := range []string{schemadiff.DescriptionChanged, schemadiff.TitleChanged, schemadiff.AnnotationHintWeakened, schemadiff.AnnotationHintStrengthened,
		schemadiff.OutputSchemaAdded, schemadiff.OutputSchemaRemoved, schemadiff.SchemaDriftStableDescription, schemadiff.ToolRenameSuspected,
		schemadiff.ToolAdded, schemadiff.ToolRemoved, schemadiff.ToolDuplicateName, schemadiff.ToolNameUnsafe, schemadiff.ToolNamesAmbiguous, schemadiff.ExternalRefIntroduced, schemadiff.NumberBeyondPrecisionChanged,
		schemadiff.ServerEndpointRebound, schemadiff.PublisherKeyChanged, schemadiff.ServerNameChanged, schemadiff.ServerVersionChanged} {
		if !seen[k] {
			t.Errorf("kind %s has no golden case", k)
		}
	}
}
