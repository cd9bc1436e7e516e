//go:build unix

package cli

import (
	"os"
	"syscall"
)

// maxRSSKiB is the peak RSS of an ended process, in KiB (Linux; macOS
// reports bytes, so its figure reads 1024 times too large).
func maxRSSKiB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}
