package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// The gate's own reports, from the bundled rug-pull example and from a
// server whose new tool has a hostile name, render in every format.
func TestGateReports(t *testing.T) {
	observe := func(src []byte) *manifest.Observed {
		t.Helper()
		tl, err := manifest.ParseToolList(src)
		if err != nil {
			t.Fatal(err)
		}
		return manifest.BuildObserved("acme-github", tl, manifest.Complete, nil)
	}
	v1 := observe(examples.V1)
	declared, err := manifest.Pin(v1, manifest.PinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hostileList := `{"tools":[{"name":` + jsonString(hostileName) + `,"description":"x","inputSchema":{"type":"object"}}]}`
	cases := []struct {
		name     string
		observed *manifest.Observed
		verdict  string
	}{
		{"clean", v1, gate.NoFinding},
		{"rugpull", observe(examples.V2RugPull), gate.PendingReview},
		{"hostile", observe([]byte(hostileList)), gate.PendingReview},
		{"not-observed", manifest.NotObserved("acme-github"), gate.Inconclusive},
	}
	for _, tc := range cases {
		r, err := gate.Evaluate(gate.Input{Observed: tc.observed, Declared: declared})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Verdict != tc.verdict {
			t.Errorf("%s: verdict %s, want %s", tc.name, r.Verdict, tc.verdict)
		}
		for _, format := range Formats() {
			out := render(t, r, format, Options{ArtifactURI: "obs.json"})
			if c, bad := rawUnsafe(out, false); bad {
				t.Errorf("%s/%s: raw %U", tc.name, format, c)
			}
			if format == "markdown" {
				checkMarkdownTables(t, tc.name, out)
				for _, p := range hostileParts {
					if strings.Contains(out, p) {
						t.Errorf("%s/markdown: raw %q", tc.name, p)
					}
				}
			}
			if format == "sarif" {
				validateSARIF(t, tc.name, out)
				l := parseSARIF(t, out)
				if len(l.Runs[0].Results) < len(r.Findings) {
					t.Errorf("%s: %d results for %d findings", tc.name, len(l.Runs[0].Results), len(r.Findings))
				}
			}
		}
	}
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
