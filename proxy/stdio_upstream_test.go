package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

func stdioUpstream(t *testing.T, manifestPath string, env map[string]string) proxy.Upstream {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{"MCPDRIFT_PROXY_TEST_STDIO": manifestPath}
	for k, v := range env {
		e[k] = v
	}
	return proxy.Upstream{Command: []string{exe, "-test.run=^$"}, Env: e}
}

// HTTP downstream, stdio upstream, both eras: the approved list through a
// contained child; an approved call goes through (its id multiplexed and
// restored), a hidden one is refused.
func TestHTTPToStdio(t *testing.T) {
	abs, _ := os.Getwd()
	manifestPath := abs + "/" + exampleV1
	for _, legacy := range []bool{false, true} {
		up := stdioUpstream(t, manifestPath, nil)
		_, url := gateway(t, proxy.Config{Upstream: up, Mode: proxy.Enforce, Target: "stdio:mock",
			Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
		obs, tl := listThrough(t, url, legacy,
			mcpclient.ToolCall{Name: "list_branches", Arguments: json.RawMessage(`{"repo":"a/b"}`)},
			mcpclient.ToolCall{Name: "no_such_tool", Arguments: json.RawMessage(`{}`)})
		if len(tl.Tools) != 5 {
			t.Errorf("legacy=%v: served %v", legacy, names(tl))
		}
		if len(obs.Calls) != 2 || obs.Calls[0].Code != 0 || obs.Calls[0].Result == nil || obs.Calls[1].Code != mcpwire.CodeInvalidParams {
			t.Errorf("legacy=%v: calls %+v", legacy, obs.Calls)
		}
	}
}

// stdio downstream, stdio upstream (the drop-in form around a local
// server), and an upstream that dies mid-call: the downstream gets an
// error and the gateway keeps answering.
func TestStdioToStdioAndUpstreamDeath(t *testing.T) {
	abs, _ := os.Getwd()
	manifestPath := abs + "/" + exampleV1
	for _, die := range []bool{false, true} {
		env := map[string]string{}
		if die {
			env["MCPDRIFT_PROXY_TEST_DIE_ON_CALL"] = "1"
		}
		g, err := proxy.New(proxy.Config{Upstream: stdioUpstream(t, manifestPath, env), Mode: proxy.Enforce, Target: "stdio:mock",
			Baseline: baselineOf(t, exampleV1, manifest.Identity{}), RequestTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan struct{})
		go func() { g.ServeStdio(context.Background(), inR, outW); outW.Close(); close(done) }()
		c := newLineClient(t, inW, outR)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		c.wait(10*time.Second, byID(1))
		c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
		if got := toolNames(c.wait(10*time.Second, byID(2))); !slices.Contains(got, "list_branches") {
			t.Fatalf("die=%v: %v", die, got)
		}
		c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_branches","arguments":{"repo":"a/b"}}}`)
		r := c.wait(10*time.Second, byID(3))
		if die {
			if r["error"] == nil {
				t.Errorf("a call to a dead upstream: %v", r)
			}
			c.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
			if r := c.wait(10*time.Second, byID(4)); r["error"] == nil {
				t.Errorf("after the upstream died: %v", r)
			}
		} else if r["result"] == nil {
			t.Errorf("an approved call over stdio: %v", r)
		}
		inW.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the gateway did not end when its stdin closed")
		}
		g.Close()
	}
}

// Over HTTP, an upstream child that dies mid-call fails that call only:
// other sessions, and later stateless requests, get a child of their own.
func TestHTTPUpstreamDeathOtherSessionsGoOn(t *testing.T) {
	abs, _ := os.Getwd()
	up := stdioUpstream(t, abs+"/"+exampleV1, map[string]string{"MCPDRIFT_PROXY_TEST_DIE_ON_CALL": "1"})
	_, url := gateway(t, proxy.Config{Upstream: up, Mode: proxy.Enforce, Target: "stdio:mock",
		Baseline: baselineOf(t, exampleV1, manifest.Identity{}), RequestTimeout: 5 * time.Second})
	for _, legacy := range []bool{true, false} {
		obs, _ := listThrough(t, url, legacy, mcpclient.ToolCall{Name: "list_branches", Arguments: json.RawMessage(`{"repo":"a/b"}`)})
		if len(obs.Calls) != 1 || (obs.Calls[0].Code == 0 && obs.Calls[0].Err == "") {
			t.Errorf("legacy=%v: a call that killed the upstream: %+v", legacy, obs.Calls)
		}
		// The next session lists fine.
		_, tl := listThrough(t, url, legacy)
		if len(tl.Tools) != 5 {
			t.Errorf("legacy=%v: after an upstream died: %v", legacy, names(tl))
		}
	}
}

var _ = mockserver.Config{}
