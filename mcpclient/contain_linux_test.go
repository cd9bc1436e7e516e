//go:build linux

package mcpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the processes of these tests: with
// MCPCLIENT_CONTAIN=ROLE in its environment it plays ROLE (before TestMain
// runs) and exits. Every process that must die records "PID START" in the
// file MCPCLIENT_CONTAIN_PIDS names.
const (
	roleEnv = "MCPCLIENT_CONTAIN"
	pidsEnv = "MCPCLIENT_CONTAIN_PIDS"
)

func init() {
	role, ok := os.LookupEnv(roleEnv)
	if !ok {
		return
	}
	os.Exit(playRole(role))
}

// Roles:
//
//	server:SCENARIO  a stdio MCP server that first starts descendants:
//	  setsid      a grandchild that calls setsid and sleeps
//	  doublefork  a grandchild that calls setsid, starts a great-grandchild
//	              ignoring SIGTERM and exits; the server ignores SIGTERM and
//	              does not exit at EOF
//	  leader      a grandchild that starts a great-grandchild calling setsid
//	              (keeping the server's stderr) and exits
//	  hang        nothing, and never answers
//	  plain       nothing
//	sleeper, sleeper-setsid, sleeper-stubborn   record themselves, sleep
//	daemonizer, leaderspawner                   the grandchildren above
//	host        runs ListTools against server:hang (for parent-death tests)
func playRole(role string) int {
	switch role {
	case "sleeper", "sleeper-setsid", "sleeper-stubborn":
		if role == "sleeper-setsid" {
			if _, err := syscall.Setsid(); err != nil {
				fmt.Fprintln(os.Stderr, "setsid:", err)
				return 9
			}
		}
		if role == "sleeper-stubborn" {
			signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		}
		record()
		time.Sleep(time.Minute)
		return 0
	case "daemonizer":
		if _, err := syscall.Setsid(); err != nil {
			return 9
		}
		if err := spawn("sleeper-stubborn", false).Start(); err != nil {
			return 9
		}
		return 0 // without waiting: the great-grandchild is orphaned
	case "leaderspawner":
		if err := spawn("sleeper-setsid", true).Start(); err != nil {
			return 9
		}
		return 0
	case "host":
		forceContainment = os.Getenv("MCPCLIENT_CONTAIN_FORCE")
		cfg := containConfig("server:hang", os.Getenv(pidsEnv))
		cfg.StartupTimeout = time.Minute
		_, err := ListTools(context.Background(), cfg)
		fmt.Fprintln(os.Stderr, "host:", err)
		return 0
	}
	scenario, ok := strings.CutPrefix(role, "server:")
	if !ok {
		fmt.Fprintln(os.Stderr, "unknown role", role)
		return 98
	}
	return fakeContainServer(scenario)
}

// spawn is a command playing role, inheriting this process's stderr (and
// so the stdio pipe) when keepStderr.
func spawn(role string, keepStderr bool) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"="+role)
	if keepStderr {
		cmd.Stderr = os.Stderr
	}
	return cmd
}

// record appends "PID START" to the pids file.
func record() {
	st, _ := readStat(os.Getpid())
	f, err := os.OpenFile(os.Getenv(pidsEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%d %d\n", st.pid, st.start)
	f.Close()
}

// waitRecorded waits until the pids file has n lines.
func waitRecorded(n int) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if len(readRecorded(os.Getenv(pidsEnv))) >= n {
			return
		}
	}
}

func readRecorded(name string) []procID {
	b, _ := os.ReadFile(name)
	var ids []procID
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var id procID
		if _, err := fmt.Sscan(line, &id.pid, &id.start); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// fakeContainServer answers server/discover and tools/list after starting
// the scenario's descendants.
func fakeContainServer(scenario string) int {
	stubborn := false
	switch scenario {
	case "setsid":
		if err := spawn("sleeper-setsid", false).Start(); err != nil {
			return 9
		}
		waitRecorded(1)
	case "doublefork":
		signal.Ignore(syscall.SIGTERM)
		stubborn = true
		record()
		if err := spawn("daemonizer", false).Run(); err != nil {
			return 9
		}
		waitRecorded(2)
	case "leader":
		if err := spawn("leaderspawner", true).Run(); err != nil {
			return 9
		}
		waitRecorded(1)
	case "hang":
		record()
		time.Sleep(time.Minute)
		return 0
	}
	out := bufio.NewWriter(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var q struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &q) != nil || q.ID == nil {
			continue
		}
		switch q.Method {
		case "server/discover":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"contain","version":"1"}},"ttlMs":0,"cacheScope":"public"}}`+"\n", q.ID)
		case "tools/list":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t1","inputSchema":{"type":"object"}}],"ttlMs":0,"cacheScope":"public"}}`+"\n", q.ID)
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", q.ID)
		}
		out.Flush()
	}
	if stubborn {
		time.Sleep(time.Minute)
	}
	return 0
}

