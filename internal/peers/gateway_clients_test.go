package peers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The real clients the gateway is tried with: the official Go SDK client,
// mark3labs/mcp-go's client and the MCP Inspector's CLI. Each speaks to a
// downstream — the gateway's URL (HTTP) or a command that is the gateway
// (stdio: the client launches it) — and prefers an era: eraModern (the
// client's default: 2026-07-28 first, falling back to initialize when the
// server is legacy) or eraLegacy (pinned to 2025-11-25, initialize only).

const (
	eraModern = "modern"
	eraLegacy = "legacy"

	clientGoSDK     = "go-sdk"
	clientMCPGo     = "mcp-go"
	clientInspector = "inspector"

	legacyRevision = "2025-11-25"
	clientTimeout  = 60 * time.Second
)

// downstream is what a client connects to.
type downstream struct {
	url  string   // the gateway over Streamable HTTP
	argv []string // or a command to launch (the gateway on stdio)
	env  []string // KEY=VALUE the command needs beyond the client's environment
}

func (d downstream) bridge() string {
	if d.url != "" {
		return "http"
	}
	return "stdio"
}

// callOutcome is what a client got for one tools/call.
type callOutcome struct {
	Result  bool   // a CallToolResult
	IsError bool   // ... with isError
	Text    string // its text content, joined
	Code    int    // or a JSON-RPC error: its code
	Message string
	Reason  string // and data.reason
}

func (o callOutcome) String() string {
	if o.Result {
		return fmt.Sprintf("result isError=%v %q", o.IsError, clip(o.Text, 200))
	}
	return fmt.Sprintf("error %d %q reason %q", o.Code, clip(o.Message, 200), o.Reason)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// toolClient is one connected client.
type toolClient interface {
	// Era is the era the connection negotiated.
	Era() string
	List(ctx context.Context) ([]string, error)
	Call(ctx context.Context, name string, args map[string]any) (callOutcome, error)
	Close()
}

// connectClient connects the named client to d, preferring era; the
// connection is closed when the test ends.
func connectClient(t *testing.T, kind string, d downstream, era string) toolClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	var (
		c   toolClient
		err error
	)
	switch kind {
	case clientGoSDK:
		c, err = connectGoSDK(ctx, d, era)
	case clientMCPGo:
		c, err = connectMCPGo(ctx, d, era)
	case clientInspector:
		c, err = newInspectorClient(t, d, era)
	default:
		t.Fatalf("unknown client %q", kind)
	}
	if err != nil {
		t.Fatalf("%s client (%s, %s) cannot connect: %v", kind, d.bridge(), era, err)
	}
	t.Cleanup(c.Close)
	return c
}

// The official Go SDK client: typed ListTools (Tools follows the cursor
// chain) and CallTool; stdio through its CommandTransport, which launches
// the command as a real client does.
type goSDKClient struct {
	sess *mcp.ClientSession
}

func connectGoSDK(ctx context.Context, d downstream, era string) (*goSDKClient, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpdrift-peers-gosdk-client", Version: "1.0.0"}, nil)
	var tr mcp.Transport
	if d.url != "" {
		tr = &mcp.StreamableClientTransport{Endpoint: d.url, MaxRetries: -1}
	} else {
		cmd := exec.Command(d.argv[0], d.argv[1:]...)
		cmd.Env = append(os.Environ(), d.env...)
		cmd.Stderr = os.Stderr
		tr = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	opts := &mcp.ClientSessionOptions{}
	if era == eraLegacy {
		opts.ProtocolVersion = legacyRevision
	}
	sess, err := client.Connect(ctx, tr, opts)
	if err != nil {
		return nil, err
	}
	return &goSDKClient{sess: sess}, nil
}

func (c *goSDKClient) Era() string {
	if ir := c.sess.InitializeResult(); ir != nil && ir.ProtocolVersion >= "2026-07-28" {
		return eraModern
	}
	return eraLegacy
}

func (c *goSDKClient) List(ctx context.Context) ([]string, error) {
	var names []string
	for tool, err := range c.sess.Tools(ctx, nil) {
		if err != nil {
			return names, err
		}
		names = append(names, tool.Name)
	}
	return names, nil
}

func (c *goSDKClient) Call(ctx context.Context, name string, args map[string]any) (callOutcome, error) {
	res, err := c.sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return callOutcome{Code: int(we.Code), Message: we.Message, Reason: reasonOf(we.Data)}, nil
		}
		return callOutcome{}, err
	}
	o := callOutcome{Result: true, IsError: res.IsError}
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			o.Text += tc.Text
		}
	}
	return o, nil
}

func (c *goSDKClient) Close() { _ = c.sess.Close() }

// reasonOf reads data.reason of a JSON-RPC error.
func reasonOf(data []byte) string {
	var d struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(data, &d)
	return d.Reason
}

