package peers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// The gateway decides on exactly the message the upstream acts on
// (issue: "The gateway can be walked past"). Real SDK servers — mcp-go
// and the go-sdk, whose tool handlers record what they executed into a
// file (their own log), and server-everything behind a recording relay —
// sit behind the gateway, which approves get_thing (or echo) and hides
// exec_shell and send_email (or get-env). Every smuggling shape of
// proxy/testdata/smuggling.jsonl is sent through every downstream bridge
// in every mode; the upstream's own log must show no hidden tool run and
// no argument the gateway did not decide on, and the plain call must get
// through where the mode lets it.

const envCallLog = "MCPDRIFT_PEERS_CALLLOG" // the smuggle peers' execution log

// thingIn is get_thing's arguments as the servers decode them.
type thingIn struct {
	ID   string `json:"id"`
	Path string `json:"path,omitempty"`
	Opts *struct {
		Mode string `json:"mode,omitempty"`
	} `json:"opts,omitempty"`
}

type shellIn struct {
	Cmd string `json:"cmd,omitempty"`
}

type emailIn struct {
	To string `json:"to,omitempty"`
}

// execLog appends what a peer executed, one JSON line per tool run.
type execLog struct {
	mu   sync.Mutex
	path string
}

func (l *execLog) record(tool string, args any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"tool": tool, "args": args})
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers: exec log:", err)
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

type execRecord struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

func readExecLog(t *testing.T, path string) []execRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []execRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var r execRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("exec log line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

const thingSchema = `{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"path":{"type":"string","pattern":"^/tmp/"},"opts":{"type":"object","properties":{"mode":{"enum":["ro"]}}}}}`

// newMCPGoSmuggle is the mcp-go peer: handlers bind their arguments as
// mcp-go's documentation shows (BindArguments, encoding/json).
func newMCPGoSmuggle(log *execLog) *mcpgoserver.MCPServer {
	s := mcpgoserver.NewMCPServer("mcpdrift-peer-smuggle", "1.0.0", mcpgoserver.WithToolCapabilities(true))
	bind := func(name string, in any) mcpgoserver.ToolHandlerFunc {
		return func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			if err := req.BindArguments(in); err != nil {
				return mcpgo.NewToolResultError(err.Error()), nil
			}
			log.record(name, in)
			return mcpgo.NewToolResultText("ran " + name), nil
		}
	}
	s.AddTool(mcpgo.NewToolWithRawSchema("get_thing", "Get a thing.", json.RawMessage(thingSchema)), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return bind("get_thing", &thingIn{})(ctx, req)
	})
	s.AddTool(mcpgo.NewTool("exec_shell", mcpgo.WithDescription("Run a shell command."), mcpgo.WithString("cmd")), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return bind("exec_shell", &shellIn{})(ctx, req)
	})
	s.AddTool(mcpgo.NewTool("send_email", mcpgo.WithDescription("Send an email."), mcpgo.WithString("to")), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return bind("send_email", &emailIn{})(ctx, req)
	})
	return s
}

// newGoSDKSmuggle is the go-sdk peer with typed handlers.
func newGoSDKSmuggle(log *execLog) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpdrift-peer-smuggle", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "get_thing", Description: "Get a thing."},
		func(_ context.Context, _ *mcp.CallToolRequest, in thingIn) (*mcp.CallToolResult, any, error) {
			log.record("get_thing", in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran get_thing"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "exec_shell", Description: "Run a shell command."},
		func(_ context.Context, _ *mcp.CallToolRequest, in shellIn) (*mcp.CallToolResult, any, error) {
			log.record("exec_shell", in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran exec_shell"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "send_email", Description: "Send an email."},
		func(_ context.Context, _ *mcp.CallToolRequest, in emailIn) (*mcp.CallToolResult, any, error) {
			log.record("send_email", in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran send_email"}}}, nil, nil
		})
	return s
}

// smuggleSeeds are the shapes of proxy/testdata/smuggling.jsonl with the
// tool names of the peer at hand.
func smuggleSeeds(t *testing.T, approved, hidden, approvedArgs string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "proxy", "testdata", "smuggling.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r := strings.NewReplacer("get_thing", approved, "get_\\u0074hing", approved, "exec_shell", hidden, "send_email", hidden, `{"id":"1"}`, approvedArgs)
	var out [][]byte
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, []byte(r.Replace(line)))
		}
	}
	return out
}

// smugglePeer is one real server behind the gateway.
type smugglePeer struct {
	p         *pinned
	approved  string
	hidden    []string
	plainArgs string          // the approved call's arguments
	ran       func() []string // what the upstream ran: tool names
	acted     func() []string // the approved tool's arguments as acted on (JSON)
	relay     *callLog        // server-everything's relay, when there is one
	reset     func()
}

func mcpgoSmugglePeer(t *testing.T, stdio bool) *smugglePeer {
	log := &execLog{path: filepath.Join(t.TempDir(), "exec.log")}
	p := &pinned{label: "peer-http"}
	if stdio {
		p = &pinned{label: "peer-stdio", argv: []string{testExecutable(t)},
			env: []string{envChild + "=mcpgo-smuggle", envCallLog + "=" + log.path}}
	} else {
		p.url = serveHTTP(t, mcpgoserver.NewStreamableHTTPServer(newMCPGoSmuggle(log)))
	}
	return execPeer(t, p, log)
}

