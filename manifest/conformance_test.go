package manifest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

const fixtures = "../testdata/conformance/assay"

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// projOf parses one projection-form tool object and returns its Tool.
func toolOf(t *testing.T, raw []byte) *manifest.Tool {
	t.Helper()
	doc, err := jcs.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := manifest.ToolFromValue(doc.Root(), "")
	if err != nil {
		t.Fatal(err)
	}
	return &tool
}

func TestCanonicalizationExample(t *testing.T) {
	var ex struct {
		PerTool struct {
			Projection           json.RawMessage   `json:"projection"`
			ExpectedToolDigest   string            `json:"expected_tool_digest"`
			ExpectedFieldDigests map[string]string `json:"expected_field_digests"`
		} `json:"per_tool"`
		Manifest struct {
			ProjectionID           string            `json:"projection_id"`
			Tools                  []json.RawMessage `json:"tools"`
			ExpectedManifestDigest string            `json:"expected_manifest_digest"`
		} `json:"manifest"`
	}
	if err := json.Unmarshal(readFixture(t, "canonicalization_example.json"), &ex); err != nil {
		t.Fatal(err)
	}
	tool := toolOf(t, ex.PerTool.Projection)
	td, fd, _ := tool.Proj().Digests(nil)
	if td != ex.PerTool.ExpectedToolDigest {
		t.Errorf("tool_digest = %s, want %s", td, ex.PerTool.ExpectedToolDigest)
	}
	// The field digests kept from the tool's reading (one canonicalization
	// for the tool digest and its fields), and those computed alone.
	kept := tool.FieldDigests()
	alone, _ := tool.Proj().FieldDigests(nil)
	for _, f := range manifest.FieldNames {
		want := ex.PerTool.ExpectedFieldDigests[f]
		if got := fd.Get(f); got != want {
			t.Errorf("field_digests.%s = %s, want %s", f, got, want)
		}
		if got := kept.Get(f); got != want {
			t.Errorf("field_digests.%s kept from the reading = %s, want %s", f, got, want)
		}
		if got := alone.Get(f); got != want {
			t.Errorf("field_digests.%s computed alone = %s, want %s", f, got, want)
		}
	}
	if ex.Manifest.ProjectionID != manifest.ProjectionID {
		t.Errorf("projection id %q", ex.Manifest.ProjectionID)
	}
	var nd []manifest.NameDigest
	for _, raw := range ex.Manifest.Tools {
		tool := toolOf(t, raw)
		d, _, _ := tool.Proj().Digests(nil)
		nd = append(nd, manifest.NameDigest{Name: tool.Name, ToolDigest: d})
	}
	if got := manifest.ManifestDigest(nd); got != ex.Manifest.ExpectedManifestDigest {
		t.Errorf("manifest_digest = %s, want %s", got, ex.Manifest.ExpectedManifestDigest)
	}
}

