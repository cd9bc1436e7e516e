package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Outputs. A command never writes a report or an artifact as it goes: it
// queues each one with emit, which checks the target at once (a refusal is
// exit 2 before anything happens), and Main commits the queue only when
// the command succeeded. A run that exits 2 therefore leaves nothing of
// itself behind, in none of its outputs. Every byte committed is redacted
// (the secrets the run sent never reach an output).
//
// Where an output goes, by what is at PATH:
//
//	"" or "-", /dev/stdout, /dev/stderr    the process's own stream
//	/dev/fd/N, /proc/self/fd/N             that descriptor, written straight
//	nothing (a new path)                    created atomically (temp file + rename)
//	a regular file                          replaced atomically, its mode kept
//	a character device or a FIFO            written straight (no create, no truncate)
//	a symlink to a character device/FIFO    written straight, as /dev/stdout is
//	a directory                             refused
//	a symlink to a file or a directory      refused: a planted symlink must not redirect a report
//	a dangling symlink, a socket, ...       refused
type targetKind int

const (
	toStdout targetKind = iota
	toStderr
	toAtomic   // a regular file or a new path
	toStraight // a device, a FIFO, a descriptor
)

type output struct {
	path string // as given (for messages)
	// what the output is ("the declared baseline"), said in the line that
	// names the files a run wrote (wroteLine); "" for "the output".
	// plural, when set, names several of them written into one
	// directory ("observed records").
	what, plural string
	kind         targetKind
	mode         fs.FileMode
	data         []byte
	tmp          string // staged temporary file (toAtomic)
	// guard, when set, is asked once every output is staged and before
	// any is replaced: an error refuses the whole commit (the lock's
	// check that nobody changed it since it was read).
	guard func() error
	// stream, when set, writes the output at commit instead of data
	// (emitStream).
	stream func(io.Writer) error
	// staging, when set, is the output being written into tmp, while the
	// run goes on (emitStream) or at commit: it reports once, when the
	// file is written.
	staging chan error
	staged  error // what staging reported, once waited for
	waited  bool
	early   bool // staged while the run went on (emitStream), not at commit
	// exact outputs are written as made or not at all (emitSnapshot): one
	// the redaction would change fails the commit.
	exact bool
}

// wait waits for an output being staged while the run went on.
func (o *output) wait() error {
	if o.staging != nil && !o.waited {
		o.staged, o.waited = <-o.staging, true
	}
	return o.staged
}

var fdPath = regexp.MustCompile(`^/(dev/fd|proc/self/fd)/[0-9]+$`)

func cannotWrite(path, why string) error {
	return &exitError{ExitUsage, "cannot write " + safetext.Quote(path) + ": " + why}
}

// classifyTarget says how an output to path would be written, or why it is
// refused. Nothing is created or changed.
func classifyTarget(path string) (targetKind, fs.FileMode, error) {
	switch {
	case path == "" || path == "-" || path == "/dev/stdout":
		return toStdout, 0, nil
	case path == "/dev/stderr":
		return toStderr, 0, nil
	case fdPath.MatchString(path):
		return toStraight, 0, nil
	}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(path)
		dst, derr := os.Stat(dir)
		switch {
		case errors.Is(derr, fs.ErrNotExist):
			return 0, 0, cannotWrite(path, "the directory "+safetext.Quote(dir)+" does not exist")
		case derr != nil:
			return 0, 0, cannotWrite(path, safetext.Inert(errText(derr)))
		case !dst.IsDir():
			return 0, 0, cannotWrite(path, safetext.Quote(dir)+" is not a directory")
		}
		return toAtomic, 0o644, nil
	case err != nil:
		return 0, 0, cannotWrite(path, safetext.Inert(errText(err)))
	}
	m := st.Mode()
	switch {
	case m.IsRegular():
		return toAtomic, m.Perm(), nil
	case m.IsDir():
		return 0, 0, cannotWrite(path, "it is a directory")
	case m&fs.ModeCharDevice != 0 || m&fs.ModeNamedPipe != 0:
		return toStraight, 0, nil
	case m&fs.ModeSymlink != 0:
		tst, err := os.Stat(path)
		switch {
		case err != nil:
			return 0, 0, cannotWrite(path, "it is a symlink whose target cannot be reached; mcpdrift does not write through symlinks to files")
		case tst.Mode()&fs.ModeNamedPipe != 0 || tst.Mode()&fs.ModeCharDevice != 0:
			return toStraight, 0, nil
		case tst.IsDir():
			return 0, 0, cannotWrite(path, "it is a symlink to a directory; give the real path")
		default:
			return 0, 0, cannotWrite(path, "it is a symlink to a file: a planted symlink must not redirect a report; give the real path")
		}
	}
	return 0, 0, cannotWrite(path, "it is not a regular file, a character device or a FIFO")
}

