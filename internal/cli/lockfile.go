package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// How the lock commands read and write mcpdrift.lock.
//
//   - The lock is a regular file: a symlink is refused (a planted link
//     must not redirect what CI trusts), as is a directory or a device.
//   - Every read validates it (lock.Parse: schema, digests, pointers).
//   - A command that writes takes an exclusive, non-blocking flock on the
//     lock's directory before it reads, and holds it until its write is
//     committed: a second writer is refused at once (exit 2) instead of
//     waiting or losing the first one's update. Before the new lock
//     replaces the old one, the file is read again, and a lock that
//     changed since it was read (a writer that takes no flock, a git
//     checkout) refuses the write: nothing is half-written.
//   - The write is atomic (a temporary file beside it, then rename) and
//     committed only when the command succeeded (output.go).

// maxLockBytes bounds a lock read (a lock of 100 servers of 10,000 tools
// is well under it).
const maxLockBytes = 1 << 30

type lockFile struct {
	path   string
	exists bool
	data   []byte // as read ("" when it does not exist)
	lock   *lock.Lock
}

func registerLockPath(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "lock", lock.DefaultFile, "the lock file")
}

// readLockBytes reads the lock at path: (nil, false) when there is none.
func readLockBytes(path string) ([]byte, bool, error) {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, inputErr(path, errors.New(errText(err)))
	case st.Mode()&fs.ModeSymlink != 0:
		return nil, false, inputErr(path, errors.New("the lock is a symlink: mcpdrift reads and writes a lock only as a regular file (a planted link must not redirect it); give the real path"))
	case !st.Mode().IsRegular():
		return nil, false, inputErr(path, errors.New("the lock is not a regular file"))
	case st.Size() > maxLockBytes:
		return nil, false, inputErr(path, fmt.Errorf("%d bytes is larger than a lock may be (%d)", st.Size(), maxLockBytes))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, inputErr(path, errors.New(errText(err)))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxLockBytes+1))
	if err != nil {
		return nil, false, inputErr(path, errors.New(errText(err)))
	}
	return b, true, nil
}

// openLock reads and validates the lock. A missing lock is an error
// unless create is set (lock add starts one).
func openLock(path string, create bool) (*lockFile, error) {
	b, ok, err := readLockBytes(path)
	if err != nil {
		return nil, err
	}
	lf := &lockFile{path: path, exists: ok, data: b}
	if !ok {
		if !create {
			return nil, usageErr("there is no lock at %s: create one with mcpdrift lock add NAME (--url URL | --stdio -- CMD ARGS...), or give --lock FILE", safetext.Quote(path))
		}
		lf.lock = &lock.Lock{}
		return lf, nil
	}
	l, err := lock.Parse(b, path)
	if err != nil {
		return nil, &exitError{ExitUsage, err.Error() + " (the lock was not changed)"}
	}
	lf.lock = l
	return lf, nil
}

// openLockForWrite takes the directory's flock, then reads the lock; the
// flock is released when the run ends, after its write.
func openLockForWrite(e *env, path string, create bool) (*lockFile, error) {
	dir := filepath.Dir(path)
	release, busy, err := lockDirectory(dir)
	switch {
	case busy:
		return nil, usageErr("another mcpdrift is writing a lock in %s (it holds the directory's lock): nothing was changed; run again when it has finished", safetext.Quote(dir))
	case errors.Is(err, fs.ErrNotExist):
		return nil, usageErr("cannot write %s: the directory %s does not exist", safetext.Quote(path), safetext.Quote(dir))
	case err != nil:
		return nil, usageErr("cannot lock %s for writing: %s", safetext.Quote(dir), safetext.Inert(errText(err)))
	}
	e.releases = append(e.releases, release)
	return openLock(path, create)
}

// save queues the new lock; the write is refused if the file changed
// since it was read.
func (lf *lockFile) save(e *env) error {
	data := lf.lock.Marshal()
	// A lock is configuration, committed to a repository: a secret of this
	// run in it (a literal key in a source url that a lock written before
	// the rule still has, a header value that is also a path segment) is
	// refused, never written redacted, which would point the lock at
	// another address.
	if label := e.secrets.Find(string(data)); label != "" {
		return usageErr("%s would hold %s: a lock never stores a secret, and nothing was written; write it in the source as a ${env:NAME} placeholder", safetext.Quote(lf.path), safetext.Escape(label))
	}
	return e.emitGuarded("the lock", lf.path, data, func() error {
		now, ok, err := readLockBytes(lf.path)
		if err != nil {
			return err
		}
		if ok != lf.exists || !bytes.Equal(now, lf.data) {
			return usageErr("%s changed while this run was going (another writer?): nothing was written; run again", safetext.Quote(lf.path))
		}
		return nil
	})
}

// server returns the named server or a usage error naming the servers
// there are.
func (lf *lockFile) server(name string) (*lock.Server, error) {
	if s := lf.lock.Server(name); s != nil {
		return s, nil
	}
	var names []string
	for _, s := range lf.lock.Servers {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return nil, usageErr("server %s is not in %s, which has no servers", safetext.Quote(name), safetext.Quote(lf.path))
	}
	return nil, usageErr("server %s is not in %s (it has: %s)", safetext.Quote(name), safetext.Quote(lf.path), safetext.Escape(joinMax(names, 20)))
}

func joinMax(xs []string, max int) string {
	var b bytes.Buffer
	for i, x := range xs {
		if i == max {
			fmt.Fprintf(&b, ", and %d more", len(xs)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
	return b.String()
}
