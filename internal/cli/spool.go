package cli

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"os"

	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// A spool holds the bytes of a live listing's lean tools in a temporary
// file instead of memory, for a run that writes them only at its end: pin
// keeps every byte a server sent for its snapshot, and its memory would
// otherwise hold the whole listing (17 MB for 10,000 tools, 170 MB for
// 100,000) while it lists and builds its outputs. Each page's bytes are
// written once as the page arrives and its tools made hollow on the file
// (manifest.Tool.HollowOn): the snapshot reads them back, checked against
// their CRC-32C, so bytes that changed on the file fail the run rather
// than reach the snapshot.
//
// The file is made in the temporary directory (TMPDIR, else /var/tmp when
// that is a file system in memory: a tmpfs would only move the bytes from
// the run's memory to the system's), not beside the snapshot, whose
// directory then needs no room beyond the snapshot's; it is unlinked at
// once where the system allows it, and closed when the run ends.
//
// What is written there is sealed: XORed with AES-256 in counter mode
// under a key drawn for the run, which never leaves its memory, the
// counter the byte's offset in the file (each offset written once). A
// listing may hold a secret the run sent (a header a server echoes into a
// description, in any spelling: escaped, clipped, percent-encoded,
// base64), and nothing a secret is in may reach a disk readable; the
// outputs are redacted in memory before they are written, and refused
// when a tool reflects a secret. Sealing is not the fault check: the
// plaintext's CRC-32C is (a tool read back in other bytes fails the run).
// A spool that cannot be made or written is no error: the bytes are then
// held in memory, as before.
type spool struct {
	at  *sealed // the file; nil once a write failed (closed when the run ends)
	off int64
	buf []byte
}

// sealed is a spool file and the cipher its bytes are sealed with.
type sealed struct {
	f     *os.File
	block cipher.Block
}

// newSealed seals f under a fresh random key.
func newSealed(f *os.File) (*sealed, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return &sealed{f: f, block: block}, nil
}

// xor seals or unseals b, the bytes at off of the file: the key stream of
// the counter block off/16, from byte off%16 of it.
func (s *sealed) xor(b []byte, off int64) {
	var iv [aes.BlockSize]byte
	binary.BigEndian.PutUint64(iv[8:], uint64(off/aes.BlockSize))
	stream := cipher.NewCTR(s.block, iv[:])
	if skip := off % aes.BlockSize; skip > 0 {
		var pad [aes.BlockSize]byte
		stream.XORKeyStream(pad[:skip], pad[:skip])
	}
	stream.XORKeyStream(b, b)
}

// ReadAt reads unsealed bytes.
func (s *sealed) ReadAt(b []byte, off int64) (int, error) {
	n, err := s.f.ReadAt(b, off)
	s.xor(b[:n], off)
	return n, err
}

// writeAt seals b in place and writes it at off.
func (s *sealed) writeAt(b []byte, off int64) error {
	s.xor(b, off)
	_, err := s.f.WriteAt(b, off)
	return err
}

// Test seams: testHookSpoolMade sees a spool as it is made,
// testHookSpoolListed once the listing is on it; spoolDirs, when set, are
// the directories tried instead of TMPDIR and /var/tmp.
var (
	testHookSpoolMade, testHookSpoolListed func(*spool)
	spoolDirs                              []string
)

// newSpool makes a spool for the run; nil when it cannot.
func newSpool(e *env) (s *spool) {
	dirs := spoolDirs
	if dirs == nil {
		dirs = []string{os.TempDir(), "/var/tmp"}
	}
	var f *os.File
	for _, dir := range dirs {
		if inMemoryFS(dir) {
			continue
		}
		var err error
		if f, err = os.CreateTemp(dir, ".mcpdrift-spool-*"); err == nil {
			break
		}
	}
	if f == nil {
		return nil
	}
	defer func() {
		if testHookSpoolMade != nil {
			testHookSpoolMade(s)
		}
	}()
	name := f.Name()
	unlinked := os.Remove(name) == nil // not on every system while open
	e.releases = append(e.releases, func() {
		f.Close()
		if !unlinked {
			os.Remove(name)
		}
	})
	at, err := newSealed(f)
	if err != nil {
		return nil // closed and removed when the run ends
	}
	return &spool{at: at}
}

// hold writes the bytes of page's lean tools to the file, sealed, in one
// write, and makes them hollow on it. A failed write leaves the page's
// tools as they were (holding their bytes) and stops the spool.
func (s *spool) hold(page []manifest.Tool) {
	if s == nil || s.at == nil {
		return
	}
	// The page's bytes in one buffer, each tool's offset on the file
	// noted as its bytes are added.
	s.buf = s.buf[:0]
	offs := make([]int64, len(page))
	for i := range page {
		if t := &page[i]; t.IsLean() && !t.IsHollow() {
			offs[i] = s.off + int64(len(s.buf))
			s.buf = append(s.buf, t.Raw()...)
		}
	}
	if len(s.buf) == 0 {
		return
	}
	if err := s.at.writeAt(s.buf, s.off); err != nil {
		s.at = nil // closed when the run ends
		return
	}
	// Each made hollow (its SHA-256 and CRC-32C computed) over the CPUs.
	par.RangeOf(len(page), 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			page[i].HollowOn(s.at, offs[i])
		}
	})
	s.off += int64(len(s.buf))
	if cap(s.buf) > 8<<20 {
		s.buf = nil // a page this large is not kept for the next
	}
}
