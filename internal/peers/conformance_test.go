package peers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The official conformance suite (@modelcontextprotocol/conformance, its
// server scenarios: `conformance server --url URL --requirements REV`)
// run against the go-sdk's conformance server (the fixture the suite's
// own SDK runner builds for go-sdk: conformance/everything-server of the
// module in go.mod) directly and through `mcpdrift proxy --mode audit
// --listen`, which must not change a single check's result, but for the
// differences named in conformanceKnownDiffs.

// conformanceKnownDiffs are the checks whose result the gateway changes,
// each for a reason of its own. server-sse-polling (pending, not scored)
// calls test_reconnection, whose server closes the POST stream before the
// result (SEP-1699 polling) and, with no event store, never sends it:
// direct, the client sees the stream end; through the gateway, the call
// is answered with the gateway's -32603 ("the response stream ended
// without the response"), as JSON, so the scenario's stream checks do not
// apply. The gateway resumes an upstream stream that has an event id
// (Last-Event-ID, the upstream's retry: TestGoSDKStreamResumption, with
// the go-sdk's event store), but this server's stream carries none.
var conformanceKnownDiffs = map[string]string{
	"server-sse-polling": "the upstream closes the POST stream without the result; the gateway answers the call with -32603 instead of ending its stream",
}

var conformanceServer struct {
	once sync.Once
	path string
	err  error
}

// conformanceServerBinary builds the go-sdk conformance server once.
func conformanceServerBinary(t *testing.T) string {
	t.Helper()
	mcpdriftBinary(t) // makes built.dir
	conformanceServer.once.Do(func() {
		conformanceServer.path = filepath.Join(built.dir, "everything-server")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		start := time.Now()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", conformanceServer.path, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
		if out, err := cmd.CombinedOutput(); err != nil {
			conformanceServer.err = fmt.Errorf("go build go-sdk conformance/everything-server: %v\n%s", err, out)
		}
		recordTiming("go build go-sdk conformance/everything-server", time.Since(start))
	})
	if conformanceServer.err != nil {
		t.Fatal(conformanceServer.err)
	}
	return conformanceServer.path
}

// startProcess starts argv, its output kept (the last 16 KiB) and its
// stderr lines also sent on the channel returned (while someone reads),
// and ends it when the test ends.
func startProcess(t *testing.T, argv []string) (*tailBuffer, <-chan string, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	out := &tailBuffer{max: 16 << 10}
	cmd.Stdout = out
	cmd.WaitDelay = 5 * time.Second
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	done := make(chan struct{})
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			out.Write(append(sc.Bytes(), '\n'))
			select {
			case lines <- sc.Text():
			default:
			}
		}
		pr.Close()
		close(lines)
	}()
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return out, lines, done
}

// startConformanceServer serves the go-sdk conformance server over
// Streamable HTTP on a free loopback port (stateless: 2026-07-28; else the
// legacy, stateful handler) and returns its /mcp URL.
func startConformanceServer(t *testing.T, bin string, stateless bool) string {
	t.Helper()
	for attempt := 1; attempt <= 3; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		out, _, done := startProcess(t, []string{bin, "-http=" + addr, "-stateless=" + strconv.FormatBool(stateless)})
		deadline := time.Now().Add(startupTimeout)
		for exited := false; !exited; {
			select {
			case <-done:
				exited = true
				continue
			case <-time.After(50 * time.Millisecond):
			}
			if c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond); err == nil {
				c.Close()
				return "http://" + addr + "/mcp"
			}
			if time.Now().After(deadline) {
				t.Fatalf("the conformance server is not listening on %s: %s", addr, out.String())
			}
		}
		if !strings.Contains(out.String(), "address already in use") {
			t.Fatalf("the conformance server exited: %s", out.String())
		}
	}
	t.Fatal("the conformance server found no free port in 3 tries")
	return ""
}

var listeningLine = regexp.MustCompile(`mcpdrift proxy: listening on (http://\S+/mcp)`)

// startGatewayListening runs `mcpdrift proxy ... --listen 127.0.0.1:0` and
// returns the URL it prints.
func startGatewayListening(t *testing.T, args ...string) (string, *tailBuffer) {
	t.Helper()
	argv := append([]string{mcpdriftBinary(t), "proxy", "--listen", "127.0.0.1:0"}, args...)
	out, lines, done := startProcess(t, argv)
	timeout := time.After(startupTimeout)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				<-done
				t.Fatalf("mcpdrift proxy ended before listening: %s", out.String())
			}
			if m := listeningLine.FindStringSubmatch(l); m != nil {
				return m[1], out
			}
		case <-timeout:
			t.Fatalf("mcpdrift proxy did not say where it listens: %s", out.String())
		}
	}
}

