package hugemem

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// advise advises the 2 MiB pages that lie wholly inside b.
func advise(b []byte, populate bool) {
	lo, hi := interior(uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if lo == hi {
		return
	}
	// Errors are ignored: EINVAL where the kernel has no transparent
	// huge pages or no MADV_POPULATE_WRITE (before Linux 5.14), ENOMEM
	// where memory is short; the memory is then faulted in page by page
	// when it is touched, as without the advice.
	region := b[lo:hi]
	_ = unix.Madvise(region, unix.MADV_HUGEPAGE)
	if populate {
		_ = unix.Madvise(region, unix.MADV_POPULATE_WRITE)
	}
}
