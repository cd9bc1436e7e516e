//go:build unix

package cli

import (
	"errors"
	"os"
	"syscall"
)

// lockDirectory takes a non-blocking exclusive flock on dir: one writer
// of the locks in a directory at a time. A lock file cannot carry the
// flock itself, because every write replaces it (a new inode) by rename.
// It returns busy when another process holds it.
func lockDirectory(dir string) (release func(), busy bool, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, true, nil
		}
		return nil, false, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, false, nil
}
