package peers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The official conformance suite's client scenarios, with mcpdrift as the
// client: `conformance client --command scripts/conformance-client`, the
// script driving the mcpdrift binary (pin, then drift --invoke-tool
// --execute). docs/conformance-client.md is the one list of the scenarios
// that are not applicable, with the reason; the test reads it.

// clientRun is one client scenario at one revision ("" for an extension,
// which the suite runs at its own).
type clientRun struct{ scenario, version string }

func (r clientRun) String() string {
	if r.version == "" {
		return r.scenario
	}
	return r.scenario + "@" + r.version
}

var listedScenario = regexp.MustCompile(`^  - (\S+) \[([^\]]*)\]$`)

// clientScenarios lists the suite's client scenarios, auth/ included,
// each at every revision the suite gives it.
func clientScenarios(t *testing.T, node, suite string) []clientRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, suite, "list").Output()
	if err != nil {
		t.Fatalf("conformance list: %v", err)
	}
	var runs []clientRun
	in := false
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Client scenarios"):
			in = true
			continue
		case line != "" && !strings.HasPrefix(line, " "):
			in = false
		}
		m := listedScenario.FindStringSubmatch(line)
		if !in || m == nil {
			continue
		}
		for _, v := range strings.Split(m[2], ",") {
			if v == "extension" {
				v = ""
			}
			runs = append(runs, clientRun{m[1], v})
		}
	}
	if len(runs) == 0 {
		t.Fatalf("conformance list named no client scenario:\n%s", out)
	}
	return runs
}

var notApplicableRow = regexp.MustCompile("^\\| `([^`]+)` \\| not applicable \\| (.+) \\|$")

// notApplicable reads docs/conformance-client.md's table: scenario → why.
func notApplicable(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "conformance-client.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := notApplicableRow.FindStringSubmatch(line); m != nil {
			out[m[1]] = m[2]
		}
	}
	if len(out) == 0 {
		t.Fatal("docs/conformance-client.md lists no scenario as not applicable: the table moved?")
	}
	return out
}

// clientOutcome is what one run of a client scenario gave.
type clientOutcome struct {
	checks []conformanceCheck
	stderr string // the client's, as the suite saved it
	err    error
}

// passed: no check failed or warned, and one succeeded (a scenario whose
// checks are all skipped, or that has none, passes nothing).
func (o clientOutcome) passed() bool {
	ok := false
	for _, c := range o.checks {
		switch c.Status {
		case "FAILURE", "WARNING":
			return false
		case "SUCCESS":
			ok = true
		}
	}
	return ok
}

// runClientScenario runs one scenario with scripts/conformance-client as
// the client command.
func runClientScenario(node, suite, script, bin, dir string, r clientRun) clientOutcome {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{suite, "client", "--command", "'" + script + "'", "--scenario", r.scenario, "-o", dir, "--timeout", "30000"}
	if r.version != "" {
		args = append(args, "--spec-version", r.version)
	}
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = []string{"PATH=" + filepath.Dir(node) + ":" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "NO_COLOR=1", "MCPDRIFT=" + bin}
	cmd.WaitDelay = 5 * time.Second
	out := &tailBuffer{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) { // exit 1: a check failed, judged below
		return clientOutcome{err: fmt.Errorf("%v\n%s", err, out.String())}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	nested, _ := filepath.Glob(filepath.Join(dir, "*", "*", "checks.json")) // auth/NAME-TIME/
	files = append(files, nested...)
	if len(files) != 1 {
		return clientOutcome{err: fmt.Errorf("%d checks.json written:\n%s", len(files), out.String())}
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		return clientOutcome{err: err}
	}
	var o clientOutcome
	if err := json.Unmarshal(b, &o.checks); err != nil {
		return clientOutcome{err: fmt.Errorf("%s: %v", files[0], err)}
	}
	se, _ := os.ReadFile(filepath.Join(filepath.Dir(files[0]), "stderr.txt"))
	o.stderr = string(se)
	return o
}

// TestClientConformance: every client scenario of the official suite,
// the auth/ ones included (mcpdrift authorizing itself with OAuth), at
// every revision it lists, passes with mcpdrift as the
// client, or is listed in docs/conformance-client.md as not applicable
// (and then says why on stderr, where the suite records it, and does not
// pass: an entry that passes is stale).
func TestClientConformance(t *testing.T) {
	node := node22(t)
	suite := npmPeer(t, peerConformance)
	bin := mcpdriftBinary(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "conformance-client"))
	if err != nil {
		t.Fatal(err)
	}
	na := notApplicable(t)
	runs := clientScenarios(t, node, suite)
	start := time.Now()
	outcomes := make([]clientOutcome, len(runs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, r := range runs {
		dir := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			outcomes[i] = runClientScenario(node, suite, script, bin, dir, r)
		}()
	}
	wg.Wait()
	took := time.Since(start)
	recordTiming("conformance client: every scenario", took)
	passed, skipped := 0, 0
	seen := map[string]bool{}
	for i, r := range runs {
		o := outcomes[i]
		seen[r.scenario] = true
		why, listed := na[r.scenario]
		switch {
		case o.err != nil:
			t.Errorf("%s: the suite did not run: %v", r, o.err)
		case listed && o.passed():
			t.Errorf("%s passes, but docs/conformance-client.md lists it as not applicable: remove the row", r)
		case listed:
			skipped++
			if !strings.Contains(o.stderr, "not applicable to mcpdrift") {
				t.Errorf("%s: the client did not say why it is not applicable; its stderr: %s", r, clip(o.stderr, 400))
			}
			t.Logf("%s: not applicable: %s", r, clip(why, 120))
		case o.passed():
			passed++
		default:
			t.Errorf("%s: does not pass, and docs/conformance-client.md does not list it as not applicable", r)
			for _, c := range o.checks {
				if c.Status != "SUCCESS" && c.Status != "INFO" {
					t.Logf("  %s %s: %s %s", c.ID, c.Status, c.ErrorMessage, clip(string(c.Details), 300))
				}
			}
			t.Logf("  client stderr: %s", clip(o.stderr, 1000))
		}
	}
	for s := range na {
		if !seen[s] {
			t.Errorf("docs/conformance-client.md lists %s, which the suite no longer has: remove the row", s)
		}
	}
	names := make([]string, 0, len(runs))
	for _, r := range runs {
		names = append(names, r.String())
	}
	slices.Sort(names)
	t.Logf("%d client runs in %.1fs: %d pass, %d not applicable: %s", len(runs), took.Seconds(), passed, skipped, strings.Join(names, " "))
}
