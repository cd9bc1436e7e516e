//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pageSize is the tools of one page of the mock's tools/list.
const pageSize = 100

// inspectorMaxPages is the most pages the MCP Inspector's CLI follows
// (its LIST_MAX_PAGES): a longer list fails its tools/list.
const inspectorMaxPages = 64

// sample is one finished command's figures.
type sample struct {
	wall, cpu time.Duration
	peakKiB   int64
	code      int
	failed    string // why it is not a figure: an unexpected exit, with the last line it wrote
}

// command is one timed command: the version of the list the server
// serves while it runs, the exit codes that say it did its work, and its
// arguments for a build whose own files are in dir.
type command struct {
	serve int
	ok    []int
	args  func(b build, dir string, in *inputs, url string) []string
}

var commands = map[string]command{
	"pin": {serve: 1, ok: []int{0}, args: func(b build, dir string, in *inputs, url string) []string {
		return append([]string{"pin", "--url", url, "--server-id", "bench", "-o", filepath.Join(dir, "pin-live.json"),
			"--snapshot", filepath.Join(dir, "pin-live.snapshot.json")}, in.bound...)
	}},
	"drift": {serve: 2, ok: []int{1}, args: func(b build, dir string, in *inputs, url string) []string {
		return append([]string{"drift", filepath.Join(dir, "declared-live.json"), b.url, url, "--format", "json", "-o", filepath.Join(dir, "drift.json")}, in.bound...)
	}},
	"gate": {ok: []int{1}, args: func(b build, dir string, in *inputs, url string) []string {
		return append([]string{"gate", "--observed", filepath.Join(dir, "observed.json"), "--declared", filepath.Join(dir, "declared.json"),
			"--declared-snapshot", filepath.Join(dir, "declared.snapshot.json"), "--observed-snapshot", filepath.Join(dir, "observed.snapshot.json"),
			"--format", "json", "-o", filepath.Join(dir, "gate.json")}, in.inputBound...)
	}},
	"diff": {ok: []int{1}, args: func(b build, dir string, in *inputs, url string) []string {
		return append([]string{"diff", in.v1File, in.v2File, "--format", "json", "-o", filepath.Join(dir, "diff.json")}, in.inputBound...)
	}},
}

// setup makes a build's own inputs of drift and gate: the baseline pinned
// from the live server (the first version), and the declared first version
// and the observed second from the saved lists, with their snapshots.
func setup(b build, dir string, in *inputs, srv *server, timeout time.Duration) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	srv.use(in.mocks[0])
	steps := [][]string{
		append([]string{"pin", "--url", srv.url, "--server-id", "bench", "-o", filepath.Join(dir, "declared-live.json"),
			"--snapshot", filepath.Join(dir, "declared-live.snapshot.json")}, in.bound...),
		append([]string{"pin", "--input", in.v1File, "--server-id", "bench", "-o", filepath.Join(dir, "declared.json"),
			"--snapshot", filepath.Join(dir, "declared.snapshot.json")}, in.inputBound...),
		append([]string{"observe", "--input", in.v2File, "--server-id", "bench", "-o", filepath.Join(dir, "observed.json"),
			"--snapshot", filepath.Join(dir, "observed.snapshot.json")}, in.inputBound...),
	}
	for _, args := range steps {
		if s := runCmd(b.bin, args, nil, timeout, []int{0}); s.failed != "" {
			return fmt.Errorf("%s: %s %s: %s", b.name, filepath.Base(b.bin), strings.Join(args, " "), s.failed)
		}
	}
	return nil
}

// row is the figures of one command at one size: each build's samples
// (for the Inspector, only the first).
type row struct {
	size    int
	op      string
	samples [2][]sample
	note    string
}

