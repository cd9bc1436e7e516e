package peers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// runSchema is an ordinary "run a command" schema: the working directory
// is held to the workspace, and env declares a "PATH" of its own.
const runSchema = `{"type":"object","required":["cmd"],"properties":{"cmd":{"enum":["ls","make"]},"path":{"type":"string","pattern":"^/workspace/"},"env":{"type":"object","properties":{"PATH":{"type":"string"}}}}}`

// runIn is run's arguments as mcp-go's BindArguments decodes them
// (encoding/json: member names matched without regard to case).
type runIn struct {
	Cmd  string            `json:"cmd"`
	Path string            `json:"path"`
	Env  map[string]string `json:"env"`
}

// TestCaseVariantDeclaredElsewhere: a top-level "PATH" is what Go's
// encoding/json reads as "path", though the schema declares a "PATH" of
// its own under env. The gateway decides on the properties that apply at
// the member's place in the schema, not on every name the schema declares
// anywhere: the call is refused, and mcp-go never acts on a path its
// pattern ^/workspace/ refuses.
func TestCaseVariantDeclaredElsewhere(t *testing.T) {
	log := &execLog{path: filepath.Join(t.TempDir(), "exec.log")}
	s := mcpgoserver.NewMCPServer("run-peer", "1.0.0", mcpgoserver.WithToolCapabilities(true))
	s.AddTool(mcpgo.NewToolWithRawSchema("run", "Run a command in the workspace.", json.RawMessage(runSchema)),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			var in runIn
			if err := req.BindArguments(&in); err != nil {
				return mcpgo.NewToolResultError(err.Error()), nil
			}
			log.record("run", in)
			return mcpgo.NewToolResultText("ran"), nil
		})
	p := pinServer(t, &pinned{label: "run-peer", url: serveHTTP(t, mcpgoserver.NewStreamableHTTPServer(s))})
	for _, bridge := range []string{"http", "stdio"} {
		t.Run(bridge, func(t *testing.T) {
			_ = os.Remove(log.path)
			d := gatewayFor(t, bridge, p, gatewayOpts{mode: proxy.Enforce})
			rd := newRawDownstream(t, d)
			defer rd.close()
			// The control: the same path under its own name is refused.
			ctl := rd.send(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run","arguments":{"cmd":"ls","path":"/etc"}}}`))
			if !strings.Contains(string(ctl), "call_arguments_invalid") {
				t.Fatalf("control: %s", ctl)
			}
			ans := rd.send(t, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"cmd":"ls","PATH":"/etc"}}}`))
			if !strings.Contains(string(ans), "call_argument_ambiguous") {
				t.Errorf("a top-level PATH is not refused as a case variant of path: %s", ans)
			}
			for _, r := range readExecLog(t, log.path) {
				var in runIn
				_ = json.Unmarshal(r.Args, &in)
				if in.Path != "" && !strings.HasPrefix(in.Path, "/workspace/") {
					t.Fatalf("the upstream acted on path=%q, which the pinned schema refuses (gateway answer %s)", in.Path, ans)
				}
			}
			// The same name where it is declared is a plain argument.
			ok := rd.send(t, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run","arguments":{"cmd":"ls","path":"/workspace/a","env":{"PATH":"/usr/bin"}}}}`))
			if strings.Contains(string(ok), `"error"`) || !strings.Contains(string(ok), "ran") {
				t.Errorf("a call with env.PATH is refused: %s", ok)
			}
		})
	}
}
