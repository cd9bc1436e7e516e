//go:build linux

package mcpclient

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// What containment reads from /proc: a process's parent, session, state
// and start time (stat), every process, and the pipes a process holds.

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
