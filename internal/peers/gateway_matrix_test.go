package peers

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// peerIncompatible are client × server × era triples that fail without
// the gateway (checked direct in each cell). mcp-go v1.2.1's client takes
// any server/discover result as the 2026-07-28 era; go-sdk v1.8.0's
// stateful handler answers server/discover listing only legacy versions,
// then refuses the 2026-07-28 tools/list with -32022.
var peerIncompatible = map[string]string{
	clientMCPGo + "|gosdk http stateful|" + eraModern: "mcp-go v1.2.1 negotiates 2026-07-28 from a discover result that lists only legacy versions; go-sdk's stateful handler then answers tools/list -32022",
}

var (
	allClients = []string{clientGoSDK, clientMCPGo, clientInspector}
	allBridges = []string{"http", "stdio"} // the downstream's transport
	allEras    = []string{eraModern, eraLegacy}
)

type toolCall struct {
	name string
	args map[string]any
	want string // the approved call's text contains it
}

// realServer is one real server pinned, with the gateway to run in front
// of it in enforce mode: what a client must see, a call it must get
// through and one it must be refused.
type realServer struct {
	name     string // the server and its upstream transport
	pin      *pinned
	approved []string
	call     toolCall
	more     []toolCall // further approved calls (Go clients)
	hidden   toolCall
	calls    *callLog // the upstream's own record of calls, when it can be had
}

// TestGatewayRealServers: each real server pinned (`mcpdrift pin --url` or
// `--stdio`), the gateway in front of it in enforce mode, and each real
// client — the go-sdk client, the mcp-go client, the Inspector CLI —
// listing and calling through it, over both downstream transports (the
// gateway's HTTP /mcp, or the gateway as the stdio command the client
// launches), preferring each era. The go-sdk servers drift after they are
// pinned (deploy_service changes its schema: it is hidden and its calls
// refused); server-everything is pinned less get-env (a tool the baseline
// does not approve).
func TestGatewayRealServers(t *testing.T) {
	exe := testExecutable(t)
	echoCall := toolCall{"echo", map[string]any{"message": "through the gateway"}, "through the gateway"}
	deployCall := toolCall{name: goSDKChangedTool, args: map[string]any{"service": "web", "environment": "dev"}}
	// get_repo annotates owner and include_stats with x-mcp-header: over
	// 2026-07-28 HTTP the client mirrors them into Mcp-Param-Owner and
	// Mcp-Param-Include-Stats, which the server checks against the body.
	goSDKMore := []toolCall{{"get_repo", map[string]any{"owner": "acme", "repo": "app", "include_stats": true}, "ok"}}
	var servers []func(t *testing.T) *realServer
	for _, stateless := range []bool{true, false} {
		name := "gosdk http stateful"
		if stateless {
			name = "gosdk http stateless"
		}
		servers = append(servers, func(t *testing.T) *realServer {
			s := serveSwitchingGoSDK(t, stateless)
			p := pinServer(t, &pinned{label: strings.ReplaceAll(name, " ", "-"), url: s.url})
			s.variant.Store(variantChanged) // the server drifts behind its pin
			return &realServer{name: name, pin: p, approved: without(goSDKToolNames, goSDKChangedTool), call: echoCall, more: goSDKMore, hidden: deployCall, calls: s.calls}
		})
	}
	servers = append(servers, func(t *testing.T) *realServer {
		p := pinServer(t, &pinned{label: "gosdk-stdio", argv: []string{exe}, env: []string{envChild + "=gosdk", envVariant + "="}})
		p.env = []string{envChild + "=gosdk", envVariant + "=" + variantChanged}
		return &realServer{name: "gosdk stdio", pin: p, approved: without(goSDKToolNames, goSDKChangedTool), call: echoCall, more: goSDKMore, hidden: deployCall}
	})
	everythingEcho := toolCall{"echo", map[string]any{"message": "through the gateway"}, "Echo: through the gateway"}
	getEnv := toolCall{name: "get-env", args: map[string]any{}}
	servers = append(servers, func(t *testing.T) *realServer {
		node, entry := everythingPeer(t)
		p := withoutTools(t, pinServer(t, &pinned{label: "everything-stdio", argv: []string{node, entry, "stdio"}}), "get-env")
		return &realServer{name: "everything stdio", pin: p, approved: p.toolNames(), call: everythingEcho, hidden: getEnv}
	})
	servers = append(servers, func(t *testing.T) *realServer {
		node, entry := everythingPeer(t)
		p := withoutTools(t, pinServer(t, &pinned{label: "everything-http", url: startEverythingHTTP(t, node, entry)}), "get-env")
		return &realServer{name: "everything http", pin: p, approved: p.toolNames(), call: everythingEcho, hidden: getEnv}
	})

	for _, mk := range servers {
		var srv *realServer
		t.Run("", func(t *testing.T) {
			srv = mk(t)
			t.Logf("pinned %s: %d tools, %s", srv.name, len(srv.pin.snap.Tools), srv.pin.snap.Identity.Endpoint)
			for _, bridge := range allBridges {
				for _, client := range allClients {
					for _, era := range allEras {
						label := strings.Join([]string{client, strings.ReplaceAll(srv.name, " ", "-"), bridge + "-to-" + upstreamTransport(srv.pin), era}, "/")
						t.Run(label, func(t *testing.T) {
							gatewayCell(t, srv, bridge, client, era)
						})
					}
				}
			}
		})
	}
}

