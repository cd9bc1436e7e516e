package manifest

import (
	"bytes"
	"hash/maphash"
	"strconv"
	"sync/atomic"

	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/jcs"
)

// A tool read again from the same bytes learns nothing new: ToolFromValue
// reads its name, digests and facts from the bytes alone (the pointer is
// only where they were). drift reads its declared snapshot right after
// listing the server, and most of its tools are the bytes just listed:
// Known indexes the listed tools by their bytes, and ReadToolsKnown splits
// the snapshot's tools array instead of parsing it, and parses only the
// tools it does not find. The snapshot is then never a tree, and its file
// is held by none of the tools read from it: those found hold the listed
// bytes, the others a copy of their own.

// Known is tools already read, found by their bytes.
type Known struct {
	seed  maphash.Seed
	at    map[uint64]int32 // the hash of a tool's bytes: its index in tools
	tools []Tool
}

// NewKnown indexes tools read from tools/list responses or pages: each was
// parsed strictly at least as deep as a snapshot's tools sit (a page's
// tools are in "result", in "tools"), so bytes that parsed there parse in
// a snapshot too. nil for no tools.
func NewKnown(tools []Tool) *Known {
	if len(tools) == 0 {
		return nil
	}
	k := &Known{seed: maphash.MakeSeed(), at: make(map[uint64]int32, len(tools)), tools: tools}
	for i := range tools {
		h := maphash.Bytes(k.seed, tools[i].raw)
		if _, ok := k.at[h]; !ok {
			k.at[h] = int32(i) // another tool of the same hash is not found: it is parsed
		}
	}
	return k
}

// find is the known tool whose bytes are b, or nil.
func (k *Known) find(b []byte) *Tool {
	if i, ok := k.index(b); ok {
		return &k.tools[i]
	}
	return nil
}

// index is the index of the known tool whose bytes are b.
func (k *Known) index(b []byte) (int, bool) {
	if k == nil {
		return 0, false
	}
	i, ok := k.at[maphash.Bytes(k.seed, b)]
	if !ok || !bytes.Equal(k.tools[i].raw, b) {
		return 0, false
	}
	return int(i), true
}

// split is the texts of the elements of the array text at src[start:],
// and where the array ends. A snapshot of a list holds its tools in the
// order listed: an element that is the next known tool's bytes is taken
// as those bytes (a JSON value ends where its text does), and another is
// scanned (jcs.ValueEnd); either way the next tool expected is the one
// after the last found.
func (k *Known) split(src []byte, start int) (elems [][]byte, end int, ok bool) {
	i := jcs.SkipSpace(src, start)
	if i >= len(src) || src[i] != '[' {
		return nil, 0, false
	}
	if i = jcs.SkipSpace(src, i+1); i < len(src) && src[i] == ']' {
		return [][]byte{}, i + 1, true
	}
	next := 0 // the tool expected next
	for i < len(src) {
		var e int
		if next < len(k.tools) && bytes.HasPrefix(src[i:], k.tools[next].raw) {
			e, next = i+len(k.tools[next].raw), next+1
		} else {
			if e, ok = jcs.ValueEnd(src, i); !ok {
				return nil, 0, false
			}
			next++
			if j, found := k.index(src[i:e]); found {
				next = j + 1
			}
		}
		elems = append(elems, src[i:e])
		if i = jcs.SkipSpace(src, e); i >= len(src) {
			return nil, 0, false
		}
		switch src[i] {
		case ']':
			return elems, i + 1, true
		case ',':
			i = jcs.SkipSpace(src, i+1)
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// ReadToolsKnown is ReadTools of a document that may be a snapshot of
// tools known (nil: none): the snapshot's tools found among them are
// theirs, with their own pointers, and the tools it reads hold no part of
// src. Whatever the document, what it returns is what ReadTools returns
// (TestReadToolsKnown, FuzzReadToolsKnown).
func ReadToolsKnown(src []byte, file string, known *Known) (*Tools, error) {
	if known != nil {
		if s, err, ok := snapshotParts(src, file, known); ok {
			if err != nil {
				return nil, err
			}
			return &Tools{Snapshot: s}, nil
		}
	}
	return ReadTools(src, file)
}

// snapshotParts reads a snapshot in parts: the text without its tools (an
// empty array in their place) parsed strictly, and each tool found in
// known or else parsed strictly on its own, at its depth in the whole
// (jcs.ParseNested). ok is false when the text is not a snapshot laid out
// so, or a part does not parse: ReadTools then reads it whole, and says
// where and why.
func snapshotParts(src []byte, file string, known *Known) (s *Snapshot, err error, ok bool) {
	if PeekHead(src).Schema != SnapshotSchemaID {
		return nil, nil, false
	}
	start, ok := jcs.MemberStart(src, "tools")
	if !ok {
		return nil, nil, false
	}
	elems, end, ok := known.split(src, start)
	if !ok {
		return nil, nil, false
	}
	head := make([]byte, 0, len(src)-(end-start)+2)
	head = append(append(append(head, src[:start]...), "[]"...), src[end:]...)
	doc, perr := jcs.Parse(head)
	if perr != nil || !IsSnapshot(doc) {
		return nil, nil, false
	}
	tools := make([]toolPart, len(elems))
	var failed atomic.Bool
	par.Range(len(elems), func(lo, hi int) {
		for i := lo; i < hi && !failed.Load(); i++ {
			if t := known.find(elems[i]); t != nil {
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
			tools[i].tool.raw = bytes.Clone(tools[i].tool.raw)
		}
	})
	if failed.Load() {
		return nil, nil, false
	}
	s, err = snapshotOf(doc.Root(), tools, file)
	return s, err, true
}
