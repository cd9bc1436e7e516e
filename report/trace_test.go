package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/probe"
)

// TestDriftTraceIDs: the ids a finding carries reach the JSON report (on
// findings and suppressed findings) and the SARIF result's property bag;
// without them neither format has the members.
func TestDriftTraceIDs(t *testing.T) {
	const tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	r := driftReport()
	r.Findings[0].TraceID, r.Findings[0].SpanID = tid, sid
	r.Suppressed = []probe.SuppressedFinding{{Finding: probe.Finding{RuleID: "MCP-DRIFT-TOOL-MISSING", Level: probe.LevelError, Severity: "high", Tool: "x", Message: "m", TraceID: tid, SpanID: sid},
		Suppression: manifest.Suppression{Rule: "MCP-DRIFT-TOOL-MISSING", Reason: "accepted for the test", Source: "mcpdrift.yaml, suppression 1"}}}
	var js, sarif strings.Builder
	if err := RenderDrift(&js, r, "json", Options{}); err != nil {
		t.Fatal(err)
	}
	if err := RenderDrift(&sarif, r, "sarif", Options{}); err != nil {
		t.Fatal(err)
	}
	// (The draft-07 SARIF schema the tests also use refuses a
	// suppression's status, so the log is validated without the
	// suppressed finding.)
	var valid strings.Builder
	r2 := *r
	r2.Suppressed = nil
	_ = RenderDrift(&valid, &r2, "sarif", Options{})
	validateSARIF(t, "drift", valid.String())
	var doc struct {
		Findings   []map[string]any `json:"findings"`
		Suppressed []map[string]any `json:"suppressed"`
	}
	if err := json.Unmarshal([]byte(js.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Findings[0]["trace_id"] != tid || doc.Findings[0]["span_id"] != sid || doc.Suppressed[0]["span_id"] != sid {
		t.Fatalf("json: %s", js.String())
	}
	if _, ok := doc.Findings[1]["trace_id"]; ok {
		t.Fatalf("a finding without a span has a trace_id: %v", doc.Findings[1])
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID     string         `json:"ruleId"`
				Properties map[string]any `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(sarif.String()), &log); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, res := range log.Runs[0].Results {
		if res.Properties["traceId"] == tid && res.Properties["spanId"] == sid {
			n++
		} else if _, ok := res.Properties["traceId"]; ok {
			t.Errorf("%s: traceId %v", res.RuleID, res.Properties["traceId"])
		}
	}
	if n != 2 {
		t.Fatalf("%d SARIF results carry the ids, want 2: %s", n, sarif.String())
	}
	// No ids: neither member anywhere.
	var plain strings.Builder
	_ = RenderDrift(&plain, driftReport(), "sarif", Options{})
	_ = RenderDrift(&plain, driftReport(), "json", Options{})
	for _, k := range []string{"traceId", "spanId", "trace_id", "span_id"} {
		if strings.Contains(plain.String(), k) {
			t.Fatalf("%s without ids", k)
		}
	}
}
