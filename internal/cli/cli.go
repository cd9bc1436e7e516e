// Package cli turns command-line flags into library calls and results into
// output and exit codes. It holds no logic a library user would need.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Exit codes: one table for every command (a contract; see docs/configuration.md, "Exit codes").
const (
	ExitOK           = 0 // success; for gate/diff: no finding (warnings allowed)
	ExitFindings     = 1 // findings that need review
	ExitUsage        = 2 // bad usage or bad input
	ExitInconclusive = 3 // the evidence cannot support a verdict
)

// DefaultMaxInput is the default cap on any input file (--max-input-bytes).
// Inputs are read whole (digests need every byte); the cap bounds memory.
// 256 MiB takes a 100,000-tool manifest of typical tools (about 170 MB).
const DefaultMaxInput = 256 << 20

// Version is set by the linker or read from the build info.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0-dev"
}

// exitError carries an exit code and a message for stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &exitError{ExitUsage, fmt.Sprintf(format, args...)}
}

// inputErr reports a problem with an input file (exit 2); the message names
// the file (escaped).
func inputErr(file string, err error) error {
	return &exitError{ExitUsage, safetext.Escape(file) + ": " + err.Error()}
}

type env struct {
	stdin  io.Reader
	stdout io.Writer // redacting
	stderr io.Writer // redacting
	tty    bool      // stdout is a terminal
	// stdinRead is set once an input was read from stdin.
	stdinRead bool
	// quiet is the command's --quiet: no line saying what it wrote.
	quiet bool
	ctx   context.Context
	code  int // exit code set by a command that succeeded with a verdict
	// secrets are the values this run sends (headers, URL credentials,
	// env values of a stdio child); they are redacted from every byte
	// written to stdout, stderr and files.
	secrets *redact.Set
	// outputs are queued by emit and written by commit when the command
	// succeeded, so a failed run leaves nothing behind.
	outputs []*output
	// releases run when the run ends, after its outputs were committed or
	// discarded (a lock's directory flock is held until its write).
	releases []func()
}

func newEnv(stdin io.Reader, stdout, stderr io.Writer) *env {
	s := &redact.Set{}
	for _, f := range report.Escapers() {
		s.AddEscaper(f)
	}
	tty := false
	if f, ok := stdout.(*os.File); ok {
		st, err := f.Stat()
		tty = err == nil && st.Mode()&os.ModeCharDevice != 0
	}
	return &env{stdin: stdin, stdout: s.Writer(stdout), stderr: s.Writer(stderr), tty: tty, secrets: s}
}

// Main runs the CLI and returns the exit code. It never panics out: a
// panic is reported as an internal error (exit 2) without a stack trace.
// Outputs are written only when the command succeeded (see output.go).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	return MainContext(context.Background(), args, stdin, stdout, stderr)
}

// MainContext is Main with a context that long-running commands (proxy,
// mock-server) end on, besides SIGINT and SIGTERM.
func MainContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	e := newEnv(stdin, stdout, stderr)
	e.ctx = ctx
	// Deferred first, so run last: after a panic's discard has waited
	// for the goroutines still writing outputs.
	defer func() {
		for i := len(e.releases) - 1; i >= 0; i-- {
			e.releases[i]()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			e.discard()
			fmt.Fprintf(e.stderr, "mcpdrift: internal error: %s\n", safetext.Escape(fmt.Sprint(r)))
			code = ExitUsage
		}
	}()
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	err := root.Execute()
	if err == nil {
		err = e.commit()
	}
	if err != nil {
		e.discard()
		fmt.Fprintf(e.stderr, "mcpdrift: %s\n", errMessage(err))
		return exitCodeOf(err)
	}
	return e.code
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "mcpdrift",
		Short:         "Pin MCP tool manifests, observe what servers serve, and report what drifted",
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// cobra adds its completion command (bash, zsh, fish, powershell)
	// when the root runs: mcpdrift completion --help.
	// Settings: --config FILE (else MCPDRIFT_CONFIG, else mcpdrift.yaml
	// here), MCPDRIFT_<FLAG>; the command line wins (settings.go).
	root.PersistentFlags().String(configFlag, "", "settings file: flag defaults and suppressions (default: "+manifest.SuppressionsFile+" in the current directory, when it holds settings)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if err := e.applySettings(cmd); err != nil {
			return err
		}
		e.quiet = flagTrue(cmd, "quiet")
		return nil
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%s (see %s --help)", safetext.Inert(err.Error()), c.CommandPath())
	})
	root.AddCommand(newObserve(e), newPin(e), newGate(e), newDiff(e), newDrift(e), newProxy(e), newMockServer(e), newCodes(e), newDemo(e), newLock(e), newReview(e), newApprove(e))
	root.AddCommand(newWatch(e), newScan(e))
	root.AddCommand(newHistory(e))
	root.AddCommand(newDiscover(e))
	root.AddCommand(newAuth(e))
	root.AddCommand(newVersion(e))
	return root
}

