//go:build !unix

package oauth

import (
	"errors"
	"os"
)

func openNoFollow(p string) (*os.File, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, errors.New("a symbolic link")
	}
	return os.Open(p)
}

// checkPrivate: the files' access is the ACLs of the user's profile
// directory on this system; modes are not checked.
func checkPrivate(string, os.FileInfo) error { return nil }
