package schemadiff_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// The real-world corpus: testdata/realworld/<server>/ holds the tools/list
// transcripts two published versions of an MCP server served (captured by
// scripts/capture-npm-servers/capture.mjs) and the structural diff OLD→NEW
// exactly as `mcpdrift diff OLD NEW --format json` (and `--format text
// --color never`) writes it, run from the repository root.
var updateRealworld = flag.Bool("update-realworld", false, "rewrite testdata/realworld/*/diff.golden.{json,txt}")

// realworldRoot is the corpus relative to this package; realworldSource is
// how the CLI, run from the repository root, names the same files.
const (
	realworldRoot   = "../testdata/realworld"
	realworldSource = "testdata/realworld"
)

type realworldServer struct {
	name     string
	old, new string // versions, old first
}

// realworldServers lists the corpus: every directory with exactly two
// <version>.tools-list.json, versions ordered numerically.
func realworldServers(t *testing.T) []realworldServer {
	t.Helper()
	ents, err := os.ReadDir(realworldRoot)
	if err != nil {
		t.Fatal(err)
	}
	var out []realworldServer
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(realworldRoot, e.Name(), "*.tools-list.json"))
		if err != nil {
			t.Fatal(err)
		}
		var versions []string
		for _, f := range files {
			versions = append(versions, strings.TrimSuffix(filepath.Base(f), ".tools-list.json"))
		}
		if len(versions) != 2 {
			t.Fatalf("%s: want two <version>.tools-list.json, have %d", e.Name(), len(versions))
		}
		slices.SortFunc(versions, compareVersions)
		out = append(out, realworldServer{name: e.Name(), old: versions[0], new: versions[1]})
	}
	if len(out) < 5 {
		t.Fatalf("the real-world corpus has %d servers, want at least 5", len(out))
	}
	return out
}

// compareVersions orders dotted versions numerically (2025.1.14 < 2026.8.31,
// 0.0.40 < 0.0.83); a non-numeric part compares as a string.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, errx := strconv.Atoi(as[i])
		y, erry := strconv.Atoi(bs[i])
		if errx == nil && erry == nil {
			if x != y {
				return x - y
			}
			continue
		}
		if c := strings.Compare(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}

// loadRealworld builds a diff input the way the CLI's loadTools does for a
// saved tools/list (internal/cli/diff.go).
func loadRealworld(t *testing.T, server, version string) schemadiff.Input {
	t.Helper()
	file := version + ".tools-list.json"
	src, err := os.ReadFile(filepath.Join(realworldRoot, server, file))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := manifest.ParseToolList(src)
	if err != nil {
		t.Fatalf("%s/%s: %v", server, file, err)
	}
	if tl.Completeness != manifest.Complete || tl.Form != "pages" {
		t.Errorf("%s/%s: form %s, completeness %s (%s); want a complete transcript", server, file, tl.Form, tl.Completeness, tl.Reason)
	}
	in := schemadiff.Input{
		Side: schemadiff.Side{
			Source:       realworldSource + "/" + server + "/" + file,
			Form:         tl.Form,
			ToolCount:    len(tl.Tools),
			Completeness: string(tl.Completeness),
		},
		Tools: tl.Tools,
	}
	o := manifest.BuildObserved("-", tl, tl.Completeness, nil)
	if o.Observed.ManifestDigest != nil {
		in.ManifestDigest = *o.Observed.ManifestDigest
	}
	return in
}

