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
//
// The modes: proc_cgroup_linux.go and proc_subreaper_linux.go; what they
// read from /proc: proc_procfs_linux.go.

import (
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
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
