package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

type toolEntries struct {
	Tools []struct {
		Name     string `json:"name"`
		Status   string `json:"status"`
		Decision string `json:"decision"`
	} `json:"tools"`
}

func decisionsOf(t *testing.T, what, out string) map[string]string {
	t.Helper()
	var r toolEntries
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	m := map[string]string{}
	for _, e := range r.Tools {
		m[e.Name] = e.Decision
	}
	return m
}

// Issue 11, section 1: the same drifted pairs through gate (with
// snapshots), diff, drift and proxy --mode audit get the same per-tool
// decision everywhere, under both profiles.
func TestOneDecisionEverywhere(t *testing.T) {
	v1, _ := os.ReadFile(exampleV1)
	v2, _ := os.ReadFile(exampleV2)
	dir := t.TempDir()
	notation := strings.Replace(string(v1), "\"required\": [\n            \"repo\",\n            \"query\"\n          ]", "\"required\": [\"query\", \"repo\"]", 1)
	if notation == string(v1) {
		t.Fatal("the notation pair did not change the manifest")
	}
	optional := strings.Replace(string(v1), "\"repo\": {\n              \"type\": \"string\"\n            }\n          },\n          \"required\": [\n            \"repo\"\n          ]\n        },\n        \"annotations\": {\n          \"readOnlyHint\": true\n        }\n      }\n    ]", "\"repo\": {\"type\": \"string\"}, \"all\": {\"type\": \"boolean\"}}, \"required\": [\"repo\"]}, \"annotations\": {\"readOnlyHint\": true}}]", 1)
	if optional == string(v1) {
		t.Fatal("the optional-parameter pair did not change the manifest")
	}
	pairs := map[string]string{"rug pull": string(v2), "notation": notation, "optional parameter": optional}
	oldPath := writeFile(t, dir, "old.json", v1)
	decl := filepath.Join(dir, "d.json")
	if code, _, stderr := run(t, "", "pin", "--input", oldPath, "--server-id", "acme", "-o", decl); code != 0 {
		t.Fatalf("pin: %s", stderr)
	}
	for name, newList := range pairs {
		newPath := writeFile(t, dir, strings.ReplaceAll(name, " ", "-")+".json", []byte(newList))
		obs := filepath.Join(dir, "o.json")
		osnap := filepath.Join(dir, "o.snapshot.json")
		if code, _, stderr := run(t, "", "observe", "--input", newPath, "--server-id", "acme", "-q", "-o", obs, "--snapshot", osnap); code != 0 {
			t.Fatalf("observe: %s", stderr)
		}
		for _, profile := range []string{"review", "fail-closed"} {
			t.Run(name+"/"+profile, func(t *testing.T) {
				_, out, stderr := run(t, "", "diff", oldPath, newPath, "--profile", profile, "--format", "json")
				diff := decisionsOf(t, "diff "+stderr, out)
				_, out, _ = run(t, "", "gate", "--format", "json", "--observed", obs, "--declared", decl, "--declared-snapshot", snapshotPathFor(decl), "--observed-snapshot", osnap, "--decision-profile", profile)
				gate := decisionsOf(t, "gate", out)
				_, url := mock(t, mockserver.Config{}, newPath)
				_, out, stderr = run(t, "", "drift", oldPath, "--url", url, "--profile", profile, "--format", "json", "--skip-second-connection")
				drift := decisionsOf(t, "drift "+stderr, out)
				logf := filepath.Join(t.TempDir(), "log.ndjson")
				purl, _, stop := runProxy(t, "--mode", "audit", "--declared", decl, "--upstream-url", url, "--listen", "127.0.0.1:0", "--decision-log", logf, "--profile", profile)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				if _, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: purl}); err != nil {
					t.Fatal(err)
				}
				cancel()
				stop()
				proxy := map[string]string{}
				lb, _ := os.ReadFile(logf)
				for _, line := range strings.Split(strings.TrimSpace(string(lb)), "\n") {
					var r struct {
						Method, Tool string
						ToolDecision string `json:"tool_decision"`
					}
					if json.Unmarshal([]byte(line), &r) == nil && r.Method == "tools/list" && r.Tool != "" {
						proxy[r.Tool] = r.ToolDecision
					}
				}
				if len(diff) == 0 || len(proxy) == 0 {
					t.Fatalf("no decisions: diff %v proxy %v", diff, proxy)
				}
				for tool, want := range diff {
					for cmd, got := range map[string]map[string]string{"gate": gate, "drift": drift, "proxy": proxy} {
						d, ok := got[tool]
						if !ok && cmd == "proxy" {
							continue // the gateway never advertises a removed tool
						}
						if d != want {
							t.Errorf("%s: diff decides %q, %s %q", tool, want, cmd, d)
						}
					}
				}
				if name == "notation" && diff["search_issues"] != "allow" {
					t.Errorf("a notation-only change: %v", diff)
				}
				if name == "optional parameter" && profile == "fail-closed" && diff["list_branches"] != "deny" {
					t.Errorf("a new optional parameter under fail-closed: %v", diff)
				}
			})
		}
	}
}
