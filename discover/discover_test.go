package discover

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden inventory")

// secretMark is in every secret value of testdata: no output may hold it.
const secretMark = "s3cr3t"

func testdataOptions(t *testing.T) Options {
	t.Helper()
	home, err := filepath.Abs("testdata/home")
	if err != nil {
		t.Fatal(err)
	}
	project, _ := filepath.Abs("testdata/project")
	return Options{Home: home, Dirs: []string{project}, Platform: Linux}
}

// placeholders replaces the machine's paths of testdata with $HOME and
// $PROJECT.
func placeholders(b []byte, opt Options) []byte {
	b = bytes.ReplaceAll(b, []byte(opt.Dirs[0]), []byte("$PROJECT"))
	return bytes.ReplaceAll(b, []byte(opt.Home), []byte("$HOME"))
}

func noSecret(t *testing.T, what string, b []byte) {
	t.Helper()
	if i := bytes.Index(b, []byte(secretMark)); i >= 0 {
		lo := max(0, i-80)
		t.Errorf("%s holds a secret: ...%s...", what, b[lo:min(len(b), i+40)])
	}
}

// Every client's realistic configuration, user and project scope: the
// inventory is the golden one, holds no value, and ran nothing.
func TestDiscoverTestdata(t *testing.T) {
	opt := testdataOptions(t)
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
	got := placeholders(js, opt)
	golden := filepath.Join("testdata", "inventory.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("inventory differs from %s (go test -update):\n%s", golden, got)
	}
	if _, err := ReadInventory(js, "inv.json"); err != nil {
		t.Errorf("the inventory does not read back: %v", err)
	}
	if _, err := os.Stat(filepath.Join(opt.Dirs[0], "MARKER")); err == nil {
		t.Fatal("discovery ran a configured command (MARKER exists)")
	}
	clients := map[string]bool{}
	for _, s := range inv.Servers {
		clients[s.Client] = true
	}
	for _, c := range []string{ClientClaudeDesktop, ClientClaudeCode, ClientCursor, ClientVSCode, ClientWindsurf, ClientZed, ClientGemini, ClientCodex, ClientContinue} {
		if !clients[c] {
			t.Errorf("no server of %s", c)
		}
	}
	if len(inv.Errors) != 0 {
		t.Errorf("errors: %+v", inv.Errors)
	}
	if again, _ := Discover(opt); !equalJSON(t, again, js) {
		t.Error("a second discovery differs")
	}
	_ = strings.Contains
}

func equalJSON(t *testing.T, inv *Inventory, want []byte) bool {
	t.Helper()
	b, err := inv.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(b, want)
}

func readTestdata(rel string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", rel))
}
