package layering

import (
	"os/exec"
	"strings"
	"testing"
)

// commandLine are the packages only the command line may depend on.
var commandLine = []string{
	"github.com/spf13/cobra",
	"github.com/spf13/pflag",
	"github.com/mcpdrift/mcpdrift/internal/cli",
}

// TestLibraryWithoutCommandLine: every importable package of the module
// (not internal/, cmd/, scripts/ or tools/) is built without cobra, pflag
// or internal/cli, so that a program can embed every workflow.
func TestLibraryWithoutCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("go list of the whole module")
	}
	pkgs, err := exec.Command("go", "list", "github.com/mcpdrift/mcpdrift/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/mcpdrift/mcpdrift/"
	checked := 0
	for _, p := range strings.Fields(string(pkgs)) {
		rel := strings.TrimPrefix(p, mod)
		if strings.HasPrefix(rel, "internal/") || strings.HasPrefix(rel, "cmd/") || strings.HasPrefix(rel, "scripts/") || strings.HasPrefix(rel, "tools/") {
			continue
		}
		deps, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", p).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		for _, d := range strings.Fields(string(deps)) {
			for _, bad := range commandLine {
				if d == bad {
					t.Errorf("%s depends on %s: a library package must not", rel, bad)
				}
			}
		}
		checked++
	}
	if checked < 20 {
		t.Errorf("only %d library packages checked", checked)
	}
}
