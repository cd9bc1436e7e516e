//go:build unix

package mcpclient

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in a process group of its own, so that
// the whole group (grandchildren included) can be signalled.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

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
