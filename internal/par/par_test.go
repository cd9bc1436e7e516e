package par

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRangeCoversEachIndexOnce(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	for _, n := range []int{0, 1, Chunk - 1, Chunk, 2*Chunk + 1, 10_000, 100_000} {
		hits := make([]int32, n)
		var (
			mu     sync.Mutex
			ranges [][2]int
		)
		Range(n, func(lo, hi int) {
			mu.Lock()
			ranges = append(ranges, [2]int{lo, hi})
			mu.Unlock()
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&hits[i], 1)
			}
		})
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, h)
			}
		}
		// One call below two chunks' worth; else ranges of at least a
		// chunk (the last may be shorter), more than one.
		slices.SortFunc(ranges, func(a, b [2]int) int { return a[0] - b[0] })
		if n < 2*Chunk {
			if len(ranges) != 1 {
				t.Errorf("n=%d: %d ranges, want 1", n, len(ranges))
			}
			continue
		}
		if len(ranges) < 2 {
			t.Errorf("n=%d: %d range(s), want several", n, len(ranges))
		}
		for i, r := range ranges[:len(ranges)-1] {
			if r[1]-r[0] < Chunk {
				t.Errorf("n=%d: range %d is %v, fewer than %d items", n, i, r, Chunk)
			}
		}
	}
	for _, chunk := range []int{-1, 0, 1, 7} {
		hits := make([]int32, 100)
		RangeOf(len(hits), chunk, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&hits[i], 1)
			}
		})
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("chunk=%d: index %d visited %d times", chunk, i, h)
			}
		}
	}
}

// TestRangeWorkMovesToAFreeCPU: a goroutine held up in its range holds
// only that range; the others do the rest of the work meanwhile (ranges
// cut one per goroutine left half of it waiting).
func TestRangeWorkMovesToAFreeCPU(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	const n = 64 * Chunk
	var (
		held atomic.Bool
		done atomic.Int64 // items of the ranges not held up
	)
	Range(n, func(lo, hi int) {
		if !held.CompareAndSwap(false, true) {
			done.Add(int64(hi - lo))
			return
		}
		if hi-lo > n/8 {
			t.Errorf("a goroutine took %d of %d items at once", hi-lo, n)
			return
		}
		deadline := time.Now().Add(10 * time.Second)
		for done.Load() < int64(n-(hi-lo)) {
			if time.Now().After(deadline) {
				t.Errorf("while one range was held up, the others did %d of the other %d items", done.Load(), n-(hi-lo))
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
}

func TestRangePanicReachesCaller(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	for _, at := range []int{0, 4*Chunk - 1} { // in the caller's range, in another's
		func() {
			defer func() {
				if p := recover(); p != "boom" {
					t.Errorf("panic at %d: recovered %v, want boom", at, p)
				}
			}()
			Range(4*Chunk, func(lo, hi int) {
				if lo <= at && at < hi {
					panic("boom")
				}
			})
			t.Errorf("panic at %d: Range returned", at)
		}()
	}
}

func TestGo(t *testing.T) {
	wait := Go(func() int { return 42 })
	if v := wait(); v != 42 {
		t.Fatalf("got %d", v)
	}
	if v := wait(); v != 42 { // waiting again gives the same value
		t.Fatalf("again: got %d", v)
	}
	wait = Go(func() int { panic("boom") })
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want boom", p)
		}
	}()
	wait()
	t.Error("wait returned after a panic")
}
