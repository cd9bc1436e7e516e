package discover

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// discoverDir discovers one project directory and checks what every
// output would hold: no secret in the JSON, the text, or the error lines.
func discoverDir(t *testing.T, opt Options) *Inventory {
	t.Helper()
	inv, err := Discover(opt)
	if err != nil {
		t.Fatal(err)
	}
	js, err := inv.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	noSecret(t, "the JSON inventory", js)
	noSecret(t, "the text inventory", inv.Text())
	for _, e := range inv.Errors {
		noSecret(t, "an error line", []byte(e.Line()))
	}
	if _, err := ReadInventory(js, "inv.json"); err != nil {
		t.Errorf("the inventory does not read back: %v", err)
	}
	return inv
}

func errorFor(inv *Inventory, file string) (FileError, bool) {
	for _, e := range inv.Errors {
		if e.File == file {
			return e, true
		}
	}
	return FileError{}, false
}

func serverNames(inv *Inventory) []string {
	var out []string
	for _, s := range inv.Servers {
		out = append(out, s.Client+"/"+s.Name)
	}
	return out
}

const good = `{"mcpServers":{"ok":{"command":"ok-server","env":{"K":"s3cr3t-good-env"}}}}`

// Each hostile file is an error naming the file and the reason; the
// good file beside it is still read, and no secret reaches any output.
func TestHostileFiles(t *testing.T) {
	deepJSON := `{"mcpServers":{"x":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`
	cases := []struct {
		name, rel, content, reason string
	}{
		{"duplicate key JSON", ".mcp.json", `{"mcpServers":{"a":{"command":"x"},"a":{"command":"s3cr3t-dup"}}}`, "duplicate"},
		{"duplicate key in an entry", ".mcp.json", `{"mcpServers":{"a":{"command":"x","env":{"K":"s3cr3t-1","K":"s3cr3t-2"}}}}`, "duplicate"},
		{"malformed JSON", ".mcp.json", `{"mcpServers":{"a":{"command":"s3cr3t-unterminated}}}`, "invalid JSON"},
		{"deep JSON", ".mcp.json", deepJSON, "deep"},
		{"top level not an object", ".mcp.json", `["s3cr3t-array"]`, "not an object"},
		{"mcpServers not an object", ".mcp.json", `{"mcpServers":["s3cr3t"]}`, "mcpServers is an array"},
		{"JSONC duplicate key", ".vscode/mcp.json", "{\n// c\n\"servers\":{\"a\":{\"command\":\"x\"},\"a\":{\"command\":\"y\",},},}", "duplicate"},
		{"JSONC unterminated comment", ".vscode/mcp.json", `{"servers":{} /* s3cr3t-comment`, "comment is not closed"},
		{"JSONC deep", ".zed/settings.json", `{"context_servers":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`, "deep"},
		{"invalid TOML", ".codex/config.toml", "[mcp_servers.a]\ncommand = \"x\"\nbearer_token = s3cr3t-unquoted\n", "invalid TOML: line 3"},
		{"TOML duplicate key", ".codex/config.toml", "[mcp_servers.a]\ncommand = \"x\"\ncommand = \"s3cr3t-twice\"\n", "already defined"},
		{"TOML duplicate table", ".codex/config.toml", "[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.a]\nargs = []\n", "already exists"},
		{"TOML deep", ".codex/config.toml", "a = " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000), "nested"},
		{"TOML deep under the limit of the parser", ".codex/config.toml", "a = " + strings.Repeat("{b=", 2000) + "1" + strings.Repeat("}", 2000), "deeper than 1000"},
		{"invalid YAML", ".continue/mcpServers/a.yaml", "mcpServers:\n  - name: a\n    command: [s3cr3t\n", "invalid YAML"},
		{"YAML duplicate key", ".continue/mcpServers/a.yaml", "mcpServers:\n  - name: a\n    command: x\n    command: s3cr3t-twice\n", "defined twice"},
		{"YAML anchor", ".continue/mcpServers/a.yaml", "base: &b {command: x}\nmcpServers:\n  - name: a\n    command: y\n", "anchor"},
		{"YAML alias", ".continue/mcpServers/a.yaml", "mcpServers:\n  - &a {name: a, command: x}\n  - *a\n", "anchor"},
		{"YAML merge key", ".continue/mcpServers/a.yaml", "mcpServers:\n  - name: a\n    <<: {command: x}\n", "merge key"},
		{"YAML two documents", ".continue/mcpServers/a.yaml", "mcpServers: []\n---\nmcpServers: []\n", "more than one"},
		{"YAML deep", ".continue/mcpServers/a.yaml", "a: " + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + "\n", "deeper than 1000"},
		{"YAML billion laughs", ".continue/mcpServers/a.yaml", "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n", "anchor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			bad := write(t, dir, c.rel, c.content)
			write(t, dir, ".cursor/mcp.json", good)
			start := time.Now()
			inv := discoverDir(t, Options{Dirs: []string{dir}})
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			e, ok := errorFor(inv, bad)
			if !ok {
				t.Fatalf("no error for %s: %+v %v", c.rel, inv.Errors, serverNames(inv))
			}
			t.Logf("%s: %s", c.rel, e.Line())
			if !strings.Contains(e.Reason, c.reason) {
				t.Errorf("reason %q does not say %q", e.Reason, c.reason)
			}
			if len(inv.Servers) != 1 || inv.Servers[0].Client != ClientCursor {
				t.Errorf("the good file beside it: %v", serverNames(inv))
			}
		})
	}
}