func containConfig(role, pids string) Config {
	return Config{
		Command:        []string{os.Args[0]},
		Env:            map[string]string{roleEnv: role, pidsEnv: pids},
		StartupTimeout: 10 * time.Second,
		RequestTimeout: 10 * time.Second,
	}
}

// gone reports whether the process id names has ended and been reaped
// (a zombie has not).
func gone(id procID) bool {
	st, ok := readStat(id.pid)
	return !ok || st.start != id.start
}

// waitGone polls for up to 2 s.
func waitGone(id procID) bool {
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if gone(id) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// killRecorded kills (and, if they are this process's, reaps) whatever the
// pids file names that still runs: no test leaves processes behind.
func killRecorded(name string) {
	for _, id := range readRecorded(name) {
		if !gone(id) {
			_ = killProc(procInfo{pid: id.pid, start: id.start})
			time.Sleep(10 * time.Millisecond)
			reapPid(id.pid)
		}
	}
}

// containRun is one observed run.
type containRun struct {
	obs   *Observation
	err   error
	mode  string
	cgdir string
	took  time.Duration // ListTools
	kill  time.Duration // from the first SIGKILL to the end of release
	ids   []procID
}

var hookMu sync.Mutex

// runContained runs ListTools against server:scenario with the knobs set
// for mode ("" for the automatic choice) and returns what happened.
func runContained(t *testing.T, scenario, mode string) *containRun {
	t.Helper()
	pids := filepath.Join(t.TempDir(), "pids")
	t.Cleanup(func() { killRecorded(pids) })
	r := &containRun{}
	setKnobs(t, mode, func(m, dir string) { r.mode, r.cgdir = m, dir }, func(d time.Duration) { r.kill = d })
	start := time.Now()
	r.obs, r.err = ListTools(context.Background(), containConfig("server:"+scenario, pids))
	r.took = time.Since(start)
	r.ids = readRecorded(pids)
	return r
}

// setKnobs sets the containment knobs for one test and restores them.
func setKnobs(t *testing.T, mode string, started func(mode, dir string), released func(time.Duration)) {
	t.Helper()
	hookMu.Lock()
	oldForce, oldHook, oldRel := forceContainment, containmentHook, releaseHook
	if mode != containCgroup {
		forceContainment = mode
	}
	containmentHook, releaseHook = started, released
	hookMu.Unlock()
	t.Cleanup(func() {
		hookMu.Lock()
		forceContainment, containmentHook, releaseHook = oldForce, oldHook, oldRel
		hookMu.Unlock()
	})
}

// needCgroup skips the test unless children can be started into a fresh
// cgroup here.
func needCgroup(t *testing.T) {
	t.Helper()
	if why := cgroupUnusable(); why != "" {
		t.Skipf("cgroup v2 containment not testable here: %s (the subreaper fallback is tested without it)", why)
	}
}

func cgroupUnusable() string {
	if cgroupBroken.Load() {
		return "an earlier start into a cgroup failed"
	}
	g, err := newCgroup()
	if err != nil {
		return "cannot create a cgroup below this process's (" + err.Error() + "; run as root or in a delegated cgroup)"
	}
	defer g.remove()
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: g.fd}
	if err := cmd.Run(); err != nil {
		return "clone3 into a cgroup failed: " + err.Error()
	}
	return ""
}

func checkRun(t *testing.T, r *containRun, mode string, want int) {
	t.Helper()
	if r.err != nil {
		stderr := ""
		if r.obs != nil {
			stderr = r.obs.Stderr
		}
		t.Fatalf("ListTools: %v (stderr %q)", r.err, stderr)
	}
	if r.obs.Pages != 1 || r.obs.Completeness != "complete" {
		t.Errorf("pages %d completeness %q", r.obs.Pages, r.obs.Completeness)
	}
	if r.mode != mode {
		t.Errorf("containment %q, want %q", r.mode, mode)
	}
	if len(r.ids) != want {
		t.Fatalf("recorded processes %v, want %d", r.ids, want)
	}
	for _, id := range r.ids {
		if !waitGone(id) {
			st, _ := readStat(id.pid)
			t.Errorf("process %d (state %c, parent %d, session %d) outlived the run", id.pid, st.state, st.ppid, st.sid)
		}
	}
	if r.cgdir != "" {
		if _, err := os.Stat(r.cgdir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s left behind (%v)", r.cgdir, err)
		}
	}
	t.Logf("%s: ListTools %v, kill to release %v", r.mode, r.took.Round(time.Millisecond), r.kill.Round(time.Microsecond))
}

