package peers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/internal/cli"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// The gateway (package proxy, `mcpdrift proxy`) between real clients and
// real servers. A downstream over HTTP is the gateway in this process
// (proxy.New behind a loopback httptest server, the baseline loaded from
// the snapshot `mcpdrift pin` wrote); a downstream over stdio is the built
// mcpdrift binary, which the client launches: `mcpdrift proxy --declared
// D --upstream-url URL` or `... --upstream-stdio -- CMD`, as a client
// configuration would.

// built is the mcpdrift binary, built once per test binary into a
// directory TestMain removes.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

func mcpdriftBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "mcpdrift-peers-bin-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "mcpdrift")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", built.path, "github.com/mcpdrift/mcpdrift/cmd/mcpdrift")
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build ./cmd/mcpdrift: %v\n%s", err, out)
		}
		recordTiming("go build ./cmd/mcpdrift", time.Since(start))
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// removeBuilt removes what mcpdriftBinary built (TestMain).
func removeBuilt() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}

// mcpdriftCLI runs one mcpdrift command in this process.
func mcpdriftCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// pinned is a server pinned with `mcpdrift pin`: the declared baseline,
// the snapshot beside it, and the upstream to run the gateway in front of.
type pinned struct {
	label    string
	url      string   // the upstream over Streamable HTTP
	argv     []string // or over stdio
	env      []string // KEY=VALUE the stdio upstream needs (passed with --pass-env)
	declared string
	snap     *manifest.Snapshot
}

