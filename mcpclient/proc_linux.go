//go:build linux

package mcpclient

// Containment of a stdio child on Linux.
//
// Every child gets a session of its own (setsid, so also a process group),
// Pdeathsig SIGKILL, and the strongest of:
//
//   - cgroup: where cgroup v2 is mounted and this process may create a
//     cgroup below its own (root, or a delegated subtree), the child is
//     started inside a fresh cgroup (clone3 CLONE_INTO_CGROUP, so not even
//     its first instruction runs outside). At the end cgroup.kill kills
//     every process in it (before Linux 5.14: cgroup.procs is read and each
//     process is sent SIGKILL until it is empty), the zombies that become
//     this process's are reaped, and the cgroup is removed. Leaving the
//     cgroup needs write access to another cgroup's cgroup.procs: a server
//     running as root can, an unprivileged one cannot. A cgroup left by an
//     mcpdrift that was itself killed (name mcpdrift.PID.START.N, its owner
//     gone) is emptied and removed by the next run that creates one beside it.
//   - subreaper: otherwise this process becomes a child subreaper
//     (PR_SET_CHILD_SUBREAPER) for as long as any stdio run is active, so
//     that orphans of the child's tree are reparented here instead of to
//     init, and the child's descendants are tracked through /proc: every
//     process whose parent chain leads to the child, every process in a
//     session one of them belongs to (the child's own session, and any it
//     created), and every process reparented here that holds one of the
//     child's stdio pipes. They are scanned every trackEvery, once more just
//     before shutdown, and at the end killed and scanned again until none is
//     left; the zombies this process inherits are reaped (wait4 on exactly
//     those pids, never on the direct child, which belongs to os/exec).
//     A process reparented here that is in a session other than this
//     process's and is not a session leader — the shape of a daemon's double
//     fork, and never a child this process started itself — is killed with
//     the run whose child started before it, when no other active run's
//     child did too (or, at the latest, when the last run ends). Out of
//     reach: a process that makes itself a session leader, drops the child's
//     pipes and is orphaned between two scans; one started through another
//     daemon (systemd-run, at, a container runtime); one that runs as
//     another user (setuid: it cannot be signalled); one a debugger
//     reparents; one that forks faster than the kill loop (bounded by
//     killBound).
//   - process-group: if even prctl fails, only the process group is killed.
//
// The process group is killed in every mode, and Pdeathsig kills the
// direct child if this process dies first; the child's descendants then
// survive in the subreaper mode and stay in their cgroup in the cgroup mode
// (until the next run sweeps it).
//
// Pdeathsig fires when the thread that forked the child exits, not the
// process. The Go runtime never ends a thread except when a goroutine exits
// while locked to it, and the child is started and shut down within one
// ListTools call, on its goroutine: the thread is locked around Start so
// the fork happens on the thread that goroutine holds, and a caller that
// locked the goroutine to a thread keeps it until ListTools has returned,
// by which time the child is gone.
//
// Being a subreaper is a property of the whole process. While a stdio run
// is active (in any mode: the cgroup mode uses it to reap its zombies), any
// orphan of any child of the process is reparented here, not only the
// run's. The flag is set when the first run starts and cleared when the
// last ends, unless the process was a subreaper already, in which case it
// is left as it was and the double-fork rule above is not applied (the
// orphans may be the program's). A program that starts children of its own
// while stdio runs are active must reap the orphans it inherits, and one of
// its own children that daemonizes (double-forks into another session)
// during a run may be killed when the last run ends.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Containment modes, strongest first.
const (
	containCgroup       = "cgroup"
	containSubreaper    = "subreaper"
	containProcessGroup = "process-group"
)

