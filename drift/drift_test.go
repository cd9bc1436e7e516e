package drift_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/drift"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/pin"
	"github.com/mcpdrift/mcpdrift/runerr"
)

var (
	acmeV1 = filepath.Join("..", "examples", "acme-github.v1.tools-list.json")
	acmeV2 = filepath.Join("..", "examples", "acme-github.v2-rugpull.tools-list.json")
)

func tools(t *testing.T, path string) []json.RawMessage {
	t.Helper()
	ts, err := mockserver.LoadToolsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func serve(t *testing.T) (*mockserver.Server, string) {
	t.Helper()
	s, err := mockserver.New(mockserver.Config{Tools: tools(t, acmeV1), PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts.URL + "/mcp"
}

func rules(r *drift.Result) []string {
	var out []string
	for _, f := range r.Report.Findings {
		out = append(out, f.RuleID)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestRun: a server pinned, then drifted through the library alone: clean
// while it serves what was pinned, findings once it swaps its tools, and
// a report that says so (not an error) when it cannot be reached.
func TestRun(t *testing.T) {
	ctx := context.Background()
	srv, url := serve(t)
	p, err := pin.Server(ctx, pin.ServerOptions{Server: mcpclient.Config{BaseURL: url}, ServerID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	declared, err := p.Side()
	if err != nil {
		t.Fatal(err)
	}
	opt := drift.Options{Server: mcpclient.Config{BaseURL: url}, Declared: declared, DeclaredCapabilities: p.SnapshotOptions.ClientCapabilities}
	r, err := drift.Run(ctx, opt)
	if err != nil || r.Report.ExitCode != 0 || len(r.Served) != 5 || r.Report.Served == nil || !r.Report.Served.SecondCompared {
		t.Fatalf("clean: %v exit %d %v", err, r.Report.ExitCode, rules(r))
	}
	if o := r.Observed(); o.Observed.ManifestDigest == nil || *o.Observed.ManifestDigest != declared.ManifestDigest {
		t.Errorf("the observed record is not what was pinned")
	}
	if err := srv.SetTools(tools(t, acmeV2)); err != nil {
		t.Fatal(err)
	}
	r, err = drift.Run(ctx, opt)
	if err != nil || r.Report.ExitCode != 1 || !slices.Contains(rules(r), "MCP-DRIFT-ESCALATION") || !slices.Contains(rules(r), "MCP-DRIFT-TOOL-UNDECLARED") {
		t.Fatalf("the rug pull: %v exit %d %v", err, r.Report.ExitCode, rules(r))
	}
	opt.Server.BaseURL = "http://127.0.0.1:1/mcp"
	r, err = drift.Run(ctx, opt)
	if err != nil || r.Report.ExitCode != 3 || r.Report.NotObserved == "" || r.Observed().Status != manifest.StatusNotObserved {
		t.Errorf("unreachable: %v exit %d %q", err, r.Report.ExitCode, r.Report.NotObserved)
	}
}

// TestRunReading: the declared side read beside the listing from files (a
// baseline and its snapshot), and an unreadable one is the run's error.
func TestRunReading(t *testing.T) {
	ctx := context.Background()
	_, url := serve(t)
	p, err := pin.Server(ctx, pin.ServerOptions{Server: mcpclient.Config{BaseURL: url}, ServerID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	decl := filepath.Join(dir, "acme.json")
	b, _ := manifest.MarshalArtifact(p.Declared)
	var snap bytes.Buffer
	if err := p.WriteSnapshot(&snap); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(decl, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(diff.SnapshotPathFor(decl), snap.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	read := diff.ReadFile(1 << 20)
	r, err := drift.Run(ctx, drift.Options{Server: mcpclient.Config{BaseURL: url}, Reading: drift.Read(decl, read, nil, nil)})
	if err != nil || r.Report.ExitCode != 0 || r.Declared.ToolCount != 5 || r.Report.Declared.Source != decl {
		t.Fatalf("read beside: %v exit %d declared %+v", err, r.Report.ExitCode, r.Report.Declared)
	}
	if _, err := drift.Run(ctx, drift.Options{Server: mcpclient.Config{BaseURL: url}, Reading: drift.Read(filepath.Join(dir, "none.json"), read, nil, nil)}); err == nil {
		t.Error("a declared side that cannot be read: no error")
	}
	if _, err := drift.Run(ctx, drift.Options{Server: mcpclient.Config{BaseURL: url}, Reading: drift.Read(decl, read, nil, nil), Invoke: []string{"no_such_tool"}}); runerr.KindOf(err) != runerr.Usage {
		t.Errorf("a call plan of a tool not declared: %v", err)
	}
}
