//go:build unix

package oauth

import (
	"fmt"
	"os"
	"syscall"
)

func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// checkPrivate refuses a file or directory that others may read or write,
// or that another user owns.
func checkPrivate(p string, fi os.FileInfo) error {
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("oauth: token cache %s has mode %04o: others may read or change it, so it is refused (chmod go-rwx)", pathText(p), fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("oauth: token cache %s belongs to another user (uid %d), so it is refused", pathText(p), st.Uid)
	}
	return nil
}