// Test knobs; zero in production.
var (
	// forceContainment caps the mode tried: containSubreaper skips
	// cgroups, containProcessGroup skips the subreaper too.
	forceContainment string
	// cgroupParentOverride is where child cgroups are created instead of
	// below this process's own cgroup.
	cgroupParentOverride string
	// containmentHook is told the mode (and cgroup directory) of each child
	// started.
	containmentHook func(mode, cgroupDir string)
	// releaseHook is told how long the end took, from the first SIGKILL to
	// the end of release.
	releaseHook func(time.Duration)
)

const (
	// killBound bounds the kill-and-rescan loop at the end of a run.
	killBound = 3 * time.Second
	// reapBound bounds waiting for a killed cgroup's zombies to become ours.
	reapBound = time.Second
	// trackEvery is how often a subreaper-mode run's descendants are scanned.
	trackEvery = 100 * time.Millisecond
	// cgroupPrefix starts the name of every cgroup created here.
	cgroupPrefix = "mcpdrift."
)

// procID names a process across pid reuse: pid and start time.
type procID struct {
	pid   int
	start uint64
}

// containment is what stops one stdio child and its descendants.
type containment struct {
	mode  string
	proc  *os.Process
	reaps bool // holds a reference on the subreaper (see reaper)
	// child, cg and tree are set once, under reaper.mu, when the child
	// has started; tree (what is known of the descendants in the subreaper
	// mode) is guarded by reaper.mu.
	child    procID
	cg       *cgroup
	tree     *tree
	once     sync.Once
	killedAt time.Time
}