var containModes = []string{containCgroup, containSubreaper}

func forModes(t *testing.T, f func(t *testing.T, mode string)) {
	for _, mode := range containModes {
		t.Run(mode, func(t *testing.T) {
			if mode == containCgroup {
				needCgroup(t)
			}
			f(t, mode)
		})
	}
}

// A grandchild that calls setsid leaves the process group: it must still
// die with the run.
func TestContainSetsidGrandchild(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		r := runContained(t, "setsid", mode)
		checkRun(t, r, mode, 1)
	})
}

// A double fork (the grandchild calls setsid, forks and exits, so the
// great-grandchild is orphaned before the run sees it), with a server and
// great-grandchild that ignore SIGTERM and a server that ignores EOF.
func TestContainDoubleFork(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		r := runContained(t, "doublefork", mode)
		checkRun(t, r, mode, 2)
		if r.took < graceAfterEOF+graceAfterTerm {
			t.Errorf("took %v: the server should have needed SIGKILL", r.took)
		}
	})
}

// An orphaned session leader that keeps the server's stderr.
func TestContainOrphanedSessionLeader(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		r := runContained(t, "leader", mode)
		checkRun(t, r, mode, 1)
	})
}

// Without a usable cgroup the run works and falls back to the subreaper.
func TestContainCgroupUnavailable(t *testing.T) {
	old := cgroupParentOverride
	cgroupParentOverride = filepath.Join(t.TempDir(), "no", "such", "cgroup")
	t.Cleanup(func() { cgroupParentOverride = old })
	r := runContained(t, "setsid", containCgroup)
	checkRun(t, r, containSubreaper, 1)
}

// When starting into the cgroup fails (here: the "cgroup" is a plain
// directory, so clone3 refuses it), the child is started again without
// one, the directory is removed, and later runs do not try again.
func TestContainCgroupStartFails(t *testing.T) {
	old := cgroupParentOverride
	parent := t.TempDir()
	cgroupParentOverride = parent
	t.Cleanup(func() { cgroupParentOverride = old; cgroupBroken.Store(false) })
	r := runContained(t, "setsid", containCgroup)
	checkRun(t, r, containSubreaper, 1)
	if !cgroupBroken.Load() {
		t.Errorf("the failure was not remembered")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// Forced down to the process group, the run still works.
func TestContainProcessGroupOnly(t *testing.T) {
	r := runContained(t, "plain", containProcessGroup)
	checkRun(t, r, containProcessGroup, 0)
}

// No cgroup of this process is left after runs, and the subreaper flag is
// as it was.
func TestContainNothingLeftBehind(t *testing.T) {
	before, err := getSubreaper()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range containModes {
		if mode == containCgroup && cgroupUnusable() != "" {
			continue
		}
		runContained(t, "setsid", mode)
	}
	if after, _ := getSubreaper(); after != before {
		t.Errorf("subreaper %v after the runs, %v before", after, before)
	}
	reaper.mu.Lock()
	runs, refs := len(reaper.runs), reaper.refs
	reaper.mu.Unlock()
	if runs != 0 || refs != 0 {
		t.Errorf("%d runs, %d references left", runs, refs)
	}
	if parent, _, err := ownCgroup(); err == nil {
		entries, _ := os.ReadDir(parent)
		self := selfID()
		for _, e := range entries {
			if id, ok := parseCgroupName(e.Name()); ok && id == self {
				t.Errorf("cgroup %s left behind", e.Name())
			}
		}
	}
}

// Concurrent runs each kill their own descendants; what only the last can
// attribute is killed when it ends.
func TestContainConcurrentRuns(t *testing.T) {
	setKnobs(t, containSubreaper, nil, nil)
	var wg sync.WaitGroup
	var runs [4]struct {
		obs *Observation
		err error
		ids []procID
	}
	dir := t.TempDir()
	for i := range runs {
		pids := filepath.Join(dir, strconv.Itoa(i))
		t.Cleanup(func() { killRecorded(pids) })
		scenario := []string{"setsid", "doublefork", "leader", "setsid"}[i]
		wg.Go(func() {
			runs[i].obs, runs[i].err = ListTools(context.Background(), containConfig("server:"+scenario, pids))
			runs[i].ids = readRecorded(pids)
		})
	}
	wg.Wait()
	for i, r := range runs {
		if r.err != nil {
			t.Fatalf("run %d: %v", i, r.err)
		}
		for _, id := range r.ids {
			if !waitGone(id) {
				t.Errorf("run %d: process %d outlived the runs", i, id.pid)
			}
		}
	}
}

// Processes the program started itself, in its session or in one of their
// own, are neither killed nor reaped by a run.
func TestContainLeavesProgramChildrenAlone(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	t.Cleanup(func() { killRecorded(pids) })
	start := func(role string, setsid bool) *exec.Cmd {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), roleEnv+"="+role, pidsEnv+"="+pids)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	quick := func() *exec.Cmd { // ends during the run, in a session of its own
		cmd := exec.Command("/bin/sh", "-c", "sleep 0.3; exit 7")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	sleepers := []*exec.Cmd{start("sleeper", false), start("sleeper", true)}
	quitters := []*exec.Cmd{quick()}
	waitFor(t, pids, 2)
	// And the same started while the run is active.
	setKnobs(t, containSubreaper, func(string, string) {
		sleepers = append(sleepers, start("sleeper", false), start("sleeper", true))
		quitters = append(quitters, quick())
	}, nil)
	cfg := containConfig("server:doublefork", filepath.Join(t.TempDir(), "run"))
	if _, err := ListTools(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, pids, 4)
	if len(sleepers) != 4 {
		t.Fatalf("%d sleepers", len(sleepers))
	}
	for i, cmd := range sleepers {
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("the program's child %d (sleeper %d) was killed: %v", cmd.Process.Pid, i, err)
		}
	}
	for _, cmd := range quitters {
		if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "exit status 7") {
			t.Errorf("the program's child was reaped by the run: Wait = %v", err)
		}
	}
	for _, cmd := range sleepers {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

func waitFor(t *testing.T, pids string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(readRecorded(pids)) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %v recorded", readRecorded(pids))
		}
	}
}