func benchSize(o options, size int, work string, srv *server, builds [2]build, inspector, node string) ([]row, error) {
	in, err := makeInputs(size, work)
	if err != nil {
		return nil, err
	}
	defer in.close()
	if !o.keep {
		defer os.RemoveAll(in.dir)
	}
	dirs := [2]string{filepath.Join(in.dir, "ref"), filepath.Join(in.dir, "tree")}
	for i, b := range builds {
		if err := setup(b, dirs[i], in, srv, o.timeout); err != nil {
			return nil, err
		}
	}
	n := o.n
	if size >= 100000 {
		n = o.nLarge
	}
	rows := make([]row, len(o.ops))
	for i, op := range o.ops {
		rows[i] = row{size: size, op: op}
		if len(in.bound) > 0 {
			rows[i].note = "bounds raised to 1 GiB"
		}
	}
	for r := range n {
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0} // the new build first every other round
		}
		for i, op := range o.ops {
			c := commands[op]
			if c.serve > 0 {
				srv.use(in.mocks[c.serve-1])
			}
			for _, k := range order {
				b := builds[k]
				s := runCmd(b.bin, c.args(b, dirs[k], in, srv.url), nil, o.timeout, c.ok)
				rows[i].samples[k] = append(rows[i].samples[k], s)
				fmt.Fprintf(os.Stderr, "benchhouse: %d tools, %s, %s: %s\n", size, op, b.name, s)
			}
		}
	}
	if inspector != "" {
		// The Inspector follows at most inspectorMaxPages pages.
		m, err := newMock(in.v1, max(pageSize, (size+inspectorMaxPages-1)/inspectorMaxPages))
		if err != nil {
			return nil, err
		}
		defer m.Close()
		srv.use(m)
		ir := row{size: size, op: "inspector"}
		home := filepath.Join(in.dir, "inspector-home")
		if err := os.MkdirAll(home, 0o700); err != nil {
			return nil, err
		}
		env := []string{"PATH=" + filepath.Dir(node) + ":" + os.Getenv("PATH"), "HOME=" + home, "NO_COLOR=1", "MCP_INSPECTOR_SECRET_STORE=memory"}
		for range n {
			s := runCmd(node, []string{inspector, "--cli", srv.url, "--protocol-era", "auto", "--format", "json", "--quiet",
				"--connect-timeout", "30000", "--method", "tools/list"}, env, o.timeout, []int{0})
			ir.samples[0] = append(ir.samples[0], s)
			fmt.Fprintf(os.Stderr, "benchhouse: %d tools, inspector tools/list: %s\n", size, s)
		}
		rows = append(rows, ir)
	}
	return rows, nil
}

func (s sample) String() string {
	if s.failed != "" {
		return "failed: " + s.failed
	}
	return fmt.Sprintf("%.2fs wall, %.2fs cpu, %d MiB peak", s.wall.Seconds(), s.cpu.Seconds(), s.peakKiB>>10)
}

// timeBin is GNU time, which reports the peak resident memory of the
// command it runs. The kernel's own figure for a child of this process
// would not do: a child that starts by sharing its parent's memory (as
// Go starts one) keeps the parent's peak as its own floor, and this
// process holds the lists it serves, hundreds of megabytes.
const timeBin = "/usr/bin/time"

// runCmd runs bin with args (env: nil for this process's) within timeout
// and returns its figures; an exit code outside ok makes it failed.
func runCmd(bin string, args, env []string, timeout time.Duration, ok []int) sample {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	peakFile, err := os.CreateTemp("", "benchhouse-peak-")
	if err != nil {
		return sample{failed: err.Error()}
	}
	peakFile.Close()
	defer os.Remove(peakFile.Name())
	cmd := exec.CommandContext(ctx, timeBin, append([]string{"-f", "%M", "-o", peakFile.Name(), "--", bin}, args...)...)
	// Its own process group, so that a timeout ends the command, not only
	// time.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = env
	var out tail
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	s := sample{wall: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		s.code = ee.ExitCode()
	case err != nil:
		return sample{failed: err.Error()}
	}
	if ps := cmd.ProcessState; ps != nil {
		s.cpu = ps.UserTime() + ps.SystemTime() // time's, and the command's it waited for
	}
	s.peakKiB = lastInt(peakFile.Name())
	if ctx.Err() != nil {
		s.failed = "no end within " + timeout.String()
	} else if !slices.Contains(ok, s.code) {
		s.failed = fmt.Sprintf("exit %d: %s", s.code, out.lastLine())
	}
	return s
}

// lastInt is the integer on the last line of the file (0 when there is
// none).
func lastInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	n, _ := strconv.ParseInt(strings.TrimSpace(lines[len(lines)-1]), 10, 64)
	return n
}

// tail keeps the last 4 KiB written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 8<<10 {
		t.b = append(t.b[:0], t.b[len(t.b)-4<<10:]...)
	}
	return len(p), nil
}

func (t *tail) lastLine() string {
	s := strings.TrimSpace(string(t.b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// findInspector returns the MCP Inspector CLI's entry script and the
// node that runs it ("" when there is none, or the flag says off).
func findInspector(flagValue string) (entry, node string) {
	if flagValue == "off" {
		return "", ""
	}
	check := func(peer string) string {
		out, err := exec.Command("bash", "scripts/install-test-peers.sh", "--check", peer).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	node = check("node")
	entry = flagValue
	if flagValue == "auto" {
		entry = check("inspector")
	}
	if entry == "" || node == "" {
		fmt.Fprintln(os.Stderr, "benchhouse: no MCP Inspector (scripts/install-test-peers.sh inspector installs it): its row is left out")
		return "", ""
	}
	return entry, node
}
