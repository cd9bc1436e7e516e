package lockrun_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/lockrun"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
)

var (
	acmeV1 = filepath.Join("..", "examples", "acme-github.v1.tools-list.json")
	acmeV2 = filepath.Join("..", "examples", "acme-github.v2-rugpull.tools-list.json")
)

func serve(t *testing.T, path string, cfg mockserver.Config) (*mockserver.Server, string) {
	t.Helper()
	tools, err := mockserver.LoadToolsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tools = tools
	s, err := mockserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts.URL + "/mcp"
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

var approval = lock.Approval{By: "alice@example.com", At: "2026-01-02T03:04:05Z"}

// TestAddCheckApprove: the lock's workflows through the library alone:
// pin a server, check it clean, see it drift, approve the change, check it
// clean again.
func TestAddCheckApprove(t *testing.T) {
	ctx := context.Background()
	srv, url := serve(t, acmeV1, mockserver.Config{})
	l := &lock.Lock{}
	secrets := &redact.Set{}
	base := mcpclient.Config{ClientName: "lockrun-test", ClientVersion: "1"}
	add := lockrun.AddOptions{Lock: l, Name: "acme", Source: lock.Source{URL: url}, Server: base, Approval: approval, Secrets: secrets}
	add.Server.BaseURL = url
	r, err := lockrun.Add(ctx, add)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Server.Tools) != 5 || l.Server("acme") != r.Server || r.Listing.Target != url {
		t.Fatalf("added %d tools, in the lock %v, target %q", len(r.Server.Tools), l.Server("acme") != nil, r.Listing.Target)
	}
	if _, err := lockrun.Add(ctx, add); runerr.KindOf(err) != runerr.Usage || !strings.Contains(err.Error(), "already in the lock") {
		t.Errorf("adding it twice: %v", err)
	}
	withKey := add
	withKey.Name, withKey.Source.URL = "keyed", url+"?api_key=s3cr3t-value-123"
	if _, err := lockrun.Add(ctx, withKey); runerr.KindOf(err) != runerr.Usage {
		t.Errorf("a source with a credential in its query: %v", err)
	}

	opt := lockrun.CheckOptions{Servers: l.Servers, LockFile: "mcpdrift.lock",
		ObserveOptions: lockrun.ObserveOptions{Connect: lockrun.Connector(base, secrets, env(nil)), Secrets: secrets},
		Check:          lock.CheckOptions{Today: "2026-01-02"}}
	res, err := lockrun.Check(ctx, opt)
	if err != nil || res.Report.ExitCode != 0 || res.Report.Servers[0].Status != lock.StatusClean {
		t.Fatalf("a clean check: %v %+v", err, res.Report.Servers[0])
	}
	if err := srv.SetTools(mustTools(t, acmeV2)); err != nil {
		t.Fatal(err)
	}
	res, err = lockrun.Check(ctx, opt)
	if err != nil || res.Report.ExitCode != 1 || len(res.Report.Servers[0].Pending) == 0 || len(res.Deltas["acme"]) == 0 {
		t.Fatalf("a drifted check: %v exit %d %+v", err, res.Report.ExitCode, res.Report.Servers[0])
	}
	pending := res.Report.Servers[0].Pending

	ropt := lockrun.ReviewOptions{Server: l.Server("acme"), Today: "2026-01-02", ObserveOptions: opt.ObserveOptions}
	if _, err := lockrun.Approve(ctx, lockrun.ApproveOptions{ReviewOptions: ropt, Tools: []string{"no_such_tool"}, Approval: approval}); runerr.KindOf(err) != runerr.Usage {
		t.Errorf("approving a tool nobody serves: %v", err)
	}
	ar, err := lockrun.Approve(ctx, lockrun.ApproveOptions{ReviewOptions: ropt, All: true, ReviewedDenied: true, Approval: approval})
	if err != nil {
		t.Fatal(err)
	}
	var approved []string
	for _, a := range ar.Approved {
		approved = append(approved, a.Tool)
	}
	slices.Sort(approved)
	slices.Sort(pending)
	if !slices.Equal(approved, pending) || ar.Events < len(pending) {
		t.Errorf("approved %v (%d events), pending were %v", approved, ar.Events, pending)
	}
	if res, err = lockrun.Check(ctx, opt); err != nil || res.Report.ExitCode != 0 {
		t.Errorf("after the approval: %v exit %d %+v", err, res.Report.ExitCode, res.Report.Servers[0])
	}
}

// TestConnectorPlaceholders: a header placeholder is expanded from the
// environment and its value is a secret of the run; one whose variable is
// not set leaves that server not observed, the check going on.
func TestConnectorPlaceholders(t *testing.T) {
	const token = "tok-0123456789abcdef"
	_, url := serve(t, acmeV1, mockserver.Config{RequireAuth: token})
	src := lock.Source{URL: url, Headers: map[string]string{"Authorization": "Bearer ${env:ACME_TOKEN}"}}
	secrets := &redact.Set{}
	cfg, err := lockrun.Connector(mcpclient.Config{}, secrets, env(map[string]string{"ACME_TOKEN": token}))(src)
	if err != nil || cfg.Headers.Get("Authorization") != "Bearer "+token || cfg.BaseURL != url {
		t.Fatalf("connect: %v %v %q", err, cfg.Headers, cfg.BaseURL)
	}
	if got := secrets.String("x " + token + " y"); strings.Contains(got, token) {
		t.Errorf("the expanded value is not a secret of the run: %q", got)
	}
	s := &lock.Server{Name: "acme", Source: src}
	c := lockrun.CheckServer(context.Background(), s, lockrun.CheckOptions{ObserveOptions: lockrun.ObserveOptions{Connect: lockrun.Connector(mcpclient.Config{}, secrets, env(nil))}})
	if c.Result.Status != lock.StatusNotObserved || !strings.Contains(c.Result.Error, "ACME_TOKEN") || c.Listing != nil {
		t.Errorf("an unset variable: %+v", c.Result)
	}
	if _, err := lockrun.ExpandURL(url+"/${env:KEY}/sse", env(map[string]string{"KEY": "short"}), secrets); runerr.KindOf(err) != runerr.Usage {
		t.Errorf("a path segment too short to redact: %v", err)
	}
}

func mustTools(t *testing.T, path string) []json.RawMessage {
	t.Helper()
	tools, err := mockserver.LoadToolsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}