// startContained starts the command newCmd builds (called again, without
// a cgroup, when starting into a cgroup fails), childFiles being the
// child's ends of its stdio pipes.
func startContained(newCmd func() *exec.Cmd, childFiles []*os.File) (*exec.Cmd, *containment, error) {
	c := &containment{mode: containProcessGroup}
	// Without a readable /proc nothing could be tracked or reaped: no
	// subreaper then (and no cgroup: membership is read there too).
	procOK := selfID().start != 0
	c.reaps = reaper.enter(c, procOK && forceContainment != containProcessGroup)
	var cg *cgroup
	if procOK && forceContainment == "" && !cgroupBroken.Load() {
		cg, _ = newCgroup() // unavailable: fall back silently
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cmd *exec.Cmd
	for retried := false; ; retried = true {
		cmd = newCmd()
		attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		if cg != nil {
			attr.UseCgroupFD, attr.CgroupFD = true, cg.fd
		}
		cmd.SysProcAttr = attr
		err := cmd.Start()
		if err != nil && cg != nil {
			// clone3 refused (seccomp, an old kernel, no right to move a
			// process there): try again without the cgroup. A failed
			// Start never ran the command.
			cg.remove()
			cg = nil
			continue
		}
		if err != nil {
			reaper.leave(c)
			return nil, nil, err
		}
		if retried {
			cgroupBroken.Store(true)
		}
		break
	}
	c.proc = cmd.Process
	child := procID{pid: cmd.Process.Pid}
	if st, ok := readStat(child.pid); ok { // not yet waited for: readable
		child.start = st.start
	}
	var tr *tree
	if cg != nil {
		cg.closeFD()
	} else if c.reaps {
		tr = newTree(child, pipeInodes(childFiles))
	}
	reaper.started(c, child, cg, tr)
	if h := containmentHook; h != nil {
		dir := ""
		if c.cg != nil {
			dir = c.cg.dir
		}
		h(c.mode, dir)
	}
	return cmd, c, nil
}

// track records the child's descendants now (before shutdown makes
// orphans of them).
func (c *containment) track() {
	if c.tree == nil {
		return
	}
	procs, err := scanProcs()
	if err != nil {
		return
	}
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	c.tree.attribute(procs, reaper.envLocked(c, false))
}

// terminate sends SIGTERM to the child's process group.
func (c *containment) terminate() error { return terminate(c.proc) }

// kill sends SIGKILL to everything contained, once.
func (c *containment) kill() {
	c.killedAt = time.Now()
	_ = killGroup(c.proc)
	switch {
	case c.cg != nil:
		c.cg.killAll()
	case c.tree != nil:
		c.killPass(map[procID]bool{})
	}
}

// release (after the child has been waited for; once) kills what is left
// until nothing is, reaps the zombies this process inherited, removes the
// cgroup and gives up the subreaper reference.
func (c *containment) release() { c.once.Do(c.finish) }

func (c *containment) finish() {
	switch {
	case c.cg != nil:
		c.cg.drain(killBound)
		if c.reaps {
			c.cg.reapZombies(c.child)
		}
		c.cg.remove()
	case c.tree != nil:
		c.killTree()
	}
	reaper.leave(c)
	if h := releaseHook; h != nil && !c.killedAt.IsZero() {
		h(time.Since(c.killedAt))
	}
}

// killTree kills and rescans until no process of the tree is left (or
// killBound has passed).
func (c *containment) killTree() {
	deadline := time.Now().Add(killBound)
	skip := map[procID]bool{} // could not be signalled (another user)
	for delay := time.Millisecond; ; delay = min(2*delay, 20*time.Millisecond) {
		pending, ok := c.killPass(skip)
		if !ok || pending == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(delay)
	}
}

// killPass scans once, kills the live processes of the tree and reaps its
// zombies that are this process's children; pending counts what should
// still disappear.
func (c *containment) killPass(skip map[procID]bool) (pending int, ok bool) {
	procs, err := scanProcs()
	if err != nil {
		return 0, false
	}
	reaper.mu.Lock()
	env := reaper.envLocked(c, true)
	marked := c.tree.attribute(procs, env)
	reaper.mu.Unlock()
	return settle(marked, c.child, env.self, skip), true
}

// settle kills the live processes of marked and reaps those of its zombies
// that are self's children (never exclude, os/exec's child). It returns
// how many should still disappear.
func settle(marked []procInfo, exclude procID, self int, skip map[procID]bool) int {
	in := make(map[int]bool, len(marked))
	for _, p := range marked {
		in[p.pid] = true
	}
	pending := 0
	for _, p := range marked {
		id := procID{p.pid, p.start}
		switch {
		case p.state == 'X': // dead, being reaped
		case p.state == 'Z':
			switch {
			case id == exclude:
			case p.ppid == self:
				if !reapPid(p.pid) {
					pending++ // a leader whose other threads are still exiting
				}
			case in[p.ppid]:
				pending++ // its parent is being killed: it will be ours
			}
		case skip[id]:
		default:
			if err := killProc(p); err != nil {
				skip[id] = true
				continue
			}
			pending++
		}
	}
	return pending
}

// reaper is the process-wide state behind the subreaper mode.
var reaper reaperState

type reaperState struct {
	mu   sync.Mutex
	runs map[*containment]bool // every active run, any mode
	refs int                   // runs relying on the subreaper
	// owned: this package set PR_SET_CHILD_SUBREAPER and clears it when
	// the last run ends. host: the process was a subreaper already.
	owned, host bool
	// window is the start time of the first child since the flag was set:
	// adopted processes started before it are not the runs'.
	window uint64
	// pipes are the child's pipe ends of the subreaper-mode runs since the
	// flag was set; sweep says one ran.
	pipes    pipeEnds
	sweep    bool
	tracking bool
}

// enter registers a run (before its child starts, so that no other run's
// shutdown takes the new child for an orphan) and, if reap, takes a
// reference on the subreaper, setting it if needed; it reports whether
// the process is a subreaper.
func (r *reaperState) enter(c *containment, reap bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs == nil {
		r.runs = map[*containment]bool{}
	}
	r.runs[c] = true
	if !reap {
		return false
	}
	if r.refs == 0 && !r.owned {
		set, err := getSubreaper()
		switch {
		case err != nil:
			return false
		case set:
			r.host = true
		default:
			if err := setSubreaper(true); err != nil {
				return false
			}
			r.owned, r.host, r.window, r.sweep = true, false, 0, false
			r.pipes = pipeEnds{}
		}
	}
	r.refs++
	return true
}

// started records c's started child, its cgroup or tree and so its mode
// (other runs read them), and starts the tracker for a subreaper-mode run.
func (r *reaperState) started(c *containment, child procID, cg *cgroup, tr *tree) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.child, c.cg, c.tree = child, cg, tr
	switch {
	case cg != nil:
		c.mode = containCgroup
	case tr != nil:
		c.mode = containSubreaper
	}
	if !c.reaps {
		return
	}
	if r.window == 0 {
		r.window = c.child.start
	}
	if c.tree == nil {
		return
	}
	r.sweep = true
	for ino, mode := range tr.pipes {
		if r.pipes != nil {
			r.pipes[ino] = mode
		}
	}
	if !r.tracking {
		r.tracking = true
		go r.track()
	}
}

