package proxy_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// A client that does not wait for initialize's answer before it lists, or
// that lists a 2026-07-28 gateway before any server/discover, has its
// list decided against the upstream's real identity: under fail-closed
// (which pins the server's name and version) the whole server is served,
// every time, over stdio and over HTTP.
func TestPipelinedClientsFailClosed(t *testing.T) {
	for _, only := range []bool{false, true} {
		t.Run(map[bool]string{false: "serverInfo in every result", true: "serverInfo only in server/discover"}[only], func(t *testing.T) {
			pipelined(t, mockserver.Config{ServerName: "acme-github", ServerVersion: "2.4.0", ServerInfoOnlyInDiscover: only})
		})
	}
}

func pipelined(t *testing.T, mc mockserver.Config) {
	_, up := upstreamMock(t, mc, exampleV1)
	id := manifest.Identity{Endpoint: up, ServerName: "acme-github", ServerVersion: "2.4.0"}
	cfg := func() proxy.Config {
		return proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
			Baseline: baselineOf(t, exampleV1, id), Profile: schemadiff.FailClosedProfile}
	}
	const runs = 25
	t.Run("stdio", func(t *testing.T) {
		for i := range runs {
			g, err := proxy.New(cfg())
			if err != nil {
				t.Fatal(err)
			}
			inR, inW := ioPipe()
			outR, outW := ioPipe()
			done := make(chan error, 1)
			go func() { done <- g.ServeStdio(context.Background(), inR, outW); outW.Close() }()
			c := newLineClient(t, inW, outR)
			// All three lines at once, as a pipelining client writes them.
			c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
				`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			m := c.wait(10*time.Second, func(m map[string]any) bool { return m["id"] == float64(2) })
			res, _ := m["result"].(map[string]any)
			if tools, _ := res["tools"].([]any); len(tools) == 0 {
				t.Fatalf("run %d: the pipelined list was withheld: %v", i, m)
			}
			inW.Close()
			<-done
			g.Close()
		}
	})
	t.Run("http 2026-07-28", func(t *testing.T) {
		for i := range runs {
			_, url := gateway(t, cfg())
			var wg sync.WaitGroup
			errs := make(chan string, 8)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
					req, _ := http.NewRequest("POST", url, strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					req.Header.Set("Mcp-Method", "tools/list")
					req.Header.Set("MCP-Protocol-Version", "2026-07-28")
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						errs <- err.Error()
						return
					}
					defer resp.Body.Close()
					var b bytes.Buffer
					b.ReadFrom(resp.Body)
					if !strings.Contains(b.String(), `"search_issues"`) {
						errs <- b.String()
					}
				}()
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Fatalf("run %d: a concurrent first list was not served: %s", i, e)
			}
		}
	})
}

// TestStatusLine: each (re)observation whose outcome changed says on the
// status writer what is served and what is hidden, and why a server is
// withheld — once.
func TestStatusLine(t *testing.T) {
	mock, up := upstreamMock(t, mockserver.Config{}, exampleV2)
	var status logBuf
	c := proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{}), Status: &status, RelistInterval: time.Nanosecond}
	_, url := gateway(t, c)
	listThrough(t, url, true)
	listThrough(t, url, true)
	lines := strings.Split(strings.TrimSpace(status.b.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("an unchanged outcome said %d times: %q", len(lines), lines)
	}
	if !strings.Contains(lines[0], "serving ") || !strings.Contains(lines[0], "hidden: ") || !strings.Contains(lines[0], "tool_not_in_baseline") {
		t.Fatalf("status: %s", lines[0])
	}
	_ = mock
	// A baseline pinned elsewhere: withheld, and said once.
	var status2 logBuf
	c.Baseline = baselineOf(t, exampleV1, manifest.Identity{Endpoint: "https://elsewhere.example/mcp"})
	c.Status = &status2
	_, url2 := gateway(t, c)
	listThroughMayFail(url2)
	listThroughMayFail(url2)
	out := status2.b.String()
	if n := strings.Count(out, "\n"); n != 1 || !strings.Contains(out, "withheld (server_identity_mismatch)") || !strings.Contains(out, "elsewhere.example") {
		t.Fatalf("the withholding said %d times:\n%s", n, out)
	}
}

func listThroughMayFail(url string) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", "tools/list")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}