// The mark3labs/mcp-go client. Its CallTool keeps only the code and the
// message of a JSON-RPC error, so its transport is wrapped (the concrete
// transport embedded, every interface it implements kept) to see the
// error's data as the client received it.
type mcpGoClient struct {
	c      *mcpgoclient.Client
	cancel context.CancelFunc
	last   *errorCapture
	era    string
}

type errorCapture struct {
	mu   sync.Mutex
	last []byte // the data of the last JSON-RPC error received
}

func (e *errorCapture) record(resp *mcpgotransport.JSONRPCResponse) {
	if resp == nil || resp.Error == nil {
		return
	}
	b, _ := json.Marshal(resp.Error.Data)
	e.mu.Lock()
	e.last = b
	e.mu.Unlock()
}

func (e *errorCapture) take() []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.last
	e.last = nil
	return b
}

type mcpGoHTTP struct {
	*mcpgotransport.StreamableHTTP
	cap *errorCapture
}

func (t *mcpGoHTTP) SendRequest(ctx context.Context, r mcpgotransport.JSONRPCRequest) (*mcpgotransport.JSONRPCResponse, error) {
	resp, err := t.StreamableHTTP.SendRequest(ctx, r)
	t.cap.record(resp)
	return resp, err
}

type mcpGoStdio struct {
	*mcpgotransport.Stdio
	cap *errorCapture
}

func (t *mcpGoStdio) SendRequest(ctx context.Context, r mcpgotransport.JSONRPCRequest) (*mcpgotransport.JSONRPCResponse, error) {
	resp, err := t.Stdio.SendRequest(ctx, r)
	t.cap.record(resp)
	return resp, err
}

func connectMCPGo(ctx context.Context, d downstream, era string) (*mcpGoClient, error) {
	capt := &errorCapture{}
	var tr mcpgotransport.Interface
	if d.url != "" {
		h, err := mcpgotransport.NewStreamableHTTP(d.url)
		if err != nil {
			return nil, err
		}
		tr = &mcpGoHTTP{StreamableHTTP: h, cap: capt}
	} else {
		tr = &mcpGoStdio{Stdio: mcpgotransport.NewStdio(d.argv[0], d.env, d.argv[1:]...), cap: capt}
	}
	var opts []mcpgoclient.ClientOption
	if era == eraLegacy {
		opts = append(opts, mcpgoclient.WithProtocolVersion(legacyRevision))
	}
	c := mcpgoclient.NewClient(tr, opts...)
	// The stdio transport ties the child to the context Start is given:
	// one that lives as long as the client.
	life, cancel := context.WithCancel(context.Background())
	if err := c.Start(life); err != nil {
		cancel()
		return nil, err
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "mcpdrift-peers-mcpgo-client", Version: "1.0.0"}
	ir, err := c.Initialize(ctx, req)
	if err != nil {
		_ = c.Close()
		cancel()
		return nil, err
	}
	e := eraLegacy
	if ir.ProtocolVersion >= "2026-07-28" {
		e = eraModern
	}
	return &mcpGoClient{c: c, cancel: cancel, last: capt, era: e}, nil
}

func (c *mcpGoClient) Era() string { return c.era }

func (c *mcpGoClient) List(ctx context.Context) ([]string, error) {
	res, err := c.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names, nil
}

func (c *mcpGoClient) Call(ctx context.Context, name string, args map[string]any) (callOutcome, error) {
	c.last.take()
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		code := 0
		switch {
		case errors.Is(err, mcpgo.ErrInvalidParams):
			code = -32602
		case errors.Is(err, mcpgo.ErrMethodNotFound):
			code = -32601
		case errors.Is(err, mcpgo.ErrInternalError):
			code = -32603
		default:
			return callOutcome{}, err
		}
		return callOutcome{Code: code, Message: err.Error(), Reason: reasonOf(c.last.take())}, nil
	}
	o := callOutcome{Result: true, IsError: res.IsError}
	for _, ct := range res.Content {
		if tc, ok := ct.(mcpgo.TextContent); ok {
			o.Text += tc.Text
		}
	}
	return o, nil
}

func (c *mcpGoClient) Close() {
	_ = c.c.Close()
	c.cancel()
}

// The MCP Inspector CLI (`mcp-inspector --cli`, on the pinned Node.js 22):
// one process per operation, as a script or a CI job runs it, each a
// whole connection (connect, list, call). Over stdio it is given a client
// configuration ({"mcpServers":{...}}) whose server command is the gateway.
// Its tools/call lists the tools first and refuses, itself, a tool the
// list does not have: a hidden tool is never asked for (see
// TestGatewayRugPull for how a refusal by the gateway reaches it).
type inspectorClient struct {
	t     *testing.T
	node  string
	entry string
	home  string
	d     downstream
	era   string
}

