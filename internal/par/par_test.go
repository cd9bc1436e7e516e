package par

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestRangeCoversEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, Chunk - 1, Chunk, 2*Chunk + 1, 10_000} {
		hits := make([]int32, n)
		var calls atomic.Int32
		Range(n, func(lo, hi int) {
			calls.Add(1)
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&hits[i], 1)
			}
		})
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, h)
			}
		}
		if want := max(1, min(runtime.GOMAXPROCS(0), n/Chunk)); int(calls.Load()) != want {
			t.Errorf("n=%d: %d ranges, want %d", n, calls.Load(), want)
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