func renderDiff(t *testing.T, r *schemadiff.Report, format string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := report.RenderDiff(&buf, r, format, report.Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Change classes for the corpus statistics.
const (
	classNotation  = "notation-only"
	classParameter = "parameter-level"
	classTool      = "tool-level"
	classSignal    = "signal"
	classOther     = "other"
)

// changeClass sorts a change kind: notation-only (text, metadata and
// spelling with no validation effect), parameter-level (anything that touches what a call
// validates or what a result declares, and the annotation hints), tool-level
// (tools added, removed, renamed), signal (schema_drift_stable_description,
// which restates parameter-level changes) and other.
func changeClass(kind string) string {
	switch kind {
	case schemadiff.DescriptionChanged, schemadiff.TitleChanged, schemadiff.SchemaAnnotationChanged, schemadiff.SchemaNotationChanged, schemadiff.KeywordUnmodeled,
		schemadiff.SchemaDefaultChanged, schemadiff.SchemaDialectChanged, schemadiff.ToolMemberChanged:
		return classNotation
	case schemadiff.ToolAdded, schemadiff.ToolRemoved, schemadiff.ToolRenameSuspected:
		return classTool
	case schemadiff.SchemaDriftStableDescription:
		return classSignal
	case schemadiff.ConstChanged:
		return classParameter
	}
	for _, p := range []string{"param_", "required_", "type_", "enum_", "additional_properties_", "constraint_",
		"composition_", "external_ref_", "output_schema_", "annotation_hint_"} {
		if strings.HasPrefix(kind, p) {
			return classParameter
		}
	}
	return classOther
}

func TestRealworldCorpus(t *testing.T) {
	servers := realworldServers(t)
	classes := []string{classNotation, classParameter, classTool, classSignal, classOther}
	total := map[string]int{}
	var table strings.Builder
	fmt.Fprintf(&table, "| server | versions | changes | %s |\n|---|---|---|---|---|---|---|---|\n", strings.Join(classes, " | "))
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			old := loadRealworld(t, s.name, s.old)
			nw := loadRealworld(t, s.name, s.new)
			opt := schemadiff.ToolOptions{Classifier: classify.Default()}
			r := schemadiff.Compare(old, nw, nil, opt)
			if len(r.Changes) == 0 {
				t.Errorf("%s %s → %s: no change; the corpus wants versions whose tool lists differ", s.name, s.old, s.new)
			}
			for _, g := range []struct{ format, file string }{{"json", "diff.golden.json"}, {"text", "diff.golden.txt"}} {
				got := renderDiff(t, r, g.format)
				path := filepath.Join(realworldRoot, s.name, g.file)
				if *updateRealworld {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./schemadiff -run TestRealworldCorpus -update-realworld)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: the diff differs from the golden file (go test ./schemadiff -run TestRealworldCorpus -update-realworld rewrites it)\n%s",
						path, firstDifference(got, want))
				}
			}
			if g := renderDiff(t, r, "json"); !json.Valid(g) {
				t.Errorf("%s: the JSON report is not valid JSON", s.name)
			}

			// Each manifest against itself: nothing changed.
			for _, in := range []schemadiff.Input{old, nw} {
				self := schemadiff.Compare(in, in, nil, opt)
				if len(self.Changes) != 0 || self.ExitCode != schemadiff.ExitNoChange || len(self.Warnings) != 0 {
					t.Errorf("%s diffed against itself: %d change(s), exit %d, warnings %q", in.Source, len(self.Changes), self.ExitCode, self.Warnings)
				}
			}

			count := map[string]int{}
			for _, c := range r.Changes {
				cl := changeClass(c.Kind)
				count[cl]++
				total[cl]++
				if cl == classOther {
					t.Logf("%s: %s at %s is in no class", c.Name, c.Kind, c.Pointer)
				}
			}
			total["changes"] += len(r.Changes)
			fmt.Fprintf(&table, "| %s | %s → %s | %d |", s.name, s.old, s.new, len(r.Changes))
			for _, cl := range classes {
				fmt.Fprintf(&table, " %d |", count[cl])
			}
			table.WriteString("\n")
		})
	}
	fmt.Fprintf(&table, "| **total** | | %d |", total["changes"])
	for _, cl := range classes {
		fmt.Fprintf(&table, " %d |", total[cl])
	}
	t.Logf("change classes across the real-world corpus:\n%s", table.String())
}

// firstDifference shows the first line where got and want differ.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n  got:  %s\n  want: %s", i+1, gl, wl)
		}
	}
	return "(lengths differ)"
}