// conformanceCheck is one check of checks.json.
type conformanceCheck struct {
	ID           string          `json:"id"`
	Status       string          `json:"status"`
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// runConformance runs the suite's server scenarios that revision requires
// against url, and returns each scenario's checks.
func runConformance(t *testing.T, node, suite, url, revision string) map[string][]conformanceCheck {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--requirements", revision, "-o", dir, "--timeout", "20000")
	cmd.Env = []string{"PATH=" + filepath.Dir(node) + ":" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1"}
	cmd.WaitDelay = 5 * time.Second
	out := &tailBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err := cmd.Run()
	recordTiming("conformance server --requirements "+revision, time.Since(start))
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) { // exit 1: some check failed, which direct runs have too
		t.Fatalf("conformance: %v\n%s", err, out.String())
	}
	results := map[string][]conformanceCheck{}
	dirs, _ := filepath.Glob(filepath.Join(dir, "server-*", "checks.json"))
	stamp := regexp.MustCompile(`^server-(.*)-\d{4}-\d\d-\d\dT[\d-]+Z$`)
	for _, f := range dirs {
		m := stamp.FindStringSubmatch(filepath.Base(filepath.Dir(f)))
		if m == nil {
			t.Fatalf("conformance result %s: unexpected directory name", f)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		results[m[1]] = append(results[m[1]], checks...)
	}
	if len(results) == 0 {
		t.Fatalf("conformance wrote no results:\n%s", out.String())
	}
	summary := out.String()
	if i := strings.Index(summary, "=== SUMMARY ==="); i >= 0 {
		summary = summary[i:]
	}
	t.Logf("conformance %s against %s: %d scenarios\n%s", revision, url, len(results), summary)
	return results
}

// statuses is a scenario's check results as a comparable multiset.
func statuses(checks []conformanceCheck) []string {
	var out []string
	for _, c := range checks {
		out = append(out, c.ID+"="+c.Status)
	}
	slices.Sort(out)
	return out
}

func failures(all map[string][]conformanceCheck) int {
	n := 0
	for _, cs := range all {
		for _, c := range cs {
			if c.Status == "FAILURE" {
				n++
			}
		}
	}
	return n
}

// TestGatewayConformance: the conformance suite's server scenarios give
// the same results through an audit-mode gateway as direct, for both
// revisions the go-sdk conformance server serves: 2025-11-25 (its
// stateful handler) and 2026-07-28 (stateless).
func TestGatewayConformance(t *testing.T) {
	node := node22(t)
	suite := npmPeer(t, peerConformance)
	server := conformanceServerBinary(t)
	for _, c := range []struct {
		name, revision string
		stateless      bool
	}{
		{"stateful", "2025-11-25", false},
		{"stateless", "2026-07-28", true},
	} {
		t.Run(c.name+"/"+c.revision, func(t *testing.T) {
			up := startConformanceServer(t, server, c.stateless)
			p := pinServer(t, &pinned{label: "conformance-" + c.name, url: up})
			gw, gwOut := startGatewayListening(t, "--mode", "audit", "--declared", p.declared, "--upstream-url", up)
			direct := runConformance(t, node, suite, up, c.revision)
			through := runConformance(t, node, suite, gw, c.revision)
			var scenarios []string
			for s := range direct {
				scenarios = append(scenarios, s)
			}
			for s := range through {
				if _, ok := direct[s]; !ok {
					scenarios = append(scenarios, s)
				}
			}
			slices.Sort(scenarios)
			same, known := 0, 0
			for _, s := range scenarios {
				d, g := statuses(direct[s]), statuses(through[s])
				switch {
				case slices.Equal(d, g):
					same++
				case conformanceKnownDiffs[s] != "":
					known++
					t.Logf("%s: differs as known (%s):\n direct  %v\n gateway %v", s, conformanceKnownDiffs[s], d, g)
				default:
					t.Errorf("%s: the gateway changes the result:\n direct  %v\n gateway %v", s, d, g)
					for _, ch := range through[s] {
						if ch.Status == "FAILURE" || ch.Status == "WARNING" {
							t.Logf("  gateway %s %s: %s %s", ch.ID, ch.Status, ch.ErrorMessage, clip(string(ch.Details), 400))
						}
					}
				}
			}
			t.Logf("%s (%s): %d scenarios, %d with the same checks, %d known differences; FAILURE checks direct %d, through the gateway %d",
				c.name, c.revision, len(scenarios), same, known, failures(direct), failures(through))
			recordCell(t, "conformance", "go-sdk conformance server "+c.name+" (http)", "http->http", c.revision, "audit",
				okOr(t, fmt.Sprintf("same results: %d/%d scenarios (%d known differences), %d/%d failing checks direct/gateway", same, len(scenarios), known, failures(direct), failures(through))))
			if t.Failed() {
				t.Logf("gateway stderr: %s", gwOut.String())
			}
		})
	}
}
