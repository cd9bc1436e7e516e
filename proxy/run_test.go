package proxy_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/runerr"
)

// TestRun: proxy.Run serves the downstream over HTTP at the address it
// says it listens on, enforces the baseline, puts a reloaded baseline in
// force (one that cannot be read withholds the server), and ends cleanly
// with its context.
func TestRun(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	addrs := make(chan net.Addr, 2)
	reloads := make(chan string)
	var mu sync.Mutex
	var told []string
	opt := proxy.Options{
		Config:        proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Baseline: baselineOf(t, exampleV1, manifest.Identity{}), ServerID: "acme", Target: up, Metrics: proxy.NewMetrics()},
		Listen:        "127.0.0.1:0",
		MetricsListen: "127.0.0.1:0",
		Reloads:       reloads,
		Reload:        func() (*decide.Baseline, error) { return nil, errors.New("the baseline file is gone") },
		OnReload: func(why string, b *decide.Baseline) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, why+": "+b.Invalid())
		},
		OnListening: func(what string, addr net.Addr) {
			if what == "mcp" {
				addrs <- addr
			}
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- proxy.Run(ctx, opt) }()
	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("Run ended before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not listen")
	}
	gw := "http://" + addr.String() + "/mcp"
	list := func() int {
		t.Helper()
		lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
		defer lcancel()
		n := 0
		cfg := mcpclient.Config{BaseURL: gw, ClientName: "t", ClientVersion: "1", OnToolsPage: func(_ []byte, res jcs.Value) error {
			tools, _ := res.Get("tools")
			n += tools.Len()
			return nil
		}}
		if _, err := mcpclient.ListTools(lctx, cfg); err != nil {
			t.Fatalf("listing through the gateway: %v", err)
		}
		return n
	}
	if n := list(); n != 5 {
		t.Errorf("the gateway serves %d tools of the approved 5", n)
	}
	reloads <- "test reload"
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(told)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	if len(told) != 1 || !strings.HasPrefix(told[0], "test reload: it cannot be read: the baseline file is gone") {
		t.Errorf("reloads told: %q", told)
	}
	mu.Unlock()
	if n := list(); n != 0 {
		t.Errorf("a baseline that cannot be read: the gateway still serves %d tools", n)
	}
	resp, err := http.Get("http://" + addr.String() + "/healthz")
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("healthz of a withheld server: %v %v", err, resp)
	}
	if resp != nil {
		resp.Body.Close()
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end with its context")
	}
	// An address it cannot listen on is the caller's to fix.
	opt.MetricsListen = ""
	opt.Listen = "127.0.0.1:not-a-port"
	if err := proxy.Run(context.Background(), opt); runerr.KindOf(err) != runerr.Usage {
		t.Errorf("a bad --listen: %v", err)
	}
}
