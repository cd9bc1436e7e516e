package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/scan"
	"github.com/mcpdrift/mcpdrift/schemas"
	"github.com/mcpdrift/mcpdrift/store"
)

type scanJSONDoc struct {
	Schema   string         `json:"schema"`
	ExitCode int            `json:"exit_code"`
	Counts   map[string]int `json:"counts"`
	Servers  []struct {
		Server, Target, Status, Baseline, Error string
		ToolCount                               int `json:"tool_count"`
		Findings                                []struct {
			Rule, Severity, Tool, Message string
		}
	} `json:"servers"`
}

func scanJSONOut(t *testing.T, args ...string) (int, scanJSONDoc, string) {
	t.Helper()
	code, out, stderr := run(t, "", append([]string{"scan", "--format", "json"}, args...)...)
	var d scanJSONDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("exit %d: not JSON: %v\n%s\n%s", code, err, out, stderr)
	}
	// Every summary a test reads holds to its contract.
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if err := schemas.Validate(schemas.Scan, doc); err != nil {
		t.Fatalf("the summary breaks %s: %v\n%s", schemas.Scan, err, out)
	}
	return code, d, stderr
}

// fleetMock serves one mock server at n paths (/s/0 ... /s/n-1): n
// servers as scan sees them. extra handlers are mounted beside.
func fleetMock(t testing.TB, n int, cfg mockserver.Config, extra map[string]http.Handler) (*mockserver.Server, []string) {
	t.Helper()
	s := mockserver.MustNew(cfg)
	mux := http.NewServeMux()
	mux.Handle("/s/", s)
	for p, h := range extra {
		mux.Handle(p, h)
	}
	ts := httptest.NewUnstartedServer(mux)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s/s/%d", ts.URL, i)
	}
	return s, urls
}

func urlArgs(urls []string) []string {
	var out []string
	for _, u := range urls {
		out = append(out, "--url", u)
	}
	return out
}

// TestScanHistory: without a baseline the first scan records (exit 0),
// an unchanged fleet is clean (exit 0), and a rug pull on the served list
// is a finding against the last complete observation (exit 1) naming the
// changed tools; a server that is down is not observed (exit 3).
func TestScanHistory(t *testing.T) {
	s, urls := fleetMock(t, 3, mockserver.Config{Tools: mockManifest(t, exampleV1)}, nil)
	db := "sqlite:" + filepath.Join(t.TempDir(), "history.db")
	args := append([]string{"--store", db}, urlArgs(urls)...)
	code, d, stderr := scanJSONOut(t, args...)
	if code != 0 || d.Counts["recorded"] != 3 || d.Schema != "mcpdrift.scan.v1" {
		t.Fatalf("first scan: exit %d %+v %s", code, d, stderr)
	}
	if stderr != "" {
		t.Fatalf("a scan on a pipe wrote to stderr (a progress bar belongs on a terminal only): %q", stderr)
	}
	if code, d, _ = scanJSONOut(t, args...); code != 0 || d.Counts["clean"] != 3 {
		t.Fatalf("second scan: exit %d %+v", code, d)
	}
	if err := s.SetTools(mockManifest(t, exampleV2)); err != nil {
		t.Fatal(err)
	}
	code, d, _ = scanJSONOut(t, args...)
	if code != 1 || d.Counts["findings"] != 3 || len(d.Servers[0].Findings) == 0 || d.Servers[0].Baseline != "history" {
		t.Fatalf("after the rug pull: exit %d %+v", code, d)
	}
	// The rug-pulled list is now the last complete observation; the
	// list of before is a change against it again.
	if err := s.SetTools(mockManifest(t, exampleV1)); err != nil {
		t.Fatal(err)
	}
	// The text summary: worst first, one row per server, the count line.
	dead := "http://127.0.0.1:1/mcp"
	code, out, _ := run(t, "", append([]string{"scan", "--store", db, "--timeout", "2s", "--url", dead}, urlArgs(urls[:1])...)...)
	lines := strings.Split(out, "\n")
	if code != 1 || !strings.HasPrefix(lines[1], "findings") || !strings.HasPrefix(lines[2], "not_observed") || !strings.Contains(out, "2 servers: 1 with findings, 0 inconclusive, 1 not observed") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if code, _, _ := run(t, "", "scan", "--timeout", "2s", "--url", dead); code != 3 {
		t.Fatalf("a dead server alone: exit %d", code)
	}
}

