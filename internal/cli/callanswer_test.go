package cli

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// A call with no answer is not "no finding": drift --execute against a
// server whose stream ends before the response reports
// MCP-DRIFT-CALL-NO-ANSWER and exits 1, in either era; against one that
// closes the stream for polling (SEP-1699) and expects a resume, the call
// is answered after the GET with Last-Event-ID, and the run is clean.
func TestDriftCallWithNoAnswer(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  mockserver.Config
		args []string
		code int
		want string
	}{
		{"modern stream ends early", mockserver.Config{Era: mockserver.ModernOnly, StreamEndsEarly: true}, nil, 1, "the event stream ended without the response"},
		{"legacy stream ends early", mockserver.Config{Era: mockserver.LegacyOnly, StreamEndsEarly: true}, []string{"--legacy"}, 1, "it was not resumed"},
		{"legacy polling", mockserver.Config{Era: mockserver.LegacyOnly, PollCalls: true, PollRetry: 20 * time.Millisecond}, []string{"--legacy"}, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Response, c.cfg.HostileMethods = mockserver.SSEResponses, []string{"tools/call"}
			s, url := mock(t, c.cfg, exampleV1)
			args := append([]string{exampleV1, "--url", url, "--invoke-tool", "list_branches", "--execute", "--skip-second-connection"}, c.args...)
			code, d, stderr := runDrift(t, args...)
			noAnswer := slices.Contains(d.rules(), "MCP-DRIFT-CALL-NO-ANSWER list_branches")
			if code != c.code || d.ExitCode != c.code || noAnswer != (c.code == 1) {
				t.Fatalf("exit %d (report %d), findings %v, want exit %d\n%s", code, d.ExitCode, d.rules(), c.code, stderr)
			}
			want := 0
			if c.cfg.PollCalls {
				want = 1
			}
			if n := resumedGETs(s, want); n != want {
				t.Errorf("the stream was resumed %d times, want %d", n, want)
			}
			if c.want != "" {
				found := false
				for _, f := range d.Findings {
					found = found || f.RuleID == "MCP-DRIFT-CALL-NO-ANSWER" && strings.Contains(f.Message, c.want)
				}
				if !found {
					t.Errorf("no finding says %q: %+v", c.want, d.Findings)
				}
			}
		})
	}
}

// resumedGETs counts the GETs the mock answered by resuming a stream,
// waiting up to 2 s for want of them: a request is logged when its
// handler returns, which may be after the client is done with it.
func resumedGETs(s *mockserver.Server, want int) int {
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n := 0
		for _, e := range s.Log() {
			if e.HTTPMethod == "GET" && e.Status == 200 && strings.Contains(e.Reason, "resumed") {
				n++
			}
		}
		if n >= want || time.Now().After(deadline) {
			return n
		}
	}
}
