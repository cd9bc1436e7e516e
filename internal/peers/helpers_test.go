package peers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/cli"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/probe"
)

// Bounds: every exchange with a peer is bounded by these, so a hung peer
// fails a test instead of hanging the package.
const (
	observeTimeout = 60 * time.Second
	driftTimeout   = "60s"
)

// Rule ids a clean drift run against a loopback or stdio peer may report,
// at INFO only: the anonymous-list finding is INFO for a local target (and
// absent for stdio), the legacy-server note for initialize-era servers.
const (
	ruleAnonymousList = "MCP-AUTH-ANONYMOUS-LIST"
	ruleLegacyServer  = "MCP-DRIFT-LEGACY-SERVER"
	ruleSchema        = "MCP-DRIFT-SCHEMA"
	ruleSchemaCompat  = "MCP-DRIFT-SCHEMA-COMPATIBLE"
)

// observe runs mcpclient.ListTools and checks what every peer must give: a
// complete list, and a transcript that manifest.ParseToolList reads back
// to the same pages, completeness and tools.
func observe(t *testing.T, label string, cfg mcpclient.Config) (*mcpclient.Observation, *manifest.ToolList) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), observeTimeout)
	defer cancel()
	start := time.Now()
	obs, err := mcpclient.ListTools(ctx, cfg)
	took := time.Since(start)
	if err != nil {
		var warn, stderr string
		if obs != nil {
			warn, stderr = strings.Join(obs.Warnings, "; "), obs.Stderr
		}
		t.Fatalf("%s: ListTools: %v\nwarnings: %s\nchild stderr: %s", label, err, warn, stderr)
	}
	t.Logf("%s: era=%s revision=%q legacy_version=%q pages=%d completeness=%s ttlMs=%v cacheScope=%q server=%+v (%s) in %v; warnings=%q",
		label, obs.Era, obs.ProtocolRevision, obs.LegacyVersion, obs.Pages, obs.Completeness, ptrVal(obs.TTLMs), obs.CacheScope,
		obs.ServerInfo, obs.RevisionReason, took.Round(time.Millisecond), obs.Warnings)
	recordTiming(label+": ListTools", took)
	if obs.Completeness != string(manifest.Complete) {
		t.Errorf("%s: completeness %q, want complete (pages %d, cap %v, cycle %v)", label, obs.Completeness, obs.Pages, obs.CapReached, obs.CursorCycle)
	}
	tl, err := manifest.ParseToolList(obs.Transcript)
	if err != nil {
		t.Fatalf("%s: ParseToolList(transcript): %v", label, err)
	}
	if tl.Completeness != manifest.Complete || tl.Pages != obs.Pages || tl.Form != manifest.FormPages {
		t.Errorf("%s: parsed transcript: form %s, %d pages, %s (%s); observation: %d pages", label, tl.Form, tl.Pages, tl.Completeness, tl.Reason, obs.Pages)
	}
	return obs, tl
}