// The same two tools, in MCP wire form (camelCase, absent fields, extra
// fields that stay out of the projection, other key order and whitespace),
// through the producer, give the committed digests.
func TestProducerReproducesCommittedDigests(t *testing.T) {
	wire := `{"jsonrpc":"2.0","id":7,"result":{"tools":[
	  {"inputSchema":{"required":["owner","repo"],"type":"object"},"name":"github.add_deploy_key","description":"Add a deploy key",
	   "title":"Deploy keys","icons":[{"src":"https://x/y.png"}],"_meta":{"k":1},"execution":{"taskSupport":"optional"},"unknownField":[1,2]},
	  {"name":"search","description":"does a thing","inputSchema":{"type":"object"}}
	]}}`
	tl, err := manifest.ParseToolList([]byte(wire))
	if err != nil {
		t.Fatal(err)
	}
	if tl.Completeness != manifest.Complete || tl.Form != manifest.FormJSONRPC {
		t.Errorf("completeness %s form %s", tl.Completeness, tl.Form)
	}
	o := manifest.BuildObserved("github", tl, tl.Completeness, nil)
	if got := *o.Observed.ManifestDigest; got != "sha256:f8a95098345d600f7a2d742c4e941ace5e9594918b2aa82a9a8f48f72f701ffa" {
		t.Errorf("manifest_digest %s", got)
	}
	// Compare with the committed declared baseline, entry by entry.
	var d manifest.Declared
	if err := json.Unmarshal(readFixture(t, "declared_per_tool_baseline.json"), &d); err != nil {
		t.Fatal(err)
	}
	for _, want := range d.Tools {
		var got *manifest.ToolEntry
		for i := range o.Observed.ToolDigests {
			if o.Observed.ToolDigests[i].Name == want.Name {
				got = &o.Observed.ToolDigests[i]
			}
		}
		if got == nil {
			t.Fatalf("missing %s", want.Name)
		}
		if got.ToolDigest != want.ToolDigest || *got.FieldDigests != *want.FieldDigests ||
			got.Privileged != want.Privileged || got.PrivilegeClassification != want.PrivilegeClassification ||
			(got.ActionClass == nil) != (want.ActionClass == nil) || (got.ActionClass != nil && *got.ActionClass != *want.ActionClass) {
			t.Errorf("entry %s:\n got %+v\nwant %+v", want.Name, *got, want)
		}
	}
	if o.Observed.PrivilegedToolCount != 1 || o.Observed.ToolCount != 2 {
		t.Errorf("counts %d %d", o.Observed.ToolCount, o.Observed.PrivilegedToolCount)
	}
}

