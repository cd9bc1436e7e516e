package observe_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
)

func serve(t *testing.T, tools []json.RawMessage) string {
	t.Helper()
	s, err := mockserver.New(mockserver.Config{Tools: tools, PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	return ts.URL + "/mcp"
}

// TestServer: one listing gives the tools as served, the observed record,
// the identity and the target; a server that cannot be reached is
// inconclusive, a configuration the client refuses is the caller's.
func TestServer(t *testing.T) {
	tools, err := mockserver.LoadToolsFile(filepath.Join("..", "examples", "acme-github.v1.tools-list.json"))
	if err != nil {
		t.Fatal(err)
	}
	url := serve(t, tools)
	r, err := observe.Server(context.Background(), observe.ServerOptions{Server: mcpclient.Config{BaseURL: url}, ServerID: "acme", PublisherKey: "SHA256:k"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tools.Tools) != len(tools) || r.Observed.Server.ID != "acme" || r.Observed.Status != manifest.StatusObserved || r.Tools.Completeness != manifest.Complete {
		t.Errorf("%d tools, record %+v", len(r.Tools.Tools), r.Observed.Server)
	}
	if r.Target != url || r.Identity.Endpoint != url || r.Identity.PublisherKey != "SHA256:k" || r.Identity.ServerName == "" {
		t.Errorf("target %q, identity %+v", r.Target, r.Identity)
	}
	if err := r.Complete(); err != nil || r.Reflected() != nil || r.Observation.Pages != 3 {
		t.Errorf("complete %v, reflected %v, %d pages", err, r.Reflected(), r.Observation.Pages)
	}
	r, err = observe.Server(context.Background(), observe.ServerOptions{Server: mcpclient.Config{BaseURL: "http://127.0.0.1:1/mcp"}, ServerID: "x"})
	if runerr.KindOf(err) != runerr.Inconclusive || r == nil || r.Target != "http://127.0.0.1:1/mcp" || !strings.Contains(err.Error(), "cannot observe") {
		t.Errorf("an unreachable server: %v, %+v", err, r)
	}
	if _, err := observe.Server(context.Background(), observe.ServerOptions{Server: mcpclient.Config{}, ServerID: "x"}); runerr.KindOf(err) != runerr.Usage {
		t.Errorf("no server to reach: %v", err)
	}
}

// TestReflections: a tool that carries a value the run sent is found,
// and the listing is not trusted.
func TestReflections(t *testing.T) {
	const secret = "s3cr3t-token-0123456789"
	url := serve(t, []json.RawMessage{json.RawMessage(`{"name":"leak","description":"token ` + secret + `","inputSchema":{"type":"object"}}`)})
	set := &redact.Set{}
	set.Add("the token", secret)
	r, err := observe.Server(context.Background(), observe.ServerOptions{Server: mcpclient.Config{BaseURL: url}, ServerID: "x", Secrets: set})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Reflections) != 1 || r.Reflections[0].Tool != "leak" || r.Reflected() == nil || runerr.KindOf(r.Reflected()) != runerr.Inconclusive {
		t.Errorf("reflections %+v, %v", r.Reflections, r.Reflected())
	}
}

// TestTarget: the target is recorded without credentials; a stdio command
// that is mcpdrift's own gateway is the server behind it.
func TestTarget(t *testing.T) {
	set := &redact.Set{}
	for _, c := range []struct {
		cfg  mcpclient.Config
		want string
	}{
		{mcpclient.Config{BaseURL: "https://h.example/mcp?key=abc"}, "https://h.example/mcp?key="},
		{mcpclient.Config{Command: []string{"npx", "-y", "some server"}}, "stdio:npx -y 'some server'"},
		{mcpclient.Config{Command: []string{"/usr/bin/mcpdrift", "proxy", "--declared", "d.json", "--upstream-url", "http://up/mcp"}}, "http://up/mcp"},
		{mcpclient.Config{Command: []string{"mcpdrift", "proxy", "--upstream-stdio", "--", "node", "s.js"}}, "stdio:node s.js"},
	} {
		if _, got := observe.Target(c.cfg, set); got != c.want {
			t.Errorf("Target(%+v) = %q, want %q", c.cfg, got, c.want)
		}
	}
}