// leave unregisters a run. The last one out sweeps the double-fork
// orphans of the subreaper-mode runs and clears the flag it set.
func (r *reaperState) leave(c *containment) {
	r.mu.Lock()
	delete(r.runs, c)
	if c.reaps {
		r.refs--
	}
	sweep := r.refs == 0 && r.owned && r.sweep
	var pipes pipeEnds
	if sweep {
		pipes, r.sweep = r.pipes, false
	}
	r.mu.Unlock()
	if sweep {
		sweepAdopted(pipes)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refs == 0 && r.owned {
		if setSubreaper(false) == nil {
			r.owned, r.window, r.pipes = false, 0, nil
		}
	}
}

// sweepAdopted kills the adopted orphans attributable to the runs that
// have ended, when no run is active.
func sweepAdopted(pipes pipeEnds) {
	t := newTree(procID{}, pipes)
	deadline := time.Now().Add(killBound)
	skip := map[procID]bool{}
	for delay := time.Millisecond; ; delay = min(2*delay, 20*time.Millisecond) {
		procs, err := scanProcs()
		if err != nil {
			return
		}
		reaper.mu.Lock()
		env := reaper.envLocked(nil, true)
		marked := t.attribute(procs, env)
		reaper.mu.Unlock()
		if settle(marked, procID{}, env.self, skip) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(delay)
	}
}

// envLocked is what attribution of c's processes (nil: of runs that have
// ended) may assume now; adopt asks for the double-fork rule, granted when
// this package owns the subreaper flag.
func (r *reaperState) envLocked(c *containment, adopt bool) attrEnv {
	sid, _ := unix.Getsid(0)
	env := attrEnv{
		self:    os.Getpid(),
		selfSid: sid,
		adopt:   adopt && r.owned && !r.host && r.window != 0,
		after:   r.window,
	}
	if c != nil {
		env.after = max(env.after, c.child.start)
	}
	for o := range r.runs {
		if o == c || o.child.pid == 0 {
			continue // a run whose child has not started has no orphans yet
		}
		rv := rival{start: o.child.start}
		if o.cg != nil {
			rv.cgroup = o.cg.rel
		}
		env.rivals = append(env.rivals, rv)
	}
	return env
}

// track scans the descendants of the subreaper-mode runs every
// trackEvery while there are any.
func (r *reaperState) track() {
	for {
		time.Sleep(trackEvery)
		r.mu.Lock()
		n := 0
		for c := range r.runs {
			if c.tree != nil {
				n++
			}
		}
		if n == 0 {
			r.tracking = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		procs, err := scanProcs()
		if err != nil {
			continue
		}
		r.mu.Lock()
		for c := range r.runs {
			if c.tree != nil {
				c.tree.attribute(procs, r.envLocked(c, false))
			}
		}
		r.mu.Unlock()
	}
}

func getSubreaper() (bool, error) {
	var v int32
	err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0)
	return v != 0, err
}

func setSubreaper(on bool) error {
	var v uintptr
	if on {
		v = 1
	}
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, v, 0, 0, 0)
}

