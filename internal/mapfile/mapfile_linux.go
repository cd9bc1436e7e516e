package mapfile

import (
	"fmt"
	"math"
	"os"
	"os/signal"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Mapping is a file mapped read-only under a read lease.
type Mapping struct {
	data []byte
	fd   int // a duplicate of the file's descriptor: the lease's
	id   identity
	// detached is set once the bytes were copied into memory of the
	// process's own and moved over the mapping (a writer asked for the
	// file: see detach); released once Release ran. Both under live.mu.
	detached, released bool
}

// live are the mappings not yet released, for detachAll.
var live struct {
	mu sync.Mutex
	m  map[*Mapping]struct{}
}

// watchBreaks starts, once, the goroutine that detaches every live
// mapping when the kernel says a lease is being broken (SIGIO: someone
// opens a leased file for writing, or truncates it).
var watchBreaks = sync.OnceFunc(func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, unix.SIGIO)
	go func() {
		for range ch {
			detachAll()
		}
	}()
})

// detachAll detaches every live mapping (a signal does not say which
// lease is broken).
func detachAll() {
	live.mu.Lock()
	defer live.mu.Unlock()
	for m := range live.m {
		m.detach()
	}
}

// detach copies a mapping's bytes into anonymous memory and moves that
// memory over the mapping's addresses (mremap, MREMAP_FIXED: one step,
// the bytes the same before and after), then gives up the lease: the
// writer waiting for it goes on at once, and what it then does to the
// file (write, truncate) no longer reaches the bytes this run reads,
// which cannot fault. Unchanged still reports that the file moved. If the
// copy cannot be made (no memory), the lease is kept: the writer waits
// until the run releases it, or the lease-break-time passes. Called with
// live.mu held.
func (m *Mapping) detach() {
	if m.detached || m.released {
		return
	}
	n := uintptr(len(m.data))
	at := unsafe.Pointer(unsafe.SliceData(m.data))
	anon, err := unix.MmapPtr(-1, 0, nil, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return
	}
	cp := unsafe.Slice((*byte)(anon), n)
	copy(cp, m.data)
	err = unix.Mprotect(cp, unix.PROT_READ)
	if err == nil {
		_, err = unix.MremapPtr(anon, n, at, n, unix.MREMAP_MAYMOVE|unix.MREMAP_FIXED)
	}
	if err != nil {
		_ = unix.MunmapPtr(anon, n)
		return
	}
	m.detached = true
	detached.Add(1)
	_, _ = unix.FcntlInt(uintptr(m.fd), unix.F_SETLEASE, unix.F_UNLCK)
}

// identity is what Unchanged compares.
type identity struct {
	dev, ino, size      uint64
	mtimeSec, mtimeNsec int64
	ctimeSec, ctimeNsec int64
	mode                uint32
}

func identityOf(st *unix.Stat_t) identity {
	return identity{
		dev: uint64(st.Dev), ino: uint64(st.Ino), size: uint64(st.Size),
		mtimeSec: int64(st.Mtim.Sec), mtimeNsec: int64(st.Mtim.Nsec),
		ctimeSec: int64(st.Ctim.Sec), ctimeNsec: int64(st.Ctim.Nsec),
		mode: st.Mode,
	}
}

// testHookLeased, when set (by a test), runs once Map holds the lease.
var testHookLeased func()

// localFS are the file systems whose files are mapped: local ones, whose
// page cache no other machine changes and where the kernel's leases
// hold (a remote file system's file can change under a local lease).
var localFS = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:  true, // ext2, ext3 and ext4
	unix.XFS_SUPER_MAGIC:   true,
	unix.BTRFS_SUPER_MAGIC: true,
	unix.TMPFS_MAGIC:       true,
	unix.F2FS_SUPER_MAGIC:  true,
}

// leaseOn takes a read lease on fd when its file is on a file system
// whose files are mapped, or says why not.
func leaseOn(fd int) error {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return err
	}
	if !localFS[int64(fs.Type)] {
		return fmt.Errorf("its file system (type %#x) is not one whose files are mapped", fs.Type)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		return fmt.Errorf("no read lease on it: %w", err)
	}
	return nil
}

// Mappable says why the file at path would not be mapped here (nil: it
// would be, given the size): its file system, or the lease refused. For
// tests and diagnostics; the lease taken to find out is given up at once.
func Mappable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := leaseOn(int(f.Fd())); err != nil {
		return err
	}
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
	return nil
}

// Map maps the size bytes of f, a regular file opened read-only, when
// mapping is on, size is at least Min, and the file can be leased (see
// the package's doc); ok is false, and nothing is held, otherwise: the
// caller then reads the file.
func Map(f *os.File, size int64) (m *Mapping, ok bool) {
	if !enabled.Load() || size < minSize.Load() || size <= 0 || size > math.MaxInt {
		return nil, false
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, false
	}
	fd := -1
	if cerr := sc.Control(func(raw uintptr) {
		fd, err = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0)
	}); cerr != nil || err != nil {
		return nil, false
	}
	fail := func() (*Mapping, bool) {
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
		unix.Close(fd)
		return nil, false
	}
	if leaseOn(fd) != nil {
		return fail()
	}
	if testHookLeased != nil {
		testHookLeased()
	}
	// Leased: what the file is now, it stays. It must still be the size
	// the caller was told (else it is read, and its reading sees what
	// changed).
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != size {
		return fail()
	}
	watchBreaks()
	// MmapPtr, not unix.Mmap: detach moves other memory over these
	// addresses, which unix.Munmap's bookkeeping would not know.
	at, err := unix.MmapPtr(fd, 0, nil, uintptr(size), unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		return fail()
	}
	m = &Mapping{data: unsafe.Slice((*byte)(at), int(size)), fd: fd, id: identityOf(&st)}
	live.mu.Lock()
	if live.m == nil {
		live.m = map[*Mapping]struct{}{}
	}
	live.m[m] = struct{}{}
	// A writer that asked for the file between the lease and now sent
	// its signal before this mapping was live: the lease is then being
	// broken (F_GETLEASE gives what it is to become), and the mapping is
	// detached at once.
	if v, err := unix.FcntlInt(uintptr(fd), unix.F_GETLEASE, 0); err != nil || v != unix.F_RDLCK {
		m.detach()
	}
	live.mu.Unlock()
	mapped.Add(1)
	return m, true
}

// Bytes are the file's bytes. They are valid until Release, and must not
// be written (the mapping is read-only: a write faults).
func (m *Mapping) Bytes() []byte { return m.data }

// Unchanged returns ErrChanged when the file is no longer the one mapped.
func (m *Mapping) Unchanged() error {
	var st unix.Stat_t
	if err := unix.Fstat(m.fd, &st); err != nil {
		return err
	}
	if identityOf(&st) != m.id {
		return ErrChanged
	}
	return nil
}

// Release unmaps the file (or the copy detach moved over it) and gives
// up the lease, once. Nothing may read Bytes after it.
func (m *Mapping) Release() {
	live.mu.Lock()
	defer live.mu.Unlock()
	if m.released {
		return
	}
	m.released = true
	delete(live.m, m)
	_ = unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(m.data)), uintptr(len(m.data)))
	m.data = nil
	_, _ = unix.FcntlInt(uintptr(m.fd), unix.F_SETLEASE, unix.F_UNLCK)
	unix.Close(m.fd)
}