func (p *pinned) passEnv() []string {
	var names []string
	for _, kv := range p.env {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	return names
}

// pinServer pins the upstream with `mcpdrift pin --url` or `pin --stdio`
// (the project's own live pin), keeping the snapshot.
func pinServer(t *testing.T, p *pinned) *pinned {
	t.Helper()
	p.declared = filepath.Join(t.TempDir(), "declared.json")
	args := []string{"pin", "--server-id", p.label, "-o", p.declared, "--timeout", "60s"}
	if p.url != "" {
		args = append(args, "--url", p.url)
	} else {
		for _, k := range p.passEnv() {
			args = append(args, "--pass-env", k)
		}
		args = append(append(args, "--stdio", "--"), p.argv...)
	}
	withEnv(t, p.env, func() {
		if code, out, errOut := mcpdriftCLI(t, args...); code != 0 {
			t.Fatalf("%s: mcpdrift %s: exit %d\n%s%s", p.label, strings.Join(args, " "), code, out, errOut)
		}
	})
	p.snap = readSnapshot(t, p.declared)
	return p
}

// withoutTools re-pins p without the named tools: `mcpdrift pin --input`
// of the pinned list less them, with the pinned identity, so the gateway
// serves everything else and hides those (a tool not in the baseline).
func withoutTools(t *testing.T, p *pinned, drop ...string) *pinned {
	t.Helper()
	var raws []json.RawMessage
	for _, tool := range p.snap.Tools {
		if !slices.Contains(drop, tool.Name) {
			raws = append(raws, json.RawMessage(tool.Raw()))
		}
	}
	if len(raws) != len(p.snap.Tools)-len(drop) {
		t.Fatalf("%s: not all of %v were pinned", p.label, drop)
	}
	b, _ := json.Marshal(map[string]any{"tools": raws})
	dir := t.TempDir()
	list := filepath.Join(dir, "tools-list.json")
	if err := os.WriteFile(list, b, 0o644); err != nil {
		t.Fatal(err)
	}
	q := *p
	q.declared = filepath.Join(dir, "declared.json")
	id := p.snap.Identity
	args := []string{"pin", "--input", list, "--server-id", p.label, "-o", q.declared, "--endpoint", id.Endpoint}
	if id.ServerName != "" {
		args = append(args, "--server-name", id.ServerName)
	}
	if id.ServerVersion != "" {
		args = append(args, "--server-version", id.ServerVersion)
	}
	if code, out, errOut := mcpdriftCLI(t, args...); code != 0 {
		t.Fatalf("%s: mcpdrift %s: exit %d\n%s%s", p.label, strings.Join(args, " "), code, out, errOut)
	}
	q.snap = readSnapshot(t, q.declared)
	return &q
}

func readSnapshot(t *testing.T, declared string) *manifest.Snapshot {
	t.Helper()
	path := strings.TrimSuffix(declared, ".json") + ".snapshot.json"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := manifest.ParseSnapshot(b, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (p *pinned) toolNames() []string {
	var out []string
	for _, tool := range p.snap.Tools {
		out = append(out, tool.Name)
	}
	return out
}

// withEnv runs f with env set in this process (a stdio child started by
// this process inherits it through --pass-env).
func withEnv(t *testing.T, env []string, f func()) {
	t.Helper()
	var restore []func()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		old, had := os.LookupEnv(k)
		os.Setenv(k, v)
		restore = append(restore, func() {
			if had {
				os.Setenv(k, old)
			} else {
				os.Unsetenv(k)
			}
		})
	}
	defer func() {
		for _, r := range restore {
			r()
		}
	}()
	f()
}

// gatewayOpts tune one gateway.
type gatewayOpts struct {
	mode   proxy.Mode    // default enforce
	relist time.Duration // --relist-interval
	log    string        // decision log file ("" none)
}

// httpGateway runs the gateway in this process in front of p and returns
// its /mcp URL (loopback). It is closed when the test ends.
func httpGateway(t *testing.T, p *pinned, o gatewayOpts) downstream {
	t.Helper()
	b := decide.NewBaseline(p.snap.ServerID, p.snap.Identity, p.snap.Tools)
	if why := b.Invalid(); why != "" {
		t.Fatalf("%s: baseline not valid: %s", p.label, why)
	}
	mode := o.mode
	if mode == "" {
		mode = proxy.Enforce
	}
	for _, kv := range p.env {
		// The gateway starts its stdio upstream with --pass-env's rule:
		// these are passed from this process's environment.
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cfg := proxy.Config{
		Upstream: proxy.Upstream{URL: p.url, Command: p.argv, PassEnv: p.passEnv()},
		Mode:     mode, Baseline: b, Target: p.snap.Identity.Endpoint, ServerID: p.label,
		RelistInterval: o.relist, RequestTimeout: clientTimeout, ListTimeout: 30 * time.Second,
	}
	if o.log != "" {
		f, err := os.OpenFile(o.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		cfg.Log = proxy.NewDecisionLog(f)
	}
	g, err := proxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Handler(proxy.HTTPOptions{}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); g.Close() })
	return downstream{url: ts.URL + "/mcp"}
}

// stdioGateway is the command line of the built gateway in front of p
// (stdio downstream): what a client configuration's server command is.
func stdioGateway(t *testing.T, p *pinned, o gatewayOpts) downstream {
	t.Helper()
	argv := []string{mcpdriftBinary(t), "proxy", "--declared", p.declared}
	if o.mode != "" {
		argv = append(argv, "--mode", string(o.mode))
	}
	if o.relist > 0 {
		argv = append(argv, "--relist-interval", o.relist.String())
	}
	if o.log != "" {
		argv = append(argv, "--decision-log", o.log)
	}
	if p.url != "" {
		argv = append(argv, "--upstream-url", p.url)
	} else {
		for _, k := range p.passEnv() {
			argv = append(argv, "--pass-env", k)
		}
		argv = append(append(argv, "--upstream-stdio", "--"), p.argv...)
	}
	return downstream{argv: argv, env: p.env}
}

func gatewayFor(t *testing.T, bridgeDown string, p *pinned, o gatewayOpts) downstream {
	t.Helper()
	if bridgeDown == "http" {
		return httpGateway(t, p, o)
	}
	return stdioGateway(t, p, o)
}

// callLog wraps an upstream HTTP handler and records the tool names of
// the tools/call requests that reach it (the upstream's own view: a call
// the gateway refused must never be there).
type callLog struct {
	mu    sync.Mutex
	names []string
	// afterList, when set, runs once after the upstream has answered the
	// last page of a tools/list (a response without nextCursor).
	afterList atomic.Pointer[func()]
}

func (l *callLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(r.Body, 16<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		if m.Method == "tools/call" {
			l.mu.Lock()
			l.names = append(l.names, m.Params.Name)
			l.mu.Unlock()
		}
		if m.Method != "tools/list" || l.afterList.Load() == nil {
			h.ServeHTTP(w, r)
			return
		}
		rec := &teeWriter{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if !bytes.Contains(rec.buf.Bytes(), []byte(`"nextCursor"`)) {
			if f := l.afterList.Swap(nil); f != nil {
				(*f)()
			}
		}
	})
}

func (l *callLog) saw(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.names, name)
}

func (l *callLog) count(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, x := range l.names {
		if x == name {
			n++
		}
	}
	return n
}

type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// switchingGoSDK serves the go-sdk peer over Streamable HTTP on loopback
// with its tool set switchable (variant "" or variantChanged) while it
// runs, so a server can be pinned and then drift at the same endpoint.
type switchingGoSDK struct {
	url     string
	variant atomic.Value // string
	calls   *callLog
}

func serveSwitchingGoSDK(t *testing.T, stateless bool) *switchingGoSDK {
	t.Helper()
	s := &switchingGoSDK{calls: &callLog{}}
	s.variant.Store("")
	servers := map[string]*mcp.Server{"": newGoSDKServer(""), variantChanged: newGoSDKServer(variantChanged)}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return servers[s.variant.Load().(string)] },
		&mcp.StreamableHTTPOptions{Stateless: stateless})
	s.url = serveHTTP(t, s.calls.wrap(h))
	return s
}

// matrix collects one line per cell of the client × server × bridge × era
// matrix, printed after the run (go test -v shows it).
var matrix struct {
	sync.Mutex
	rows []string
}

func recordCell(t *testing.T, client, server, bridge, eraWanted, eraGot, verdict string) {
	t.Helper()
	matrix.Lock()
	defer matrix.Unlock()
	matrix.rows = append(matrix.rows, fmt.Sprintf("  %-10s %-34s %-14s %-7s -> %-7s %s", client, server, bridge, eraWanted, eraGot, verdict))
}

func printMatrix() {
	matrix.Lock()
	defer matrix.Unlock()
	if len(matrix.rows) == 0 {
		return
	}
	slices.Sort(matrix.rows)
	fmt.Printf("gateway matrix (%d cells): client, server (upstream transport), bridge, era asked -> negotiated, verdict\n", len(matrix.rows))
	for _, r := range matrix.rows {
		fmt.Println(r)
	}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func without(names []string, drop ...string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(drop, n) {
			out = append(out, n)
		}
	}
	return out
}