// tree is what a subreaper-mode run knows of its child's descendants.
type tree struct {
	child    procID
	members  map[int]uint64 // pid → start time of every process seen
	sessions map[int]bool   // sessions its processes belong to
	pipes    pipeEnds       // the child's ends of its stdio pipes
}

func newTree(child procID, pipes pipeEnds) *tree {
	t := &tree{child: child, members: map[int]uint64{}, sessions: map[int]bool{}, pipes: pipes}
	if child.pid > 0 {
		t.sessions[child.pid] = true // setsid: the child leads its own
	}
	return t
}

// attrEnv is the context of one attribution.
type attrEnv struct {
	self, selfSid int
	// adopt applies the double-fork rule: an orphan reparented to self, in
	// a session other than self's, that is not a session leader, started
	// at or after after, and that no rival may own.
	adopt  bool
	after  uint64
	rivals []rival
}

// rival is another active run, which may own an adopted orphan: one
// started no earlier than its child, or (cgroup mode) one in its cgroup.
type rival struct {
	start  uint64
	cgroup string
}

func (env attrEnv) rivalOwns(p procInfo) bool {
	for _, rv := range env.rivals {
		if rv.cgroup != "" {
			if cgroupOf(p.pid) == rv.cgroup {
				return true
			}
			continue // not in its cgroup: not its
		}
		if rv.start <= p.start {
			return true
		}
	}
	return false
}

// attribute returns the processes of procs that belong to the run and
// records them: the child; processes seen before (same pid and start
// time); processes in the run's sessions; processes reparented to self
// that hold one of the child's pipes; with env.adopt, double-fork orphans no other run may own;
// and every descendant of those. Nothing in self's session is ever
// marked, nor self.
func (t *tree) attribute(procs []procInfo, env attrEnv) []procInfo {
	kids := make(map[int][]int, len(procs))
	index := make(map[int]int, len(procs))
	live := make(map[int]bool)
	for i, p := range procs {
		index[p.pid] = i
		kids[p.ppid] = append(kids[p.ppid], i)
		live[p.sid] = true
	}
	// A session with no process left may get its number reused.
	for s := range t.sessions {
		if !live[s] {
			delete(t.sessions, s)
		}
	}
	for pid, start := range t.members {
		if i, ok := index[pid]; !ok || procs[i].start != start {
			delete(t.members, pid)
		}
	}
	ours := func(p procInfo) bool { return p.pid != env.self && p.pid > 0 && p.sid != env.selfSid }
	marked := make([]bool, len(procs))
	var queue []int
	for i, p := range procs {
		if ours(p) && (t.owns(p) || t.adopted(p, env)) {
			marked[i] = true
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, k := range kids[procs[i].pid] {
			if !marked[k] && ours(procs[k]) {
				marked[k] = true
				queue = append(queue, k)
			}
		}
	}
	var out []procInfo
	for i, p := range procs {
		if marked[i] {
			out = append(out, p)
			t.members[p.pid] = p.start
			if p.sid > 0 {
				t.sessions[p.sid] = true
			}
		}
	}
	return out
}

// owns: the child, a process seen before, or one in the run's sessions.
func (t *tree) owns(p procInfo) bool {
	if t.child.pid != 0 && p.pid == t.child.pid && p.start == t.child.start {
		return true
	}
	if start, ok := t.members[p.pid]; ok && start == p.start {
		return true
	}
	return t.sessions[p.sid]
}

// adopted: an orphan reparented to self that holds one of the child's
// pipes or, with env.adopt, has the shape of a daemon's double fork.
func (t *tree) adopted(p procInfo, env attrEnv) bool {
	if p.ppid != env.self {
		return false
	}
	// Not a session leader, yet in a session other than self's: forked by
	// a process of that session, so not self's own child but adopted. (A
	// session leader reparented here looks like a child self started with
	// setsid: only the pipes tell.)
	if env.adopt && p.pid != p.sid && p.start >= env.after && !env.rivalOwns(p) {
		return true
	}
	return len(t.pipes) > 0 && p.state != 'Z' && holdsPipe(p.pid, t.pipes)
}

// killProc sends SIGKILL to p if it is still the process that was seen
// (pidfd where the kernel has it, so a reused pid is never signalled).
// It returns an error only when the process could not be signalled.
func killProc(p procInfo) error {
	fd, ferr := unix.PidfdOpen(p.pid, 0)
	switch {
	case ferr == unix.ESRCH:
		return nil
	case ferr == nil:
		defer unix.Close(fd)
	}
	if q, ok := readStat(p.pid); !ok || q.start != p.start {
		return nil // gone, or the pid is another process's now
	}
	var err error
	if ferr == nil {
		err = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	} else {
		err = unix.Kill(p.pid, unix.SIGKILL) // no pidfd: a narrow reuse race remains
	}
	if err == unix.ESRCH {
		return nil
	}
	return err
}

// reapPid reaps pid, a zombie child of this process, and reports whether
// it is gone. The leader of a process whose other threads are still
// exiting shows as a zombie before it can be waited for.
func reapPid(pid int) bool {
	var ws unix.WaitStatus
	for {
		wpid, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ECHILD:
			return true // not (or no longer) this process's child
		}
		return err == nil && wpid == pid
	}
}

