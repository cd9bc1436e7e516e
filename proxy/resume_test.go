package proxy_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// The gateway's upstream side of stream resumption: an upstream that
// closes a call's stream for polling (SEP-1699) and sends the response on
// the GET that resumes it is resumed, and the downstream gets the result
// on the stream it asked on; one whose stream ends with nothing to resume
// from still gets the gateway's -32603.
func TestUpstreamStreamResumed(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      mockserver.Config
		answered bool
	}{
		{"polling", mockserver.Config{PollCalls: true, PollRetry: 30 * time.Millisecond}, true},
		{"ends early", mockserver.Config{StreamEndsEarly: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Era, c.cfg.Response, c.cfg.HostileMethods = mockserver.LegacyOnly, mockserver.SSEResponses, []string{"tools/call"}
			mock, up := upstreamMock(t, c.cfg, exampleV1)
			_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
				Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Profile: schemadiff.FailClosedProfile})
			obs, _ := listThrough(t, url, true, mcpclient.ToolCall{Name: "list_branches", Arguments: json.RawMessage(`{"repo":"a/b"}`)})
			call := obs.Calls[0]
			if got := call.Result != nil && call.Err == "" && call.Code == 0; got != c.answered {
				t.Fatalf("answered %v, want %v: %+v", got, c.answered, call)
			}
			if !c.answered && (call.Code != -32603 || !strings.Contains(call.Message, "ended without the response")) {
				t.Errorf("no answer upstream: %+v", call)
			}
			want := 0
			if c.answered {
				want = 1
			}
			// A request is logged when its handler returns, which may be
			// after the gateway is done with it.
			resumed := 0
			for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				resumed = 0
				for _, e := range mock.Log() {
					if e.HTTPMethod == "GET" && strings.Contains(e.Reason, "resumed") {
						resumed++
					}
				}
				if resumed >= want || time.Now().After(deadline) {
					break
				}
			}
			if resumed != want {
				t.Errorf("the upstream stream was resumed %d times, want %d", resumed, want)
			}
		})
	}
}
