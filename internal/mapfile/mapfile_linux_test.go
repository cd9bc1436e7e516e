package mapfile

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpdrift/mcpdrift/internal/hugemem"
)

// on turns mapping on for the test, with files of at least min bytes.
func on(t testing.TB, min int64) {
	t.Helper()
	was, wasMin := Enabled(), SetMin(min)
	Enable(true)
	t.Cleanup(func() { Enable(was); SetMin(wasMin) })
}

// file writes n random bytes to a new file and returns its path and bytes:
// in the test's temporary directory, or where that is on a file system
// whose files are not mapped (a container's overlay), in /dev/shm.
func file(t testing.TB, n int) (string, []byte) {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if !canLease(dir) {
		if d, err := os.MkdirTemp("/dev/shm", "mapfile-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			if canLease(d) {
				dir = d
			}
		}
	}
	p := filepath.Join(dir, "input.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b
}

// canLease reports whether a file made in dir is mapped here.
func canLease(dir string) bool {
	p := filepath.Join(dir, ".probe")
	if os.WriteFile(p, []byte("x"), 0o644) != nil {
		return false
	}
	defer os.Remove(p)
	return Mappable(p) == nil
}

// mapFile opens path and maps it; the file is closed before the mapping
// is used, as the command line closes it.
func mapFile(t testing.TB, path string) (*Mapping, bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return Map(f, st.Size())
}

// mappedFile writes n random bytes to a new leasable file and maps it
// (mapping on for every size), releasing it when the test ends.
func mappedFile(t *testing.T, n int) (string, []byte, *Mapping) {
	t.Helper()
	p, want := file(t, n)
	leasable(t, p)
	on(t, 1)
	m, ok := mapFile(t, p)
	if !ok {
		t.Fatal("not mapped")
	}
	t.Cleanup(m.Release)
	return p, want, m
}

// leasable fails the test in CI, and skips it elsewhere, where path (made
// by file) is not leasable here: the command line then reads, which other
// tests cover.
func leasable(t *testing.T, path string) {
	t.Helper()
	if err := Mappable(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v (required in CI)", path, err)
		}
		t.Skipf("%s: %v", path, err)
	}
}

// TestMapHoldsTheFilesBytes: a file mapped reads as its bytes, after the
// file it was opened from is closed; Release is idempotent.
func TestMapHoldsTheFilesBytes(t *testing.T) {
	p, want := file(t, Min+12345)
	leasable(t, p)
	on(t, Min)
	before := Mapped()
	m, ok := mapFile(t, p)
	if !ok {
		t.Fatal("a leasable file of Min bytes or more was not mapped")
	}
	if !bytes.Equal(m.Bytes(), want) {
		t.Fatal("the mapping's bytes are not the file's")
	}
	if Mapped() != before+1 {
		t.Errorf("Mapped() = %d, want %d", Mapped(), before+1)
	}
	if err := m.Unchanged(); err != nil {
		t.Errorf("Unchanged of an untouched file: %v", err)
	}
	m.Release()
	m.Release()
	if m.Bytes() != nil {
		t.Error("a released mapping still offers its bytes")
	}
}

// TestMapOnlyWhenOnAndLarge: off, or a file below the bound, is read.
func TestMapOnlyWhenOnAndLarge(t *testing.T) {
	p, _ := file(t, 1000)
	on(t, 1001)
	if m, ok := mapFile(t, p); ok {
		m.Release()
		t.Error("a file below the bound was mapped")
	}
	Enable(false)
	SetMin(1)
	if m, ok := mapFile(t, p); ok {
		m.Release()
		t.Error("a file was mapped with mapping off")
	}
	Enable(true)
	// A size the caller was told that is not the file's (it changed
	// between the caller's look and the lease) is not mapped.
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m, ok := Map(f, 999); ok {
		m.Release()
		t.Error("a file whose size moved was mapped")
	}
}

// TestMapDetachesForAWriter: while a file is mapped, an open of it for
// writing, or a truncation, asks for the lease back: the bytes are copied
// into the run's own memory and moved over the mapping, and the writer
// goes on at once. The run's bytes stay the file's as they were mapped,
// readers reading through the move see no other byte and no fault (the
// file truncated under a mapping would fault), and Unchanged says the
// file moved.
func TestMapDetachesForAWriter(t *testing.T) {
	p, want, m := mappedFile(t, 3<<20+17)
	before := Detached()
	// A reader going through the bytes all along.
	stop, bad := make(chan struct{}), make(chan int, 1)
	go func() {
		for {
			select {
			case <-stop:
				close(bad)
				return
			default:
			}
			for i := 0; i < len(want); i += 4093 {
				if m.Bytes()[i] != want[i] {
					bad <- i
					return
				}
			}
		}
	}()
	// Asked without waiting: refused while the lease is held, and the
	// lease break starts.
	if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
		t.Fatal("the mapped file opened for writing at once while leased")
	} else if !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("open for writing of a leased file: %v, want EWOULDBLOCK", err)
	}
	// A truncation waits for the detach only, then truncates.
	truncated := make(chan error, 1)
	go func() { truncated <- unix.Truncate(p, 10) }()
	select {
	case err := <-truncated:
		if err != nil {
			t.Fatalf("truncate: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a truncation still waits for the lease: the mapping was not detached")
	}
	if err := os.WriteFile(p, []byte("other bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	close(stop)
	if i, ok := <-bad; ok {
		t.Fatalf("byte %d read otherwise while the mapping was detached", i)
	}
	if !bytes.Equal(m.Bytes(), want) {
		t.Fatal("the bytes changed with the file")
	}
	if Detached() != before+1 {
		t.Errorf("Detached() = %d, want %d", Detached(), before+1)
	}
	if err := m.Unchanged(); !errors.Is(err, ErrChanged) {
		t.Errorf("Unchanged of a file truncated and rewritten: %v, want ErrChanged", err)
	}
}

// TestMapDetachesForAWriterBeforeItIsLive: a writer that asks for the
// file between the lease and the mapping (its signal comes before there
// is a mapping to detach) is not left waiting: the mapping is detached as
// it is made.
func TestMapDetachesForAWriterBeforeItIsLive(t *testing.T) {
	p, want := file(t, 1<<20)
	leasable(t, p)
	on(t, 1)
	testHookLeased = func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
			t.Error("opened for writing while leased")
		}
	}
	defer func() { testHookLeased = nil }()
	before := Detached()
	m, ok := mapFile(t, p)
	if !ok {
		t.Fatal("not mapped")
	}
	defer m.Release()
	if Detached() != before+1 {
		t.Fatalf("Detached() = %d, want %d: the writer's request was missed", Detached(), before+1)
	}
	done := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err == nil {
			w.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a writer still waits for the lease")
	}
	if !bytes.Equal(m.Bytes(), want) {
		t.Fatal("the detached bytes are not the file's")
	}
}

