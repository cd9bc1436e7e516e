package proxy_test

// Regression tests for what real peers (internal/peers: the go-sdk and
// mcp-go clients, the MCP Inspector, the official conformance suite)
// found wrong in the gateway, each reproduced here without the peer.

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// A stdio downstream that closes its stdin ends the session at once, even
// with a request in flight that the upstream is slow to answer (found by
// the MCP Inspector: its subscriptions/listen kept `mcpdrift proxy` alive
// until the client killed it, and without a kill, for the request
// timeout). A request piped in just before the end is still answered.
func TestServeStdioEndsWithTheDownstream(t *testing.T) {
	for _, slow := range []bool{false, true} {
		cfg := mockserver.Config{}
		if slow {
			cfg.Slow = 20 * time.Second
		}
		_, up := upstreamMock(t, cfg, exampleV1)
		g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Audit, Target: up,
			Baseline: baselineOf(t, exampleV1, manifest.Identity{}), RequestTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		in := strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + modernMeta + `}}` + "\n")
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- g.ServeStdio(context.Background(), in, outW); outW.Close() }()
		var lines []string
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("slow=%v: ServeStdio did not return after its stdin ended", slow)
		}
		took := time.Since(start)
		if slow && took > 5*time.Second {
			t.Errorf("slow upstream: ServeStdio took %v after its stdin ended", took)
		}
		if !slow && (len(lines) != 1 || !strings.Contains(lines[0], `"id":7,"result"`)) {
			t.Errorf("a request piped in before the end: %q, want its answer", lines)
		}
	}
}
