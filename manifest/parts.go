package manifest

import (
	"bytes"
	"io"
	"strconv"
	"sync/atomic"

	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/jcs"
)

// ReadSnapshotKnown reads the snapshot r holds in parts, as it is read
// from r (never whole): the text without its tools (an empty array in
// their place) parsed strictly, and each tool that is the bytes of a
// known one taken as that one, or else parsed strictly on its own at its
// depth in the whole (jcs.ParseNested). ok is false when the text is not
// a snapshot laid out so, a part does not parse, or r fails: the caller
// then reads it whole (ReadTools), which says where and why. When ok, s
// and err are what ReadTools reads of the same text (FuzzReadToolsKnown).
func ReadSnapshotKnown(r io.Reader, file string, known *Known) (s *Snapshot, err error, ok bool) {
	if known == nil {
		return nil, nil, false
	}
	w := &window{r: r, b: make([]byte, 0, 256<<10)}
	head, ok := w.head()
	if !ok {
		return nil, nil, false
	}
	found, elems, ok := w.tools(known)
	if !ok {
		return nil, nil, false
	}
	text := append(head, "[]"...)
	if text, ok = w.rest(text); !ok {
		return nil, nil, false
	}
	doc, perr := jcs.Parse(text)
	if perr != nil || !IsSnapshot(doc) {
		return nil, nil, false
	}
	tools := make([]toolPart, len(found))
	var failed atomic.Bool
	par.Range(len(found), func(lo, hi int) {
		for i := lo; i < hi && !failed.Load(); i++ {
			if found[i] >= 0 {
				t := &known.tools[found[i]]
				tools[i].tool = *t
				tools[i].tool.Pointer = "/tools/" + strconv.Itoa(i)
				tools[i].instance = map[string]any{"name": t.Name}
				continue
			}
			d, err := jcs.ParseNested(elems[i], 2)
			if err != nil {
				failed.Store(true)
				return
			}
			tools[i] = readToolPart(d.Root(), i)
		}
	})
	if failed.Load() {
		return nil, nil, false
	}
	s, err = snapshotOf(doc.Root(), tools, file)
	return s, err, true
}

// window is what has been read of r and not yet cut: b[off:].
type window struct {
	r    io.Reader
	b    []byte
	off  int
	read int64 // bytes read of r
	end  bool  // r has ended, or failed
	err  bool  // r failed, made no progress, or held more than jcs.MaxInputSize bytes
}

// more reads more of r into the window, keeping b[off:] (and moving it to
// the front when that frees half of b), until b is full or r has ended:
// a cut that needs more scans again at most once per doubling of b.
// False when nothing more was read.
func (w *window) more() bool {
	if w.end {
		return false
	}
	if w.off > 0 && w.off >= len(w.b)/2 {
		w.b = w.b[:copy(w.b, w.b[w.off:])]
		w.off = 0
	}
	if len(w.b) == cap(w.b) {
		w.b = append(w.b, make([]byte, cap(w.b))...)[:len(w.b)]
	}
	from, empty := len(w.b), 0
	for len(w.b) < cap(w.b) && !w.end {
		n, err := w.r.Read(w.b[len(w.b):cap(w.b)])
		w.b = w.b[:len(w.b)+n]
		w.read += int64(n)
		switch {
		case w.read > jcs.MaxInputSize:
			w.end, w.err = true, true // a text Parse refuses whole
		case err != nil:
			w.end, w.err = true, err != io.EOF
		case n == 0:
			if empty++; empty == 100 {
				w.end, w.err = true, true // as bufio: no progress
			}
		}
	}
	return len(w.b) > from && !w.err
}

// head is the text before the value of the top-level "tools" member (read
// within PeekLimit bytes), the window then at that value.
func (w *window) head() ([]byte, bool) {
	for {
		if start, ok := jcs.MemberStart(w.b, "tools"); ok {
			if PeekHead(w.b).Schema != SnapshotSchemaID {
				return nil, false // what precedes the tools says what it is
			}
			w.off = start
			return bytes.Clone(w.b[:start]), true
		}
		if len(w.b) > PeekLimit || !w.more() {
			return nil, false
		}
	}
}

// space moves the window past whitespace and reports whether a byte
// follows.
func (w *window) space() bool {
	for {
		if w.off = jcs.SkipSpace(w.b, w.off); w.off < len(w.b) {
			return true
		}
		if !w.more() {
			return false
		}
	}
}

// tools cuts the array of tools the window is at into its elements: for
// each, the index of the known tool it is the bytes of (-1: none), and
// its text when it is none. A snapshot of a list holds its tools in the
// order listed: the next known tool is tried by its bytes first (a JSON
// value ends where its text does), and another element is scanned
// (jcs.ValueEnd); either way the next tool expected is the one after the
// last found.
func (w *window) tools(k *Known) (found []int, elems [][]byte, ok bool) {
	if !w.space() || w.b[w.off] != '[' {
		return nil, nil, false
	}
	w.off++
	if !w.space() {
		return nil, nil, false
	}
	if w.b[w.off] == ']' {
		w.off++
		return []int{}, [][]byte{}, true
	}
	next := 0 // the known tool expected next
	for {
		i, text, ok := w.element(k, next)
		if !ok {
			return nil, nil, false
		}
		found, elems = append(found, i), append(elems, text)
		next++
		if i >= 0 {
			next = i + 1
		}
		if !w.space() {
			return nil, nil, false
		}
		c := w.b[w.off]
		w.off++
		switch {
		case c == ']':
			return found, elems, true
		case c != ',' || !w.space():
			return nil, nil, false
		}
	}
}

// element cuts the element the window is at: the index of the known tool
// it is the bytes of (-1: none, and a copy of its text).
func (w *window) element(k *Known, next int) (int, []byte, bool) {
	if next < len(k.tools) {
		raw := k.tools[next].raw
		for len(w.b)-w.off < len(raw) && bytes.HasPrefix(raw, w.b[w.off:]) && w.more() {
		}
		if bytes.HasPrefix(w.b[w.off:], raw) {
			w.off += len(raw)
			return next, nil, true
		}
	}
	for {
		// A value that ends at the window's end may go on past it.
		if e, ok := jcs.ValueEnd(w.b, w.off); ok && (e < len(w.b) || w.end) {
			text := w.b[w.off:e]
			w.off = e
			if i, found := k.index(text); found {
				return i, nil, true
			}
			return -1, bytes.Clone(text), true
		}
		if !w.more() {
			return 0, nil, false
		}
	}
}

// rest appends to text the rest of what r holds, after the array.
func (w *window) rest(text []byte) ([]byte, bool) {
	text = append(text, w.b[w.off:]...)
	for {
		w.b, w.off = w.b[:0], 0
		if !w.more() {
			return text, !w.err
		}
		text = append(text, w.b...)
	}
}
