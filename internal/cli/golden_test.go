package cli

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -run Golden -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\n--- got\n%s", name, got)
	}
}

// The bundled example through observe, pin and gate: every artifact and the
// JSON report are pinned byte for byte.
func TestGoldenExamplePipeline(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join("..", "..", "examples", "acme-github.v1.tools-list.json")
	v2 := filepath.Join("..", "..", "examples", "acme-github.v2-rugpull.tools-list.json")
	steps := []struct {
		golden string
		args   []string
		code   int
	}{
		{"observe-v1.json", []string{"observe", "--input", v1, "--server-id", "acme-github", "-q"}, 0},
		{"observe-v2.json", []string{"observe", "--input", v2, "--server-id", "acme-github", "-q"}, 0},
	}
	for _, s := range steps {
		code, out, stderr := run(t, "", s.args...)
		if code != s.code {
			t.Fatalf("%v: exit %d %s", s.args, code, stderr)
		}
		golden(t, s.golden, out)
		writeFile(t, dir, s.golden, []byte(out))
	}
	code, out, stderr := run(t, "", "pin", "--observed", filepath.Join(dir, "observe-v1.json"))
	if code != 0 {
		t.Fatal(stderr)
	}
	golden(t, "declared-v1.json", out)
	decl := writeFile(t, dir, "declared.json", []byte(out))
	for _, format := range []string{"json", "text", "markdown"} {
		code, out, _ = run(t, "", "gate", "--observed", filepath.Join(dir, "observe-v2.json"), "--declared", decl, "--format", format, "--color", "never")
		if code != 1 {
			t.Errorf("%s: exit %d", format, code)
		}
		golden(t, "gate-v2."+format, out)
	}
}
