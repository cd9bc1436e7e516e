package manifest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// A framed reading of a snapshot (ReadSnapshotFramed) is for a run that
// compares a large snapshot with a list of tools it reads anyway (drift:
// the served listing, parsed strictly as it arrives). The file is read
// once, in chunks, and never parsed whole: a scan finds where each element
// of the top-level "tools" array starts and ends and hashes its bytes as
// they stream past, and what is outside the array (the head and the tail,
// with the array emptied) is parsed strictly. The tools are hollow and
// unsettled, without even their names: Settle takes a tool's name, digests
// and facts from a tool of exactly its bytes (which parsed strictly as
// that tool, so these bytes do), and parses the others from their bytes,
// read again. Nothing a reading of the whole document would refuse is
// accepted: anything the scan does not expect makes it decline (the caller
// reads the file otherwise), and any error found later (a tool that does
// not parse, a schema violation, a manifest_digest that does not
// recompute) is reported as ReadTools reports it, by reading the file whole
// again: the messages are ReadTools', whichever reading found the problem.

// framedHeadMax bounds the bytes before the tools array and after it:
// mcpdrift's snapshots have a few hundred; a document with more is not
// framed.
const framedHeadMax = 1 << 20

// framed is what a framed reading keeps of the document.
type framed struct {
	at       io.ReaderAt
	size     int64
	skeleton *jcs.Doc // the document with its tools array emptied
}

// ReadSnapshotFramed reads the snapshot in the size bytes of r (a regular
// file) as described above. ok is false when the document is not one it
// frames: the caller reads it with ReadToolsWith, which accepts and
// refuses exactly what ReadTools does. An error is an error reading r, or
// the document's own (as ReadTools says it).
//
// The snapshot is unsettled (its tools nameless), and Settle must be given
// the tools it is compared with: see ReadOptions.DeferDigests. Until then
// its ServerID, Identity, Completeness, ClientCapabilities and the
// manifest_digest it claims are known, its tools' count and bytes.
func ReadSnapshotFramed(r io.ReaderAt, size int64, file string) (s *Snapshot, ok bool, err error) {
	sc := &frameScan{h: sha256.New()}
	var head []byte
	inArray := false // the head read, up to the array's '['
	buf := make([]byte, 256<<10)
	var off int64
	for off < size {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n == 0 && err != nil {
			return nil, false, readAgainErr(err) // io.EOF: shorter than it was
		}
		chunk := buf[:n]
		if !inArray {
			head = append(head, chunk...)
			i, found, bad := toolsArray(head)
			switch {
			case bad || (!found && len(head) > framedHeadMax):
				return nil, false, nil
			case found:
				inArray = true
				sc.base = int64(i) + 1
				chunk = head[i+1:]
				head = head[:i]
			default:
				off += int64(n)
				continue
			}
		}
		used, done := sc.feed(chunk)
		if sc.bad {
			return nil, false, nil
		}
		if done {
			// The tail: the rest of the file, after the array.
			tailAt := sc.base + int64(used)
			rest := size - tailAt
			if rest > framedHeadMax {
				return nil, false, nil
			}
			tail := make([]byte, rest)
			if k, err := r.ReadAt(tail, tailAt); int64(k) != rest {
				return nil, false, readAgainErr(err)
			}
			skel := make([]byte, 0, len(head)+2+len(tail))
			skel = append(append(append(skel, head...), "[]"...), tail...)
			return framedSnapshot(skel, sc, r, size, file)
		}
		sc.base += int64(len(chunk))
		off += int64(n)
	}
	return nil, false, nil // the file ended inside the array
}

// framedSnapshot reads the skeleton's head as parseSnapshotTools does and
// makes the scanned elements hollow, unsettled tools.
func framedSnapshot(skel []byte, sc *frameScan, r io.ReaderAt, size int64, file string) (*Snapshot, bool, error) {
	doc, err := jcs.Parse(skel)
	if err != nil || doc.Root().Kind() != jcs.Object || !IsSnapshot(doc) {
		return nil, false, nil // the whole reading says what is wrong
	}
	st := &snapTools{deferred: true, instances: []any{}, tools: make([]Tool, len(sc.elems))}
	for i, e := range sc.elems {
		t := &st.tools[i]
		t.Pointer = "/tools/" + strconv.Itoa(i)
		t.lean = &leanFacts{unsettled: true, sum: e.sum, hasSum: true}
		t.ref = &rawRef{at: r, off: e.off, n: int(e.n), sum: e.sum}
	}
	s, err := parseSnapshotTools(doc, file, st)
	if err != nil {
		return nil, false, nil
	}
	s.framed = &framed{at: r, size: size, skeleton: doc}
	return s, true, nil
}

