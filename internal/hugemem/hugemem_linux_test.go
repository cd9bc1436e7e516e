package hugemem

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// vma is one mapping of /proc/self/smaps: its range and flags.
type vma struct {
	lo, hi uintptr
	flags  []string
}

// vmaOf returns the mapping holding address p.
func vmaOf(t *testing.T, p uintptr) vma {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		unavailable(t, "no /proc/self/smaps: %v", err)
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

// envRequireTHP makes the tests that need the kernel's transparent huge
// pages (madvise or always) fail instead of skipping where they are
// missing: .ci/run sets it in CI, whose machines have them.
const envRequireTHP = "MCPDRIFT_REQUIRE_THP"

// unavailable skips the test, or fails it under envRequireTHP.
func unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if os.Getenv(envRequireTHP) == "1" {
		tb.Fatalf(format+" (%s=1: required)", append(args, envRequireTHP)...)
	}
	tb.Skipf(format, args...)
}

// kernelChildEnv marks the fresh process TestAdviceReachesTheKernel
// runs its check in.
const kernelChildEnv = "MCPDRIFT_HUGEMEM_KERNEL_CHILD"

// TestAdviceReachesTheKernel: an advised buffer's whole huge pages are
// a mapping the kernel marks for huge pages (VmFlags "hg"), no larger
// than the buffer, and one made while the advice is off is not marked.
// The advice outlives a buffer (it is the address range's), so the check
// runs in a fresh process of its own, where nothing was advised before:
// in this one, earlier tests (or -count) leave marked ranges the heap
// reuses.
func TestAdviceReachesTheKernel(t *testing.T) {
	if m := thpMode(); m == "" || m == "never" {
		unavailable(t, "transparent huge pages are %q here: the kernel marks nothing", m)
	}
	if godebugDisablesTHP(os.Getenv("GODEBUG")) {
		t.Skip("GODEBUG=disablethp is set: the advice stays off")
	}
	if os.Getenv(kernelChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAdviceReachesTheKernel$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), kernelChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestAdviceReachesTheKernel") {
			t.Fatalf("the check in a fresh process: %v\n%s", err, out)
		}
		return
	}
	defer Enable(Enabled())
	Enable(false)
	off := Make[byte](0, 16<<20, false)
	Enable(true)
	on := Make[byte](0, 16<<20, false)
	if w := vmaOf(t, interiorStart(off)); w.has("hg") {
		t.Fatalf("a buffer made with the advice off is in a mapping [%#x, %#x) marked hg", w.lo, w.hi)
	}
	v := vmaOf(t, interiorStart(on))
	if !v.has("hg") {
		t.Fatalf("the advised buffer's mapping [%#x, %#x) has flags %v, not hg", v.lo, v.hi, v.flags)
	}
	// Nothing outside the buffer's whole huge pages is marked.
	base := uintptr(unsafe.Pointer(unsafe.SliceData(on)))
	if v.lo < base || v.hi > base+uintptr(cap(on)) {
		t.Fatalf("the marked mapping [%#x, %#x) reaches outside the buffer [%#x, +%#x)", v.lo, v.hi, base, cap(on))
	}
	runtime.KeepAlive(on)
	runtime.KeepAlive(off)
}

// minorFaults is this thread's minor page faults so far.
func minorFaults(tb testing.TB) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		unavailable(tb, "getrusage: %v", err)
	}
	return int64(ru.Minflt) // int32 on 32-bit systems
}

// TestPopulatedBufferFaultsOnce: a populated buffer's whole huge pages
// are faulted in by Make, so that filling them takes no fault at all,
// where fresh memory takes one per 4 KiB page, or one per 2 MiB page when
// only advised (32 for these 64 MiB): a Make that lost its populate fails.
func TestPopulatedBufferFaultsOnce(t *testing.T) {
	if m := thpMode(); m == "" || m == "never" {
		unavailable(t, "transparent huge pages are %q here: nothing to measure", m)
	}
	defer Enable(Enabled())
	Enable(true)
	if !Enabled() {
		t.Skip("GODEBUG=disablethp is set: the advice stays off")
	}
	runtime.LockOSThread() // the faults are counted per thread
	defer runtime.UnlockOSThread()
	const size = 64 << 20
	debug.FreeOSMemory() // fresh memory for what follows
	b := Make[byte](size, size, true)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo, hi := interior(p, size)
	if hi-lo < size/2 {
		t.Fatalf("a %d MiB buffer holds only %d MiB of whole huge pages", size>>20, (hi-lo)>>20)
	}
	before := minorFaults(t)
	for i := lo; i < hi; i += 4096 {
		b[i] = 1
	}
	faults := minorFaults(t) - before
	runtime.KeepAlive(b)
	if faults > 2 {
		t.Fatalf("filling the %d MiB of whole huge pages of a populated buffer took %d page faults (none expected: Make faults them in)", (hi-lo)>>20, faults)
	}
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
				before := minorFaults(b)
				b.StartTimer()
				buf := c.make()
				for i := 0; i < len(buf); i += 4096 {
					buf[i] = 1
				}
				b.StopTimer()
				faults += minorFaults(b) - before
				runtime.KeepAlive(buf)
				b.StartTimer()
			}
			b.ReportMetric(float64(faults)/float64(b.N), "faults/op")
		})
	}
}