func upstreamTransport(p *pinned) string {
	if p.url != "" {
		return "http"
	}
	return "stdio"
}

// gatewayCell is one client × server × bridge × era: connect, list (the
// approved tools exactly), call an approved tool (its result), call the
// hidden one (-32602 from the gateway with data.reason, never reaching
// the upstream). The Inspector never asks for a tool its list lacks, so it
// lists and calls the approved one.
func gatewayCell(t *testing.T, srv *realServer, bridgeDown, client, era string) {
	start := time.Now()
	verdict := "FAIL"
	eraGot := "?"
	defer func() {
		if t.Failed() {
			verdict = "FAIL"
		}
		recordCell(t, client, srv.name, bridgeDown+"->"+upstreamTransport(srv.pin), era, eraGot, verdict+" "+time.Since(start).Round(time.Millisecond).String())
	}()
	if why := peerIncompatible[client+"|"+srv.name+"|"+era]; why != "" {
		// Not the gateway's: the pair fails the same way direct.
		dc := connectClient(t, client, downstream{url: srv.pin.url}, era)
		ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
		defer cancel()
		names, err := dc.List(ctx)
		if err == nil {
			t.Fatalf("%s: expected to fail direct (%s), but it listed %v: test the gateway for this pair", client, why, names)
		}
		verdict = "n/a: fails direct too (" + why + ")"
		t.Skipf("%s with %s, preferring %s, fails direct too: %v (%s)", client, srv.name, era, err, why)
	}
	d := gatewayFor(t, bridgeDown, srv.pin, gatewayOpts{})
	c := connectClient(t, client, d, era)
	eraGot = c.Era()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	names, err := c.List(ctx)
	if err != nil {
		t.Fatalf("list through the gateway: %v", err)
	}
	if !sameSet(names, srv.approved) {
		t.Errorf("the client sees\n got %d %v\nwant %d %v (the approved tools)", len(names), slices.Sorted(slices.Values(names)), len(srv.approved), slices.Sorted(slices.Values(srv.approved)))
	}
	if slices.Contains(names, srv.hidden.name) {
		t.Errorf("the hidden tool %s is listed", srv.hidden.name)
	}
	out, err := callApproved(ctx, c, srv.call.name, srv.call.args)
	if err != nil {
		t.Fatalf("call %s through the gateway: %v", srv.call.name, err)
	}
	if !out.Result || out.IsError || !strings.Contains(out.Text, srv.call.want) {
		t.Errorf("approved call %s: %s, want a result with %q", srv.call.name, out, srv.call.want)
	}
	verdict = "list+call"
	if client != clientInspector {
		for _, mc := range srv.more {
			out, err := callApproved(ctx, c, mc.name, mc.args)
			if err != nil {
				t.Fatalf("call %s through the gateway: %v", mc.name, err)
			}
			if !out.Result || out.IsError || !strings.Contains(out.Text, mc.want) {
				t.Errorf("approved call %s: %s, want a result with %q", mc.name, out, mc.want)
			}
		}
	}
	if client == clientInspector {
		verdict = "pass (list+call; a hidden tool is refused by the inspector itself)"
		return
	}
	before := 0
	if srv.calls != nil {
		before = srv.calls.count(srv.hidden.name)
	}
	out, err = c.Call(ctx, srv.hidden.name, srv.hidden.args)
	if err != nil {
		t.Fatalf("call %s through the gateway: %v", srv.hidden.name, err)
	}
	if out.Result || out.Code != -32602 || out.Reason != decide.ReasonHiddenTool {
		t.Errorf("hidden call %s: %s, want -32602 with data.reason %q", srv.hidden.name, out, decide.ReasonHiddenTool)
	}
	if srv.calls != nil && srv.calls.count(srv.hidden.name) != before {
		t.Errorf("the upstream saw a call of the hidden %s", srv.hidden.name)
	}
	verdict = "pass (list+call+refusal)"
}

