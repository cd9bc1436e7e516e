package hugemem

import (
	"slices"
	"testing"
	"unsafe"
)

// withAdvice enables the advice for one test, recording what sysAdvise
// is asked, and restores both afterwards.
func withAdvice(t *testing.T, on bool) *[]adviceCall {
	t.Helper()
	var calls []adviceCall
	wasOn, was := Enabled(), sysAdvise
	enabled.Store(on)
	sysAdvise = func(b []byte, populate bool) {
		calls = append(calls, adviceCall{p: uintptr(unsafe.Pointer(unsafe.SliceData(b))), n: len(b), populate: populate})
	}
	t.Cleanup(func() { enabled.Store(wasOn); sysAdvise = was })
	return &calls
}

type adviceCall struct {
	p        uintptr
	n        int
	populate bool
}

func TestMakeAdvisesLargeBuffersOnly(t *testing.T) {
	calls := withAdvice(t, true)
	small := Make[byte](0, Min-1, true)
	if len(*calls) != 0 {
		t.Fatalf("a buffer of %d bytes was advised: %+v", cap(small), *calls)
	}
	b := Make[byte](10, Min, true)
	if len(b) != 10 || cap(b) != Min {
		t.Fatalf("Make: len %d cap %d, want 10 and %d", len(b), cap(b), Min)
	}
	if len(*calls) != 1 || (*calls)[0].p != uintptr(unsafe.Pointer(unsafe.SliceData(b))) || (*calls)[0].n != Min || !(*calls)[0].populate {
		t.Fatalf("advice: %+v, want the whole buffer of %d bytes, populated", *calls, Min)
	}
	// The size counts bytes, not elements: 1 Mi int32s are 4 MiB.
	w := Make[int32](0, Min/4, false)
	if len(*calls) != 2 || (*calls)[1].n != Min || (*calls)[1].populate {
		t.Fatalf("advice of %d int32s: %+v, want %d bytes, not populated", cap(w), *calls, Min)
	}
	for _, c := range b[:cap(b)] {
		if c != 0 {
			t.Fatal("Make's memory is not zero")
		}
	}
}

func TestDisabledAdvisesNothing(t *testing.T) {
	calls := withAdvice(t, false)
	Make[byte](0, 64<<20, true)
	Grow[byte](nil, 64<<20)
	if len(*calls) != 0 {
		t.Fatalf("advice while disabled: %+v", *calls)
	}
}

func TestGrow(t *testing.T) {
	for _, on := range []bool{false, true} {
		withAdvice(t, on)
		s := []int32{1, 2, 3}
		if g := Grow(s, 0); unsafe.SliceData(g) != unsafe.SliceData(s) {
			t.Fatal("Grow with room enough reallocated")
		}
		g := Grow(s, 1)
		if !slices.Equal(g, s) || cap(g) < 6 {
			t.Fatalf("Grow(%v, 1) = %v cap %d: want the same elements, capacity doubled", s, g, cap(g))
		}
		g = Grow(s, 100)
		if !slices.Equal(g, s) || cap(g)-len(g) < 100 {
			t.Fatalf("Grow(%v, 100): cap %d", s, cap(g))
		}
		big := Grow([]byte{7}, Min)
		if len(big) != 1 || big[0] != 7 || cap(big) < Min+1 {
			t.Fatalf("Grow to %d bytes: len %d cap %d", Min, len(big), cap(big))
		}
		// Doubling: a buffer grown by a little at a time is copied
		// O(log n) times, not once per growth of append's quarter.
		var b []byte
		copies := 0
		for range 1 << 16 {
			if len(b) == cap(b) {
				copies++
			}
			b = append(Grow(b, 1), 0)
		}
		if copies > 20 {
			t.Fatalf("growing to 64 KiB one byte at a time reallocated %d times", copies)
		}
	}
}

func TestInterior(t *testing.T) {
	const H = HugePage
	for _, c := range []struct{ p, n, lo, hi uintptr }{
		{H, 2 * H, 0, 2 * H},                 // aligned: all of it
		{H + 1, 2 * H, H - 1, H - 1 + H},     // one whole page inside
		{H + 1, 2*H - 2, 0, 0},               // none whole
		{H - 4096, H + 4096, 4096, 4096 + H}, // the page after the head
		{0, 0, 0, 0},
		{5 * H, H - 1, 0, 0},
	} {
		lo, hi := interior(c.p, c.n)
		if lo != c.lo || hi != c.hi {
			t.Errorf("interior(%#x, %#x) = [%#x, %#x), want [%#x, %#x)", c.p, c.n, lo, hi, c.lo, c.hi)
		}
		if lo != hi && (lo > hi || hi > c.n || (c.p+lo)%H != 0 || (c.p+hi)%H != 0) {
			t.Errorf("interior(%#x, %#x) = [%#x, %#x): not whole pages inside", c.p, c.n, lo, hi)
		}
	}
}

func TestGODEBUG(t *testing.T) {
	// As the runtime reads GODEBUG (runtime1.go, parsegodebug): the key
	// exact, the value strconv.ParseInt(v, 10, 32), a later valid value
	// wins and an invalid one is ignored; on is any value but 0.
	for s, want := range map[string]bool{
		"":                          false,
		"disablethp=1":              true,
		"gctrace=1,disablethp=1":    true,
		"disablethp=0":              false,
		"disablethp=1,disablethp=0": false,
		"disablethp=0,disablethp=1": true,
		"disablethp=10":             true,
		"disablethp=01":             true,
		"disablethp=+1":             true,
		"disablethp=-1":             true,
		"disablethp=1,disablethp=x": true,
		"disablethp=x":              false,
		"disablethp=":               false,
		"disablethp=4294967296":     false, // beyond 32 bits: ignored
		" disablethp=1":             false, // not the key
		"xdisablethp=1":             false,
		"disablethp":                false,
		"madvdontneed=1,gctrace=1":  false,
	} {
		if got := godebugDisablesTHP(s); got != want {
			t.Errorf("GODEBUG=%q: disables THP %v, want %v", s, got, want)
		}
	}
}
