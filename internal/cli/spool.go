package cli

import (
	"os"

	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/redact"
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
// A run that sends secrets (headers, URL credentials, a stdio server's
// environment) redacts its outputs in memory before they are written, and
// no secret may reach a disk on the way: a page whose bytes hold any form
// of a secret the redaction knows (raw, escaped, quoted, JSON- or
// URL-escaped: redact.Set.Bytes would change them) is held in memory, not
// spooled, and so is every page from the first that reflects a secret
// once decoded (the reflection check, after which pin refuses to write
// anything). What the spool gets is then what the outputs carry as it is.
// A spool that cannot be made or written is no error: the bytes are then
// held in memory, as before.
type spool struct {
	f       *os.File
	off     int64
	buf     []byte
	secrets *redact.Set // the run's; a page holding any form of one is not spooled
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
	return &spool{f: f, secrets: e.secrets}
}

// hold writes the bytes of page's lean tools to the file, in one write,
// and makes them hollow on it; a page holding a form of one of the run's
// secrets is left as it was. A failed write leaves the page's tools as
// they were (holding their bytes) and stops the spool.
func (s *spool) hold(page []manifest.Tool) {
	if s == nil || s.f == nil {
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
	if !s.secrets.Empty() {
		if out := s.secrets.Bytes(s.buf); len(out) != len(s.buf) || &out[0] != &s.buf[0] {
			return // a form of a secret: the page stays in memory
		}
	}
	if _, err := s.f.WriteAt(s.buf, s.off); err != nil {
		s.f = nil // closed when the run ends
		return
	}
	// Each made hollow (its SHA-256 and CRC-32C computed) over the CPUs.
	par.RangeOf(len(page), 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			page[i].HollowOn(s.f, offs[i])
		}
	})
	s.off += int64(len(s.buf))
	if cap(s.buf) > 8<<20 {
		s.buf = nil // a page this large is not kept for the next
	}
}