// readAll is io.ReadAll into a buffer sized for size bytes when the size
// is known (size >= 0): a file read whole is allocated once, not grown and
// copied as io.ReadAll grows its buffer.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size < 0 {
		return io.ReadAll(r)
	}
	if size >= math.MaxInt {
		// A 32-bit system given --max-input-bytes above 2 GiB: no
		// buffer of that size can be made.
		return nil, fmt.Errorf("%d bytes cannot be held in memory on this system", size)
	}
	b := make([]byte, 0, int(size)+1) // +1: the read that finds the end
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the file grew
		}
	}
}

// readInput reads a file (or stdin for "-") up to max bytes; larger inputs
// are refused without being read whole.
func readInput(e *env, path string, max int64) ([]byte, error) {
	in, err := openInput(e, path, max, true)
	if in.file != nil {
		in.file.Close()
	}
	return in.bytes, err
}

// input is an input openInput opened: its bytes, and when it is a
// regular file, the file, open (for the caller to read again and close),
// and its size. A regular file opened without reading has no bytes.
type input struct {
	bytes []byte
	file  *os.File
	size  int64
}

// openInput is readInput keeping a regular file open; with read false, a
// regular file (within max) is opened and not read: the caller reads it
// from file (stdin and anything else that is not a regular file, a pipe,
// is read whole: it cannot be read again).
func openInput(e *env, path string, max int64, read bool) (in input, err error) {
	if max < 1 {
		return in, usageErr("--max-input-bytes must be at least 1 (default %d)", DefaultMaxInput)
	}
	var r io.Reader
	size := int64(-1) // of a regular file, when known
	if path == "-" {
		// stdin can be read once: a second input given as - would read
		// nothing and be reported as empty.
		if e.stdinRead {
			return in, usageErr("- (stdin) is given for more than one input; stdin can be read only once: give the others as files")
		}
		e.stdinRead = true
		r = e.stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return in, inputErr(path, errors.Unwrap(err))
		}
		defer func() {
			if in.file == nil {
				f.Close()
			}
		}()
		if st, err := f.Stat(); err == nil {
			if st.IsDir() {
				return in, inputErr(path, errors.New("is a directory"))
			}
			if st.Mode().IsRegular() && st.Size() > max {
				return in, inputErr(path, fmt.Errorf("%d bytes is larger than --max-input-bytes %d", st.Size(), max))
			}
			if st.Mode().IsRegular() {
				size = st.Size()
			}
		}
		if size >= 0 && !read {
			return input{file: f, size: size}, nil
		}
		r = f
		if size >= 0 {
			defer func() {
				if err == nil {
					in.file, in.size = f, size
				}
			}()
		}
	}
	b, err := readAll(io.LimitReader(r, max+1), size)
	if err != nil {
		return in, inputErr(path, err)
	}
	if int64(len(b)) > max {
		return in, inputErr(path, fmt.Errorf("larger than --max-input-bytes %d", max))
	}
	return input{bytes: b}, nil
}
