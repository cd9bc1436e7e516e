//go:build linux

package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
)

// The cost of a run, measured as a process of its own: the test binary
// run as the mcpdrift command (envAsCLI), its CPU time from the kernel's
// rusage when it exits, and its peak RSS as the kernel counts it for the
// process (VmHWM), which the child writes as it exits. (The rusage
// maxrss of a child is no measure here: a child forked from this test
// process starts out sharing its memory, and the kernel counts that too.)

// writePeakRSS writes this process's peak RSS in bytes (VmHWM of
// /proc/self/status) to path.
func writePeakRSS(path string) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				_ = os.WriteFile(path, []byte(strconv.FormatInt(kb*1024, 10)), 0o644)
			}
			return
		}
	}
}

// runCost is what one run cost.
type runCost struct {
	wall time.Duration
	cpu  time.Duration // user + system
	rss  int64         // peak resident set, bytes
}

// costBinary, when set, is the mcpdrift binary measure runs (through the
// test binary as a runner, envRunBinary); else the test binary is the
// command (envAsCLI).
var costBinary string

// runBinaryMeasured runs bin over args as a child of this process — a
// fresh, small one, so that the child's rusage maxrss is its own peak RSS
// (a child forked from a large process starts out counting that
// process's) — and writes "RSS-bytes CPU-ns wall-ns" to file. It returns
// the child's exit code.
func runBinaryMeasured(bin string, args []string, file string) int {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintf(os.Stderr, "runner: %v\n", err)
		return 2
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ok && file != "" {
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		_ = os.WriteFile(file, fmt.Appendf(nil, "%d %d %d", ru.Maxrss*1024, cpu.Nanoseconds(), wall.Nanoseconds()), 0o644)
	}
	return cmd.ProcessState.ExitCode()
}

// buildCostBinary builds cmd/mcpdrift into a temporary directory.
func buildCostBinary(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "mcpdrift")
	build := exec.Command("go", "build", "-o", bin, "github.com/mcpdrift/mcpdrift/cmd/mcpdrift")
	if _, file, _, ok := runtime.Caller(0); ok {
		build.Dir = filepath.Dir(file) // this package's sources, in the module
	}
	out, err := build.CombinedOutput()
	if err != nil {
		tb.Fatalf("go build ./cmd/mcpdrift: %v: %s", err, out)
	}
	return bin
}

// measure runs the command args as a child process and returns its cost;
// any exit code but 0 fails tb.
func measure(tb testing.TB, args ...string) runCost {
	tb.Helper()
	return measureExit(tb, 0, args...)
}

// measureExit is measure for a command that exits with code (diff: 1,
// changes to review); any other code fails tb.
func measureExit(tb testing.TB, code int, args ...string) runCost {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	rssFile := filepath.Join(tb.TempDir(), "peak-rss")
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), envAsCLI+"=1", envPeakRSS+"="+rssFile)
	if costBinary != "" {
		cmd.Env = append(os.Environ(), envRunBinary+"="+costBinary, envPeakRSS+"="+rssFile)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if got := cmd.ProcessState.ExitCode(); err != nil && got != code || err == nil && code != 0 {
		msg := stderr.String()
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		tb.Fatalf("%s: exit %d (want %d), %v: %s", strings.Join(args, " "), cmd.ProcessState.ExitCode(), code, err, msg)
	}
	b, err := os.ReadFile(rssFile)
	if err != nil {
		tb.Fatalf("%s: the child wrote no peak RSS: %v", args[0], err)
	}
	if costBinary != "" {
		var rss, cpu, w int64
		if _, err := fmt.Sscanf(string(b), "%d %d %d", &rss, &cpu, &w); err != nil || rss <= 0 {
			tb.Fatalf("%s: the runner wrote %q", args[0], b)
		}
		return runCost{wall: time.Duration(w), cpu: time.Duration(cpu), rss: rss}
	}
	rss, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || rss <= 0 {
		tb.Fatalf("%s: peak RSS %q", args[0], b)
	}
	return runCost{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), rss: rss}
}

// costCase is one size of the cost curve: n corpus.LeanTools saved as a
// tools/list response, the same with one tool in 50 changed, and the
// official Go SDK server serving them on loopback in pages of 1,000.
type costCase struct {
	n        int
	dir      string
	manifest string // the saved tools/list
	changed  string // the saved tools/list, one tool in 50 changed
	listing  int64  // bytes of the tools array
	url      string
	extra    []string // bounds a live run needs beyond the defaults
}

