package manifest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// A hollow tool is a lean tool (Lean) that does not hold its bytes
// either: it keeps where they were read (a file and an offset), their
// length and their SHA-256, and reads them again when its parse or its
// bytes are needed (Attach, Bytes), refusing bytes that are not those
// read. It is for a run that holds two large lists and compares them by
// digest: drift reads its declared snapshot hollow (ReadToolsWith,
// ReadOptions.Source), and a served tool with the bytes of a declared one
// becomes hollow on that one's source (ShareBytesOf), so that the bytes of
// an unchanged tool are held by neither side. A hollow tool's name,
// pointer, digests and lean facts are held as a lean tool's are.

// rawRef locates a hollow tool's bytes.
type rawRef struct {
	at  io.ReaderAt
	off int64
	n   int
	sum [32]byte
}

// check reports whether b are the bytes r locates.
func (r *rawRef) check(b []byte) bool {
	return len(b) == r.n && sha256.Sum256(b) == r.sum
}

// ErrBytesChanged is what Bytes and Attach return when a hollow tool's
// bytes, read again, are not those read first.
var ErrBytesChanged = errors.New("the bytes read again are not those read first: the file changed while it was read")

// RawLen is the length of the tool's bytes.
func (t *Tool) RawLen() int {
	if t.ref != nil {
		return t.ref.n
	}
	return len(t.Raw())
}

// RawSum is the SHA-256 of the tool's bytes (a lean tool remembers it).
func (t *Tool) RawSum() [32]byte {
	switch {
	case t.ref != nil:
		return t.ref.sum
	case t.lean != nil:
		if !t.lean.hasSum {
			t.lean.sum, t.lean.hasSum = sha256.Sum256(t.raw), true
		}
		return t.lean.sum
	}
	return sha256.Sum256(t.Value.Raw())
}

// SameBytes reports whether t and o hold the same bytes: compared as
// bytes when both hold them, else by length and SHA-256.
func (t *Tool) SameBytes(o *Tool) bool {
	if t.ref == nil && o.ref == nil {
		return bytes.Equal(t.Raw(), o.Raw())
	}
	return t.RawLen() == o.RawLen() && t.RawSum() == o.RawSum()
}

// Bytes is the tool object's bytes: Raw, or for a hollow tool its bytes
// read again (ErrBytesChanged when they are not those read first).
func (t *Tool) Bytes() ([]byte, error) {
	if t.ref == nil {
		return t.Raw(), nil
	}
	return t.readAgain(nil)
}

// readAgain appends a hollow tool's bytes, read again and checked, to dst.
func (t *Tool) readAgain(dst []byte) ([]byte, error) {
	r := t.ref
	what := "tool " + safetext.Quote(t.Name)
	if f, ok := r.at.(interface{ Name() string }); ok {
		what += " of " + safetext.Quote(f.Name())
	}
	at := len(dst)
	dst = slices.Grow(dst, r.n)[:at+r.n]
	b := dst[at:]
	if n, err := r.at.ReadAt(b, r.off); n < r.n {
		return nil, fmt.Errorf("%s: reading its bytes again: %w", what, readAgainErr(err))
	}
	if !r.check(b) {
		return nil, fmt.Errorf("%s: %w", what, ErrBytesChanged)
	}
	return dst, nil
}

// appendRun appends to dst the bytes of tools[0], which is hollow, and of
// the hollow tools after it whose bytes follow in the same source, up to
// max bytes in all, read in one read and each checked; k is how many
// tools they are.
func appendRun(tools []Tool, dst []byte, max int) (b []byte, k int, err error) {
	first := tools[0].ref
	n, end := first.n, first.off+int64(first.n)
	k = 1
	for k < len(tools) {
		r := tools[k].ref
		if r == nil || r.at != first.at || r.off != end || n+r.n > max {
			break
		}
		n, end, k = n+r.n, end+int64(r.n), k+1
	}
	if k == 1 {
		b, err = tools[0].readAgain(dst)
		return b, 1, err
	}
	at := len(dst)
	dst = slices.Grow(dst, n)[:at+n]
	if got, _ := first.at.ReadAt(dst[at:], first.off); got < n {
		// Read alone, the first says what went wrong (or is read).
		b, err = tools[0].readAgain(dst[:at])
		return b, 1, err
	}
	p := at
	for i := range k {
		r := tools[i].ref
		if !r.check(dst[p : p+r.n]) {
			_, err := tools[i].readAgain(nil) // the message that names it
			if err == nil {
				err = fmt.Errorf("tool %s: %w", safetext.Quote(tools[i].Name), ErrBytesChanged)
			}
			return nil, 0, err
		}
		p += r.n
	}
	return dst, k, nil
}

// IsHollow reports whether the tool holds neither its parse nor its bytes.
func (t *Tool) IsHollow() bool { return t.ref != nil }

// hollow makes a lean tool whose bytes are src[off:off+len(raw)] of at
// hollow.
func (t *Tool) hollow(at io.ReaderAt, off int64) {
	t.ref = &rawRef{at: at, off: off, n: len(t.raw), sum: t.RawSum()}
	t.raw = nil
}

// ShareBytesOf makes a lean tool that holds the same bytes as the lean
// tool of (by length and SHA-256 when of is hollow) hold them as of does,
// and reports whether it did: hollow on of's source when of is hollow, of's
// own bytes when of keeps them (a declared side that cannot be read again:
// stdin, a pipe). The tool keeps its own name, pointer, digests and lean
// facts. A tool that is not lean, is hollow already, or holds other bytes
// is left as it is.
func (t *Tool) ShareBytesOf(of *Tool) bool {
	if t.raw == nil || t.ref != nil || of == nil || !of.IsLean() || !t.SameBytes(of) {
		return false
	}
	t.ref, t.raw = of.ref, of.raw
	return true
}

// OwnBytes makes a lean tool hold a copy of its bytes, so that it no
// longer keeps alive the larger buffer they were read in (a page of a
// listing of many tools, most of which were made hollow).
func (t *Tool) OwnBytes() {
	if t.raw != nil {
		t.raw = bytes.Clone(t.raw)
	}
}
