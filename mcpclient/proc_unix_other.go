//go:build unix && !linux

package mcpclient

import (
	"os"
	"os/exec"
	"syscall"
)

// On unix systems other than Linux (macOS, the BSDs) the child gets its own
// session and process group, and the group is killed when the run ends.
// That is all: there is no parent-death signal, no cgroup and no /proc to
// walk here, so a descendant that leaves the group (setsid, setpgid, a
// daemon's double fork) outlives the run, and if mcpdrift itself is
// killed the child keeps running until it notices its stdin closed.

const containProcessGroup = "process-group"

// containment is what stops a stdio child and its descendants.
type containment struct {
	mode string
	proc *os.Process
}

// startContained starts the command newCmd builds, in a session of its own.
func startContained(newCmd func() *exec.Cmd, _ []*os.File) (*exec.Cmd, *containment, error) {
	cmd := newCmd()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return cmd, &containment{mode: containProcessGroup, proc: cmd.Process}, nil
}

// track has nothing to record here.
func (c *containment) track() {}

// terminate sends SIGTERM to the child's process group.
func (c *containment) terminate() error { return terminate(c.proc) }

// kill sends SIGKILL to the child's process group.
func (c *containment) kill() { _ = killGroup(c.proc) }

// release has nothing to clean up here.
func (c *containment) release() {}