// cgroup is a cgroup v2 directory created for one child.
type cgroup struct {
	dir string // absolute path
	rel string // its path as /proc/PID/cgroup names it; "" if unknown
	fd  int    // open until the child has started; -1 after
}

var (
	cgroupSeq atomic.Uint64
	// cgroupBroken: starting into a cgroup failed where starting without
	// one worked, so later runs do not try again.
	cgroupBroken atomic.Bool
	swept        sync.Map // parent directories already swept of stale cgroups
)

// newCgroup creates a fresh cgroup below this process's own cgroup v2
// directory (or cgroupParentOverride).
func newCgroup() (*cgroup, error) {
	parent, rel := cgroupParentOverride, ""
	if parent == "" {
		var err error
		if parent, rel, err = ownCgroup(); err != nil {
			return nil, err
		}
	}
	self := selfID()
	if _, done := swept.LoadOrStore(parent, true); !done {
		sweepStaleCgroups(parent, self)
	}
	name := fmt.Sprintf("%s%d.%d.%d", cgroupPrefix, self.pid, self.start, cgroupSeq.Add(1))
	dir := filepath.Join(parent, name)
	if err := unix.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Rmdir(dir)
		return nil, err
	}
	g := &cgroup{dir: dir, fd: fd}
	if rel != "" {
		g.rel = path.Join(rel, name)
	}
	return g, nil
}

func (g *cgroup) closeFD() {
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
}

// killAll kills every process in the cgroup: cgroup.kill, or before Linux
// 5.14 SIGKILL to each process cgroup.procs lists.
func (g *cgroup) killAll() {
	if writeFile(filepath.Join(g.dir, "cgroup.kill"), "1") == nil {
		return
	}
	for _, pid := range g.procs() {
		g.killMember(pid)
	}
}

// killMember kills pid if it is (still) in the cgroup.
func (g *cgroup) killMember(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return
	}
	if err == nil {
		defer unix.Close(fd)
	}
	if g.rel != "" && cgroupOf(pid) != g.rel {
		return
	}
	if err == nil {
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	} else {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}

