// Package par runs the pure work of one run on every CPU: an index space
// in contiguous ranges (Range), or one function beside the caller (Go).
//
// A panic in the work is raised again on the goroutine that waits for it,
// so that it is recovered where the caller recovers its own (the cli's
// internal-error exit, 2, with its message escaped), rather than ending
// the process with a raw trace.
package par

import (
	"runtime"
	"sync"
)

// Chunk is the fewest items worth a goroutine of their own.
const Chunk = 512

// Range calls f over [0, n) in contiguous ranges, one goroutine per CPU
// (GOMAXPROCS) when n is large enough, else once, on this goroutine.
// Ranges do not overlap, so f may write the items of its range.
func Range(n int, f func(lo, hi int)) { RangeOf(n, Chunk, f) }

// RangeOf is Range for items of another weight: chunk is the fewest worth
// a goroutine of their own.
func RangeOf(n, chunk int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), n/max(chunk, 1))
	if w <= 1 {
		f(0, n)
		return
	}
	waits := make([]func() struct{}, 0, w-1)
	for k := 1; k < w; k++ {
		lo, hi := n*k/w, n*(k+1)/w
		waits = append(waits, Go(func() struct{} { f(lo, hi); return struct{}{} }))
	}
	var p any
	func() {
		defer func() { p = recover() }()
		f(0, n/w)
	}()
	for _, wait := range waits {
		func() {
			defer func() {
				if q := recover(); q != nil && p == nil {
					p = q
				}
			}()
			wait()
		}()
	}
	if p != nil {
		panic(p)
	}
}

// Go runs f on a goroutine of its own and returns what waits for its
// result. A panic in f is raised again by wait.
func Go[T any](f func() T) (wait func() T) {
	var (
		v    T
		p    any
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer func() { p = recover() }()
		v = f()
	}()
	return sync.OnceValue(func() T {
		<-done
		if p != nil {
			panic(p)
		}
		return v
	})
}
