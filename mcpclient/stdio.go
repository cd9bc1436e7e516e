package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// Shutdown of a stdio child (§8): close stdin, wait, terminate, kill.
const (
	graceAfterEOF  = 500 * time.Millisecond
	graceAfterTerm = 500 * time.Millisecond
	// maxNoiseLines bounds stdout lines that are not JSON-RPC messages.
	maxNoiseLines = 1000
	// maxReplies bounds answers to server requests.
	maxReplies = 100
)

// stdioTransport speaks newline-delimited JSON-RPC to a child process.
type stdioTransport struct {
	cfg    *Config
	obs    *Observation
	cmd    *exec.Cmd
	ct     *containment // what stops the child and its descendants
	target string

	stdin  *os.File
	stdout *os.File
	errR   *os.File

	lines      chan lineMsg // from the stdout reader; closed when it stops
	done       chan struct{}
	exited     chan struct{} // closed when the child has been waited for
	stderrDone chan struct{}
	stderr     tailBuffer

	readErr   error // the error that stopped the stdout reader
	abandoned map[int64]bool
	noise     int
	replies   int
}

type lineMsg struct {
	line []byte
	err  error
}

// childEnv is the minimal environment plus the passed names, then the
// explicit values.
func childEnv(pass []string, explicit map[string]string) []string {
	names := []string{"PATH", "HOME", "TMPDIR", "LANG"}
	if runtime.GOOS == "windows" {
		names = append(names, "SYSTEMROOT", "TEMP", "TMP", "USERPROFILE")
	}
	names = append(names, pass...)
	seen := map[string]bool{}
	var env []string
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if _, set := explicit[n]; set {
			continue
		}
		if v, ok := os.LookupEnv(n); ok {
			env = append(env, n+"="+v)
		}
	}
	keys := make([]string, 0, len(explicit))
	for k := range explicit {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+explicit[k])
	}
	return env
}

func startStdio(ctx context.Context, cfg *Config, obs *Observation) (*stdioTransport, error) {
	t := &stdioTransport{
		cfg: cfg, obs: obs, target: cfg.Command[0],
		lines:      make(chan lineMsg, 8),
		done:       make(chan struct{}),
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
		abandoned:  map[int64]bool{},
		stderr:     tailBuffer{max: StderrTail},
	}
	var pipes [6]*os.File // inR, inW, outR, outW, errR, errW
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(pipes[:i]...)
			return nil, &UnreachableError{Target: t.target, Err: err}
		}
		pipes[i], pipes[i+1] = r, w
	}
	newCmd := func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, cfg.Command[0], cfg.Command[1:]...)
		cmd.Env = childEnv(cfg.PassEnv, cfg.Env)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes[0], pipes[3], pipes[5]
		cmd.Cancel = func() error { return killGroup(cmd.Process) }
		cmd.WaitDelay = time.Second
		return cmd
	}
	// The child's session, process group, parent-death signal and, where
	// the system allows, cgroup or subreaper tracking (proc_*.go).
	cmd, ct, err := startContained(newCmd, []*os.File{pipes[0], pipes[3], pipes[5]})
	if err != nil {
		closeFiles(pipes[:]...)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("mcpclient: starting the server: %w", ctx.Err())
		}
		return nil, &UnreachableError{Target: t.target, Err: err}
	}
	closeFiles(pipes[0], pipes[3], pipes[5]) // the child's ends
	t.cmd, t.ct, t.stdin, t.stdout, t.errR = cmd, ct, pipes[1], pipes[2], pipes[4]
	go func() {
		_ = cmd.Wait()
		close(t.exited)
	}()
	go t.readLoop()
	go func() {
		_, _ = io.Copy(&t.stderr, t.errR)
		close(t.stderrDone)
	}()
	return t, nil
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// readLoop delivers stdout lines (without the newline) until EOF or error;
// a line longer than MaxResponseBytes stops it (frame.LineReader).
func (t *stdioTransport) readLoop() {
	defer close(t.lines)
	lr := frame.NewLineReader(t.stdout, t.cfg.MaxResponseBytes)
	for {
		line, err := lr.Next()
		if len(line) > 0 && (err == nil || err == io.EOF) {
			select {
			case t.lines <- lineMsg{line: line}:
			case <-t.done:
				return
			}
		}
		if err != nil {
			select {
			case t.lines <- lineMsg{err: err}:
			case <-t.done:
			}
			return
		}
	}
}

func (t *stdioTransport) legacySession(string) {}

func (t *stdioTransport) write(method string, body []byte, deadline time.Time) error {
	// Where pipes have no deadlines, a blocked write ends when the child
	// is killed (ctx, or the run's end).
	if err := t.stdin.SetWriteDeadline(deadline); err != nil && !errors.Is(err, os.ErrNoDeadline) {
		return &UnreachableError{Target: t.target, Err: err}
	}
	line := frame.AppendLine(make([]byte, 0, len(body)+1), body)
	if _, err := t.stdin.Write(line); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return &LimitError{Method: method, Kind: LimitRequestTime, Max: t.cfg.RequestTimeout.Milliseconds()}
		}
		return &UnreachableError{Target: t.target, Err: fmt.Errorf("writing to the server's stdin: %w%s", err, t.exitNote())}
	}
	return nil
}