// toolsArray finds, in the head of a document, the '[' that opens the
// value of its top-level "tools" member: found is false while the head
// is too short to say, bad when the document is not one a framed reading
// takes (not an object, a member name with an escape, a "tools" that is
// not an array, anything malformed the scan sees).
func toolsArray(b []byte) (at int, found, bad bool) {
	i := skipWS(b, 0)
	if i >= len(b) {
		return 0, false, false
	}
	if b[i] != '{' {
		return 0, false, true
	}
	i++
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return 0, false, false
		}
		if b[i] != '"' {
			return 0, false, true // '}' before the tools: none to frame
		}
		end := stringEnd(b, i)
		if end < 0 {
			return 0, false, false
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return 0, false, true
		}
		i = skipWS(b, end)
		if i >= len(b) {
			return 0, false, false
		}
		if b[i] != ':' {
			return 0, false, true
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return 0, false, false
		}
		if string(key) == "tools" {
			if b[i] != '[' {
				return 0, false, true
			}
			return i, true, false
		}
		end = valueEnd(b, i)
		if end == -1 {
			return 0, false, false
		}
		if end == -2 {
			return 0, false, true
		}
		i = skipWS(b, end)
		if i >= len(b) {
			return 0, false, false
		}
		if b[i] != ',' {
			return 0, false, true
		}
		i++
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string token at b[i] ('"'), or -1 when
// b ends inside it.
func stringEnd(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexAny(b[i:], "\"\\")
		if j < 0 {
			return -1
		}
		i += j
		if b[i] == '"' {
			return i + 1
		}
		i += 2 // an escape: the byte after the backslash is never the end
		if i > len(b) {
			return -1
		}
	}
}

// valueEnd is the index after the value starting at b[i]: -1 when b ends
// inside it, -2 when the scan sees it is malformed. Only strings and
// nesting are followed; a scalar ends at the first delimiter (the strict
// parse of the skeleton validates it).
func valueEnd(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			e := stringEnd(b, i)
			if e < 0 {
				return -1
			}
			i = e
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return -2
			}
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return -1
}

// frameScan follows the tools array, fed in chunks from the byte after its
// '[': where each element starts and ends, the SHA-256 of its bytes, and
// its nesting.
type frameScan struct {
	base  int64 // the file offset of the chunk being fed
	h     hash.Hash
	elems []frameElem
	bad   bool

	state    int // between elements (one of the scan* states), or scanIn
	depth    int // inside an element
	maxDepth int
	inStr    bool
	esc      bool
	start    int64
}

type frameElem struct {
	off int64
	n   int64
	sum [32]byte
}

const (
	scanFirst = iota // after '[': an element or ']'
	scanAfter        // after an element: ',' or ']'
	scanNext         // after ',': an element
	scanIn           // inside an element
)

// framedMaxDepth is the deepest an element may nest: it sits two levels
// down in the document (the root object, the tools array), which may nest
// jcs.MaxDepth deep. Deeper elements are not framed.
const framedMaxDepth = jcs.MaxDepth - 2

// strPlain and outPlain are the bytes the scan skips, in a string (all but
// '"' and '\\') and outside one (all but '"' and the brackets).
var strPlain, outPlain = func() (in, out [256]bool) {
	for c := range 256 {
		in[c] = c != '"' && c != '\\'
		out[c] = c != '"' && c != '{' && c != '[' && c != '}' && c != ']'
	}
	return in, out
}()