// One bad entry is an error naming the server; the entries beside it in
// the same file are listed.
func TestBadEntryKeepsTheRest(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, ".mcp.json", `{"mcpServers":{
		"both": {"command": "x", "url": "https://h/mcp"},
		"neither": {"env": {"A": "s3cr3t-a"}},
		"badargs": {"command": "x", "args": "s3cr3t-notalist"},
		"badtype": {"type": "websocket", "url": "wss://h/s3cr3t"},
		"wrongtype": {"type": "sse", "command": "x"},
		"badenv": {"command": "x", "env": {"A": 1}},
		"scalar": "s3cr3t-scalar",
		"fine": {"command": "fine-server"}}}`)
	inv := discoverDir(t, Options{Dirs: []string{dir}})
	if got := serverNames(inv); len(got) != 1 || got[0] != "claude-code/fine" {
		t.Errorf("servers %v", got)
	}
	want := map[string]string{"both": "exactly one", "neither": "exactly one", "badargs": "args must be", "badtype": "websocket", "wrongtype": "and a command", "badenv": "must be a string", "scalar": "not an object"}
	for _, e := range inv.Errors {
		if e.File != f {
			t.Errorf("error for %s", e.File)
		}
		if w, ok := want[e.Server]; !ok || !strings.Contains(e.Reason, w) {
			t.Errorf("server %q: %q (want %q)", e.Server, e.Reason, w)
		}
		delete(want, e.Server)
	}
	if len(want) != 0 {
		t.Errorf("no error for %v", want)
	}
}

// A file too large is refused unread, by its size; a sparse file of 33 MB
// is refused under the default bound.
func TestTooLarge(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, ".mcp.json", good)
	inv := discoverDir(t, Options{Dirs: []string{dir}, MaxFileSize: 10})
	if e, ok := errorFor(inv, f); !ok || !strings.Contains(e.Reason, "larger than the 10 bytes") {
		t.Errorf("%+v", inv.Errors)
	}
	big := filepath.Join(dir, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(big), 0o755)
	h, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Truncate(DefaultMaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	h.Close()
	inv = discoverDir(t, Options{Dirs: []string{dir}})
	if e, ok := errorFor(inv, big); !ok || !strings.Contains(e.Reason, "larger than") {
		t.Errorf("%+v", inv.Errors)
	}
	if len(inv.Servers) != 1 {
		t.Errorf("servers %v", serverNames(inv))
	}
}

// A configuration that is a symlink out of its tree (or under a
// symlinked directory that is) is refused; one inside the tree is read.
func TestSymlinkOutOfTree(t *testing.T) {
	outside := t.TempDir()
	secret := write(t, outside, "secret.json", `{"mcpServers":{"stolen":{"command":"x","env":{"K":"s3cr3t-outside"}}}}`)
	write(t, outside, "cursor/mcp.json", good)
	dir := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(dir, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "cursor"), filepath.Join(dir, ".cursor")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, ".vscode"), 0o755)
	if err := os.Symlink("../../../../../../../../.."+secret, filepath.Join(dir, ".vscode", "mcp.json")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, ".gemini"), 0o755)
	if err := os.Symlink(filepath.Join(outside, "nothing.json"), filepath.Join(dir, ".gemini", "settings.json")); err != nil {
		t.Fatal(err)
	}
	// Inside the tree: read.
	write(t, dir, "real/zed.json", `{"context_servers":{"inside":{"command":"x"}}}`)
	os.MkdirAll(filepath.Join(dir, ".zed"), 0o755)
	if err := os.Symlink("../real/zed.json", filepath.Join(dir, ".zed", "settings.json")); err != nil {
		t.Fatal(err)
	}
	inv := discoverDir(t, Options{Dirs: []string{dir}})
	if got := serverNames(inv); len(got) != 1 || got[0] != "zed/inside" {
		t.Errorf("servers %v", got)
	}
	for _, rel := range []string{".mcp.json", ".cursor/mcp.json", ".vscode/mcp.json", ".gemini/settings.json"} {
		e, ok := errorFor(inv, filepath.Join(dir, rel))
		if !ok || !strings.Contains(e.Reason, "out of") && !strings.Contains(e.Reason, "leads out") {
			t.Errorf("%s: %+v (all: %+v)", rel, e, inv.Errors)
		}
	}
}

