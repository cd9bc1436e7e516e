package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/gate"
)

// The SARIF 2.1.0 schemas of the OASIS SARIF TC (see testdata/README.md):
// the normative OASIS Errata 01 schema (draft-04) and the draft-07 edition
// of the same schema the TC keeps beside the prose.
var sarifSchemaFiles = []string{"sarif-schema-2.1.0.json", "sarif-schema-2.1.0.draft-07.json"}

var (
	sarifSchemasOnce sync.Once
	sarifSchemas     []*jsonschema.Schema
	sarifSchemasErr  error
)

func loadSARIFSchemas(t testing.TB) []*jsonschema.Schema {
	t.Helper()
	sarifSchemasOnce.Do(func() {
		for _, name := range sarifSchemaFiles {
			s, err := compileSchema(filepath.Join("testdata", name))
			if err != nil {
				sarifSchemasErr = err
				return
			}
			sarifSchemas = append(sarifSchemas, s)
		}
	})
	if sarifSchemasErr != nil {
		t.Fatal(sarifSchemasErr)
	}
	return sarifSchemas
}

// compileSchema compiles a local schema file with no loader at all: the
// document is added under its own id, and only the drafts' meta-schemas,
// which the library embeds, are resolved.
func compileSchema(path string) (*jsonschema.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, err
	}
	m := doc.(map[string]any)
	id, _ := m["$id"].(string)
	if id == "" {
		id, _ = m["id"].(string) // draft-04
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(nil)
	c.AssertFormat()
	if err := c.AddResource(id, doc); err != nil {
		return nil, err
	}
	return c.Compile(id)
}

func validateSARIF(t *testing.T, name, out string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("%s: SARIF is not JSON: %v", name, err)
	}
	for i, s := range loadSARIFSchemas(t) {
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s: invalid against %s: %v", name, sarifSchemaFiles[i], err)
		}
	}
}

func TestSARIFSchemaRejectsInvalid(t *testing.T) {
	// The validator is live: a broken log fails.
	for _, bad := range []string{
		`{"version":"2.1.0","runs":[{"tool":{"driver":{}}}]}`,
		`{"version":"2.0.0","runs":[]}`,
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"level":"fatal"}]}]}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range loadSARIFSchemas(t) {
			if s.Validate(inst) == nil {
				t.Errorf("%s accepted %s", sarifSchemaFiles[i], bad)
			}
		}
	}
}

func TestSARIFValid(t *testing.T) {
	opts := []Options{
		{},
		goldenOpts,
		{ToolVersion: "v1.0.0", ArtifactURI: `C:\ci work\obs #1?.json`},
		{ArtifactURI: "/abs/path/ünïcode\u202e.json"},
	}
	for _, fx := range allFixtures {
		for _, opt := range opts {
			validateSARIF(t, fx.name, render(t, fx.r(), "sarif", opt))
		}
	}
	// Uncatalogued codes and severities (a report from another version).
	r := hostile()
	r.Findings = append(r.Findings, gate.Finding{Name: "x", ReasonCode: "from_the_future\u202e", Severity: "critical"})
	r.Warnings = append(r.Warnings, "")
	validateSARIF(t, "uncatalogued", render(t, r, "sarif", Options{}))
}

