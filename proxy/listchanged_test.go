package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// lineClient speaks newline-delimited JSON-RPC to a gateway's stdio side.
type lineClient struct {
	t   *testing.T
	w   io.Writer
	in  chan map[string]any
	raw chan string
}

func newLineClient(t *testing.T, w io.Writer, r io.Reader) *lineClient {
	c := &lineClient{t: t, w: w, in: make(chan map[string]any, 64), raw: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.raw <- sc.Text()
				c.in <- m
			}
		}
		close(c.in)
	}()
	return c
}

func (c *lineClient) send(s string) { c.w.Write([]byte(s + "\n")) }

// wait returns the next message for which match is true (others are
// skipped), or fails after d.
func (c *lineClient) wait(d time.Duration, match func(map[string]any) bool) map[string]any {
	c.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-c.in:
			if !ok {
				c.t.Fatal("the gateway closed its stdout")
			}
			<-c.raw
			if match(m) {
				return m
			}
		case <-deadline:
			c.t.Fatal("timed out waiting for a message")
		}
	}
}

func byID(id float64) func(map[string]any) bool {
	return func(m map[string]any) bool { v, ok := m["id"].(float64); return ok && v == id }
}

func toolNames(m map[string]any) []string {
	var out []string
	res, _ := m["result"].(map[string]any)
	ts, _ := res["tools"].([]any)
	for _, x := range ts {
		if t, ok := x.(map[string]any); ok {
			out = append(out, fmt.Sprint(t["name"]))
		}
	}
	return out
}

// Rug pull mid-session: the upstream serves the approved list, then sends
// list_changed and a poisoned list. The gateway re-observes before it
// forwards the notification; the poisoned tool is hidden, calls to it are
// refused, and the upstream's own log shows it never saw the call.
func TestRugPullMidSession(t *testing.T) {
	mock, up := upstreamMock(t, mockserver.Config{ListChanged: true, PageSize: 2}, exampleV1)
	g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{Endpoint: up})})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { g.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	defer inW.Close()
	c := newLineClient(t, inW, outR)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	init := c.wait(10*time.Second, byID(1))
	if caps := fmt.Sprint(init["result"]); !strings.Contains(caps, "listChanged:true") {
		t.Errorf("initialize passes the upstream's capabilities: %v", caps)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	if got := toolNames(c.wait(10*time.Second, byID(2))); len(got) != 5 {
		t.Fatalf("approved list %v", got)
	}
	time.Sleep(200 * time.Millisecond) // the gateway's GET stream to the upstream opens
	v2, _ := mockserver.LoadToolsFile(exampleV2)
	before := mock.LogTotal()
	mock.SetTools(v2)
	c.wait(10*time.Second, func(m map[string]any) bool { return m["method"] == "notifications/tools/list_changed" })
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`)
	got := toolNames(c.wait(10*time.Second, byID(3)))
	for _, hidden := range []string{"run_workflow_command", "search_issues", "add_deploy_key", "create_or_update_file", "list_branches"} {
		if slices.Contains(got, hidden) {
			t.Errorf("%s served after the rug pull: %v", hidden, got)
		}
	}
	if !slices.Contains(got, "get_file_contents") {
		t.Errorf("the unchanged tool is still served: %v", got)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_workflow_command","arguments":{"command":"id"}}}`)
	r := c.wait(10*time.Second, byID(4))
	e, _ := r["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32602) {
		t.Errorf("call to the poisoned tool: %v", r)
	}
	for _, en := range mock.Log()[before:] {
		if en.Method == "tools/call" {
			t.Errorf("the upstream saw the call: %+v", en)
		}
	}
}

// A privileged tool added on page 3 of 5 is hidden; the rest is served.
func TestLatePrivilegedTool(t *testing.T) {
	var tools []string
	for i := range 9 {
		tools = append(tools, fmt.Sprintf(`{"name":"read_%d","description":"reads","inputSchema":{"type":"object"}}`, i))
	}
	approved := "[" + strings.Join(tools, ",") + "]"
	served := append(append(append([]string{}, tools[:5]...), `{"name":"delete_all_repositories","description":"deletes","inputSchema":{"type":"object"}}`), tools[5:]...)
	dir := t.TempDir()
	ap := writeTemp(t, dir, "approved.json", approved)
	sp := writeTemp(t, dir, "served.json", "["+strings.Join(served, ",")+"]")
	_, up := upstreamMock(t, mockserver.Config{PageSize: 2}, sp)
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up, Baseline: baselineOf(t, ap, manifest.Identity{})})
	_, tl := listThrough(t, url, false)
	got := names(tl)
	if slices.Contains(got, "delete_all_repositories") || len(got) != 9 {
		t.Errorf("served %v", got)
	}
}