// If mcpdrift itself is killed, Pdeathsig kills the direct child; in the
// cgroup mode the cgroup it leaves is swept by the next run beside it.
func TestContainParentDeath(t *testing.T) {
	for _, mode := range append([]string{containProcessGroup}, containModes...) {
		t.Run(mode, func(t *testing.T) {
			if mode == containCgroup {
				needCgroup(t)
			}
			// Orphans come here, so the dead host's child can be reaped.
			if err := setSubreaper(true); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { setSubreaper(false) })
			pids := filepath.Join(t.TempDir(), "pids")
			t.Cleanup(func() { killRecorded(pids) })
			host := exec.Command(os.Args[0])
			host.Env = append(os.Environ(), roleEnv+"=host", pidsEnv+"="+pids)
			if mode != containCgroup {
				host.Env = append(host.Env, "MCPCLIENT_CONTAIN_FORCE="+mode)
			}
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, pids, 1)
			server := readRecorded(pids)[0]
			var stale string
			if mode == containCgroup {
				stale = cgroupOfHostChild(t, server)
			}
			host.Process.Kill()
			host.Wait()
			died := false
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if st, ok := readStat(server.pid); !ok || st.start != server.start {
					died = true
					break
				} else if st.state == 'Z' {
					reapPid(server.pid)
				}
			}
			if !died {
				t.Fatalf("the server outlived the killed host")
			}
			if stale == "" {
				return
			}
			if _, err := os.Stat(stale); errors.Is(err, os.ErrNotExist) {
				// Another mcpdrift process (a test binary of another
				// package, run beside this one by go test ./...) swept it
				// first: a dead host's cgroup is anyone's to sweep. No
				// stale cgroup is left, which is what the sweep is for.
				t.Logf("the killed host's cgroup %s was swept by another process already", stale)
				return
			} else if err != nil {
				t.Fatalf("the killed host's cgroup %s: %v", stale, err)
			}
			swept.Delete(filepath.Dir(stale))
			r := runContained(t, "plain", containCgroup)
			checkRun(t, r, containCgroup, 0)
			if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the stale cgroup %s was not swept: %v", stale, err)
			}
		})
	}
}

