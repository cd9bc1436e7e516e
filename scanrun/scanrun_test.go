package scanrun_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/scan"
	"github.com/mcpdrift/mcpdrift/scanrun"
	"github.com/mcpdrift/mcpdrift/store"
)

var (
	acmeV1 = filepath.Join("..", "examples", "acme-github.v1.tools-list.json")
	acmeV2 = filepath.Join("..", "examples", "acme-github.v2-rugpull.tools-list.json")
)

func serve(t *testing.T, path string) (*mockserver.Server, string) {
	t.Helper()
	tools, err := mockserver.LoadToolsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := mockserver.New(mockserver.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts.URL + "/mcp"
}

// TestRunHistory: a fleet scanned through the library: observed only
// without a store; with one, recorded first, then clean, then gated
// against the last complete observation once the server changes. A server
// that cannot be reached is not observed and holds no other.
func TestRunHistory(t *testing.T) {
	ctx := context.Background()
	srv, url := serve(t, acmeV1)
	servers := []scanrun.Server{
		{Name: "acme", Target: url, Config: mcpclient.Config{BaseURL: url}},
		{Name: "gone", Target: "http://127.0.0.1:1/mcp", Config: mcpclient.Config{BaseURL: "http://127.0.0.1:1/mcp"}},
		{Name: "misconfigured", Err: "a variable is not set"},
	}
	res, err := scanrun.Run(ctx, scanrun.Options{Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	status := func(res *scanrun.Result) map[string]string {
		m := map[string]string{}
		for _, r := range res.Results {
			m[r.Server] = r.Status
		}
		return m
	}
	if s := status(res); s["acme"] != scan.StatusObserved || s["gone"] != scan.StatusNotObserved || s["misconfigured"] != scan.StatusNotObserved || res.ExitCode != 3 {
		t.Fatalf("no store: %v exit %d", s, res.ExitCode)
	}
	if res.Observed[0] == nil || res.Observed[1] != nil {
		t.Errorf("observed records: %v", res.Observed)
	}
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "h.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	opt := scanrun.Options{Servers: servers[:1], Store: st, Label: "test"}
	for i, want := range []string{scan.StatusRecorded, scan.StatusClean} {
		if res, err = scanrun.Run(ctx, opt); err != nil || status(res)["acme"] != want {
			t.Fatalf("scan %d: %v %v, want %s", i, err, status(res), want)
		}
	}
	if err := srv.SetTools(mustTools(t, acmeV2)); err != nil {
		t.Fatal(err)
	}
	res, err = scanrun.Run(ctx, opt)
	if err != nil || status(res)["acme"] != scan.StatusFindings || res.ExitCode != 1 || len(res.Results[0].Findings) == 0 || res.Results[0].Baseline != "history" {
		t.Fatalf("after a change: %v %+v", err, res.Results)
	}
	if _, err := scanrun.Run(ctx, scanrun.Options{}); runerr.KindOf(err) != runerr.Usage {
		t.Errorf("an empty fleet: %v", err)
	}
}

// TestRunNamesEveryResult: the results scan.Run makes itself (a server
// the stopped scan never started) carry the server's name, escaped.
func TestRunNamesEveryResult(t *testing.T) {
	servers := []scanrun.Server{{Name: "a", Target: "https://h/a"}, {Name: "b\u202e", Target: "https://h/b"}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped before any server starts
	res, err := scanrun.Run(ctx, scanrun.Options{Servers: servers, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Results {
		if r.Server != safetext.Escape("a") && r.Server != safetext.Escape("b\u202e") || strings.ContainsRune(r.Server, '\u202e') || r.Status != scan.StatusNotObserved {
			t.Errorf("result %+v", r)
		}
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
