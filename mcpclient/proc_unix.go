//go:build unix

package mcpclient

import (
	"os"
	"syscall"
)

// On every unix the child starts a session of its own (setsid), which also
// makes it the leader of a new process group: the group (grandchildren
// that did not move out of it) can be signalled as one, the child has no
// controlling terminal, and on Linux the session id marks its descendants
// (proc_linux.go). What else contains it is per system: proc_linux.go and
// proc_unix_other.go.

// terminate asks the child's process group to stop.
func terminate(p *os.Process) error { return signalGroup(p, syscall.SIGTERM) }

// killGroup kills the child's process group.
func killGroup(p *os.Process) error { return signalGroup(p, syscall.SIGKILL) }

func signalGroup(p *os.Process, sig syscall.Signal) error {
	if p == nil || p.Pid <= 0 {
		return nil
	}
	err := syscall.Kill(-p.Pid, sig)
	if err == syscall.ESRCH {
		return nil
	}
	return err
}