// TestScanUsage: bad flags are exit 2.
func TestScanUsage(t *testing.T) {
	for _, args := range [][]string{
		{"scan"},
		{"scan", "--url", "http://127.0.0.1:1/", "--format", "yaml"},
		{"scan", "--url", "http://127.0.0.1:1/", "--concurrency", "0"},
		{"scan", "--url", "http://127.0.0.1:1/", "--once"},
		{"scan", "--url", "http://127.0.0.1:1/", "--worker", "--store", "sqlite:/tmp/x.db"},
		{"scan", "--url", "http://127.0.0.1:1/", "--worker", "--store", "postgres://127.0.0.1:1/x", "--shard", "4/4"},
		{"scan", "--url", "http://127.0.0.1:1/", "--no-store", "--store", "sqlite:/tmp/x.db"},
	} {
		if code, _, stderr := run(t, "", args...); code != ExitUsage {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// floodHandler streams a tools/list result that never ends: a JSON array
// of tools up to total bytes.
func floodHandler(total int64) http.Handler {
	s := mockserver.MustNew(mockserver.Config{Tools: nil, Oversized: total})
	return s
}

// TestScanIsolation: 50 good servers, one that hangs and one that floods
// a 1 GB list: the good ones are observed within their deadlines, the two
// are not observed, the run ends soon after the deadline, and the heap
// stays bounded (the flood is cut at the client's byte bounds).
func TestScanIsolation(t *testing.T) {
	hang := mockserver.MustNew(mockserver.Config{Tools: mockManifest(t, exampleV1), Slow: time.Hour})
	flood := floodHandler(1 << 30)
	var floodBytes atomic.Int64
	countFlood := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flood.ServeHTTP(&countingWriter{ResponseWriter: w, n: &floodBytes}, r)
	})
	_, urls := fleetMock(t, 50, mockserver.Config{Tools: mockManifest(t, exampleV1)}, map[string]http.Handler{"/hang": hang, "/flood": countFlood})
	base := strings.TrimSuffix(urls[0], "/s/0")
	all := append([]string{base + "/hang", base + "/flood"}, urls...)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	}()
	start := time.Now()
	code, d, stderr := scanJSONOut(t, append([]string{"--timeout", "3s", "--concurrency", "16"}, urlArgs(all)...)...)
	wall := time.Since(start)
	close(stop)
	<-sampled
	hang.Close()
	if code != 3 || d.Counts["observed"] != 50 || d.Counts["recorded"] != 0 || d.Counts["not_observed"] != 2 {
		t.Fatalf("exit %d %+v\n%s", code, d.Counts, stderr)
	}
	var floodErr string
	for _, s := range d.Servers {
		if strings.HasSuffix(s.Target, "/flood") {
			floodErr = s.Error
		}
	}
	if !strings.Contains(floodErr, "MiB") && !strings.Contains(floodErr, "bytes") {
		t.Fatalf("the flood's error: %q", floodErr)
	}
	growth := int64(peak.Load()) - int64(before)
	t.Logf("wall %v; heap peak %.1f MiB over %.1f MiB before; the flood sent %.1f MiB", wall, float64(growth)/(1<<20), float64(before)/(1<<20), float64(floodBytes.Load())/(1<<20))
	if wall > 8*time.Second {
		t.Fatalf("the scan took %v with a 3 s deadline each", wall)
	}
	if growth > 256<<20 {
		t.Fatalf("the heap grew by %d MiB", growth>>20)
	}
	if floodBytes.Load() > 200<<20 {
		t.Fatalf("the flood was read for %d MiB", floodBytes.Load()>>20)
	}
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestScanLock: each server of a lock is gated against its entry by lock
// check's own check: clean, then a finding after the rug pull on one
// (exit 1), a server down not observed; every result in the store.
func TestScanLock(t *testing.T) {
	s1, u1 := mock(t, mockserver.Config{}, exampleV1)
	_, u2 := mock(t, mockserver.Config{}, exampleV1)
	lp := filepath.Join(t.TempDir(), "mcpdrift.lock")
	for name, u := range map[string]string{"one": u1, "two": u2} {
		if code, _, stderr := run(t, "", "lock", "add", name, "--lock", lp, "--url", u, "--by", "alice@example.com"); code != 0 {
			t.Fatalf("lock add: %d %s", code, stderr)
		}
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	code, d, stderr := scanJSONOut(t, "--lock", lp, "--store", db)
	if code != 0 || d.Counts["clean"] != 2 || d.Servers[0].Baseline != "lock" {
		t.Fatalf("clean lock: exit %d %+v %s", code, d, stderr)
	}
	if err := s1.SetTools(mockManifest(t, exampleV2)); err != nil {
		t.Fatal(err)
	}
	code, d, _ = scanJSONOut(t, "--lock", lp, "--store", db)
	if code != 1 || d.Servers[0].Server != "one" || d.Servers[0].Status != "findings" || len(d.Servers[0].Findings) == 0 || d.Servers[1].Status != "clean" {
		t.Fatalf("after the rug pull: exit %d %+v", code, d)
	}
	st, err := store.Open(context.Background(), db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	scans, err := st.Scans(context.Background(), 10)
	if err != nil || len(scans) != 2 {
		t.Fatalf("%d scans recorded: %v", len(scans), err)
	}
	for _, sc := range scans {
		obs, err := st.Observations(context.Background(), sc.ID)
		if err != nil || len(obs) != 2 || obs[0].ManifestDigest == "" {
			t.Fatalf("scan %d: %+v %v", sc.ID, obs, err)
		}
	}
	fs, err := st.Findings(context.Background(), scans[0].ID, "one")
	if err != nil || len(fs) == 0 {
		t.Fatalf("the rug pull's findings were not recorded: %v %v", fs, err)
	}
}

// TestScanInventory: an inventory's servers are read again from their
// configuration files (the inventory holds no value): the URL server is
// observed with its header, whose value is never written; the stdio one
// is not run without --allow-config-commands (a marker file proves it),
// and with it, it runs. The first scan records into the store, the second
// is gated against the first.
func TestScanInventory(t *testing.T) {
	const token = "inventory-secret-token-987654321"
	_, u := mock(t, mockserver.Config{RequireAuth: token}, exampleV1)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"remote": map[string]any{"type": "http", "url": u, "headers": map[string]string{"Authorization": "Bearer ${env:INV_TEST_TOKEN}"}},
		"local":  map[string]any{"command": script},
	}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INV_TEST_TOKEN", token)
	inv := filepath.Join(t.TempDir(), "inventory.json")
	code, out, stderr := run(t, "", "discover", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("discover: %d %s", code, stderr)
	}
	if err := os.WriteFile(inv, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	code, d, stderr := scanJSONOut(t, "--inventory", inv, "--store", db)
	byStatus := map[string]string{}
	for _, s := range d.Servers {
		byStatus[s.Server] = s.Status + " " + s.Error
	}
	if code != 3 || d.Counts["recorded"] != 1 || d.Counts["not_observed"] != 1 {
		t.Fatalf("exit %d %v %s", code, byStatus, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the stdio command ran without --allow-config-commands")
	}
	if code, d, _ = scanJSONOut(t, "--inventory", inv, "--store", db); d.Counts["clean"] != 1 {
		t.Fatalf("second scan: exit %d %+v", code, d.Counts)
	}
	code, out, stderr = run(t, "", "scan", "--inventory", inv, "--store", db, "--allow-config-commands", "--timeout", "5s")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("with --allow-config-commands the command did not run: exit %d\n%s\n%s", code, out, stderr)
	}
	if strings.Contains(out+stderr, token) {
		t.Fatal("the token was written")
	}
}

// A server that reflects the credential it was sent into its tool list:
// the listing is not trusted (not observed), and no byte of the store
// holds the credential — the store refuses secrets of the run too.
func TestScanStoreNoSecret(t *testing.T) {
	const secret = "scan-secret-token-0123456789abcdef"
	tools := []json.RawMessage{json.RawMessage(`{"name":"echo","description":"token ` + secret + `","inputSchema":{"type":"object"}}`)}
	_, urls := fleetMock(t, 1, mockserver.Config{Tools: tools, RequireAuth: secret}, nil)
	dir := t.TempDir()
	path := filepath.Join(dir, "history.db")
	code, out, stderr := run(t, "", "scan", "--store", "sqlite:"+path, "--url", urls[0], "--header", "Authorization=Bearer "+secret, "--format", "json")
	if code != 3 || !strings.Contains(out, "not_observed") {
		t.Errorf("a reflecting server: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, f := range []string{path, path + "-wal"} {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the credential", f)
		}
	}
	if strings.Contains(out+stderr, secret) {
		t.Error("the credential reached an output")
	}
}

// scan --keep N applies retention after each scan: the store keeps the
// newest N scans (and each server's last complete observation).
func TestScanKeep(t *testing.T) {
	_, urls := fleetMock(t, 1, mockserver.Config{Tools: mockManifest(t, exampleV1)}, nil)
	path := filepath.Join(t.TempDir(), "history.db")
	for range 4 {
		if code, _, stderr := run(t, "", "scan", "--store", "sqlite:"+path, "--url", urls[0], "--keep", "2"); code != 0 {
			t.Fatalf("scan: exit %d: %s", code, stderr)
		}
	}
	st, err := store.Open(context.Background(), "sqlite:"+path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	scans, err := st.Scans(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(scans) != 2 {
		t.Errorf("after 4 scans with --keep 2 the store holds %d scans", len(scans))
	}
	if code, _, stderr := run(t, "", "scan", "--no-store", "--url", urls[0], "--keep", "2"); code != 2 || !strings.Contains(stderr, "--no-store") {
		t.Errorf("--keep with --no-store: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "", "scan", "--store", "sqlite:"+path, "--url", urls[0], "--keep", "soon"); code != 2 || !strings.Contains(stderr, "--keep") {
		t.Errorf("a bad --keep: exit %d: %s", code, stderr)
	}
}

// scan --observed-dir writes each server's evidence: the observed record
// of a server that answered (its manifest digest the one the scan
// reports), the not-observed record of one that did not; names reduced
// to a file name; never with --worker.
func TestScanObservedDir(t *testing.T) {
	_, urls := fleetMock(t, 1, mockserver.Config{Tools: mockManifest(t, exampleV1)}, nil)
	dir := t.TempDir()
	code, out, stderr := run(t, "", "scan", "--format", "json", "--no-store", "--observed-dir", dir, "--timeout", "2s", "--url", urls[0], "--url", "http://127.0.0.1:1/mcp")
	var d struct {
		Servers []struct {
			ManifestDigest string `json:"manifest_digest"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &d); code != 3 || err != nil {
		t.Fatalf("exit %d: %v %s %s", code, err, out, stderr)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Fatalf("%d files in --observed-dir: %v", len(ents), ents)
	}
	seen := map[string]bool{}
	for _, ent := range ents {
		b, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		o, err := manifest.ParseObserved(b, ent.Name())
		if err != nil {
			t.Fatalf("%s: %v", ent.Name(), err)
		}
		seen[string(o.Status)] = true
		if strings.ContainsAny(ent.Name(), ":/@") || !strings.HasSuffix(ent.Name(), ".observed.json") {
			t.Errorf("file name %q", ent.Name())
		}
		if o.Status == manifest.StatusObserved {
			for _, s := range d.Servers {
				if s.ManifestDigest != "" && (o.Observed.ManifestDigest == nil || *o.Observed.ManifestDigest != s.ManifestDigest) {
					t.Errorf("the record's digest is not the scan's %s", s.ManifestDigest)
				}
			}
		}
	}
	if !seen[string(manifest.StatusObserved)] || !seen[string(manifest.StatusNotObserved)] {
		t.Errorf("statuses %v", seen)
	}
	if code, _, stderr := run(t, "", "scan", "--no-store", "--observed-dir", filepath.Join(dir, "nope"), "--url", urls[0]); code != 2 || !strings.Contains(stderr, "not a directory") {
		t.Errorf("a missing dir: exit %d: %s", code, stderr)
	}
}

// TestScanWithoutStoreSaysSo: a --url scan with no store has nothing to
// gate against and keeps nothing, so its servers are "observed", never
// "recorded" (a claim it could not make true), in the JSON and in the
// table, which says what that means; the exit is 0, as for a first
// record.
func TestScanWithoutStoreSaysSo(t *testing.T) {
	_, urls := fleetMock(t, 2, mockserver.Config{Tools: mockManifest(t, exampleV1)}, nil)
	code, d, stderr := scanJSONOut(t, urlArgs(urls)...)
	if code != 0 || d.Counts["observed"] != 2 || d.Counts["recorded"] != 0 {
		t.Fatalf("exit %d %+v %s", code, d.Counts, stderr)
	}
	for _, s := range d.Servers {
		if s.Status != "observed" {
			t.Errorf("%s: status %q", s.Server, s.Status)
		}
	}
	code, out, _ := run(t, "", append([]string{"scan"}, urlArgs(urls)...)...)
	if code != 0 || !strings.Contains(out, "0 recorded") || !strings.Contains(out, "2 observed only") || !strings.Contains(out, "neither gated nor recorded") || strings.Contains(out, "\nrecorded ") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// With a store, the same scan records.
	db := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	if code, d, _ = scanJSONOut(t, append([]string{"--store", db}, urlArgs(urls)...)...); code != 0 || d.Counts["recorded"] != 2 || d.Counts["observed"] != 0 {
		t.Fatalf("with a store: exit %d %+v", code, d.Counts)
	}
}

// TestScanJSONContract: every result scanJSON can be given holds to
// schemas/scan.v1.schema.json, also those made outside scan.Run (a worker's
// server it was not given, with no findings slice).
func TestScanJSONContract(t *testing.T) {
	rs := []scan.Result{
		{Server: "ghost", Status: scan.StatusNotObserved, Error: "this worker was not given this server"},
		{Server: "a", Target: "https://h/mcp", Status: scan.StatusObserved, Findings: []scan.Finding{}},
		{Server: "b", Status: scan.StatusFindings, Baseline: "lock", Findings: []scan.Finding{{Rule: "MCP-X", Severity: "high", Message: "m"}}},
	}
	out := scanJSON(rs, scan.ExitCode(rs))
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if err := schemas.Validate(schemas.Scan, doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