// procs lists the live processes in the cgroup (zombies are not listed).
func (g *cgroup) procs() []int {
	b, err := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// drain kills until the cgroup is empty (or bound has passed).
func (g *cgroup) drain(bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	for delay := time.Millisecond; ; delay = min(2*delay, 20*time.Millisecond) {
		g.killAll()
		if len(g.procs()) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(delay)
	}
}

// reapZombies reaps the cgroup's zombies as they become this process's
// (each when its parent has exited), never exclude (os/exec's child).
func (g *cgroup) reapZombies(exclude procID) {
	if g.rel == "" {
		return
	}
	self := os.Getpid()
	deadline := time.Now().Add(reapBound)
	for delay := time.Millisecond; ; delay = min(2*delay, 20*time.Millisecond) {
		procs, err := scanProcs()
		if err != nil {
			return
		}
		pending := 0
		for _, p := range procs {
			if p.state != 'Z' || p.pid == self || (procID{p.pid, p.start}) == exclude || cgroupOf(p.pid) != g.rel {
				continue
			}
			if p.ppid == self {
				if !reapPid(p.pid) {
					pending++ // a leader whose other threads are still exiting
				}
			} else if cgroupOf(p.ppid) == g.rel {
				pending++ // its parent is exiting: it will be ours
			}
		}
		if pending == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(delay)
	}
}

// remove removes the (empty) cgroup, retrying while the kernel still
// counts exiting tasks; if that takes longer than killBound, it keeps
// trying in the background for a minute.
func (g *cgroup) remove() {
	g.closeFD()
	if g.rmdir(killBound) {
		return
	}
	go func() {
		g.drain(time.Minute)
		g.rmdir(time.Minute)
	}()
}

func (g *cgroup) rmdir(bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		err := unix.Rmdir(g.dir)
		if err == nil || err == unix.ENOENT {
			return true
		}
		if err != unix.EBUSY && err != unix.EINTR || time.Now().After(deadline) {
			return false
		}
		g.killAll()
		time.Sleep(delay)
	}
}

// sweepStaleCgroups empties and removes the cgroups in parent left by an
// mcpdrift process that is gone (killed before it could remove them).
func sweepStaleCgroups(parent string, self procID) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		owner, ok := parseCgroupName(e.Name())
		if !ok || !e.IsDir() || owner == self {
			continue
		}
		if st, alive := readStat(owner.pid); alive && st.start == owner.start {
			continue
		}
		g := &cgroup{dir: filepath.Join(parent, e.Name()), fd: -1}
		g.drain(time.Second)
		g.rmdir(time.Second)
	}
}

// parseCgroupName reads the owner out of "mcpdrift.PID.START.N".
func parseCgroupName(name string) (procID, bool) {
	rest, ok := strings.CutPrefix(name, cgroupPrefix)
	if !ok {
		return procID{}, false
	}
	f := strings.Split(rest, ".")
	if len(f) != 3 {
		return procID{}, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	_, err3 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 {
		return procID{}, false
	}
	return procID{pid, start}, true
}

// ownCgroup finds this process's cgroup v2 directory: its path from
// /proc/self/cgroup and the cgroup2 mount from /proc/self/mountinfo.
func ownCgroup() (dir, rel string, err error) {
	rel = cgroupOf(os.Getpid())
	if rel == "" || strings.HasSuffix(rel, " (deleted)") {
		return "", "", errors.New("no cgroup v2 membership")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	for line := range strings.Lines(string(mi)) {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		f := strings.Fields(pre)
		if len(f) < 5 {
			continue
		}
		root, mnt := unescapeMount(f[3]), unescapeMount(f[4])
		sub, ok := strings.CutPrefix(rel, root)
		if !ok || root != "/" && sub != "" && sub[0] != '/' {
			continue
		}
		dir = filepath.Join(mnt, sub)
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
			continue
		}
		return dir, rel, nil
	}
	return "", "", errors.New("no cgroup2 mount holds this process's cgroup")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupOf is pid's cgroup v2 path ("" if none or unreadable).
func cgroupOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return strings.TrimRight(p, "\n")
		}
	}
	return ""
}