// acme-github, the demo's manifests: v1 approved, v2 the rug pull (a
// poisoned search_issues description, add_deploy_key widened, a new
// run_workflow_command, list_branches gone).
var (
	acmeV1 = filepath.Join("..", "..", "examples", "acme-github.v1.tools-list.json")
	acmeV2 = filepath.Join("..", "..", "examples", "acme-github.v2-rugpull.tools-list.json")
)

// startAcmeMock serves acme v1 from the strict mock on loopback (pages of
// 2), its calls recorded.
func startAcmeMock(t *testing.T) (*mockserver.Server, string, *callLog) {
	t.Helper()
	tools, err := mockserver.LoadToolsFile(acmeV1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := mockserver.New(mockserver.Config{Tools: tools, PageSize: 2, ServerName: "acme-github", ServerVersion: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	calls := &callLog{}
	ts := httptest.NewUnstartedServer(calls.wrap(s))
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts.URL + "/mcp", calls
}

// unchangedInV2 are the acme tools whose bytes v2 leaves alone: what the
// gateway may still serve after the rug pull.
func unchangedInV2(t *testing.T) (v1Names, still []string) {
	t.Helper()
	v1, err := mockserver.LoadToolsFile(acmeV1)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := mockserver.LoadToolsFile(acmeV2)
	if err != nil {
		t.Fatal(err)
	}
	name := func(r json.RawMessage) string {
		var x struct{ Name string }
		_ = json.Unmarshal(r, &x)
		return x.Name
	}
	in2 := map[string]string{}
	for _, r := range v2 {
		in2[name(r)] = string(r)
	}
	for _, r := range v1 {
		v1Names = append(v1Names, name(r))
		if in2[name(r)] == string(r) {
			still = append(still, name(r))
		}
	}
	return v1Names, still
}

// TestGatewayRugPull: each real client through an enforce-mode gateway in
// front of the strict mock (both downstream transports, both eras): it sees
// exactly the approved tools and calls one; then the upstream rug-pulls
// (mockserver.SetTools: acme v2), and the client sees only the tools v2
// left unchanged, and calling the poisoned or the added tool gets the
// gateway's -32602 with data.reason — the upstream's own log never has
// those calls.
//
// The Inspector CLI lists before it calls and refuses, itself, a tool its
// list lacks, so the rug pull is timed for it: the upstream swaps its
// tools right after the gateway's listing for the Inspector's tools/list,
// so the Inspector sees search_issues approved, calls it, and the gateway
// — which re-gates on the call (--relist-interval) — refuses it.
func TestGatewayRugPull(t *testing.T) {
	v1Names, still := unchangedInV2(t)
	v2, err := mockserver.LoadToolsFile(acmeV2)
	if err != nil {
		t.Fatal(err)
	}
	approvedCall := map[string]any{"repo": "acme/app", "query": "bug"}
	for _, bridge := range allBridges {
		for _, client := range allClients {
			for _, era := range allEras {
				t.Run(strings.Join([]string{client, bridge + "-to-http", era}, "/"), func(t *testing.T) {
					start := time.Now()
					verdict, eraGot := "FAIL", "?"
					defer func() {
						if t.Failed() {
							verdict = "FAIL"
						}
						recordCell(t, client, "mock acme rug pull (http)", bridge+"->http", era, eraGot, verdict+" "+time.Since(start).Round(time.Millisecond).String())
					}()
					mock, url, calls := startAcmeMock(t)
					p := pinServer(t, &pinned{label: "acme", url: url})
					logPath := filepath.Join(t.TempDir(), "decisions.ndjson")
					d := gatewayFor(t, bridge, p, gatewayOpts{relist: time.Nanosecond, log: logPath})
					c := connectClient(t, client, d, era)
					eraGot = c.Era()
					ctx, cancel := context.WithTimeout(context.Background(), 2*clientTimeout)
					defer cancel()
					names, err := c.List(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if !sameSet(names, v1Names) {
						t.Errorf("before the rug pull the client sees %v, want %v", names, v1Names)
					}
					out, err := c.Call(ctx, "search_issues", approvedCall)
					if err != nil {
						t.Fatal(err)
					}
					if !out.Result || out.IsError || out.Text != "ok" {
						t.Errorf("approved call: %s", out)
					}
					refused := []string{"search_issues", "run_workflow_command"}
					if client == clientInspector {
						swap := func() { _ = mock.SetTools(v2) }
						calls.afterList.Store(&swap)
						out, err = c.Call(ctx, "search_issues", approvedCall)
						if err != nil {
							t.Fatal(err)
						}
						// The inspector shows the error's message only; the
						// decision log below has its reason.
						if out.Result || out.Code != -1 || out.Message != `Unknown tool: "search_issues"` {
							t.Errorf("search_issues after the rug pull, as the inspector got it: %s; want the gateway's refusal", out)
						}
						refused = refused[:1]
					} else {
						if err := mock.SetTools(v2); err != nil {
							t.Fatal(err)
						}
						for _, name := range refused {
							out, err := c.Call(ctx, name, map[string]any{"repo": "acme/app", "query": "x", "command": "id"})
							if err != nil {
								t.Fatal(err)
							}
							if out.Result || out.Code != -32602 || out.Reason != decide.ReasonHiddenTool {
								t.Errorf("%s after the rug pull: %s, want -32602 with data.reason %q", name, out, decide.ReasonHiddenTool)
							}
						}
					}
					names, err = c.List(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if !sameSet(names, still) {
						t.Errorf("after the rug pull the client sees %v, want %v (the tools v2 left unchanged)", names, still)
					}
					if n := calls.count("search_issues"); n != 1 {
						t.Errorf("the upstream saw search_issues called %d times, want only the approved call", n)
					}
					if calls.saw("run_workflow_command") {
						t.Error("the upstream saw run_workflow_command called")
					}
					// The decision log has each refusal with its reason.
					for _, name := range refused {
						if !logHas(t, logPath, name, "deny", decide.ReasonHiddenTool) {
							t.Errorf("the decision log has no deny %s for %s", decide.ReasonHiddenTool, name)
						}
					}
					verdict = "pass (list, call, rug pull: list, refusal)"
				})
			}
		}
	}
}

// logHas reports whether the decision log has a tools/call record for tool
// with decision and reason.
func logHas(t *testing.T, path, tool, decision, reason string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r proxy.Record
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Method == "tools/call" && r.Tool == tool && r.Decision == decision && slices.Contains(r.Reasons, reason) {
			return true
		}
	}
	return false
}

// TestGatewayClientConfig: a client configuration whose server command is
// the gateway — {"mcpServers":{"gateway":{"command":"<mcpdrift>","args":
// ["proxy","--declared",D,"--upstream-stdio","--",<server>]}}} — used by a
// real client (the go-sdk client's CommandTransport launching the
// configured command), and by `mcpdrift drift --mcp-config FILE --server
// gateway --allow-config-commands`: clean while the server serves what was
// pinned, and when the server behind the gateway drifts the gateway hides
// the changed tool, which drift then reports missing.
func TestGatewayClientConfig(t *testing.T) {
	exe := testExecutable(t)
	bin := mcpdriftBinary(t)
	p := pinServer(t, &pinned{label: "gosdk-stdio", argv: []string{exe}, env: []string{envChild + "=gosdk", envVariant + "="}})
	writeConfig := func(variant string) string {
		cfg := map[string]any{"mcpServers": map[string]any{"gateway": map[string]any{
			"command": bin,
			"args": []string{"proxy", "--declared", p.declared, "--pass-env", envChild, "--pass-env", envVariant,
				"--upstream-stdio", "--", exe},
			"env": map[string]string{envChild: "gosdk", envVariant: variant},
		}}}
		b, _ := json.MarshalIndent(cfg, "", "  ")
		path := filepath.Join(t.TempDir(), "mcp.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfgPath := writeConfig("")

	// The go-sdk client launches the configured command.
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	entry := cfg.MCPServers["gateway"]
	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Env = os.Environ()
	for k, v := range entry.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpdrift-peers-config-client", Version: "1.0.0"}, nil)
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatalf("the go-sdk client launching the configured gateway: %v", err)
	}
	var names []string
	for tool, err := range sess.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !sameSet(names, goSDKToolNames) {
		t.Errorf("through the configured gateway: %v, want %v", names, goSDKToolNames)
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "add_numbers", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil || res.IsError {
		t.Errorf("add_numbers through the configured gateway: %v %+v", err, res)
	} else if s, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(s), `"sum":5`) {
		t.Errorf("add_numbers: structured content %s", s)
	}
	if err := sess.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	recordCell(t, clientGoSDK, "gosdk stdio (client config)", "stdio->stdio", eraModern, "config", okOr(t, "pass (config command, list+call)"))

	// mcpdrift drift through the configured gateway.
	label := "drift --mcp-config through the gateway"
	code, out, errOut := mcpdriftCLI(t, "drift", p.declared, "--mcp-config", cfgPath, "--server", "gateway", "--format", "json", "--timeout", driftTimeout)
	if code != 2 || !strings.Contains(errOut+out, "--allow-config-commands") {
		t.Errorf("%s without --allow-config-commands: exit %d, want 2 and a word on --allow-config-commands\n%s%s", label, code, out, errOut)
	}
	d := drift(t, label, p.declared, "--mcp-config", cfgPath, "--server", "gateway", "--allow-config-commands")
	checkClean(t, label, d, len(goSDKToolNames))
	d = drift(t, label+" (server drifted)", p.declared, "--mcp-config", writeConfig(variantChanged), "--server", "gateway", "--allow-config-commands")
	if d.code != 1 || !slices.Contains(d.rules(), "ERROR MCP-DRIFT-TOOL-MISSING "+goSDKChangedTool) {
		t.Errorf("%s (server drifted): exit %d, findings %v; want exit 1 and %s missing (the gateway hides it)", label, d.code, d.rules(), goSDKChangedTool)
	}
	recordCell(t, "mcpdrift", "gosdk stdio (client config)", "stdio->stdio", "auto", "config", okOr(t, "pass (drift clean; drifted server: tool missing)"))
}

func okOr(t *testing.T, pass string) string {
	if t.Failed() {
		return "FAIL"
	}
	return pass
}

// callApproved calls an approved tool through the gateway. A server may
// announce that its tool list changed at any time (the reference
// "everything" server does once it has started); until the gateway has
// gated the new list it refuses every call with call_approval_in_doubt,
// as it must. Such a refusal is waited out, for a bounded time; any other
// outcome is returned as it is.
func callApproved(ctx context.Context, c toolClient, name string, args map[string]any) (callOutcome, error) {
	for {
		out, err := c.Call(ctx, name, args)
		if err != nil || out.Reason != decide.ReasonInDoubt {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}
