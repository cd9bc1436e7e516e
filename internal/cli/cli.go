// Package cli turns command-line flags into library calls and results into
// output and exit codes. It holds no logic a library user would need.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Exit codes: one table for every command (a contract; see README).
const (
	ExitOK           = 0 // success; for gate/diff: no finding (warnings allowed)
	ExitFindings     = 1 // findings that need review
	ExitUsage        = 2 // bad usage or bad input
	ExitInconclusive = 3 // the evidence cannot support a verdict
)

// DefaultMaxInput is the default cap on any input file (--max-input-bytes).
// Inputs are read whole (digests need every byte); the cap bounds memory.
const DefaultMaxInput = 64 << 20

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
	stdout io.Writer
	stderr io.Writer
	code   int // exit code set by a command that succeeded with a verdict
}

// Main runs the CLI and returns the exit code. It never panics out: a
// panic is reported as an internal error (exit 2) without a stack trace.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "mcpdrift: internal error: %s\n", safetext.Escape(fmt.Sprint(r)))
			code = ExitUsage
		}
	}()
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err != nil {
		var xe *exitError
		if errors.As(err, &xe) {
			fmt.Fprintf(stderr, "mcpdrift: %s\n", xe.msg)
			return xe.code
		}
		fmt.Fprintf(stderr, "mcpdrift: %s\n", safetext.Escape(err.Error()))
		return ExitUsage
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
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%s (see %s --help)", safetext.Escape(err.Error()), c.CommandPath())
	})
	root.AddCommand(newObserve(e), newPin(e), newGate(e), newDiff(e), newDrift(e), newMockServer(e), newCodes(e), newDemo(e))
	return root
}

// readInput reads a file (or stdin for "-") up to max bytes; larger inputs
// are refused without being read whole.
func readInput(e *env, path string, max int64) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		r = e.stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, inputErr(path, errors.Unwrap(err))
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			if st.IsDir() {
				return nil, inputErr(path, errors.New("is a directory"))
			}
			if st.Mode().IsRegular() && st.Size() > max {
				return nil, inputErr(path, fmt.Errorf("%d bytes is larger than --max-input-bytes %d", st.Size(), max))
			}
		}
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, inputErr(path, err)
	}
	if int64(len(b)) > max {
		return nil, inputErr(path, fmt.Errorf("larger than --max-input-bytes %d", max))
	}
	return b, nil
}

// writeOutput writes to stdout, or atomically to a file (a temporary file
// renamed into place), so a failed run never leaves a partial file.
func writeOutput(e *env, path string, data []byte) error {
	if path == "" || path == "-" {
		_, err := e.stdout.Write(data)
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".mcpdrift-*.tmp")
	if err != nil {
		return &exitError{ExitUsage, "cannot write " + safetext.Escape(path) + ": " + safetext.Escape(err.Error())}
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return &exitError{ExitUsage, "cannot write " + safetext.Escape(path) + ": " + safetext.Escape(werr.Error())}
	}
	return nil
}
