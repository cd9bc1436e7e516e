// Package mapfile maps a large input file into memory, read-only, in
// place of reading it into a buffer, where the file can be held unchanged
// for as long as it is mapped.
//
// Why. A buffer the size of the input is fresh memory, and fresh memory
// is what a large run pays most for on a virtual machine that hands freed
// memory back to its host (free page reporting; the 2-vCPU machines of
// docs/benchmarks.md): memory first touched waits for the host, far
// longer than memory freed a moment before. The file's pages are in the
// page cache already (the file was just written, or read by an earlier
// run): mapped, they cost nothing new, and a large file run is faster
// mapped than read (BenchmarkInputBytes).
//
// The bytes seen must be the file's, from the first byte read to the last
// output written: a mapping shows a file's changes as they are made, and
// a file shortened under a mapping faults (SIGBUS) where it was cut. So a
// file is mapped only under a read lease (Linux's F_SETLEASE, F_RDLCK),
// which the kernel grants only when no one has the file open for writing.
// From then on, an open for writing or a truncation asks for the lease
// back (SIGIO) and waits: the run then copies the bytes into memory of
// its own, moves the copy over the mapping's addresses in one step
// (mremap), and gives the lease up, so the writer waits only for that copy
// (an open that asks not to wait is refused meanwhile, EWOULDBLOCK), and
// what it then does no longer reaches the run's bytes. Where the lease is
// refused (the file open for writing elsewhere, a file the user does not
// own, leases off, a file system not known to be local, any other system
// than Linux), the file is read as before. Unchanged reports whether the
// file is still the one mapped (its device, inode, size, mode,
// modification and change times): what a run checks before it writes its
// outputs, so that a run whose input a writer changed is refused rather
// than believed, even where the bytes it read were its own copy. Left: a
// copy that cannot be made (no memory) keeps the lease, and a writer then
// waits until the run ends or the system's lease-break-time passes (45 s
// by default); a file truncated after that and read beyond its new end
// faults and ends the run (exit 2), never with a verdict.
//
// It is off until Enable turns it on: the command line turns it on only
// for the runs that read their inputs from files whole and end within
// seconds (hugemem's file runs), whose outputs are checked against their
// inputs before they are written; never for a process that lives long (a
// file leased for hours is copied into it whenever someone writes it).
package mapfile

import (
	"errors"
	"sync/atomic"
)

// Min is the smallest file mapped: below it the bytes read are few, and
// the lease and the mapping cost more than they save.
const Min = 4 << 20

var (
	enabled  atomic.Bool
	minSize  atomic.Int64
	mapped   atomic.Int64 // files mapped, for Mapped
	detached atomic.Int64 // mappings detached, for Detached
)

func init() { minSize.Store(Min) }

// Enable turns mapping on or off for the files opened from now on.
func Enable(on bool) { enabled.Store(on) }

// Enabled reports whether files are mapped.
func Enabled() bool { return enabled.Load() }

// Mapped returns how many files this process has mapped so far (a test's
// evidence that a path it drives maps).
func Mapped() int64 { return mapped.Load() }

// Detached returns how many mappings this process has detached from
// their files so far (a writer asked for the file while it was mapped).
func Detached() int64 { return detached.Load() }

// SetMin sets the smallest file mapped and returns the previous value:
// tests lower it to map every file they drive (and so find any code that
// would write into an input's bytes, which a read-only mapping turns into
// a fault).
func SetMin(n int64) int64 { return minSize.Swap(n) }

// ErrChanged is Unchanged's error: the file is not the one mapped.
var ErrChanged = errors.New("the file changed, or may have, while it was being read (its size, mode, modification or change time moved, or it was replaced); run again once nothing writes it")
