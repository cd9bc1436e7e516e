package peers

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/cli"
	"github.com/mcpdrift/mcpdrift/internal/pgtest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/store"
)

// switchHandler serves one of two handlers at the same URL: a server
// upgraded in place between two scans.
type switchHandler struct {
	changed  atomic.Bool
	v1, next http.Handler
}

func (h *switchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.changed.Load() {
		h.next.ServeHTTP(w, r)
		return
	}
	h.v1.ServeHTTP(w, r)
}

// cliRun is one in-process mcpdrift command.
func cliRun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// peerFleet is the same real servers as a lock names them and as a
// client's configuration (an inventory) lists them.
type peerFleet struct {
	lock, inventory string
	// tools is how many tools each server (by its lock name) lists.
	tools map[string]int
	// upgrade switches the Go peers over HTTP to their changed variant
	// (or back).
	upgrade func(bool)
}

// newPeerFleet starts the go-sdk and mcp-go peers over Streamable HTTP
// (stateless, each switchable to its changed variant at the same URL), the
// go-sdk peer over stdio (this binary as the child), and server-everything
// from npm over Streamable HTTP and stdio when it can be had.
func newPeerFleet(t *testing.T) *peerFleet {
	t.Helper()
	gosdk := &switchHandler{}
	v1, changed := newGoSDKServer(""), newGoSDKServer(variantChanged)
	gosdk.v1 = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return v1 }, &mcp.StreamableHTTPOptions{Stateless: true})
	gosdk.next = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return changed }, &mcp.StreamableHTTPOptions{Stateless: true})
	mcpgo := &switchHandler{
		v1:   server.NewStreamableHTTPServer(newMCPGoServer(""), server.WithStateLess(true)),
		next: server.NewStreamableHTTPServer(newMCPGoServer(variantChanged), server.WithStateLess(true)),
	}
	exe := testExecutable(t)
	t.Setenv(envChild, "gosdk")
	type entry struct {
		lockArgs []string
		config   map[string]any
		observe  mcpclient.Config
	}
	entries := map[string]entry{}
	for name, h := range map[string]http.Handler{"gosdk": gosdk, "mcpgo": mcpgo} {
		u := serveHTTP(t, h)
		entries[name] = entry{[]string{"--url", u}, map[string]any{"type": "http", "url": u}, mcpclient.Config{BaseURL: u}}
	}
	entries["gosdk-stdio"] = entry{[]string{"--pass-env", envChild, "--stdio", "--", exe},
		map[string]any{"command": exe, "env": map[string]string{envChild: "gosdk"}}, mcpclient.Config{Command: []string{exe}, PassEnv: []string{envChild}}}
	everything.once.Do(installEverything)
	if everything.skip == "" {
		u := startEverythingHTTP(t, everything.node, everything.entry)
		entries["everything"] = entry{[]string{"--url", u}, map[string]any{"type": "http", "url": u}, mcpclient.Config{BaseURL: u}}
		argv := []string{everything.node, everything.entry, "stdio"}
		entries["everything-stdio"] = entry{append([]string{"--stdio", "--"}, argv...),
			map[string]any{"command": argv[0], "args": argv[1:]}, mcpclient.Config{Command: argv}}
	} else if os.Getenv(envRequireNPM) == "1" {
		t.Fatalf("server-everything unavailable: %s", everything.skip)
	} else {
		t.Logf("server-everything unavailable (%s): the Go peers only", everything.skip)
	}
	f := &peerFleet{lock: filepath.Join(t.TempDir(), "mcpdrift.lock"), tools: map[string]int{},
		upgrade: func(on bool) { gosdk.changed.Store(on); mcpgo.changed.Store(on) }}
	servers := map[string]any{}
	for name, e := range entries {
		args := append([]string{"lock", "add", name, "--lock", f.lock, "--by", "alice@example.com", "--timeout", "60s"}, e.lockArgs...)
		if code, _, stderr := cliRun(args...); code != 0 {
			t.Fatalf("lock add %s: exit %d: %s", name, code, stderr)
		}
		servers[name] = e.config
		_, tl := observe(t, name, e.observe)
		f.tools[name] = len(tl.Tools)
	}
	dir := t.TempDir()
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := cliRun("discover", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("discover: exit %d: %s", code, stderr)
	}
	f.inventory = filepath.Join(t.TempDir(), "inventory.json")
	if err := os.WriteFile(f.inventory, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// scanInto runs one scan and fails when it could not record.
func scanInto(t *testing.T, args ...string) {
	t.Helper()
	code, out, stderr := cliRun(append([]string{"scan", "--timeout", "60s", "--format", "json"}, args...)...)
	if code == 2 || strings.Contains(out, "could not be recorded") || strings.Contains(out, `"status": "not_observed"`) {
		t.Fatalf("scan %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, stderr)
	}
}

// peerHistory is `mcpdrift history --format json` as "SERVER TOOL DIGEST
// scans FIRST-LAST", a server named as the lock names it (an inventory's
// client:scope:NAME is NAME), the times left out.
func peerHistory(t *testing.T, db string) []string {
	t.Helper()
	code, out, stderr := cliRun("history", "--store", db, "--format", "json")
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, stderr)
	}
	var doc struct {
		Versions []struct {
			Server, Tool string
			Digest       string `json:"tool_digest"`
			FirstScan    int64  `json:"first_scan"`
			LastScan     int64  `json:"last_scan"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var vs []string
	for _, v := range doc.Versions {
		name := v.Server[strings.LastIndex(v.Server, ":")+1:]
		name, _, _ = strings.Cut(name, "@")
		vs = append(vs, fmt.Sprintf("%s %s %s scans %d-%d", name, v.Tool, v.Digest, v.FirstScan, v.LastScan))
	}
	slices.Sort(vs)
	return vs
}

// peerRows counts what a store's tool tables hold for the servers of the
// lock: observation_tools rows per scan and server, tool_versions rows.
func peerRows(t *testing.T, db string) (perScan map[string]int, versions int) {
	t.Helper()
	loc, err := store.ParseURL(db)
	if err != nil {
		t.Fatal(err)
	}
	driver, dsn := "sqlite", "file:"+loc.Path
	if loc.Kind == store.KindPostgres {
		driver, dsn = "pgx", loc.URL
	}
	sdb, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	rows, err := sdb.Query(`SELECT scan_id, server, COUNT(*) FROM observation_tools GROUP BY scan_id, server`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	perScan = map[string]int{}
	for rows.Next() {
		var scan int64
		var server []byte
		var n int
		if err := rows.Scan(&scan, &server, &n); err != nil {
			t.Fatal(err)
		}
		name := string(server)
		name = name[strings.LastIndex(name, ":")+1:]
		name, _, _ = strings.Cut(name, "@")
		perScan[fmt.Sprintf("%d %s", scan, name)] = n
	}
	if err := sdb.QueryRow(`SELECT COUNT(*) FROM tool_versions`).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	return perScan, versions
}

// TestScanRecordsPeerTools: real servers (the official go-sdk and mcp-go
// over Streamable HTTP and stdio, server-everything from npm over both)
// scanned three times (the list, the list again, the Go peers upgraded in
// place) through their lock, through an inventory of them, and on
// PostgreSQL by a worker sweeping the lock, each into a store of its own,
// on SQLite and PostgreSQL. Every scan records every tool each server
// lists (observation_tools), and history answers "when did this tool
// change?" the same from each store: the same digests first and last seen
// in the same scans.
func TestScanRecordsPeerTools(t *testing.T) {
	start := time.Now()
	defer func() { recordTiming("scan records peer tools: whole test", time.Since(start)) }()
	f := newPeerFleet(t)
	pg, pgErr := pgtest.Start(context.Background())
	if pgErr == nil {
		t.Cleanup(pg.Stop)
	}
	for _, backend := range []string{store.KindSQLite, store.KindPostgres} {
		t.Run(backend, func(t *testing.T) {
			newStore := func() string { return "sqlite:" + filepath.Join(t.TempDir(), "h.db") }
			if backend == store.KindPostgres {
				if pgErr != nil {
					if pgtest.Required() {
						t.Fatalf("no PostgreSQL: %v", pgErr)
					}
					t.Skipf("no PostgreSQL (%v)", pgErr)
				}
				newStore = func() string {
					u, err := pg.NewSchema(context.Background(), "peers")
					if err != nil {
						t.Fatal(err)
					}
					return u
				}
			}
			kinds := map[string]string{"lock": newStore(), "inventory": newStore()}
			if backend == store.KindPostgres {
				kinds["worker-lock"] = newStore()
			}
			for round := 1; round <= 3; round++ {
				f.upgrade(round == 3)
				scanInto(t, "--lock", f.lock, "--store", kinds["lock"])
				scanInto(t, "--inventory", f.inventory, "--allow-config-commands", "--store", kinds["inventory"])
				if db := kinds["worker-lock"]; db != "" {
					scanInto(t, "--worker", "--once", "--round", fmt.Sprint(round), "--lock", f.lock, "--store", db)
				}
			}
			want := map[string]int{}
			for name, n := range f.tools {
				for round := 1; round <= 3; round++ {
					want[fmt.Sprintf("%d %s", round, name)] = n
				}
			}
			for kind, db := range kinds {
				perScan, versions := peerRows(t, db)
				if !maps.Equal(perScan, want) {
					t.Errorf("%s: observation_tools per scan and server %v, want %v", kind, perScan, want)
				}
				if versions == 0 {
					t.Errorf("%s: no tool_versions", kind)
				}
			}
			lockHist := peerHistory(t, kinds["lock"])
			for kind, db := range kinds {
				if h := peerHistory(t, db); !slices.Equal(h, lockHist) {
					t.Errorf("history of the %s scans differs from the lock scans':\n%s:\n  %s\nlock:\n  %s", kind, kind, strings.Join(h, "\n  "), strings.Join(lockHist, "\n  "))
				}
			}
			for _, tool := range []string{"gosdk " + goSDKChangedTool, "mcpgo " + mcpGoChangedTool} {
				var vs []string
				for _, v := range lockHist {
					if strings.HasPrefix(v, tool+" ") {
						vs = append(vs, v)
					}
				}
				if len(vs) != 2 || !strings.HasSuffix(vs[0], "scans 1-2") && !strings.HasSuffix(vs[1], "scans 1-2") {
					t.Errorf("when did %s change? %v", tool, vs)
				}
			}
		})
	}
}