func TestDeclaredFixturesRecompute(t *testing.T) {
	for _, name := range []string{"declared_per_tool_baseline.json", "declared_per_tool_baseline_readonly_annotation.json"} {
		d, err := manifest.ParseDeclared(readFixture(t, name), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := manifest.ManifestDigest(d.NameDigests()); got != d.ManifestDigest {
			t.Errorf("%s: recomputed %s, committed %s", name, got, d.ManifestDigest)
		}
	}
	// The readonly-annotation baseline: the P60a tools with readOnlyHint:true
	// on github.add_deploy_key.
	wire := `[{"name":"search","description":"does a thing","inputSchema":{"type":"object"}},
	  {"name":"github.add_deploy_key","description":"Add a deploy key","inputSchema":{"type":"object","required":["owner","repo"]},"annotations":{"readOnlyHint":true}}]`
	tl, err := manifest.ParseToolList([]byte(wire))
	if err != nil {
		t.Fatal(err)
	}
	o := manifest.BuildObserved("github", tl, manifest.Complete, nil)
	d, _ := manifest.ParseDeclared(readFixture(t, "declared_per_tool_baseline_readonly_annotation.json"), "x")
	if *o.Observed.ManifestDigest != d.ManifestDigest {
		t.Errorf("annotated manifest digest %s, want %s", *o.Observed.ManifestDigest, d.ManifestDigest)
	}
	for i, e := range o.Observed.ToolDigests {
		if e.ToolDigest != d.Tools[i].ToolDigest || *e.FieldDigests != *d.Tools[i].FieldDigests {
			t.Errorf("tool %s differs from the committed baseline", e.Name)
		}
	}
}

func TestVerdictCorpusDigests(t *testing.T) {
	var vc struct {
		ProjectionID string `json:"projection_id"`
		Cases        []struct {
			ID       string          `json:"id"`
			Baseline string          `json:"baseline_manifest_digest"`
			Observed json.RawMessage `json:"observed"`
			Expected string          `json:"expected_verdict"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(readFixture(t, "verdict_corpus.json"), &vc); err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, c := range vc.Cases {
		tl, err := manifest.ParseToolList(c.Observed)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		o := manifest.BuildObserved("github", tl, manifest.Complete, nil)
		if o.Observed.ManifestDigest == nil {
			continue
		}
		same := *o.Observed.ManifestDigest == c.Baseline
		if same {
			matched++
		}
		// Cases that expect a clean verdict must match the baseline; the
		// drift cases must not.
		switch c.Expected {
		case "no_finding", "no_finding_with_coverage_warning":
			if !same {
				t.Errorf("%s: digest %s should equal the baseline", c.ID, *o.Observed.ManifestDigest)
			}
		case "pending_tool_manifest_review":
			if same {
				t.Errorf("%s: digest should differ from the baseline", c.ID)
			}
		}
	}
	if matched < 3 {
		t.Errorf("only %d cases matched the baseline", matched)
	}
}

func TestGranularFixtureDigests(t *testing.T) {
	var gc struct {
		Cases []struct {
			ID       string          `json:"id"`
			Declared json.RawMessage `json:"declared"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(readFixture(t, "granular_diff_cases.json"), &gc); err != nil {
		t.Fatal(err)
	}
	for _, c := range gc.Cases {
		d, err := manifest.ParseDeclared(c.Declared, c.ID)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		got := manifest.ManifestDigest(d.NameDigests())
		if (got == d.ManifestDigest) == (c.ID == "declared_self_inconsistent") {
			t.Errorf("%s: recomputed %s, declared %s", c.ID, got, d.ManifestDigest)
		}
	}
}

// The projection is built from the bytes: number spelling, key order,
// whitespace and escapes that canonicalize alike give one digest; anything
// that changes the JSON value changes it.
func TestDigestFromBytes(t *testing.T) {
	base := `{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":10}}}}`
	same := []string{
		`{"inputSchema":{"properties":{"n":{"maximum":1E1,"type":"number"}},"type":"object"},"description":"\u0064","name":"t"}`,
		"{ \"name\" : \"t\",\n\"description\":\"d\", \"inputSchema\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"number\",\"maximum\":10.0}}}, \"title\":\"x\",\"_meta\":{}}",
	}
	differ := []string{
		`{"name":"t","description":"d ","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":10}}}}`,
		`{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":10.5}}}}`,
		`{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":10}},"x-extra":1}}`,
		`{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":10}}},"annotations":{}}`,
		`{"name":"t","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":10}}}}`,
		`{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":10}}},"outputSchema":null,"annotations":{"readOnlyHint":false}}`,
	}
	want, _, _ := toolOf(t, []byte(base)).Proj().Digests(nil)
	for _, s := range same {
		if got, _, _ := toolOf(t, []byte(s)).Proj().Digests(nil); got != want {
			t.Errorf("%s: digest differs", s)
		}
	}
	for _, s := range differ {
		if got, _, _ := toolOf(t, []byte(s)).Proj().Digests(nil); got == want {
			t.Errorf("%s: digest should differ", s)
		}
	}
	// An explicit null equals an absent field.
	a, _, _ := toolOf(t, []byte(`{"name":"t","outputSchema":null}`)).Proj().Digests(nil)
	b, _, _ := toolOf(t, []byte(`{"name":"t"}`)).Proj().Digests(nil)
	if a != b {
		t.Error("explicit null and absent outputSchema must digest alike")
	}
}

// The observed record carries digests, never raw values.
func TestObservedRecordHasNoRawValues(t *testing.T) {
	wire := `{"tools":[{"name":"leak_probe","description":"SECRET-DESCRIPTION-MARKER","inputSchema":{"type":"object","properties":{"SECRET_PARAM_MARKER":{"type":"string","pattern":"SECRET-PATTERN"}}},"outputSchema":{"title":"SECRET-OUTPUT"},"annotations":{"title":"SECRET-ANNOTATION"},"title":"SECRET-TITLE"}]}`
	tl, err := manifest.ParseToolList([]byte(wire))
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifest.MarshalArtifact(manifest.BuildObserved("s", tl, tl.Completeness, nil))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "SECRET") {
		t.Errorf("raw value leaked into the record:\n%s", b)
	}
	if !strings.Contains(string(b), "leak_probe") {
		t.Error("the name is the tool's identity and must be kept")
	}
}
