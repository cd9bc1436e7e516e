//go:build !unix

package mcpclient

import (
	"os"
	"os/exec"
)

// Without unix process groups (Windows) only the child itself is killed
// when the run ends: its own children, and anything they start, may
// outlive the run. (A Job Object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
// would contain them; it is not implemented.)

const containProcess = "process"

// containment is what stops a stdio child.
type containment struct {
	mode string
	proc *os.Process
}

// startContained starts the command newCmd builds.
func startContained(newCmd func() *exec.Cmd, _ []*os.File) (*exec.Cmd, *containment, error) {
	cmd := newCmd()
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return cmd, &containment{mode: containProcess, proc: cmd.Process}, nil
}

func (c *containment) track()           {}
func (c *containment) terminate() error { return killGroup(c.proc) }
func (c *containment) kill()            { _ = killGroup(c.proc) }
func (c *containment) release()         {}

func terminate(p *os.Process) error { return killGroup(p) }

func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	err := p.Kill()
	if err == os.ErrProcessDone {
		return nil
	}
	return err
}
