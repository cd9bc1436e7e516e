package hugemem

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// vma is one mapping of /proc/self/smaps: its range, flags and the
// anonymous memory it has in huge pages.
type vma struct {
	lo, hi         uintptr
	flags          []string
	anonHugePagesK int
}

// vmaOf returns the mapping holding address p.
func vmaOf(t *testing.T, p uintptr) vma {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	var cur *vma
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if r := strings.SplitN(fields[0], "-", 2); len(r) == 2 && !strings.HasSuffix(fields[0], ":") {
			lo, err1 := strconv.ParseUint(r[0], 16, 64)
			hi, err2 := strconv.ParseUint(r[1], 16, 64)
			if err1 == nil && err2 == nil {
				if cur != nil && cur.lo <= p && p < cur.hi {
					return *cur
				}
				cur = &vma{lo: uintptr(lo), hi: uintptr(hi)}
				continue
			}
		}
		if cur == nil {
			continue
		}
		switch fields[0] {
		case "VmFlags:":
			cur.flags = fields[1:]
		case "AnonHugePages:":
			cur.anonHugePagesK, _ = strconv.Atoi(fields[1])
		}
	}
	if cur != nil && cur.lo <= p && p < cur.hi {
		return *cur
	}
	t.Fatalf("no mapping of /proc/self/smaps holds %#x", p)
	return vma{}
}

func (v vma) has(flag string) bool {
	for _, f := range v.flags {
		if f == flag {
			return true
		}
	}
	return false
}

// thpMode is the system's transparent huge page mode ("always",
// "madvise" or "never"), or "" where it cannot be read.
func thpMode() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	s := string(b)
	i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	if i < 0 || j < i {
		return ""
	}
	return s[i+1 : j]
}

func interiorStart(b []byte) uintptr {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo, _ := interior(p, uintptr(cap(b)))
	return p + lo
}

// TestAdviceReachesTheKernel: an advised buffer's whole huge pages are
// a mapping the kernel marks for huge pages (VmFlags "hg"), and one made
// while the advice is off is not.
func TestAdviceReachesTheKernel(t *testing.T) {
	defer Enable(Enabled())
	Enable(true)
	if !Enabled() {
		t.Skip("GODEBUG=disablethp=1 is set: the advice stays off")
	}
	on := Make[byte](0, 16<<20, false)
	Enable(false)
	off := Make[byte](0, 16<<20, false)
	v := vmaOf(t, interiorStart(on))
	if !v.has("hg") {
		t.Fatalf("the advised buffer's mapping [%#x, %#x) has flags %v, not hg", v.lo, v.hi, v.flags)
	}
	if w := vmaOf(t, interiorStart(off)); w.has("hg") {
		t.Fatalf("a buffer made with the advice off is in a mapping [%#x, %#x) marked hg", w.lo, w.hi)
	}
	// Nothing outside the buffer's whole huge pages is marked.
	if v.lo < uintptr(unsafe.Pointer(unsafe.SliceData(on))) || v.hi > uintptr(unsafe.Pointer(unsafe.SliceData(on)))+uintptr(cap(on)) {
		t.Fatalf("the marked mapping [%#x, %#x) reaches outside the buffer [%#x, +%#x)", v.lo, v.hi, uintptr(unsafe.Pointer(unsafe.SliceData(on))), cap(on))
	}
	runtime.KeepAlive(on)
	runtime.KeepAlive(off)
}

// minorFaults is this thread's minor page faults so far.
func minorFaults(t *testing.T) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Skipf("getrusage: %v", err)
	}
	return ru.Minflt
}

// TestPopulatedBufferFaultsOnce: a populated buffer is faulted in by
// Make, so that filling it takes (almost) no faults, where a plain
// buffer of fresh memory takes one per 4 KiB page, or per 2 MiB page
// where huge pages are always on.
func TestPopulatedBufferFaultsOnce(t *testing.T) {
	if m := thpMode(); m == "" || m == "never" {
		t.Skipf("transparent huge pages are %q here: nothing to measure", m)
	}
	defer Enable(Enabled())
	Enable(true)
	if !Enabled() {
		t.Skip("GODEBUG=disablethp=1 is set: the advice stays off")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const size = 64 << 20
	touch := func(b []byte) int64 {
		before := minorFaults(t)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		return minorFaults(t) - before
	}
	debug.FreeOSMemory() // fresh memory for what follows
	b := Make[byte](size, size, true)
	faults := touch(b)
	runtime.KeepAlive(b)
	// The head and tail outside the whole huge pages (under 4 MiB) may
	// fault page by page: 1,024 faults at most.
	if faults > 1100 {
		t.Fatalf("filling a populated %d MiB buffer took %d page faults (at most 1,100 expected)", size>>20, faults)
	}
	t.Logf("filling a populated %d MiB buffer: %d faults", size>>20, faults)
}

// BenchmarkFreshBuffer fills 64 MiB of fresh memory (handed back to the
// system between iterations, as an input read once is): make, the
// baseline, against Make populated (the input's buffer) and Make advised
// only (a parse tree's arrays).
func BenchmarkFreshBuffer(b *testing.B) {
	const size = 64 << 20
	defer Enable(Enabled())
	for _, c := range []struct {
		name string
		make func() []byte
	}{
		{"make", func() []byte { return make([]byte, size) }},
		{"hugemem-populate", func() []byte { return Make[byte](size, size, true) }},
		{"hugemem-advise", func() []byte { return Make[byte](size, size, false) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			runtime.LockOSThread() // the faults are counted per thread
			defer runtime.UnlockOSThread()
			Enable(true)
			b.SetBytes(size)
			var faults int64
			for b.Loop() {
				b.StopTimer()
				debug.FreeOSMemory()
				before := minorFaultsB(b)
				b.StartTimer()
				buf := c.make()
				for i := 0; i < len(buf); i += 4096 {
					buf[i] = 1
				}
				b.StopTimer()
				faults += minorFaultsB(b) - before
				runtime.KeepAlive(buf)
				b.StartTimer()
			}
			b.ReportMetric(float64(faults)/float64(b.N), "faults/op")
		})
	}
}

func minorFaultsB(b *testing.B) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		b.Skipf("getrusage: %v", err)
	}
	return ru.Minflt
}
