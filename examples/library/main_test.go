package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExampleRuns builds the example as a program and runs it: it pins
// the bundled mock server, changes one tool, and prints the drift found
// (exit 0).
func TestExampleRuns(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "library")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin).CombinedOutput()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, out)
	}
	for _, want := range []string{"pinned 5 tools of http://127.0.0.1:", "changed the description of search_issues", `finding: WARN MCP-DRIFT-DESCRIPTION "search_issues"`, "drift exit code 1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

// TestExampleWithoutCommandLine: the example is built from the library
// alone, neither internal/cli nor cobra (nor pflag) among its
// dependencies.
func TestExampleWithoutCommandLine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("only %d dependencies listed", len(deps))
	}
	for _, d := range deps {
		switch {
		case d == "github.com/mcpdrift/mcpdrift/internal/cli", strings.HasPrefix(d, "github.com/spf13/cobra"), strings.HasPrefix(d, "github.com/spf13/pflag"):
			t.Errorf("the example depends on %s", d)
		}
	}
	for _, want := range []string{"github.com/mcpdrift/mcpdrift/pin", "github.com/mcpdrift/mcpdrift/drift", "github.com/mcpdrift/mcpdrift/mockserver"} {
		found := false
		for _, d := range deps {
			found = found || d == want
		}
		if !found {
			t.Errorf("the example does not use %s", want)
		}
	}
}