func writeFile(name, s string) error {
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// procInfo is what /proc/PID/stat says of a process.
type procInfo struct {
	pid, ppid, pgrp, sid int
	state                byte
	start                uint64 // clock ticks after boot
}

// selfID is this process's pid and start time.
var selfID = sync.OnceValue(func() procID {
	id := procID{pid: os.Getpid()}
	if st, ok := readStat(id.pid); ok {
		id.start = st.start
	}
	return id
})

// parseStat parses /proc/PID/stat; the command name may hold anything,
// so the fields are read after its last ')'.
func parseStat(b []byte) (procInfo, bool) {
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 1 || close < open {
		return procInfo{}, false
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return procInfo{}, false
	}
	f := bytes.Fields(b[close+1:])
	// state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	// utime stime cutime cstime priority nice threads itrealvalue starttime
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	p := procInfo{pid: pid, state: f[0][0]}
	var e [4]error
	p.ppid, e[0] = strconv.Atoi(string(f[1]))
	p.pgrp, e[1] = strconv.Atoi(string(f[2]))
	p.sid, e[2] = strconv.Atoi(string(f[3]))
	p.start, e[3] = strconv.ParseUint(string(f[19]), 10, 64)
	if errors.Join(e[:]...) != nil {
		return procInfo{}, false
	}
	return p, true
}

func readStat(pid int) (procInfo, bool) {
	var buf [1024]byte
	return readStatBuf(pid, buf[:])
}

func readStatBuf(pid int, buf []byte) (procInfo, bool) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return procInfo{}, false
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return procInfo{}, false
		}
		if m == 0 {
			break
		}
		n += m
	}
	return parseStat(buf[:n])
}

// scanProcs reads every process's stat.
func scanProcs() ([]procInfo, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 1024)
	procs := make([]procInfo, 0, len(names))
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if p, ok := readStatBuf(pid, buf); ok {
			procs = append(procs, p)
		}
	}
	return procs, nil
}

// pipeEnds maps the inode of each of the child's stdio pipes to the
// access mode (O_RDONLY, O_WRONLY) of the child's end; the other end is
// this process's.
type pipeEnds map[uint64]int

// pipeInodes reads the child's ends of its pipes.
func pipeInodes(files []*os.File) pipeEnds {
	m := pipeEnds{}
	for _, f := range files {
		if f == nil {
			continue
		}
		fi, err := f.Stat()
		if err != nil {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			continue
		}
		rc, err := f.SyscallConn() // not Fd(): that would make the file blocking
		if err != nil {
			continue
		}
		mode := -1
		_ = rc.Control(func(fd uintptr) {
			if fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0); err == nil {
				mode = fl & unix.O_ACCMODE
			}
		})
		if mode == unix.O_RDONLY || mode == unix.O_WRONLY {
			m[st.Ino] = mode
		}
	}
	return m
}

// holdsPipe reports whether pid holds one of the child's ends of the pipes
// and none of this process's ends. A process this process has forked and
// that has not yet called exec holds copies of all its descriptors (this
// process's ends, and the child's until they are closed after the start);
// a descendant of the child never gets this process's ends, which are
// close-on-exec here and passed to no one.
func holdsPipe(pid int, pipes pipeEnds) bool {
	dir := "/proc/" + strconv.Itoa(pid)
	d, err := os.Open(dir + "/fd")
	if err != nil {
		return false
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	child := false
	for _, n := range names {
		l, err := os.Readlink(dir + "/fd/" + n)
		if err != nil {
			continue
		}
		s, ok := strings.CutPrefix(l, "pipe:[")
		if !ok {
			continue
		}
		ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64)
		want, ours := pipes[ino]
		if err != nil || !ours {
			continue
		}
		switch fdMode(dir + "/fdinfo/" + n) {
		case want, unix.O_RDWR: // the child's end (or reopened read-write)
			child = true
		case -1:
		default:
			return false // this process's end: a copy of this process
		}
	}
	return child
}

// fdMode is the access mode in an fdinfo file (-1 if unreadable).
func fdMode(name string) int {
	b, err := os.ReadFile(name)
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			fl, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err != nil {
				return -1
			}
			return int(fl) & unix.O_ACCMODE
		}
	}
	return -1
}
