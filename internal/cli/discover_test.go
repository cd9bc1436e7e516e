package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/discover"
)

// mcpdrift discover on every client's realistic files: the inventory on
// stdout, in a file and as text holds no secret of them, nor does stderr;
// nothing was run.
func TestDiscoverCLI(t *testing.T) {
	home, _ := filepath.Abs("../../discover/testdata/home")
	project, _ := filepath.Abs("../../discover/testdata/project")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	noSecret := func(what, s string) {
		t.Helper()
		if strings.Contains(s, "s3cr3t") {
			t.Errorf("%s holds a secret:\n%s", what, s)
		}
	}
	code, out, stderr := run(t, "", "discover", "--include-home", "--format", "json", project)
	noSecret("stdout", out)
	noSecret("stderr", stderr)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	inv, err := discover.ReadInventory([]byte(out), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Servers) != 38 || len(inv.Errors) != 0 {
		t.Errorf("%d servers, %d errors", len(inv.Servers), len(inv.Errors))
	}
	code, text, stderr := run(t, "", "discover", "--include-home", "--format", "text", project)
	noSecret("text", text)
	if code != 0 || !strings.HasPrefix(text, "38 server(s), 0 error(s)\n") || !strings.Contains(text, `"./bin/write-marker.sh"`) {
		t.Errorf("text: exit %d %s %s", code, text, stderr)
	}
	file := filepath.Join(t.TempDir(), "inventory.json")
	code, out2, stderr := run(t, "", "discover", "--include-home", "--format", "json", project, "-o", file)
	b, err := os.ReadFile(file)
	if code != 0 || out2 != "" || err != nil || string(b) != out {
		t.Errorf("-o: exit %d, stdout %q, %v, %s", code, out2, err, stderr)
	}
	noSecret("the -o file", string(b))
	// Without --include-home only the project's files.
	code, out, _ = run(t, "", "discover", "--format", "json", project)
	if inv, err := discover.ReadInventory([]byte(out), "stdout"); code != 0 || err != nil || len(inv.Servers) != 11 {
		t.Errorf("project only: exit %d %v %d", code, err, len(inv.Servers))
	}
	if _, err := os.Stat(filepath.Join(project, "MARKER")); err == nil {
		t.Fatal("a configured command ran")
	}
}

// Bad files are errors in the inventory and one escaped line each on
// stderr; exit 0. Bad usage is exit 2.
func TestDiscoverCLIErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".mcp.json", []byte(`{"mcpServers":{"a":{"command":"x","env":{"K":"s3cr3t-1"}},"a":{}}}`))
	os.MkdirAll(filepath.Join(dir, ".codex"), 0o755)
	writeFile(t, filepath.Join(dir, ".codex"), "config.toml", []byte("[mcp_servers.x]\ncommand = 's3cr3t\n"))
	os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755)
	writeFile(t, filepath.Join(dir, ".cursor"), "mcp.json", []byte("{\"mcpServers\":{\"evil\\u001b[31m\\u202e\":{\"args\":[]},\"ok\":{\"url\":\"https://h/mcp\"}}}"))
	code, out, stderr := run(t, "", "discover", "--format", "json", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(out+stderr, "s3cr3t") {
		t.Errorf("a secret was written:\n%s\n%s", out, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 error lines:\n%s", stderr)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "mcpdrift: discover: "+dir) {
			t.Errorf("line %q does not name the file", l)
		}
		if strings.ContainsAny(l, "\x1b\u202e") {
			t.Errorf("raw control text on stderr: %q", l)
		}
	}
	if !strings.Contains(stderr, `server "evil\u001b[31m\u202e"`) {
		t.Errorf("the hostile name is not escaped: %s", stderr)
	}
	inv, err := discover.ReadInventory([]byte(out), "stdout")
	if err != nil || len(inv.Errors) != 3 || len(inv.Servers) != 1 {
		t.Errorf("%v %+v", err, inv)
	}
	code, text, _ := run(t, "", "discover", "--format", "text", dir)
	if code != 0 || strings.ContainsAny(text, "\x1b\u202e") || !strings.Contains(text, "error: ") {
		t.Errorf("text: %d %q", code, text)
	}
	// Text is the default.
	if code, dflt, _ := run(t, "", "discover", dir); code != 0 || dflt != text {
		t.Errorf("discover without --format: exit %d, not the text:\n%s", code, dflt)
	}
	for _, args := range [][]string{
		{"discover", "--format", "xml", dir},
		{"discover", filepath.Join(dir, "nope")},
		{"discover", filepath.Join(dir, ".mcp.json")},
		{"discover", "--max-file-bytes", "0", dir},
		{"discover", "--bogus"},
		{"discover", dir, "-o", dir},
	} {
		if code, out, stderr := run(t, "", args...); code != 2 || out != "" || stderr == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
}
