package peers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGatewayIDsBeyondFloat64 (issue 29, item 8): a call whose id is an
// integer beyond 2^53 reaches a real server through the gateway and is
// answered with the downstream's own id bytes, the tool run exactly once.
// mcp-go and the go-sdk read a JSON-RPC id into a float64 and echo
// 9007199254740993 as 9007199254740992: the gateway sends its own id and
// gives the downstream its own back. Before, the call ran and the
// downstream got -32603 "not the response to the request".
func TestGatewayIDsBeyondFloat64(t *testing.T) {
	ids := []string{"9007199254740993", "1180591620717411303424", "-9007199254740993"}
	for _, srv := range []struct {
		label, tool, args string
		handler           http.Handler
	}{
		{"mcpgo", "get_weather", `{"city":"Oslo"}`, server.NewStreamableHTTPServer(newMCPGoServer(""))},
		{"gosdk", "echo", `{"message":"hi"}`, func() http.Handler {
			s := newGoSDKServer("")
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		}()},
	} {
		t.Run(srv.label, func(t *testing.T) {
			calls := &callLog{}
			url := serveHTTP(t, calls.wrap(srv.handler))
			p := pinServer(t, &pinned{label: srv.label + "-ids", url: url})
			d := httpGateway(t, p, gatewayOpts{})
			s := newRawSession(t, d.url)
			for _, id := range ids {
				body := s.call(id, srv.tool, srv.args)
				var r struct {
					ID     json.Number     `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				dec := json.NewDecoder(strings.NewReader(body))
				dec.UseNumber()
				if err := dec.Decode(&r); err != nil || string(r.ID) != id || len(r.Result) == 0 || !bytes.Contains([]byte(body), []byte(`"id":`+id+`,`)) {
					t.Errorf("id %s: %s", id, clip(body, 300))
				}
			}
			if n := calls.count(srv.tool); n != len(ids) {
				t.Errorf("the upstream ran %s %d times, want %d (once per call)", srv.tool, n, len(ids))
			}
		})
	}
}