func newCostCase(tb testing.TB, n int) *costCase {
	tb.Helper()
	c := &costCase{n: n, dir: tb.TempDir()}
	tools := corpus.LeanTools(n, 1)
	c.listing = int64(len(tools))
	c.manifest = filepath.Join(c.dir, "tools.json")
	doc := append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":`), tools...), "}}"...)
	if err := writeSynced(c.manifest, doc); err != nil {
		tb.Fatal(err)
	}
	c.changed = filepath.Join(c.dir, "changed.json")
	if err := writeSynced(c.changed, describeEvery(doc, 50)); err != nil {
		tb.Fatal(err)
	}
	c.url = startLargeServerProcess(tb, n, 1000)
	c.extra = []string{"--timeout", "10m"}
	if c.listing > 48<<20 {
		// The default bound (64 MiB) refuses a listing this large (with
		// its envelopes): the curve goes on past it on purpose.
		c.extra = append(c.extra, "--max-list-bytes", strconv.FormatInt(4*c.listing, 10))
	}
	return c
}

// describeEvery returns doc with every k-th "description" string of it
// (a tool's or a parameter's) begun anew, so that about one tool in k
// differs from doc.
func describeEvery(doc []byte, k int) []byte {
	const key = `"description":"`
	out := make([]byte, 0, len(doc)+len(doc)/100)
	for i := 0; ; i++ {
		j := bytes.Index(doc, []byte(key))
		if j < 0 {
			return append(out, doc...)
		}
		out = append(out, doc[:j+len(key)]...)
		if i%k == 0 {
			out = append(out, "Changed. "...)
		}
		doc = doc[j+len(key):]
	}
}

// writeSynced writes a file and waits until it is on disk: a 172 MB
// manifest just written is otherwise flushed by the kernel's writeback
// while the first step reads it, which slows the first pass's pin --input
// and not the next.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// startLargeServerProcess starts the official Go SDK server serving
// corpus.LeanTools(n, 1) in pages of page as a process of its own (the
// test binary as envLargeServer) on a loopback port, and returns its URL.
// A process of its own, as a user's server is: in this process, the
// harness's heap and its collections would be the server's too.
func startLargeServerProcess(tb testing.TB, n, page int) string {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=tools=%d,page=%d,listen=127.0.0.1:0", envLargeServer, n, page))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), " on http://"); ok && strings.HasPrefix(sc.Text(), "large server:") {
				urls <- "http://" + u
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(2 * time.Minute):
		tb.Fatal("the large server did not start")
	}
	return ""
}

// The steps of one pass, in order: each reads what an earlier one wrote.
var costSteps = []string{"pin --input", "observe", "gate", "diff", "pin --url", "drift"}

// pass runs every step once.
func (c *costCase) pass(tb testing.TB) map[string]runCost {
	tb.Helper()
	p := func(name string) string { return filepath.Join(c.dir, name) }
	out := map[string]runCost{}
	out["pin --input"] = measure(tb, "pin", "--input", c.manifest, "--server-id", "big", "-o", p("in.json"))
	out["observe"] = measure(tb, "observe", "--input", c.manifest, "--server-id", "big", "-o", p("observed.json"))
	out["gate"] = measure(tb, "gate", "--observed", p("observed.json"), "--declared", p("in.json"), "--format", "json", "-o", p("gate.json"))
	out["diff"] = measureExit(tb, 1, "diff", p("in.snapshot.json"), c.changed, "--format", "json", "-o", p("diff.json"))
	out["pin --url"] = measure(tb, append([]string{"pin", "--url", c.url, "--server-id", "big", "-o", p("url.json")}, c.extra...)...)
	out["drift"] = measure(tb, append([]string{"drift", p("url.json"), "--url", c.url, "--format", "json", "-o", p("drift.json")}, c.extra...)...)
	return out
}

// seconds formats figures in seconds, two decimals each.
func seconds(fs []float64) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.2f", f)
	}
	return b.String()
}

// stepUnit names a step in a metric: pin-input, observe, gate, diff,
// pin-url, drift.
func stepUnit(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, " --", "-"), " ", "-")
}

