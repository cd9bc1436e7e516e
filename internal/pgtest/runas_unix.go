//go:build unix

package pgtest

import (
	"os/exec"
	"syscall"
)

// runAs makes a command run as the user and group uid and gid.
func runAs(uid, gid int) func(*exec.Cmd) {
	return func(cmd *exec.Cmd) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
}