// cgroupOfHostChild is the cgroup directory the server was started in.
func cgroupOfHostChild(t *testing.T, server procID) string {
	t.Helper()
	parent, rel, err := ownCgroup()
	if err != nil {
		t.Fatal(err)
	}
	sub, ok := strings.CutPrefix(cgroupOf(server.pid), rel)
	if !ok || !strings.HasPrefix(strings.TrimPrefix(sub, "/"), cgroupPrefix) {
		t.Fatalf("the server is in cgroup %q, not below %q", cgroupOf(server.pid), rel)
	}
	return filepath.Join(parent, sub)
}

func TestParseStat(t *testing.T) {
	line := "4242 (a) (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10"
	p, ok := parseStat([]byte(line + "\n"))
	if !ok || p != (procInfo{pid: 4242, ppid: 17, pgrp: 4242, sid: 4242, state: 'S', start: 987654}) {
		t.Errorf("parseStat = %+v, %v", p, ok)
	}
	for _, bad := range []string{"", "12 (x", "x (y) S 1 2 3", "12 (y) S 1 2"} {
		if _, ok := parseStat([]byte(bad)); ok {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
	self, ok := readStat(os.Getpid())
	if !ok || self.pid != os.Getpid() || self.ppid != os.Getppid() || self.start == 0 {
		t.Errorf("readStat(self) = %+v", self)
	}
}

func TestParseCgroupName(t *testing.T) {
	if id, ok := parseCgroupName("mcpdrift.12.345.6"); !ok || id != (procID{12, 345}) {
		t.Errorf("got %v %v", id, ok)
	}
	for _, bad := range []string{"mcpdrift.12.345", "other.1.2.3", "mcpdrift.x.2.3", "mcpdrift.0.2.3", "mcpdrift.1.2.3.4"} {
		if _, ok := parseCgroupName(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
	if got := unescapeMount(`/a\040b\\c`); got != `/a b\\c` {
		t.Errorf("unescapeMount = %q", got)
	}
}

// Attribution on a synthetic process table (self is 100, in session 100).
func TestAttribute(t *testing.T) {
	p := func(pid, ppid, sid int, start uint64) procInfo {
		return procInfo{pid: pid, ppid: ppid, pgrp: sid, sid: sid, state: 'S', start: start}
	}
	procs := []procInfo{
		p(1, 0, 1, 0),
		p(100, 1, 100, 10),   // self
		p(101, 100, 100, 20), // the program's own child, self's session
		p(102, 100, 102, 20), // the program's own setsid child
		p(200, 100, 200, 50), // the run's child (its own session)
		p(201, 200, 200, 51), // its child
		p(202, 201, 202, 52), // setsid grandchild
		p(203, 1, 200, 53),   // reparented to init, but in the run's session
		p(204, 100, 290, 60), // adopted double-fork orphan (session leader gone)
		p(205, 100, 205, 61), // adopted session leader: no pipe, not attributable
		p(206, 100, 291, 40), // adopted, but started before the run
		p(207, 204, 290, 62), // child of the orphan
		p(300, 999, 300, 70), // unrelated
	}
	pids := func(ps []procInfo) []int {
		var out []int
		for _, q := range ps {
			out = append(out, q.pid)
		}
		slices.Sort(out)
		return out
	}
	tr := newTree(procID{200, 50}, nil)
	env := attrEnv{self: 100, selfSid: 100, after: 50}
	if got, want := pids(tr.attribute(procs, env)), []int{200, 201, 202, 203}; !slices.Equal(got, want) {
		t.Errorf("without the double-fork rule: %v, want %v", got, want)
	}
	env.adopt = true
	if got, want := pids(tr.attribute(procs, env)), []int{200, 201, 202, 203, 204, 207}; !slices.Equal(got, want) {
		t.Errorf("with it: %v, want %v", got, want)
	}
	// A rival run whose child started before the orphan may own it.
	tr = newTree(procID{200, 50}, nil)
	env.rivals = []rival{{start: 55}}
	if got, want := pids(tr.attribute(procs, env)), []int{200, 201, 202, 203}; !slices.Equal(got, want) {
		t.Errorf("with a rival: %v, want %v", got, want)
	}
	// Members are remembered across scans: once the child has exited, its
	// grandchild (reparented here, a session leader) is still the run's;
	// a reused pid is not.
	later := []procInfo{p(100, 1, 100, 10), p(202, 100, 202, 52), p(201, 300, 301, 90)}
	if got, want := pids(tr.attribute(later, attrEnv{self: 100, selfSid: 100})), []int{202}; !slices.Equal(got, want) {
		t.Errorf("later: %v, want %v", got, want)
	}
}
