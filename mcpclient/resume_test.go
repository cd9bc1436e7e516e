package mcpclient

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// getsOf returns the GETs the mock was sent, with how it answered them,
// once it has logged want of them (within 2 s: a request is logged when
// its handler returns, which may be after the client is done with it).
func getsOf(s *mockserver.Server, want int) []mockserver.LogEntry {
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var out []mockserver.LogEntry
		for _, e := range s.Log() {
			if e.HTTPMethod == "GET" {
				out = append(out, e)
			}
		}
		if len(out) >= want || time.Now().After(deadline) {
			return out
		}
	}
}

// TestCallResumedAfterPolling: a server that closes a call's response
// stream after an event with an id and a retry (SEP-1699 polling) and
// sends the response on the GET that resumes from that id: the call is
// answered, in every legacy revision that has resumption, after the retry.
func TestCallResumedAfterPolling(t *testing.T) {
	for _, rev := range []string{mcpwire.Rev20251125, mcpwire.Rev20250618, mcpwire.Rev20250326} {
		t.Run(rev, func(t *testing.T) {
			s, url := mockHTTP(t, mockserver.Config{Era: mockserver.LegacyOnly, Tools: mockTools("t", 2), Response: mockserver.SSEResponses,
				PollCalls: true, PollRetry: 150 * time.Millisecond, HostileMethods: []string{"tools/call"}})
			start := time.Now()
			obs, err := ListTools(context.Background(), Config{BaseURL: url + "/mcp", PreferredRevision: rev, Calls: []ToolCall{{Name: "t1", Arguments: []byte(`{}`)}}})
			if err != nil {
				t.Fatal(err)
			}
			c := obs.Calls[0]
			if c.Err != "" || len(c.Result) == 0 {
				t.Fatalf("the call got no answer: %+v", c)
			}
			gets := getsOf(s, 1)
			if len(gets) != 1 || gets[0].Status != 200 || !strings.Contains(gets[0].Reason, "resumed") {
				t.Fatalf("GETs: %+v", gets)
			}
			if time.Since(start) < 150*time.Millisecond {
				t.Errorf("the run took %v: the server's retry was not waited", time.Since(start))
			}
		})
	}
}

// TestCallStreamEndsEarly: a stream that ends before the response and
// cannot be resumed leaves the call without an answer, saying why: no
// event id to resume from, or a GET the server refused; a 2026-07-28
// server (no resumption) is not sent a GET at all.
func TestCallStreamEndsEarly(t *testing.T) {
	for _, c := range []struct {
		name, rev string
		era       mockserver.Era
		want      string
		gets      int
	}{
		{"2025-11-25 priming id, GET refused", mcpwire.Rev20251125, mockserver.LegacyOnly, "HTTP 405 (the server offers no stream to resume)", 1},
		{"2025-06-18 no id", mcpwire.Rev20250618, mockserver.LegacyOnly, "it was not resumed: the stream carried no event id", 0},
		{"2026-07-28", mcpwire.Rev20260728, mockserver.ModernOnly, "the event stream ended without the response", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, url := mockHTTP(t, mockserver.Config{Era: c.era, Tools: mockTools("t", 2), Response: mockserver.SSEResponses,
				StreamEndsEarly: true, HostileMethods: []string{"tools/call"}})
			obs, err := ListTools(context.Background(), Config{BaseURL: url + "/mcp", PreferredRevision: c.rev, Calls: []ToolCall{{Name: "t1", Arguments: []byte(`{}`)}}})
			if err != nil {
				t.Fatal(err)
			}
			o := obs.Calls[0]
			if len(o.Result) != 0 || !strings.Contains(o.Err, "the event stream ended without the response") || !strings.Contains(o.Err, c.want) {
				t.Fatalf("outcome %+v, want no answer saying %q", o, c.want)
			}
			if n := len(getsOf(s, c.gets)); n != c.gets {
				t.Errorf("%d GETs, want %d", n, c.gets)
			}
		})
	}
}

// A 2026-07-28 tools/call over HTTP carries the Mcp-Param-{Name} headers
// its tool's x-mcp-header annotations ask for (SEP-2243), from the
// InputSchema the caller gives (a non-ASCII value Base64-encoded); the
// strict mock checks each against the body and refuses the call without
// them (-32020).
func TestCallParamHeaders(t *testing.T) {
	schema := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"q":{"type":"string"}}}`
	tool := json.RawMessage(`{"name":"h","inputSchema":` + schema + `}`)
	_, url := mockHTTP(t, mockserver.Config{Era: mockserver.ModernOnly, Tools: []json.RawMessage{tool}})
	args := json.RawMessage(`{"region":"Hello, 世界","n":42,"q":"x"}`)
	obs, err := ListTools(context.Background(), Config{BaseURL: url + "/mcp", Calls: []ToolCall{
		{Name: "h", Arguments: args, InputSchema: json.RawMessage(schema)},
		{Name: "h", Arguments: args},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if c := obs.Calls[0]; c.Err != "" || c.Code != 0 || len(c.Result) == 0 {
		t.Errorf("with the schema: %+v", c)
	}
	if c := obs.Calls[1]; c.Code != mcpwire.CodeHeaderMismatch {
		t.Errorf("without it: %+v, want the mock's -32020", c)
	}
}