// TestMapNotWhileOpenForWriting: a file someone has open for writing
// (it may be changing) is not mapped: the caller reads it.
func TestMapNotWhileOpenForWriting(t *testing.T) {
	p, _ := file(t, 5000)
	leasable(t, p)
	on(t, 1)
	w, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if m, ok := mapFile(t, p); ok {
		m.Release()
		t.Fatal("a file open for writing was mapped")
	}
}

// TestUnchangedSeesAChange: what can move a file without opening it for
// writing (its times, its mode) is seen; so is a write once the lease is
// gone (the lease-break-time passed: here, given up by hand).
func TestUnchangedSeesAChange(t *testing.T) {
	for name, change := range map[string]func(t *testing.T, p string, m *Mapping){
		"times": func(t *testing.T, p string, m *Mapping) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(p, later, later); err != nil {
				t.Fatal(err)
			}
		},
		"mode": func(t *testing.T, p string, m *Mapping) {
			if err := os.Chmod(p, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"written after the lease": func(t *testing.T, p string, m *Mapping) {
			if _, err := unix.FcntlInt(uintptr(m.fd), unix.F_SETLEASE, unix.F_UNLCK); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if _, err := w.WriteAt([]byte("x"), 10); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, _, m := mappedFile(t, 5000)
			change(t, p, m)
			if err := m.Unchanged(); !errors.Is(err, ErrChanged) {
				t.Fatalf("Unchanged after the file's %s moved: %v, want ErrChanged", name, err)
			}
		})
	}
}

// FuzzMapped: whatever a file holds, its mapping reads as its bytes.
func FuzzMapped(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`))
	f.Add([]byte{0})
	f.Add(bytes.Repeat([]byte("\xff"), 4097))
	p, _ := file(f, 1)
	if err := Mappable(p); err != nil {
		if os.Getenv("CI") == "true" {
			f.Fatalf("%s: %v (required in CI)", p, err)
		}
		f.Skipf("%s: %v", p, err)
	}
	on(f, 1)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, ok := mapFile(t, p)
		if !ok {
			t.Fatal("not mapped")
		}
		defer m.Release()
		if !bytes.Equal(m.Bytes(), data) {
			t.Fatalf("mapped %q, the file holds %q", m.Bytes(), data)
		}
	})
}

// BenchmarkInputBytes: the bytes of a 64 MiB input file made available
// and read through once (every cache line, as a parse reads them), the
// file in the page cache: read into a buffer as the command line read it
// before (the named baseline: hugemem.Make populated, then read(2)),
// against mapped. Freed memory is handed back to the system between
// iterations (outside the timer), as a run's is when it ends; with
// MCPDRIFT_BENCH_COLD=3s each iteration also waits that long first (a
// virtual machine that reports free pages to its host takes them back
// soon after: the first touch of fresh memory is then what it costs
// a run that follows other work).
func BenchmarkInputBytes(b *testing.B) {
	const size = 64 << 20
	var pause time.Duration
	if s := os.Getenv("MCPDRIFT_BENCH_COLD"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("MCPDRIFT_BENCH_COLD: %v", err)
		}
		pause = d
	}
	p, _ := file(b, size)
	if _, err := os.ReadFile(p); err != nil { // in the page cache
		b.Fatal(err)
	}
	defer hugemem.Enable(hugemem.Enabled())
	hugemem.Enable(true)
	on(b, Min)
	for _, c := range []struct {
		name string
		get  func(f *os.File) (data []byte, release func())
	}{
		{"read", func(f *os.File) ([]byte, func()) {
			buf := hugemem.Make[byte](0, size+1, true)
			for {
				n, err := f.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+n]
				if err != nil || n == 0 {
					break
				}
			}
			return buf, func() {}
		}},
		{"mapped", func(f *os.File) ([]byte, func()) {
			m, ok := Map(f, size)
			if !ok {
				b.Skip("no read lease here")
			}
			return m.Bytes(), m.Release
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			var sum int
			for b.Loop() {
				b.StopTimer()
				debug.FreeOSMemory()
				time.Sleep(pause)
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				data, release := c.get(f)
				if len(data) != size {
					b.Fatalf("%d bytes, want %d", len(data), size)
				}
				for i := 0; i < len(data); i += 64 {
					sum += int(data[i])
				}
				release()
				b.StopTimer()
				f.Close()
				b.StartTimer()
			}
			if sum < 0 {
				b.Log(sum)
			}
		})
	}
}