// Parsed SARIF, for structural checks.
func parseSARIF(t *testing.T, out string) sarifLog {
	t.Helper()
	var l sarifLog
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSARIFRules(t *testing.T) {
	l := parseSARIF(t, render(t, granularFindings(), "sarif", goldenOpts))
	if l.Schema != "https://json.schemastore.org/sarif-2.1.0.json" || l.Version != "2.1.0" || len(l.Runs) != 1 {
		t.Fatalf("log header: %q %q %d runs", l.Schema, l.Version, len(l.Runs))
	}
	run := l.Runs[0]
	d := run.Tool.Driver
	if d.Name != "mcpdrift" || d.InformationURI != "https://github.com/mcpdrift/mcpdrift" || d.Version != "0.0.0-test" {
		t.Errorf("driver: %+v", d)
	}
	var all []catalog.Entry
	for _, e := range catalog.All() {
		if e.Kind != catalog.Decision { // the gateway's reasons never appear in a report
			all = append(all, e)
		}
	}
	if len(d.Rules) != len(all) {
		t.Fatalf("%d rules, want one per catalogue code a report can carry (%d)", len(d.Rules), len(all))
	}
	for i, e := range all {
		rule := d.Rules[i]
		if rule.ID != e.Code || rule.ShortDescription.Text != e.Title || rule.FullDescription.Text != e.Explanation || rule.Help.Text != e.Remedy {
			t.Errorf("rule %d does not describe %s: %+v", i, e.Code, rule)
		}
		if rule.HelpURI != "https://github.com/mcpdrift/mcpdrift/blob/main/docs/reason-codes.md#"+catalog.Anchor(e.Code) {
			t.Errorf("%s: helpUri %s", e.Code, rule.HelpURI)
		}
		if strings.ContainsAny(rule.Name, "_- ") || !strings.EqualFold(rule.Name, strings.NewReplacer("_", "", "-", "").Replace(e.Code)) {
			t.Errorf("%s: name %s is not its CamelCase", e.Code, rule.Name)
		}
		tags := rule.Properties.Tags
		wantTags := 3
		if r, ok := catalog.OWASPMCP(e.Code); ok {
			wantTags = 4
			if len(tags) == 4 && tags[3] != "owasp-mcp-top-10/"+r.ID {
				t.Errorf("%s: OWASP tag %q, want %s", e.Code, tags[3], r.ID)
			}
		}
		if len(tags) != wantTags || tags[0] != "security" || tags[1] != "mcp" || tags[2] != e.Family {
			t.Errorf("%s: tags %v", e.Code, tags)
		}
		wantLevel, wantSev := "note", ""
		graded := e.Kind == catalog.Finding || e.Kind == catalog.Change
		switch {
		case graded && e.Severity == catalog.High:
			wantLevel, wantSev = "error", "8.0"
		case graded && e.Severity == catalog.Medium:
			wantLevel, wantSev = "warning", "5.0"
		case graded && e.Severity == catalog.Low:
			wantLevel, wantSev = "note", "2.0"
		case e.Kind == catalog.Inconclusive:
			wantLevel = "warning"
		}
		if rule.DefaultConfiguration.Level != wantLevel || rule.Properties.SecuritySeverity != wantSev {
			t.Errorf("%s: level %s severity %q, want %s %q", e.Code, rule.DefaultConfiguration.Level, rule.Properties.SecuritySeverity, wantLevel, wantSev)
		}
	}
}

func TestSARIFResults(t *testing.T) {
	r := granularFindings()
	l := parseSARIF(t, render(t, r, "sarif", goldenOpts))
	run := l.Runs[0]
	if want := len(r.Findings) + 1; len(run.Results) != want {
		t.Fatalf("%d results, want %d", len(run.Results), want)
	}
	for i, res := range run.Results {
		rule := run.Tool.Driver.Rules[res.RuleIndex]
		if rule.ID != res.RuleID {
			t.Errorf("result %d: ruleIndex %d is %s, ruleId %s", i, res.RuleIndex, rule.ID, res.RuleID)
		}
		if len(res.Locations) != 1 || res.Locations[0].PhysicalLocation.ArtifactLocation.URI != "observed/github-tools.observed.json" ||
			res.Locations[0].PhysicalLocation.Region.StartLine != 1 {
			t.Errorf("result %d: locations %+v", i, res.Locations)
		}
		if fp := res.PartialFingerprints["mcpdriftFinding/v1"]; len(fp) != 64 {
			t.Errorf("result %d: fingerprint %q", i, fp)
		}
		if i < len(r.Findings) {
			f := r.Findings[i]
			if res.RuleID != f.ReasonCode || res.Level != severityLevel(f.Severity) {
				t.Errorf("result %d: %s %s for %+v", i, res.RuleID, res.Level, f)
			}
			ll := res.Locations[0].LogicalLocations
			if len(ll) != 1 || ll[0].Name != f.Name || ll[0].Kind != "function" || ll[0].FullyQualifiedName != "github-tools/"+f.Name {
				t.Errorf("result %d: logical locations %+v", i, ll)
			}
			if !strings.Contains(res.Message.Text, `"`+f.Name+`"`) || !strings.Contains(res.Message.Text, catalog.Get(f.ReasonCode).Title) {
				t.Errorf("result %d: message %q", i, res.Message.Text)
			}
		}
	}
	// The privileged description change is an error even though the
	// rule's default level is warning.
	if run.Results[0].Level != "error" {
		t.Errorf("high finding level %s", run.Results[0].Level)
	}
	last := run.Results[len(run.Results)-1]
	if last.RuleID != "field_attribution_unavailable" || last.Level != "note" || last.Properties.Kind != "note" {
		t.Errorf("warning result: %+v", last)
	}
	if run.Properties.Verdict != gate.PendingReview || run.Properties.ExitCode != 1 {
		t.Errorf("run properties %+v", run.Properties)
	}
	if len(run.Invocations) != 1 || !run.Invocations[0].ExecutionSuccessful {
		t.Errorf("invocations %+v", run.Invocations)
	}

	// The coarse finding has no tool: no logical location.
	l = parseSARIF(t, render(t, coarseDrift(), "sarif", Options{}))
	res := l.Runs[0].Results[0]
	if res.Locations[0].LogicalLocations != nil || res.Locations[0].PhysicalLocation.ArtifactLocation.URI != "mcp-manifest" {
		t.Errorf("coarse result location %+v", res.Locations)
	}
	// An inconclusive report has one result per inconclusive code.
	l = parseSARIF(t, render(t, granularInconclusive(), "sarif", Options{}))
	if n := len(l.Runs[0].Results); n != 2 {
		t.Errorf("%d results for two inconclusive codes", n)
	}
	for _, res := range l.Runs[0].Results {
		if res.Level != "warning" || res.Properties.Kind != "inconclusive" {
			t.Errorf("inconclusive result %+v", res)
		}
	}
	// A clean report has no result.
	l = parseSARIF(t, render(t, coarseClean(), "sarif", Options{}))
	if l.Runs[0].Results == nil || len(l.Runs[0].Results) != 0 {
		t.Errorf("clean report results %+v", l.Runs[0].Results)
	}
}

func fingerprints(t *testing.T, r *gate.Report) []string {
	t.Helper()
	l := parseSARIF(t, render(t, r, "sarif", Options{}))
	var out []string
	for _, res := range l.Runs[0].Results {
		out = append(out, res.PartialFingerprints[fingerprintKey])
	}
	return out
}

func TestFingerprintStability(t *testing.T) {
	for _, fx := range allFixtures {
		a, b := fingerprints(t, fx.r()), fingerprints(t, fx.r())
		if strings.Join(a, ",") != strings.Join(b, ",") {
			t.Errorf("%s: fingerprints differ between runs:\n%v\n%v", fx.name, a, b)
		}
		seen := map[string]bool{}
		for _, fp := range a {
			if seen[fp] {
				t.Errorf("%s: duplicate fingerprint %s", fx.name, fp)
			}
			seen[fp] = true
		}
	}
	// The run's options (path, version) do not change them.
	r := granularFindings()
	var b1, b2 bytes.Buffer
	_ = Render(&b1, r, "sarif", goldenOpts)
	_ = Render(&b2, r, "sarif", Options{ToolVersion: "9", ArtifactURI: "elsewhere.json"})
	if fpOf(t, b1.String()) != fpOf(t, b2.String()) {
		t.Error("fingerprints depend on the options")
	}

	// A new observed digest for the same drift is a new fingerprint.
	base := fingerprints(t, granularFindings())
	changed := granularFindings()
	changed.Findings[0].ObservedDigest = digestA
	after := fingerprints(t, changed)
	if base[0] == after[0] {
		t.Error("changed observed digest kept the fingerprint")
	}
	for i := 1; i < len(base); i++ {
		if base[i] != after[i] {
			t.Errorf("result %d changed fingerprint though its drift did not", i)
		}
	}
	// The coarse finding too.
	c1 := coarseDrift()
	c2 := coarseDrift()
	c2.Findings[0].ObservedDigest = digestC
	if fingerprints(t, c1)[0] == fingerprints(t, c2)[0] {
		t.Error("coarse fingerprint ignores the observed digest")
	}
	// And it is exactly the documented hash.
	want := fingerprint("github-tools", "exec_shell", "mcp_privileged_tool_changed", "", digestC)
	if base[0] != want {
		t.Errorf("fingerprint %s, want %s", base[0], want)
	}
	// Fields are separated: moving a byte across a boundary changes it.
	if fingerprint("ab", "c", "x", "", "") == fingerprint("a", "bc", "x", "", "") {
		t.Error("fingerprint fields are not separated")
	}
}

func fpOf(t *testing.T, out string) string {
	l := parseSARIF(t, out)
	var fps []string
	for _, r := range l.Runs[0].Results {
		fps = append(fps, r.PartialFingerprints[fingerprintKey])
	}
	return strings.Join(fps, ",")
}

func TestCamelCase(t *testing.T) {
	for in, want := range map[string]string{
		"mcp_tool_added":                     "McpToolAdded",
		"inconclusive_manifest_not_observed": "InconclusiveManifestNotObserved",
		"x":                                  "X",
	} {
		if got := camelCase(in); got != want {
			t.Errorf("camelCase(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestArtifactURI(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "mcp-manifest",
		"obs/a.json":            "obs/a.json",
		"dir with space/a#b?.j": "dir%20with%20space/a%23b%3F.j",
		"c:/x.json":             "./c:/x.json",
	} {
		if got := artifactURI(in); got != want {
			t.Errorf("artifactURI(%q) = %q, want %q", in, got, want)
		}
	}
}