// Something that is not a regular file where a configuration is
// expected is an error, and a FIFO does not block discovery.
func TestNotAFile(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".mcp.json"), 0o755)
	write(t, dir, ".continue/mcpServers", "a file where a directory belongs")
	os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755)
	fifo := filepath.Join(dir, ".cursor", "mcp.json")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no FIFO:", err)
	}
	write(t, dir, ".gemini/settings.json", `{"mcpServers":{"g":{"httpUrl":"https://h/mcp"}}}`)
	done := make(chan *Inventory)
	go func() { done <- discoverDir(t, Options{Dirs: []string{dir}}) }()
	var inv *Inventory
	select {
	case inv = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("discovery blocked on a FIFO")
	}
	for rel, want := range map[string]string{".mcp.json": "is a directory", ".continue/mcpServers": "not a directory", ".cursor/mcp.json": "not a regular file"} {
		if e, ok := errorFor(inv, filepath.Join(dir, rel)); !ok || !strings.Contains(e.Reason, want) {
			t.Errorf("%s: %+v", rel, inv.Errors)
		}
	}
	if got := serverNames(inv); len(got) != 1 || got[0] != "gemini-cli/g" {
		t.Errorf("servers %v", got)
	}
}

// The user paths of macOS and Windows, and the environment's overrides.
func TestPlatformPaths(t *testing.T) {
	entry := func(name string) string { return `{"mcpServers":{"` + name + `":{"command":"x"}}}` }
	home := t.TempDir()
	write(t, home, "Library/Application Support/Claude/claude_desktop_config.json", entry("mac-desktop"))
	write(t, home, "Library/Application Support/Code/User/mcp.json", `{"servers":{"mac-vscode":{"command":"x"}}}`)
	write(t, home, ".config/zed/settings.json", `{"context_servers":{"mac-zed":{"command":"x"}}}`)
	inv := discoverDir(t, Options{Home: home, Platform: MacOS})
	if got := strings.Join(serverNames(inv), " "); got != "zed/mac-zed claude-desktop/mac-desktop vscode/mac-vscode" {
		t.Errorf("macOS: %s", got)
	}
	appData := t.TempDir()
	write(t, appData, "Claude/claude_desktop_config.json", entry("win-desktop"))
	write(t, appData, "Code/User/settings.json", `{"mcp":{"servers":{"win-vscode":{"command":"x"}}}}`)
	write(t, appData, "Zed/settings.json", `{"context_servers":{"win-zed":{"command":"x"}}}`)
	codex := t.TempDir()
	write(t, codex, "config.toml", "[mcp_servers.win-codex]\ncommand = 'x'\n")
	env := map[string]string{"APPDATA": appData, "CODEX_HOME": codex}
	inv = discoverDir(t, Options{Home: t.TempDir(), Platform: Windows, Getenv: func(k string) string { return env[k] }})
	if got := strings.Join(serverNames(inv), " "); !strings.Contains(got, "claude-desktop/win-desktop") || !strings.Contains(got, "vscode/win-vscode") || !strings.Contains(got, "zed/win-zed") || !strings.Contains(got, "codex/win-codex") {
		t.Errorf("Windows: %s", got)
	}
	winHome := t.TempDir()
	write(t, winHome, "AppData/Roaming/Claude/claude_desktop_config.json", entry("default-appdata"))
	inv = discoverDir(t, Options{Home: winHome, Platform: Windows})
	if got := serverNames(inv); len(got) != 1 || got[0] != "claude-desktop/default-appdata" {
		t.Errorf("Windows without APPDATA: %v", got)
	}
	xdg := t.TempDir()
	write(t, xdg, "Claude/claude_desktop_config.json", entry("xdg-desktop"))
	inv = discoverDir(t, Options{Home: t.TempDir(), Platform: Linux, Getenv: func(k string) string {
		return map[string]string{"XDG_CONFIG_HOME": xdg}[k]
	}})
	if got := serverNames(inv); len(got) != 1 || got[0] != "claude-desktop/xdg-desktop" {
		t.Errorf("XDG_CONFIG_HOME: %v", got)
	}
}

