package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Process is a stdio MCP server started as a contained child, for callers
// that speak the protocol themselves (the gateway): the same minimal
// environment, session, process group, parent-death signal and, where the
// system allows, cgroup or subreaper containment as ListTools uses (see
// the package documentation for what remains possible). Close ends it.
type Process struct {
	// Stdin is the child's stdin; Stdout its stdout. Write whole
	// newline-terminated messages; read them with frame.LineReader.
	Stdin  io.WriteCloser
	Stdout io.Reader

	cmd        *exec.Cmd
	ct         *containment
	stdout     *os.File
	errR       *os.File
	exited     chan struct{}
	stderrDone chan struct{}
	stderr     tailBuffer
	closeOnce  sync.Once
}

// StartProcess starts cfg.Command (with cfg.PassEnv and cfg.Env) as a
// contained child. Only the command and its environment are read from
// cfg; ctx bounds the start only (Close ends the child).
func StartProcess(ctx context.Context, cfg Config) (*Process, error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, &ConfigError{Msg: "Command is empty"}
	}
	p := &Process{exited: make(chan struct{}), stderrDone: make(chan struct{}), stderr: tailBuffer{max: StderrTail}}
	var pipes [6]*os.File // inR, inW, outR, outW, errR, errW
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(pipes[:i]...)
			return nil, &UnreachableError{Target: cfg.Command[0], Err: err}
		}
		pipes[i], pipes[i+1] = r, w
	}
	newCmd := func() *exec.Cmd {
		// Not CommandContext: the child outlives the start; Close ends it.
		cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
		cmd.Env = childEnv(cfg.PassEnv, cfg.Env)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes[0], pipes[3], pipes[5]
		cmd.WaitDelay = time.Second
		return cmd
	}
	if err := ctx.Err(); err != nil {
		closeFiles(pipes[:]...)
		return nil, fmt.Errorf("mcpclient: starting the server: %w", err)
	}
	cmd, ct, err := startContained(newCmd, []*os.File{pipes[0], pipes[3], pipes[5]})
	if err != nil {
		closeFiles(pipes[:]...)
		return nil, &UnreachableError{Target: cfg.Command[0], Err: err}
	}
	closeFiles(pipes[0], pipes[3], pipes[5]) // the child's ends
	p.cmd, p.ct, p.Stdin, p.stdout, p.errR = cmd, ct, pipes[1], pipes[2], pipes[4]
	p.Stdout = pipes[2]
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	go func() {
		_, _ = io.Copy(&p.stderr, p.errR)
		close(p.stderrDone)
	}()
	return p, nil
}

// Exited is closed when the child has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Stderr returns the end of the child's stderr (at most StderrTail bytes,
// valid UTF-8). Server-controlled: escape before printing.
func (p *Process) Stderr() string { return p.stderr.String() }

// Close shuts the child down as ListTools does: stdin closed, then SIGTERM
// to its process group, then SIGKILL to everything contained, until none
// is left. It is safe to call more than once.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		p.ct.track()
		p.Stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(graceAfterEOF):
			_ = p.ct.terminate()
			select {
			case <-p.exited:
			case <-time.After(graceAfterTerm):
			}
		}
		p.ct.kill()
		<-p.exited
		p.ct.release()
		p.stdout.Close()
		select {
		case <-p.stderrDone:
		case <-time.After(200 * time.Millisecond):
		}
		p.errR.Close()
		<-p.stderrDone
	})
	return nil
}

// ErrProcessExited is what reads and writes see once the child is gone.
var ErrProcessExited = errors.New("mcpclient: the server process exited")