// BenchmarkCostCurve: wall time and peak RSS of each step of a pass (pin
// --input, observe, gate, diff of that pin against the list with one tool
// in 50 changed, pin --url, drift against that pin with no change), each
// a process of its own, at 1,000, 10,000 and 100,000 tools
// (MCPDRIFT_COST_SIZES=1000,10000 chooses others). Per step: the median
// wall time (-s) and CPU time, user and system (-cpu-s: what a shared
// machine's load does not inflate, or much less), the largest peak RSS
// (-MB) and that RSS over the bytes of the listing (-xlisting); drift/pin
// is drift's median wall over pin --url's.
func BenchmarkCostCurve(b *testing.B) {
	sizes := []int{1000, 10000, 100000}
	if s := os.Getenv("MCPDRIFT_COST_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				b.Fatalf("MCPDRIFT_COST_SIZES: %q", s)
			}
			sizes = append(sizes, n)
		}
	}
	// The mcpdrift binary is what is measured (the test binary, with
	// every test's dependencies linked in, weighs more).
	costBinary = buildCostBinary(b)
	defer func() { costBinary = "" }()
	for _, n := range sizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			c := newCostCase(b, n)
			var passes []map[string]runCost
			for b.Loop() {
				passes = append(passes, c.pass(b))
			}
			wall := map[string]float64{}
			rss := map[string]int64{}
			for _, s := range costSteps {
				var ws, cs []float64
				for _, p := range passes {
					ws = append(ws, p[s].wall.Seconds())
					cs = append(cs, p[s].cpu.Seconds())
					rss[s] = max(rss[s], p[s].rss)
				}
				wall[s] = median(ws)
				b.Logf("%s: wall %s s, cpu %s s", s, seconds(ws), seconds(cs))
				b.ReportMetric(wall[s], stepUnit(s)+"-s")
				b.ReportMetric(median(cs), stepUnit(s)+"-cpu-s")
				b.ReportMetric(float64(rss[s])/1e6, stepUnit(s)+"-MB")
				b.ReportMetric(float64(rss[s])/float64(c.listing), stepUnit(s)+"-xlisting")
			}
			b.ReportMetric(float64(c.listing)/1e6, "listing-MB")
			b.ReportMetric(wall["drift"]/wall["pin --url"], "drift/pin")
		})
	}
}

// TestCostGrowsLinearly: every step of a pass at 4x the tools costs at
// most 6x the CPU time and the peak RSS (linear growth gives at most 4x,
// less with the fixed cost of a process; growth like n^2 gives up to 16x).
// CPU time, not wall time, so that other work on a shared machine does not
// count; when a step is over the bound both sizes are measured again and
// the lower figures kept, so that one unlucky run does not fail it.
func TestCostGrowsLinearly(t *testing.T) {
	const small, large, bound = 1000, 4000, 6.0
	cs, cl := newCostCase(t, small), newCostCase(t, large)
	ps, pl := cs.pass(t), cl.pass(t)
	ratios := func() (cpu, rss map[string]float64) {
		cpu, rss = map[string]float64{}, map[string]float64{}
		for _, s := range costSteps {
			cpu[s] = pl[s].cpu.Seconds() / max(ps[s].cpu.Seconds(), 1e-3)
			rss[s] = float64(pl[s].rss) / float64(ps[s].rss)
		}
		return cpu, rss
	}
	cpu, rss := ratios()
	if slices.ContainsFunc(costSteps, func(s string) bool { return cpu[s] > bound || rss[s] > bound }) {
		keep := func(a, b map[string]runCost) {
			for s, c := range b {
				o := a[s]
				a[s] = runCost{wall: min(o.wall, c.wall), cpu: min(o.cpu, c.cpu), rss: min(o.rss, c.rss)}
			}
		}
		keep(ps, cs.pass(t))
		keep(pl, cl.pass(t))
		cpu, rss = ratios()
	}
	for _, s := range costSteps {
		t.Logf("%-12s %5d tools: %5.0f ms CPU, %4.0f MB; %5d tools: %5.0f ms CPU, %4.0f MB; x%.2f CPU, x%.2f RSS", s,
			small, ps[s].cpu.Seconds()*1e3, float64(ps[s].rss)/1e6, large, pl[s].cpu.Seconds()*1e3, float64(pl[s].rss)/1e6, cpu[s], rss[s])
		if cpu[s] > bound {
			t.Errorf("%s: %d tools took %.1fx the CPU time of %d (at most %.0fx: growth beyond linear)", s, large, cpu[s], small, bound)
		}
		if rss[s] > bound {
			t.Errorf("%s: %d tools took %.1fx the peak RSS of %d (at most %.0fx: growth beyond linear)", s, large, rss[s], small, bound)
		}
	}
}