// feed scans a chunk; used is how many of its bytes belong to the array
// (its ']' included) once done.
func (s *frameScan) feed(b []byte) (used int, done bool) {
	i := 0
	for i < len(b) {
		if s.state != scanIn {
			c := b[i]
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				i++
				continue
			case c == ']' && s.state != scanNext:
				return i + 1, true
			case c == ',' && s.state == scanAfter:
				s.state = scanNext
				i++
				continue
			case c == '{' && s.state != scanAfter:
				s.state, s.depth, s.maxDepth, s.inStr, s.esc = scanIn, 0, 0, false, false
				s.start = s.base + int64(i)
				s.h.Reset()
			default:
				s.bad = true
				return i, false
			}
		}
		// Inside an element: follow strings and nesting up to its end.
		from := i
		end := -1
		// With the state in locals, runs of bytes that change nothing are
		// skipped by table (a string's plain bytes; outside strings,
		// whitespace, punctuation and scalars) and the others dispatched.
		inStr, esc, depth, maxDepth := s.inStr, s.esc, s.depth, s.maxDepth
		for i < len(b) {
			if inStr {
				if esc {
					esc = false
					i++
					continue
				}
				for i < len(b) && strPlain[b[i]] {
					i++
				}
				if i == len(b) {
					break
				}
				esc = b[i] == '\\'
				inStr = esc
				i++
				continue
			}
			for i < len(b) && outPlain[b[i]] {
				i++
			}
			if i == len(b) {
				break
			}
			switch b[i] {
			case '"':
				inStr = true
			case '{', '[':
				depth++
				maxDepth = max(maxDepth, depth)
			case '}', ']':
				depth--
				if depth == 0 {
					end = i + 1
				}
			}
			i++
			if end >= 0 {
				break
			}
		}
		s.inStr, s.esc, s.depth, s.maxDepth = inStr, esc, depth, maxDepth
		if end < 0 {
			s.h.Write(b[from:])
			return len(b), false
		}
		s.h.Write(b[from:end])
		if s.maxDepth > framedMaxDepth {
			s.bad = true
			return end, false
		}
		e := frameElem{off: s.start, n: s.base + int64(end) - s.start}
		s.h.Sum(e.sum[:0])
		if len(s.elems) == cap(s.elems) {
			// By doubling: append grows a large slice by a quarter, so
			// that 100,000 elements were moved about 27 times, four times
			// their size copied in all.
			s.elems = slices.Grow(s.elems, max(len(s.elems), 256))
		}
		s.elems = append(s.elems, e)
		s.state = scanAfter
		i = end
	}
	return len(b), false
}

// settleFramed settles a framed snapshot's tools: a tool whose bytes (by
// length and SHA-256) are those of a tool of like's takes its name,
// digests and facts; any other is parsed from its bytes, read again. Then
// the snapshot's schema is validated with the tools' names (what a whole
// reading validates). Any error is reported by reading the file whole
// (wholeError), so that its message is ReadTools'.
func (s *Snapshot) settleFramed(like func(sum [32]byte, n int) *Tool) error {
	var mu sync.Mutex
	var first error
	par.Range(len(s.Tools), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if err := s.Tools[i].settleFramed(like); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				return
			}
		}
	})
	if first != nil {
		return s.wholeError(first)
	}
	// The schema was validated with the array empty when the skeleton was
	// read; what it says of a tool (an object with a non-empty string
	// name: TestSnapshotSchemaTools keeps it to that) every settled tool
	// is, as toolFromValue read it (its own, or its twin's of the same
	// bytes). Validating the 10,000 names again with the validator would
	// only cost.
	for i := range s.Tools {
		if s.Tools[i].Name == "" {
			st := &snapTools{instances: make([]any, len(s.Tools))}
			for j := range s.Tools {
				st.instances[j] = map[string]any{"name": s.Tools[j].Name}
			}
			return s.wholeError(schemas.Validate(schemas.Snapshot, snapshotInstance(s.framed.skeleton.Root(), st)))
		}
	}
	return nil
}

// settleFramed settles one tool of a framed snapshot: from the tool of
// its bytes like has, else from its own bytes.
func (t *Tool) settleFramed(like func([32]byte, int) *Tool) error {
	if t.lean == nil || !t.lean.unsettled || t.settleFrom(like(t.ref.sum, t.ref.n)) {
		return nil
	}
	return t.settleOwn()
}

// wholeError is the error a reading of the whole file gives, for a
// problem a framed reading found (found): ReadTools' message. When the
// whole file reads without one, it is no longer the file that was framed:
// ErrBytesChanged.
func (s *Snapshot) wholeError(found error) error {
	if errors.Is(found, ErrBytesChanged) {
		return &ArtifactError{s.file, found}
	}
	src := make([]byte, s.framed.size)
	if n, err := s.framed.at.ReadAt(src, 0); int64(n) != s.framed.size {
		return &ArtifactError{s.file, readAgainErr(err)}
	}
	if _, err := ReadTools(src, s.file); err != nil {
		return err
	}
	return &ArtifactError{s.file, ErrBytesChanged}
}