// A directory given twice, or a project that is the home directory, lists
// each file once; the order does not depend on the order of Dirs.
func TestDedupAndOrder(t *testing.T) {
	home := t.TempDir()
	write(t, home, ".cursor/mcp.json", `{"mcpServers":{"b":{"command":"x"},"a":{"command":"y"}}}`)
	p1, p2 := t.TempDir(), t.TempDir()
	write(t, p1, ".mcp.json", `{"mcpServers":{"p1":{"command":"x"}}}`)
	write(t, p2, ".mcp.json", `{"mcpServers":{"p2":{"command":"x"}}}`)
	a := discoverDir(t, Options{Home: home, Dirs: []string{p1, home, p2, p1}})
	b := discoverDir(t, Options{Home: home, Dirs: []string{p2, p1, home}})
	ja, _ := a.Marshal()
	jb, _ := b.Marshal()
	if !bytes.Equal(ja, jb) {
		t.Errorf("order depends on Dirs:\n%s\n%s", ja, jb)
	}
	if len(a.Servers) != 4 {
		t.Errorf("servers %v", serverNames(a))
	}
	for _, s := range a.Servers {
		if s.Client == ClientCursor && s.Scope != ScopeUser {
			t.Errorf("home's cursor file listed as %s", s.Scope)
		}
	}
	if _, err := Discover(Options{Dirs: []string{filepath.Join(home, ".cursor", "mcp.json")}}); err == nil {
		t.Error("a file as a project directory was accepted")
	}
	if _, err := Discover(Options{Dirs: []string{filepath.Join(home, "nope")}}); err == nil {
		t.Error("a missing project directory was accepted")
	}
}

// LoadEntry gives back what the inventory left out.
func TestLoadEntry(t *testing.T) {
	opt := testdataOptions(t)
	inv, err := Discover(opt)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, s := range inv.Servers {
		e, err := LoadEntry(s, opt)
		if err != nil {
			t.Errorf("%s %s: %v", s.Client, s.Name, err)
			continue
		}
		if e.Name != s.Name || e.Transport != s.Transport || (e.URL == "") != (s.URL == "") || e.Command != s.Command && !s.Redacted {
			t.Errorf("%s %s: %+v vs %+v", s.Client, s.Name, e, s)
		}
		if s.Client == ClientClaudeCode && s.Name == "sentry" {
			n++
			if e.Headers["Authorization"] != "Bearer s3cr3t-claude-user-header" {
				t.Errorf("sentry headers %v", e.Headers)
			}
		}
		if s.Client == ClientCodex && s.Name == "figma" {
			n++
			if e.HeadersFromEnv["Authorization"] != "FIGMA_OAUTH_TOKEN" || e.Headers["X-Secret"] != "s3cr3t-codex-header" {
				t.Errorf("figma %+v", e)
			}
		}
		if s.Client == ClientClaudeCode && s.Name == "stripe" {
			n++
			if e.Args[3] != "--api-key=sk_test_s3cr3t-claude-project-stripe" {
				t.Errorf("stripe args %v", e.Args)
			}
		}
	}
	if n != 3 {
		t.Errorf("checked %d", n)
	}
	if _, err := LoadEntry(Server{Client: ClientCursor, File: filepath.Join(opt.Dirs[0], ".cursor", "mcp.json"), Name: "gone"}, opt); err == nil {
		t.Error("a missing server was loaded")
	}
}

// A file the process may not read (where permissions hold: not as root).
func TestUnreadable(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, ".mcp.json", good)
	if err := os.Chmod(f, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(f, 0o644)
	if _, err := os.ReadFile(f); err == nil {
		t.Skip("this process reads a file of mode 000 (root): TestNotAFile covers read errors")
	}
	inv := discoverDir(t, Options{Dirs: []string{dir}})
	if e, ok := errorFor(inv, f); !ok || !strings.Contains(e.Reason, "permission denied") {
		t.Errorf("%+v", inv.Errors)
	}
}