func newInspectorClient(t *testing.T, d downstream, era string) (*inspectorClient, error) {
	node := node22(t)
	entry := npmPeer(t, peerInspector)
	// Its catalog, client config and secret store live in HOME: a
	// directory of the test's.
	return &inspectorClient{t: t, node: node, entry: entry, home: t.TempDir(), d: d, era: era}, nil
}

// Era: the inspector says nothing of what it negotiated; "legacy" pins
// the initialize handshake, "auto" (the modern preference) probes
// server/discover first.
func (c *inspectorClient) Era() string {
	if c.era == eraLegacy {
		return eraLegacy
	}
	return "auto"
}

func (c *inspectorClient) Close() {}

// run runs one inspector CLI invocation and returns its JSON result (or
// its error envelope) and exit code.
func (c *inspectorClient) run(ctx context.Context, args ...string) (map[string]any, int, string, error) {
	era := "auto"
	if c.era == eraLegacy {
		era = "legacy"
	}
	argv := []string{c.entry, "--cli"}
	if c.d.url != "" {
		argv = append(argv, c.d.url)
	} else {
		cfg := map[string]any{"mcpServers": map[string]any{"gateway": map[string]any{
			"command": c.d.argv[0], "args": c.d.argv[1:], "env": envMap(c.d.env),
		}}}
		b, _ := json.Marshal(cfg)
		path := filepath.Join(c.home, "mcp.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, 0, "", err
		}
		argv = append(argv, "--config", path, "--server", "gateway")
	}
	argv = append(argv, "--protocol-era", era, "--format", "json", "--quiet", "--connect-timeout", "30000")
	argv = append(argv, args...)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.node, argv...)
	cmd.Env = []string{"PATH=" + filepath.Dir(c.node) + ":" + os.Getenv("PATH"), "HOME=" + c.home, "NO_COLOR=1",
		"MCP_INSPECTOR_SECRET_STORE=memory"} // no keychain here: say so, and write no secrets file
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr tailBuffer
	stdout.max, stderr.max = 4<<20, 16<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	recordTiming("inspector --cli "+strings.Join(args[:2], " "), time.Since(start))
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return nil, 0, stderr.String(), err
	}
	out := strings.TrimSpace(stdout.String())
	if out == "" {
		out = strings.TrimSpace(stderr.String())
	}
	var doc map[string]any
	if i := strings.LastIndex(out, "\n{"); i >= 0 && json.Unmarshal([]byte(out), &doc) != nil {
		out = out[i+1:]
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return nil, code, stderr.String(), fmt.Errorf("inspector exit %d, output is not JSON: %q (stderr %q)", code, clip(out, 500), clip(stderr.String(), 500))
	}
	return doc, code, stderr.String(), nil
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func (c *inspectorClient) List(ctx context.Context) ([]string, error) {
	doc, code, stderr, err := c.run(ctx, "--method", "tools/list")
	if err != nil {
		return nil, err
	}
	res, _ := doc["result"].(map[string]any)
	tools, ok := res["tools"].([]any)
	if code != 0 || !ok {
		return nil, fmt.Errorf("inspector tools/list exit %d: %v (stderr %q)", code, doc, clip(stderr, 500))
	}
	var names []string
	for _, x := range tools {
		if m, ok := x.(map[string]any); ok {
			n, _ := m["name"].(string)
			names = append(names, n)
		}
	}
	return names, nil
}

// Call: a JSON-RPC error answering tools/call is the inspector's error
// envelope ({"error":{"code":"error","message":...}}, exit 1), which keeps
// the error's message and drops its code and data: the outcome then has
// Code -1 (an error, code unknown) and the message.
func (c *inspectorClient) Call(ctx context.Context, name string, args map[string]any) (callOutcome, error) {
	a, _ := json.Marshal(args)
	doc, code, stderr, err := c.run(ctx, "--method", "tools/call", "--tool-name", name, "--tool-args-json", string(a))
	if err != nil {
		return callOutcome{}, err
	}
	if e, ok := doc["error"].(map[string]any); ok {
		msg, _ := e["message"].(string)
		ecode, _ := e["code"].(string)
		if ecode == "error" && code == 1 {
			return callOutcome{Code: -1, Message: msg}, nil
		}
		return callOutcome{}, fmt.Errorf("inspector tools/call exit %d: %s %s (stderr %q)", code, ecode, msg, clip(stderr, 500))
	}
	res, _ := doc["result"].(map[string]any)
	o := callOutcome{Result: true}
	o.IsError, _ = res["isError"].(bool)
	if content, ok := res["content"].([]any); ok {
		for _, x := range content {
			if m, ok := x.(map[string]any); ok && m["type"] == "text" {
				s, _ := m["text"].(string)
				o.Text += s
			}
		}
	}
	var ec int
	if o.IsError {
		if _, err := fmt.Sscanf(o.Text, "MCP error %d:", &ec); err == nil {
			o.Result, o.Code, o.Message = false, ec, o.Text
		}
	}
	return o, nil
}
