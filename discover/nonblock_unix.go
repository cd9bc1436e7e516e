//go:build unix

package discover

import "syscall"

// oNonblock keeps an open of a FIFO swapped in for a file from blocking.
const oNonblock = syscall.O_NONBLOCK
