package peers

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// servePolling serves a go-sdk (v1.8.0) server whose one tool closes its
// call's response stream (CloseSSEStream, SEP-1699 polling) before the
// result. With an event store the SDK puts ids on the stream (a priming
// event first) and replays it on a GET with Last-Event-ID; without one the
// stream carries no id, so the result has nowhere to go.
func servePolling(t *testing.T, store bool) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpdrift-peer-polling", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "slow_report", Description: "A report that takes a while: the server polls."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noIn) (*mcp.CallToolResult, any, error) {
			if req.Extra != nil && req.Extra.CloseSSEStream != nil {
				req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 50 * time.Millisecond})
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
	opts := &mcp.StreamableHTTPOptions{}
	if store {
		opts.EventStore = mcp.NewMemoryEventStore(nil)
	}
	return serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts))
}

// driftCall runs drift --invoke-tool slow_report --execute against url and
// returns its exit code and what it said of the call: the MCP-DRIFT-CALL-*
// findings, and a note that the call got no answer.
func driftCall(t *testing.T, declared, url string) (int, []string, string) {
	t.Helper()
	code, out, stderr := mcpdriftCLI(t, "drift", declared, "--url", url, "--invoke-tool", "slow_report", "--execute",
		"--format", "json", "--skip-second-connection", "--timeout", "60s")
	var rep struct {
		Findings []struct {
			RuleID  string `json:"rule_id"`
			Message string `json:"message"`
		} `json:"findings"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("drift: exit %d, not JSON: %v\n%s", code, err, stderr)
	}
	var rules []string
	msgs := ""
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.RuleID, "MCP-DRIFT-CALL-") {
			rules = append(rules, f.RuleID)
		}
		msgs += f.RuleID + ": " + f.Message + "\n"
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "no answer") {
			rules = append(rules, "note: no answer") // what drift said before a call with no answer was a finding
		}
	}
	return code, rules, msgs + stderr
}

// TestGoSDKStreamResumption: against the official Go SDK, a call whose
// stream the server closes for polling is answered after mcpdrift resumes
// it (Last-Event-ID, the server's retry), directly and through the
// gateway, whose upstream side resumes it too; a server that closes the
// stream with nothing to resume from leaves the call without an answer,
// and drift says so: MCP-DRIFT-CALL-NO-ANSWER, exit 1, never "no finding".
func TestGoSDKStreamResumption(t *testing.T) {
	for _, c := range []struct {
		name     string
		store    bool
		answered bool
	}{
		{"event store: resumed", true, true},
		{"no event store: no answer", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := servePolling(t, c.store)
			declared := filepath.Join(t.TempDir(), "declared.json")
			if code, _, stderr := mcpdriftCLI(t, "pin", "--url", url, "--server-id", "polling", "-o", declared); code != 0 {
				t.Fatalf("pin: exit %d %s", code, stderr)
			}
			check := func(via, url string) {
				declared := declared
				if via != "direct" {
					// The identity tuple's endpoint is where the server is
					// reached: pinned through the gateway, drifted there.
					declared = filepath.Join(t.TempDir(), "declared.json")
					if code, _, stderr := mcpdriftCLI(t, "pin", "--url", url, "--server-id", "polling", "-o", declared); code != 0 {
						t.Fatalf("pin %s: exit %d %s", via, code, stderr)
					}
				}
				code, rules, detail := driftCall(t, declared, url)
				noAnswer := slices.Contains(rules, "MCP-DRIFT-CALL-NO-ANSWER")
				if c.answered && (code != 0 || len(rules) > 0) || !c.answered && (code != 1 || !noAnswer) {
					t.Errorf("%s: exit %d, findings %v, want the call answered %v\n%s", via, code, rules, c.answered, detail)
				}
			}
			check("direct", url)
			if c.store {
				gw, gwOut := startGatewayListening(t, "--mode", "audit", "--declared", declared, "--upstream-url", url)
				check("through the gateway", gw)
				if t.Failed() {
					t.Logf("gateway stderr: %s", gwOut.String())
				}
			}
		})
	}
}