// errText is an error's text without the path (the message names it).
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// emit queues data for path. The target is checked now; two outputs of
// one run to the same target are refused.
func (e *env) emit(path string, data []byte) error { return e.emitAs("", path, data) }

// emitAs is emit saying what the output is (output.what).
func (e *env) emitAs(what, path string, data []byte) error {
	kind, mode, err := classifyTarget(path)
	if err != nil {
		return err
	}
	key := func(o *output) string {
		switch o.kind {
		case toStdout:
			return "\x00stdout"
		case toStderr:
			return "\x00stderr"
		}
		if abs, err := filepath.Abs(o.path); err == nil {
			return abs
		}
		return o.path
	}
	o := &output{path: path, kind: kind, mode: mode, data: data, what: what}
	for _, p := range e.outputs {
		if key(p) == key(o) {
			return usageErr("two outputs of this run go to %s: give each its own path", safetext.Quote(describe(path)))
		}
	}
	e.outputs = append(e.outputs, o)
	return nil
}

func describe(path string) string {
	if path == "" || path == "-" {
		return "stdout"
	}
	return path
}

// commit writes the queued outputs, redacted: first every atomic file is
// staged beside its target (so a full disk or a read-only directory fails
// before anything is replaced), then targets are replaced and streams
// written, in the order the outputs were queued.
func (e *env) commit() error {
	outs := e.outputs
	e.outputs = nil
	cleanup := func() {
		for _, o := range outs {
			o.wait()
			if o.tmp != "" {
				os.Remove(o.tmp)
			}
		}
	}
	// Every atomic file not yet staged is staged now, each on a goroutine
	// of its own while the others are written (a 68 MB baseline beside a
	// 172 MB snapshot still being staged); then each is waited for, in
	// order.
	//
	// fail ends the commit with err, found at output k, or with the error
	// of an output before k whose staging failed: the first failing output
	// in order is the one reported, as when they were written one by one.
	fail := func(k int, err error) error {
		for _, o := range outs[:k] {
			if werr := o.wait(); werr != nil {
				err = cannotWrite(o.path, safetext.Inert(errText(werr)))
				break
			}
		}
		cleanup()
		return err
	}
	for k, o := range outs {
		if o.staging != nil {
			if e.secrets.Empty() {
				continue // staged while the run went on: waited for below
			}
			// A secret became known after the file was staged: it is
			// written again, gathered and redacted.
			if err := o.wait(); err != nil {
				return fail(k, cannotWrite(o.path, safetext.Inert(errText(err))))
			}
			os.Remove(o.tmp)
			o.tmp, o.staging, o.staged, o.waited = "", nil, nil, false
		}
		if o.stream != nil && (o.kind != toAtomic || !e.secrets.Empty()) {
			// Only a file written by a run with nothing to redact is
			// streamed; anything else is gathered and goes as data.
			var b bytes.Buffer
			if err := o.stream(&b); err != nil {
				return fail(k, cannotWrite(o.path, safetext.Inert(errText(err))))
			}
			o.data, o.stream = b.Bytes(), nil
		}
		if o.stream == nil {
			red := e.secrets.Bytes(o.data)
			if o.exact && !bytes.Equal(red, o.data) {
				return fail(k, &exitError{ExitUsage, "refusing to write " + safetext.Quote(describe(o.path)) + ": it would carry a piece of a secret this run sent, and a snapshot holds the tools as the server sent them or is not written (redacted, they would no longer match their digests); nothing was written. Rotate the credential and fix the server"})
			}
			o.data = red
		}
		if o.kind != toAtomic {
			continue
		}
		// Re-check: the target may have changed since emit.
		if err := atomicStill(o.path); err != nil {
			return fail(k, err)
		}
		f, err := os.CreateTemp(filepath.Dir(o.path), ".mcpdrift-*.tmp")
		if err != nil {
			return fail(k, cannotWrite(o.path, safetext.Inert(errText(err))))
		}
		o.stage(f, false)
	}
	for _, o := range outs {
		if o.staging == nil {
			continue
		}
		if err := o.wait(); err != nil {
			cleanup()
			return cannotWrite(o.path, safetext.Inert(errText(err)))
		}
		if o.early {
			// Staged while the run went on; the target is checked
			// again, before anything is replaced.
			if err := atomicStill(o.path); err != nil {
				cleanup()
				return err
			}
		}
	}
	for _, o := range outs {
		if o.guard != nil {
			if err := o.guard(); err != nil {
				cleanup()
				return err
			}
		}
	}
	for i, o := range outs {
		var err error
		switch o.kind {
		case toStdout:
			_, err = e.stdout.Write(o.data)
		case toStderr:
			_, err = e.stderr.Write(o.data)
		case toStraight:
			err = writeStraight(o.path, o.data)
		case toAtomic:
			if err = os.Rename(o.tmp, o.path); err == nil {
				o.tmp = ""
			}
		}
		if err != nil {
			cleanup()
			return cannotWrite(o.path, safetext.Inert(errText(err))+fmt.Sprintf(" (%d of %d outputs were written)", i, len(outs)))
		}
	}
	if line := wroteLine(outs); line != "" && !e.quiet {
		fmt.Fprintln(e.stderr, line)
	}
	return nil
}

