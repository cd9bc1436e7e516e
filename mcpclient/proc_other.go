//go:build !unix

package mcpclient

import (
	"os"
	"os/exec"
)

// setProcessGroup does nothing here: without process groups only the child
// itself is killed (grandchildren may outlive the run).
func setProcessGroup(*exec.Cmd) {}

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