// exitNote describes how the child ended, if it has.
func (t *stdioTransport) exitNote() string {
	select {
	case <-t.exited:
	case <-time.After(100 * time.Millisecond):
		return ""
	}
	if ps := t.cmd.ProcessState; ps != nil {
		return " (the server process ended: " + ps.String() + ")"
	}
	return ""
}

func (t *stdioTransport) notify(ctx context.Context, req *rpcRequest) error {
	if t.readErr != nil {
		return t.stopped(req.Method)
	}
	return t.write(req.Method, req.Body, time.Now().Add(t.cfg.RequestTimeout))
}

// stopped converts the error that stopped the stdout reader.
func (t *stdioTransport) stopped(method string) error {
	switch err := t.readErr; {
	case frame.IsLineTooLong(err):
		return &LimitError{Method: method, Kind: LimitResponseBytes, Max: t.cfg.MaxResponseBytes}
	case errors.Is(err, io.EOF):
		return &UnreachableError{Target: t.target, Err: errors.New("the server closed its stdout before answering " + method + t.exitNote())}
	default:
		return &UnreachableError{Target: t.target, Err: fmt.Errorf("reading the server's stdout: %w", err)}
	}
}

func (t *stdioTransport) roundTrip(ctx context.Context, req *rpcRequest, startup bool) (*reply, error) {
	if t.readErr != nil {
		return nil, t.stopped(req.Method)
	}
	timeout, kind := t.cfg.RequestTimeout, LimitRequestTime
	if startup {
		timeout, kind = t.cfg.StartupTimeout, LimitStartupTime
	}
	deadline := time.Now().Add(timeout)
	if err := t.write(req.Method, req.Body, deadline); err != nil {
		return nil, err
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		var lm lineMsg
		var ok bool
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("mcpclient: %s: %w", req.Method, ctx.Err())
		case <-timer.C:
			t.abandoned[req.ID] = true
			return nil, &LimitError{Method: req.Method, Kind: kind, Max: timeout.Milliseconds()}
		case lm, ok = <-t.lines:
		}
		if !ok {
			return nil, t.stopped(req.Method)
		}
		if lm.err != nil {
			t.readErr = lm.err
			return nil, t.stopped(req.Method)
		}
		line := frame.TrimSpace(lm.line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' && line[0] != '[' {
			// stdout must carry only MCP messages; servers that log to it
			// are common enough to skip such lines, bounded.
			t.noise++
			if t.noise <= 3 {
				t.obs.warn("the server wrote a line to stdout that is not a JSON-RPC message: " + quote(string(line)))
			}
			if t.noise > maxNoiseLines {
				return nil, &LimitError{Method: req.Method, Kind: LimitNoise, Max: maxNoiseLines}
			}
			continue
		}
		msg, err := parseMessage(line)
		if err != nil {
			return nil, &ResponseError{Method: req.Method, Reason: "the server wrote an invalid message: " + err.Error()}
		}
		switch msg.kind {
		case kindNotification:
			continue
		case kindRequest:
			if err := t.answer(msg, deadline); err != nil {
				return nil, err
			}
			continue
		}
		if msg.answers(req.ID) {
			return &reply{msg: msg}, nil
		}
		if n, ok := frame.Int64(msg.id); ok && t.abandoned[n] {
			t.obs.warn("a late response to request id " + strconv.FormatInt(n, 10) + " was ignored")
			continue
		}
		return nil, &ResponseError{Method: req.Method, Reason: "a response with id " + msg.idText() + " to the request with id " + strconv.FormatInt(req.ID, 10)}
	}
}

// answer replies to a server request: ping with an empty result, anything
// else with -32601 (this client declares no capabilities). At most
// maxReplies are sent; later requests are ignored.
func (t *stdioTransport) answer(msg *message, deadline time.Time) error {
	if t.replies++; t.replies > maxReplies {
		return nil
	}
	var b []byte
	if msg.method == methodPing {
		b = frame.AppendResult(nil, msg.id.Raw(), []byte(`{}`))
	} else {
		b = frame.AppendError(nil, msg.id.Raw(), &frame.Error{Code: mcpwire.CodeMethodNotFound, Message: "Method not found"})
	}
	return t.write("a reply to "+msg.method, b, deadline)
}

// close shuts the child down: stdin closed, then SIGTERM to its process
// group, then SIGKILL to everything contained (the process group, and on
// Linux the cgroup or the tracked descendants, until none is left), and
// records stderr.
func (t *stdioTransport) close(obs *Observation) {
	t.ct.track() // while the child lives, its descendants are still its
	t.stdin.Close()
	select {
	case <-t.exited:
	case <-time.After(graceAfterEOF):
		_ = t.ct.terminate()
		select {
		case <-t.exited:
		case <-time.After(graceAfterTerm):
		}
	}
	t.ct.kill()
	<-t.exited
	t.ct.release()
	close(t.done)
	t.stdout.Close()
	select {
	case <-t.stderrDone:
	case <-time.After(200 * time.Millisecond):
	}
	t.errR.Close()
	<-t.stderrDone
	obs.Stderr = t.stderr.String()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		b.dropped = true
		return n, nil
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.dropped = true
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

// String returns the kept text as valid UTF-8, starting at a rune boundary.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf
	if b.dropped {
		for i := 0; i < 4 && len(s) > 0 && s[0]&0xc0 == 0x80; i++ {
			s = s[1:]
		}
	}
	return strings.ToValidUTF8(string(bytes.Clone(s)), "\uFFFD")
}
