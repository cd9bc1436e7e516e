package proxy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// hostileStdio is the test binary as a stdio upstream whose tools/call
// answers are hostile (serveHostileStdio), logging what it receives to
// the file returned.
func hostileStdio(t *testing.T, mode string) (proxy.Upstream, string) {
	t.Helper()
	abs, _ := filepath.Abs(exampleV1)
	log := filepath.Join(t.TempDir(), "upstream.log")
	return stdioUpstream(t, abs, map[string]string{"MCPDRIFT_PROXY_TEST_HOSTILE": mode, "MCPDRIFT_PROXY_TEST_LOG": log}), log
}

// A stdio upstream's answer the gateway cannot hand to its request — a
// 20 MiB line, with its id first, last or in the middle, or a response
// whose id is no request's — is answered to the downstream with a
// JSON-RPC error that says why, at once (issue 29, item 8); the link and
// the session go on. Before, the call waited out its deadline (60 s by
// default) and then got "no answer in time".
func TestStdioAnswerTheGatewayCannotAttribute(t *testing.T) {
	for _, tc := range []struct{ mode, reason, says string }{
		{"oversized-first", "upstream_error", "larger than the gateway accepts"},
		{"oversized-last", "upstream_error", "larger than the gateway accepts"},
		{"oversized-middle", "upstream_unattributable", "whose id could not be read"},
		{"wrong-id", "upstream_unattributable", "is no request's in flight"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			up, _ := hostileStdio(t, tc.mode)
			_, url := gateway(t, proxy.Config{Upstream: up, Mode: proxy.Enforce, Target: "stdio:mock",
				Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
			c := newLegacyClient(t, url)
			if status, body, _, _ := c.post(`{"jsonrpc":"2.0","id":"l1","method":"tools/list","params":{}}`, nil); status != 200 || !strings.Contains(body, `"list_branches"`) {
				t.Fatalf("the list: %d %s", status, clipped(body))
			}
			start := time.Now()
			_, body, _, err := c.post(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"list_branches","arguments":{"repo":"a/b"}}}`, nil)
			took := time.Since(start)
			var r struct {
				ID    string `json:"id"`
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
					Data    struct {
						Reason string `json:"reason"`
					} `json:"data"`
				} `json:"error"`
			}
			if err != nil || json.Unmarshal([]byte(body), &r) != nil {
				t.Fatalf("the call: %v %s", err, clipped(body))
			}
			if r.ID != "c1" || r.Error.Code != -32603 || r.Error.Data.Reason != tc.reason || !strings.Contains(r.Error.Message, tc.says) {
				t.Errorf("the call's answer: %s", clipped(body))
			}
			if took > 5*time.Second {
				t.Errorf("the error came after %v", took)
			}
			status, body, _, _ := c.post(`{"jsonrpc":"2.0","id":"l2","method":"tools/list","params":{}}`, nil)
			if status != 200 || !strings.Contains(body, `"list_branches"`) {
				t.Errorf("the session after: %d %s", status, clipped(body))
			}
		})
	}
}

// A notifications/cancelled names the request by the downstream's id;
// the upstream knows it by the link's: over stdio every request, over
// HTTP one whose id is a number beyond ±(2^53-1). The cancellation must
// reach the upstream under the id the upstream knows. Before, it went as
// it came: over stdio it named another request of the link's, or none.
func TestCancelledNamesTheRequestTheUpstreamKnows(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		up, logPath := hostileStdio(t, "slow")
		_, url := gateway(t, proxy.Config{Upstream: up, Mode: proxy.Audit, Target: "stdio:mock",
			Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
		c := newLegacyClient(t, url)
		cancelDuringCall(t, c, "77")
		var callID, cancelID string
		b, _ := os.ReadFile(logPath)
		for _, line := range strings.Split(string(b), "\n") {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					RequestID json.RawMessage `json:"requestId"`
				} `json:"params"`
			}
			json.Unmarshal([]byte(line), &m)
			switch m.Method {
			case "tools/call":
				callID = string(m.ID)
			case "notifications/cancelled":
				cancelID = string(m.Params.RequestID)
			}
		}
		if callID == "" || cancelID != callID {
			t.Errorf("the upstream got the call as %s and the cancellation of %s", callID, cancelID)
		}
	})
	t.Run("http", func(t *testing.T) {
		_, up, ul := loggedUpstream(t, mockserver.Config{Slow: time.Second}, exampleV1, nil)
		_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Audit, Target: up,
			Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
		c := newLegacyClient(t, url)
		if body := cancelDuringCall(t, c, "9007199254740993"); !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":9007199254740993,"result"`) {
			t.Errorf("the call's answer: %s", clipped(body))
		}
		var callID, cancelID string
		for _, m := range ul.all() {
			switch m.Method {
			case "tools/call":
				callID = m.ID
			case "notifications/cancelled":
				cancelID = m.RequestID
			}
		}
		if !strings.HasPrefix(callID, `"`) || cancelID != callID {
			t.Errorf("the upstream got the call as %s and the cancellation of %s, want the gateway's own string id in both", callID, cancelID)
		}
	})
}

// cancelDuringCall calls a tool with id and cancels it while the upstream
// works on it; it returns the call's answer.
func cancelDuringCall(t *testing.T, c *legacyClient, id string) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		_, body, _, _ := c.post(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"list_branches","arguments":{"repo":"a/b"}}}`, nil)
		done <- body
	}()
	time.Sleep(300 * time.Millisecond)
	if status, body, _, err := c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"t"}}`, nil); err != nil || status != 202 {
		t.Errorf("notifications/cancelled: %d %s %v", status, body, err)
	}
	select {
	case body := <-done:
		return body
	case <-time.After(15 * time.Second):
		t.Fatal("the call was not answered")
		return ""
	}
}
