package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/gate"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var goldenOpts = Options{ToolVersion: "0.0.0-test", ArtifactURI: "observed/github-tools.observed.json"}

var formatExt = map[string]string{"json": ".json", "text": ".txt", "markdown": ".md", "sarif": ".sarif", "html": ".html"}

func render(t testing.TB, r *gate.Report, format string, opt Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, r, format, opt); err != nil {
		t.Fatalf("Render(%s): %v", format, err)
	}
	return b.String()
}

func TestFormats(t *testing.T) {
	got := Formats()
	want := []string{"html", "json", "markdown", "sarif", "text"}
	if !slices.Equal(got, want) {
		t.Fatalf("Formats() = %v, want %v", got, want)
	}
	for _, f := range got {
		if _, ok := formatExt[f]; !ok {
			t.Errorf("format %s has no golden extension", f)
		}
	}
}

func TestUnknownFormat(t *testing.T) {
	var b bytes.Buffer
	err := Render(&b, coarseClean(), "pdf\x1b[2J", Options{})
	if err == nil {
		t.Fatal("unknown format rendered")
	}
	if strings.ContainsRune(err.Error(), 0x1b) {
		t.Errorf("error message carries a raw ESC: %q", err)
	}
	if b.Len() != 0 {
		t.Errorf("unknown format wrote %d bytes", b.Len())
	}
	if err := Render(&b, nil, "json", Options{}); err == nil {
		t.Error("nil report rendered")
	}
}

func TestGolden(t *testing.T) {
	for _, fx := range goldenFixtures {
		for _, format := range Formats() {
			name := fx.name + formatExt[format]
			t.Run(name, func(t *testing.T) {
				checkGolden(t, name, render(t, fx.r(), format, goldenOpts))
			})
		}
		name := fx.name + ".color.txt"
		t.Run(name, func(t *testing.T) {
			opt := goldenOpts
			opt.Color = true
			checkGolden(t, name, render(t, fx.r(), "text", opt))
		})
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run TestGolden -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update after checking the change):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// The JSON report is the gate.Report itself: it decodes to the same value.
func TestJSONRoundTrip(t *testing.T) {
	for _, fx := range allFixtures {
		r := fx.r()
		out := render(t, r, "json", Options{})
		if !strings.HasSuffix(out, "}\n") || !strings.HasPrefix(out, "{\n  \"schema\": ") {
			t.Errorf("%s: not indented JSON with a trailing newline:\n%s", fx.name, out)
		}
		var back gate.Report
		if err := json.Unmarshal([]byte(out), &back); err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		if !reflect.DeepEqual(&back, r) {
			t.Errorf("%s: JSON does not round-trip:\n got %#v\nwant %#v", fx.name, back, *r)
		}
	}
}

// A hand-built report with nil slices still renders the contract's arrays.
func TestJSONNilSlices(t *testing.T) {
	r := &gate.Report{Schema: gate.ReportSchemaID, Verdict: gate.NoFinding}
	out := render(t, r, "json", Options{})
	for _, k := range []string{`"findings": []`, `"inconclusive": []`, `"warnings": []`, `"details": []`, `"observed_manifest_digest": null`} {
		if !strings.Contains(out, k) {
			t.Errorf("missing %s in\n%s", k, out)
		}
	}
	if r.Findings != nil {
		t.Error("rendering changed the caller's report")
	}
}

func TestJSONKeepsHTMLEscaping(t *testing.T) {
	r := coarseClean()
	r.ServerID = "<script>&"
	out := render(t, r, "json", Options{})
	if strings.ContainsAny(out, "<>&") {
		t.Errorf("HTML metacharacters are raw in JSON:\n%s", out)
	}
}

func TestTextShape(t *testing.T) {
	out := render(t, granularFindings(), "text", Options{})
	for _, want := range []string{
		"mcpdrift gate: REVIEW REQUIRED (pending_tool_manifest_review)",
		`server:       "github-tools"`,
		"observed:     sha256:0f1e2d3c4b5a… (5 tools)",
		"[privileged]",
		"What to do",
		"Exit 1: findings need review.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	// High findings come before medium before low.
	hi, med, lo := strings.Index(out, "\n  HIGH\n"), strings.Index(out, "\n  MEDIUM\n"), strings.Index(out, "\n  LOW\n")
	if hi < 0 || med < hi || lo < med {
		t.Errorf("severity groups out of order (%d %d %d):\n%s", hi, med, lo, out)
	}
	// One remedy line per distinct code.
	if n := strings.Count(out, "  - mcp_tool_description_changed: "); n != 1 {
		t.Errorf("remedy for mcp_tool_description_changed printed %d times", n)
	}
}

func TestShortDigest(t *testing.T) {
	for in, want := range map[string]string{
		digestA:                  "sha256:0f1e2d3c4b5a…",
		"sha256:abc":             "sha256:abc",
		"":                       "",
		"sha256:0123456789abc":   "sha256:0123456789abc",
		"sha256:0123456789abcd":  "sha256:0123456789ab…",
		"nocolonatallxxxxxxxxx":  "nocolonatall…",
		"sha256:ééééééééééééééé": "sha256:éééééééééééé…",
	} {
		if got := shortDigest(in); got != want {
			t.Errorf("shortDigest(%q) = %q, want %q", in, got, want)
		}
	}
}