func gosdkSmugglePeer(t *testing.T) *smugglePeer {
	log := &execLog{path: filepath.Join(t.TempDir(), "exec.log")}
	srv := newGoSDKSmuggle(log)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	return execPeer(t, &pinned{label: "gosdk-smuggle-http", url: serveHTTP(t, h)}, log)
}

func execPeer(t *testing.T, p *pinned, log *execLog) *smugglePeer {
	p = withoutTools(t, pinServer(t, p), "exec_shell", "send_email")
	sp := &smugglePeer{p: p, approved: "get_thing", hidden: []string{"exec_shell", "send_email"}, plainArgs: `{"id":"plain"}`}
	sp.ran = func() []string {
		var out []string
		for _, r := range readExecLog(t, log.path) {
			out = append(out, r.Tool)
		}
		return out
	}
	sp.acted = func() []string {
		var out []string
		for _, r := range readExecLog(t, log.path) {
			if r.Tool == sp.approved {
				out = append(out, string(r.Args))
			}
		}
		return out
	}
	sp.reset = func() { _ = os.Remove(log.path) }
	return sp
}

// everythingSmugglePeer is server-everything over HTTP behind a relay
// that records, with encoding/json (which ignores case: it errs towards
// seeing a smuggled name), every tools/call that reaches it.
func everythingSmugglePeer(t *testing.T) *smugglePeer {
	node, entry := everythingPeer(t)
	up := startEverythingHTTP(t, node, entry)
	relay := &callLog{}
	target, err := url.Parse(up)
	if err != nil {
		t.Fatal(err)
	}
	target.Path = "" // the relay is served at /mcp too
	p := &pinned{label: "everything-smuggle", url: serveHTTP(t, relay.wrap(httputil.NewSingleHostReverseProxy(target)))}
	p = withoutTools(t, pinServer(t, p), "get-env")
	sp := &smugglePeer{p: p, approved: "echo", hidden: []string{"get-env"}, plainArgs: `{"message":"plain"}`, relay: relay}
	sp.ran = func() []string {
		relay.mu.Lock()
		defer relay.mu.Unlock()
		return append([]string(nil), relay.names...)
	}
	sp.acted = func() []string { return nil }
	sp.reset = func() { relay.mu.Lock(); relay.names = nil; relay.mu.Unlock() }
	return sp
}

func TestGatewaySmuggling(t *testing.T) {
	peers := map[string]func(t *testing.T) *smugglePeer{
		"mcpgo http":      func(t *testing.T) *smugglePeer { return mcpgoSmugglePeer(t, false) },
		"mcpgo stdio":     func(t *testing.T) *smugglePeer { return mcpgoSmugglePeer(t, true) },
		"gosdk http":      gosdkSmugglePeer,
		"everything http": everythingSmugglePeer,
	}
	for _, name := range []string{"mcpgo http", "mcpgo stdio", "gosdk http", "everything http"} {
		t.Run(name, func(t *testing.T) {
			sp := peers[name](t)
			for _, bridge := range []string{"http", "stdio"} {
				for _, mode := range []proxy.Mode{proxy.Enforce, proxy.Audit, proxy.Observe} {
					t.Run(bridge+" "+string(mode), func(t *testing.T) {
						sp.reset()
						smuggleCell(t, sp, bridge, mode)
					})
				}
			}
		})
	}
}

// smuggleCell sends every shape, then the plain call, through one bridge
// in one mode, and reads the upstream's own log.
func smuggleCell(t *testing.T, sp *smugglePeer, bridge string, mode proxy.Mode) {
	argsJSON := sp.plainArgs
	d := gatewayFor(t, bridge, sp.p, gatewayOpts{mode: mode})
	rd := newRawDownstream(t, d)
	defer rd.close()
	for _, msg := range smuggleSeeds(t, sp.approved, sp.hidden[0], argsJSON) {
		rd.send(t, msg)
	}
	plain := `{"jsonrpc":"2.0","id":"plain-call","method":"tools/call","params":{"name":"` + sp.approved + `","arguments":` + argsJSON + `}}`
	answer := rd.send(t, []byte(plain))
	rd.close()
	ran := sp.ran()
	for _, h := range sp.hidden {
		for _, r := range ran {
			if r == h {
				t.Fatalf("the hidden tool %s reached the upstream (%s, %s); it ran: %v", h, bridge, mode, ran)
			}
		}
	}
	// Audit forwards every call it can read as the gateway reads it (it
	// logs what enforce would refuse); enforce forwards only arguments
	// the pinned schema accepts under the names it checked.
	for _, a := range sp.acted() {
		if mode != proxy.Enforce {
			break
		}
		var in thingIn
		_ = json.Unmarshal([]byte(a), &in)
		if strings.Contains(a, "/etc") || in.Opts != nil && in.Opts.Mode != "" && in.Opts.Mode != "ro" || in.Path != "" && !strings.HasPrefix(in.Path, "/tmp/") {
			t.Fatalf("the upstream acted on arguments the gateway did not decide on: %s", a)
		}
	}
	reached := false
	for _, r := range ran {
		reached = reached || r == sp.approved
	}
	switch {
	case mode == proxy.Observe && reached:
		t.Fatalf("observe mode let a tools/call reach the upstream: %v", ran)
	case mode != proxy.Observe && !reached:
		t.Fatalf("the plain call did not reach the upstream in %s mode (the check would prove nothing); answer %s", mode, answer)
	}
}
