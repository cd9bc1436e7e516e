package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const fixtures = "../../testdata/conformance/assay"

// run invokes the CLI in-process and returns exit code, stdout, stderr.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type gateReport struct {
	Verdict  string `json:"verdict"`
	Findings []struct {
		Name       string `json:"name"`
		ReasonCode string `json:"reason_code"`
		Severity   string `json:"severity"`
		Field      string `json:"field"`
	} `json:"findings"`
	Inconclusive []string `json:"inconclusive"`
	Warnings     []string `json:"warnings"`
	ExitCode     int      `json:"exit_code"`
}

func decodeReport(t *testing.T, s string) gateReport {
	t.Helper()
	var r gateReport
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, s)
	}
	return r
}

var verdictExit = map[string]int{
	"no_finding":                                0,
	"no_finding_with_coverage_warning":          0,
	"pending_tool_manifest_review":              1,
	"inconclusive_manifest_not_observed":        3,
	"inconclusive_manifest_partial_observation": 3,
	"manifest_observation_ambiguous":            3,
	"inconclusive":                              3,
}

// Every case of the coarse verdict corpus, end to end: observe the raw
// tools, then gate against the policy map.
func TestVerdictCorpusThroughCLI(t *testing.T) {
	var vc struct {
		Cases []struct {
			ID       string `json:"id"`
			Baseline string `json:"baseline_manifest_digest"`
			Observed struct {
				Tools    json.RawMessage `json:"tools"`
				Observed bool            `json:"tools_list_observed"`
				Complete string          `json:"tools_list_complete"`
			} `json:"observed"`
			Expected string `json:"expected_verdict"`
		} `json:"cases"`
	}
	b, err := os.ReadFile(filepath.Join(fixtures, "verdict_corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vc); err != nil {
		t.Fatal(err)
	}
	if len(vc.Cases) != 13 {
		t.Fatalf("%d cases", len(vc.Cases))
	}
	for _, c := range vc.Cases {
		t.Run(c.ID, func(t *testing.T) {
			dir := t.TempDir()
			obs := filepath.Join(dir, "observed.json")
			args := []string{"observe", "--server-id", "github", "-o", obs, "-q"}
			if !c.Observed.Observed {
				args = append(args, "--not-observed")
			} else {
				in := writeFile(t, dir, "tools.json", c.Observed.Tools)
				args = append(args, "--input", in, "--complete", c.Observed.Complete)
			}
			if code, _, stderr := run(t, "", args...); code != 0 {
				t.Fatalf("observe: exit %d: %s", code, stderr)
			}
			pol := writeFile(t, dir, "policy.yaml", []byte("declared_mcp_manifests:\n  github:\n    manifest_digest: \""+c.Baseline+"\"\n"))
			code, stdout, stderr := run(t, "", "gate", "--observed", obs, "--policy", pol, "--format", "json")
			r := decodeReport(t, stdout)
			if r.Verdict != c.Expected {
				t.Errorf("verdict %s, want %s (%s)", r.Verdict, c.Expected, stderr)
			}
			if code != verdictExit[c.Expected] || r.ExitCode != code {
				t.Errorf("exit %d (report says %d), want %d", code, r.ExitCode, verdictExit[c.Expected])
			}
			if c.Expected == "no_finding_with_coverage_warning" && len(r.Warnings) == 0 {
				t.Error("a coverage warning verdict needs a warning")
			}
			if c.Expected == "pending_tool_manifest_review" && (len(r.Findings) != 1 || r.Findings[0].ReasonCode != "mcp_tool_manifest_drift") {
				t.Errorf("findings %+v", r.Findings)
			}
		})
	}
}

// Every case of the granular corpus, end to end.
func TestGranularCorpusThroughCLI(t *testing.T) {
	var gc struct {
		Cases []struct {
			ID       string          `json:"id"`
			Observed json.RawMessage `json:"observed"`
			Declared json.RawMessage `json:"declared"`
			Expected struct {
				Findings []struct {
					Name       string `json:"name"`
					ReasonCode string `json:"reason_code"`
				} `json:"findings"`
				Inconclusive []string `json:"inconclusive"`
			} `json:"expected"`
		} `json:"cases"`
	}
	b, err := os.ReadFile(filepath.Join(fixtures, "granular_diff_cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &gc); err != nil {
		t.Fatal(err)
	}
	if len(gc.Cases) != 17 {
		t.Fatalf("%d cases", len(gc.Cases))
	}
	for _, c := range gc.Cases {
		t.Run(c.ID, func(t *testing.T) {
			dir := t.TempDir()
			obs := writeFile(t, dir, "observed.json", c.Observed)
			decl := writeFile(t, dir, "declared.json", c.Declared)
			code, stdout, stderr := run(t, "", "gate", "--format", "json", "--observed", obs, "--declared", decl)
			if code == 2 {
				t.Fatalf("exit 2: %s", stderr)
			}
			r := decodeReport(t, stdout)
			var got, want []string
			for _, f := range r.Findings {
				got = append(got, f.Name+" "+f.ReasonCode)
			}
			for _, f := range c.Expected.Findings {
				want = append(want, f.Name+" "+f.ReasonCode)
			}
			sort.Strings(got)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("findings %v, want %v", got, want)
			}
			wantInc := c.Expected.Inconclusive
			if wantInc == nil {
				wantInc = []string{}
			}
			if !slices.Equal(r.Inconclusive, wantInc) {
				t.Errorf("inconclusive %v, want %v", r.Inconclusive, wantInc)
			}
			wantVerdict := "no_finding"
			switch {
			case len(want) > 0:
				wantVerdict = "pending_tool_manifest_review"
			case len(wantInc) > 0:
				wantVerdict = "inconclusive"
			}
			if r.Verdict != wantVerdict {
				t.Errorf("verdict %s, want %s", r.Verdict, wantVerdict)
			}
			if code != verdictExit[wantVerdict] {
				t.Errorf("exit %d, want %d", code, verdictExit[wantVerdict])
			}
		})
	}
}