// wroteLine is the one line that says which files a run wrote, and what
// each is: "mcpdrift: wrote the declared baseline to "d.json" and the
// snapshot to "d.snapshot.json"" ("" when every output went to stdout or
// stderr). Outputs of one kind (plural) written into one directory are
// counted: "12 observed records into "evidence"".
func wroteLine(outs []*output) string {
	var parts []string
	for i := 0; i < len(outs); i++ {
		o := outs[i]
		if o.kind != toAtomic && o.kind != toStraight {
			continue
		}
		what := o.what
		if what == "" {
			what = "the output"
		}
		n, dir := 1, filepath.Dir(o.path)
		for o.plural != "" && i+n < len(outs) && outs[i+n].plural == o.plural && filepath.Dir(outs[i+n].path) == dir {
			n++
		}
		if n > 1 {
			parts = append(parts, fmt.Sprintf("%d %s into %s", n, o.plural, safetext.Quote(dir)))
			i += n - 1
			continue
		}
		parts = append(parts, what+" to "+safetext.Quote(o.path))
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return "mcpdrift: wrote " + parts[0]
	}
	return "mcpdrift: wrote " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// writeStraight writes to an existing device, FIFO or descriptor without
// creating, truncating or replacing it.
func writeStraight(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsDir() {
		f.Close()
		return errors.New("it is a directory")
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// emitMany is emitAs for one of several outputs of a kind, written into
// one directory: the line that says what a run wrote counts them
// (plural: "observed records").
func (e *env) emitMany(what, plural, path string, data []byte) error {
	if err := e.emitAs(what, path, data); err != nil {
		return err
	}
	e.outputs[len(e.outputs)-1].plural = plural
	return nil
}

// emitGuarded is emitAs with a guard asked before anything is replaced.
func (e *env) emitGuarded(what, path string, data []byte, guard func() error) error {
	if err := e.emitAs(what, path, data); err != nil {
		return err
	}
	e.outputs[len(e.outputs)-1].guard = guard
	return nil
}

// emitStream is emit for an output too large to hold whole in memory (a
// snapshot of 100,000 tools is 172 MB): write produces it when the outputs
// are committed, into the staged file through a buffer. A run that has
// secrets to redact, or a target that is not a regular file, gathers
// write's output first and commits it as emit's data, redacted.
//
// A regular file of a run with nothing to redact is staged at once, on
// another goroutine, while the run goes on (a 172 MB snapshot is written
// while the baseline is built); write must then only read what does not
// change afterwards. It is still replaced only when the run succeeds, and
// removed when it fails; a secret that becomes known before the commit
// has it written again, redacted.
func (e *env) emitStream(what, path string, write func(io.Writer) error) error {
	if err := e.emitAs(what, path, nil); err != nil {
		return err
	}
	o := e.outputs[len(e.outputs)-1]
	o.stream = write
	if o.kind != toAtomic || !e.secrets.Empty() {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(o.path), ".mcpdrift-*.tmp")
	if err != nil {
		return cannotWrite(o.path, safetext.Inert(errText(err)))
	}
	o.stage(f, true)
	return nil
}

// emitSnapshot is emitStream for a snapshot: its tools are the bytes the
// server sent, bound to their digests, so it is written as made or not at
// all. A run with secrets whose snapshot the redaction would change (a
// piece of a secret the run sent, in a spelling the reflection checks did
// not refuse) fails at commit, with nothing written, instead of writing
// a snapshot that no longer matches its digests.
func (e *env) emitSnapshot(path string, write func(io.Writer) error) error {
	if err := e.emitStream("the snapshot", path, write); err != nil {
		return err
	}
	e.outputs[len(e.outputs)-1].exact = true
	return nil
}

// stage writes o into f, the staged file, on a goroutine of its own
// (writeStaged): wait says when it is written. early says it is staged
// while the run goes on, before the commit (emitStream).
func (o *output) stage(f *os.File, early bool) {
	o.tmp, o.early = f.Name(), early
	o.staging = make(chan error, 1)
	go func() { o.staging <- o.writeStaged(f) }()
}

// atomicStill checks that path is still a target replaced atomically (a
// regular file, or none): it may have changed since the output was
// queued.
func atomicStill(path string) error {
	kind, _, err := classifyTarget(path)
	if err == nil && kind != toAtomic {
		err = cannotWrite(path, "it changed while the run was going")
	}
	return err
}

// writeStaged writes o (its stream, else its data) into f, the staged
// file, and closes it: synced, with the target's mode.
func (o *output) writeStaged(f *os.File) error {
	var werr error
	if o.stream != nil {
		bw := bufio.NewWriterSize(f, 64<<10)
		if werr = o.stream(bw); werr == nil {
			werr = bw.Flush()
		}
	} else {
		_, werr = f.Write(o.data)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), o.mode)
	}
	return werr
}

// discard drops the queued outputs (the run failed): a file being staged
// is waited for and removed.
func (e *env) discard() {
	for _, o := range e.outputs {
		o.wait()
		if o.tmp != "" {
			os.Remove(o.tmp)
		}
	}
	e.outputs = nil
}

// writeNow writes one output at once, redacted, by the rules of emit and
// commit (a long-running command's files: the proxy's --observed-out,
// rewritten whenever the list changes), without a line for each write.
func (e *env) writeNow(path string, data []byte) error {
	saved, quiet := e.outputs, e.quiet
	e.outputs, e.quiet = nil, true
	defer func() { e.outputs, e.quiet = saved, quiet }()
	if err := e.emit(path, data); err != nil {
		return err
	}
	return e.commit()
}
