//go:build linux

package mcpclient

import (
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The subreaper mode of containment (see proc_linux.go): this process a
// child subreaper while any stdio run is active, the runs' descendants
// tracked through /proc and attributed to the run they belong to, killed
// and reaped at its end.

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