func ptrVal(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// toolNames returns the tool names of tl, in the order served.
func toolNames(tl *manifest.ToolList) []string {
	out := make([]string, len(tl.Tools))
	for i, tool := range tl.Tools {
		out[i] = tool.Name
	}
	return out
}

// checkNames reports unless the served names are exactly want (any order,
// no duplicates).
func checkNames(t *testing.T, label string, tl *manifest.ToolList, want []string) {
	t.Helper()
	got := slices.Sorted(slices.Values(toolNames(tl)))
	w := slices.Sorted(slices.Values(want))
	if !slices.Equal(got, w) {
		t.Errorf("%s: served tools\n got %d %v\nwant %d %v", label, len(got), got, len(w), w)
	}
}

// saveManifest writes the transcript of obs, the way a user would save a
// first observation to pin it, and returns the path.
func saveManifest(t *testing.T, name string, obs *mcpclient.Observation) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name+".tools-list.json")
	if err := os.WriteFile(p, obs.Transcript, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// driftRun is one in-process `mcpdrift drift ... --format json`.
type driftRun struct {
	code   int
	rep    probe.Report
	stderr string
	took   time.Duration
}

func (d *driftRun) rules() []string {
	var out []string
	for _, f := range d.rep.Findings {
		s := f.Level + " " + f.RuleID
		if f.Tool != "" {
			s += " " + f.Tool
		}
		out = append(out, s)
	}
	return out
}

func drift(t *testing.T, label, manifestPath string, args ...string) *driftRun {
	t.Helper()
	argv := append([]string{"drift", manifestPath, "--format", "json", "--timeout", driftTimeout}, args...)
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := cli.Main(argv, strings.NewReader(""), &stdout, &stderr)
	d := &driftRun{code: code, stderr: stderr.String(), took: time.Since(start)}
	recordTiming(label+": drift", d.took)
	if stdout.Len() == 0 {
		t.Fatalf("%s: drift exit %d with no report; stderr: %s", label, code, d.stderr)
	}
	if err := json.Unmarshal(stdout.Bytes(), &d.rep); err != nil {
		t.Fatalf("%s: drift exit %d: report is not JSON: %v\n%s", label, code, err, stdout.String())
	}
	t.Logf("%s: drift exit %d in %v: era=%s revision=%q served=%+v findings=%v warnings=%q",
		label, code, d.took.Round(time.Millisecond), d.rep.Protocol.Era, d.rep.Protocol.Revision, d.rep.Served, d.rules(), d.rep.Warnings)
	return d
}

// checkClean asserts a drift run against the manifest the same server was
// pinned from: exit 0, the whole list served and compared on both
// connections, and no finding but the allowed ones, at INFO.
func checkClean(t *testing.T, label string, d *driftRun, toolCount int, allowed ...string) {
	t.Helper()
	if d.code != 0 || d.rep.ExitCode != 0 {
		t.Errorf("%s: drift exit %d (report %d), want 0; findings %v; stderr %s", label, d.code, d.rep.ExitCode, d.rules(), d.stderr)
	}
	if s := d.rep.Served; s == nil || s.ToolCount != toolCount || s.Completeness != string(manifest.Complete) || !s.SecondCompared {
		t.Errorf("%s: served %+v, want %d tools, complete, second connection compared", label, s, toolCount)
	}
	if !d.rep.Compared || d.rep.Declared.ToolCount != toolCount {
		t.Errorf("%s: compared %v, declared %+v", label, d.rep.Compared, d.rep.Declared)
	}
	for _, f := range d.rep.Findings {
		if f.Level != probe.LevelInfo || !slices.Contains(allowed, f.RuleID) {
			t.Errorf("%s: unexpected finding %s %s %s: %s", label, f.Level, f.RuleID, f.Tool, f.Message)
		}
	}
}

// checkSchemaDrift asserts a drift run against a server whose tool changed
// its input schema: exit 1 and a schema finding for that tool, and no
// finding that names another tool.
func checkSchemaDrift(t *testing.T, label string, d *driftRun, tool string) {
	t.Helper()
	if d.code != 1 || d.rep.ExitCode != 1 {
		t.Errorf("%s: drift exit %d (report %d), want 1; findings %v; stderr %s", label, d.code, d.rep.ExitCode, d.rules(), d.stderr)
	}
	found := false
	for _, f := range d.rep.Findings {
		switch {
		case f.Tool == tool && (f.RuleID == ruleSchema || f.RuleID == ruleSchemaCompat):
			found = true
			if len(f.Changes) == 0 {
				t.Errorf("%s: %s %s carries no change records", label, f.RuleID, f.Tool)
			}
		case f.Tool == tool && f.RuleID == "MCP-DRIFT-ESCALATION":
			// The security reading of the same change (issue 11).
			if len(f.Changes) == 0 {
				t.Errorf("%s: %s %s carries no change records", label, f.RuleID, f.Tool)
			}
		case f.Tool != "":
			t.Errorf("%s: unexpected finding %s %s %s: %s", label, f.Level, f.RuleID, f.Tool, f.Message)
		}
	}
	if !found {
		t.Errorf("%s: no %s / %s finding for %q: %v", label, ruleSchema, ruleSchemaCompat, tool, d.rules())
	}
}

// serveHTTP serves h at /mcp on a loopback httptest server and returns
// the endpoint URL.
func serveHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// testExecutable is this test binary, which serves stdio peers (TestMain).
func testExecutable(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// tailBuffer keeps the last max bytes written to it (a child's output, for
// diagnostics), safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = w.b[len(w.b)-w.max:]
	}
	return len(p), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}
