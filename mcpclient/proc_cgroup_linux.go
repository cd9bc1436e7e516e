//go:build linux

package mcpclient

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The cgroup mode of containment (see proc_linux.go): a fresh cgroup v2
// per child below this process's own, killed, drained of its zombies and
// removed at the end; the cgroups a killed mcpdrift left, swept.

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
