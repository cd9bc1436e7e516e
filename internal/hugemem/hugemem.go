// Package hugemem backs the few large buffers of a large run (an input
// read whole, a parse tree's arrays, an artifact's buffer) with
// transparent huge pages where the system gives them only on request.
//
// Linux's transparent huge pages are "madvise" on many systems (Debian
// and Ubuntu among them, and the 2-vCPU machines of docs/benchmarks.md):
// memory gets 2 MiB pages only where the program asks, and the Go runtime
// asks for none of its heap. A buffer of hundreds of megabytes is then
// faulted in 4 KiB at a time, and on a virtual machine each fault costs
// an exit to the hypervisor. Advised, a large file run takes a fraction
// of the faults and of the system time (BenchmarkFreshBuffer, beside
// make; the figures are docs/benchmarks.md's).
//
// The advice changes no byte of memory. It is a hint about how the kernel
// backs the memory, ignored where huge pages are off (THP "never") or
// unknown (other systems, older kernels). Only the 2 MiB-aligned interior
// of a buffer of at least Min bytes is advised, so that no allocation
// alive beside it shares its huge pages. The advice is the address
// range's, not the buffer's: it outlives the buffer, and what the Go heap
// allocates there once the buffer is freed is in huge pages too (the
// file runs count on that: their outputs are built in the parse tree's
// memory).
//
// It is off until Enable turns it on. The command line turns it on only
// for the runs that read their inputs from files whole and end (observe,
// pin --input and --observed, gate, diff): there the buffers are filled,
// used and given back to the Go heap within a second or two, for the
// outputs to reuse. A run that lives longer (drift and pin --url list a
// server for seconds; the gateway serves for hours) frees such buffers
// early and goes on allocating beside them while the Go scavenger hands
// freed memory back to the system in pieces: drift of a large list cost
// more CPU with its declared baseline's parse advised (the mechanism was
// not isolated), so it is not. The Go runtime
// stopped advising its heap in Go 1.21.1 for the same family of reasons:
// allocations stalled in the kernel's compaction (golang/go#61718), and
// memory grew where the kernel filled the scavenger's holes
// (golang/go#64332).
//
// GODEBUG=disablethp, the runtime's own switch for huge pages (on for any
// value but 0, as the runtime reads it), keeps it off whatever Enable is
// told.
package hugemem

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Min is the smallest buffer advised: below it, the interior aligned to
// 2 MiB may be empty, and the faults saved are few.
const Min = 4 << 20

var (
	enabled atomic.Bool
	advised atomic.Int64 // buffers advised, for Advised
)

// disabledByGODEBUG is the runtime's disablethp, turned on by this
// process's GODEBUG.
var disabledByGODEBUG = godebugDisablesTHP(os.Getenv("GODEBUG"))

// godebugDisablesTHP reports whether a GODEBUG value turns the runtime's
// disablethp on, read as the runtime reads it at startup: comma-separated
// key=value fields, the key exact, the value a 32-bit decimal integer
// (strconv.ParseInt), a later valid setting overriding an earlier one and
// an invalid one ignored; on is any value but 0.
func godebugDisablesTHP(godebug string) bool {
	var v int64
	for _, field := range strings.Split(godebug, ",") {
		key, value, ok := strings.Cut(field, "=")
		if !ok || key != "disablethp" {
			continue
		}
		if n, err := strconv.ParseInt(value, 10, 32); err == nil {
			v = n
		}
	}
	return v != 0
}

// HugePage is the size of a transparent huge page on the systems advised
// (x86-64 and arm64 with 4 KiB base pages).
const HugePage = 2 << 20

// interior returns the offsets, within the n bytes at address p, of the
// whole huge pages they hold: [lo, hi), empty (lo == hi) when there are
// none.
func interior(p, n uintptr) (lo, hi uintptr) {
	start := (p + HugePage - 1) &^ (HugePage - 1)
	end := (p + n) &^ (HugePage - 1)
	if end <= start {
		return 0, 0
	}
	return start - p, end - p
}

// sysAdvise advises the pages that lie wholly inside b (hugemem_linux.go;
// nothing elsewhere). A test replaces it to see what is advised.
var sysAdvise = advise

// Enable turns the advice on or off for the buffers made from now on.
func Enable(on bool) { enabled.Store(on && !disabledByGODEBUG) }

// Enabled reports whether buffers are advised.
func Enabled() bool { return enabled.Load() }

// Advised returns how many buffers this process has advised so far (a
// test's evidence that a path it drives is advised).
func Advised() int64 { return advised.Load() }

// Make is make([]T, n, c), its memory advised when it is at least Min
// bytes. With populate, that memory is also faulted in at once (for a
// buffer that will be filled whole); without, each 2 MiB page is faulted
// in when first touched.
func Make[T any](n, c int, populate bool) []T {
	s := make([]T, n, c)
	var zero T
	size := uintptr(c) * unsafe.Sizeof(zero)
	if size >= Min && enabled.Load() {
		advised.Add(1)
		sysAdvise(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s[:c]))), size), populate)
	}
	return s
}

// Grow is slices.Grow by doubling: it returns s with room for at least n
// more elements, in a new array of at least twice its capacity when it
// has not, advised as Make advises one (not populated: the room may go
// unused).
func Grow[T any](s []T, n int) []T {
	if n <= cap(s)-len(s) {
		return s
	}
	g := Make[T](len(s), max(len(s)+n, 2*cap(s)), false)
	copy(g, s)
	return g
}
