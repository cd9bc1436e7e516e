package manifest

import (
	"bytes"
	"hash/maphash"
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

// NewKnown indexes the tools of tl, a list read from tools/list responses,
// pages or a snapshot: each tool was parsed strictly at least as deep as a
// snapshot's tools sit (a page's are in "result", in "tools"), so bytes
// that parsed there parse in a snapshot too. A bare tool array's tools sit
// a level higher, where bytes a snapshot would refuse as too deep can
// parse: it knows none, nor of a list of another form. nil for no tools.
func NewKnown(tl *ToolList) *Known {
	if tl == nil || len(tl.Tools) == 0 {
		return nil
	}
	switch tl.Form {
	case FormJSONRPC, FormResult, FormPages, FormSnapshot:
	default:
		return nil
	}
	tools := tl.Tools
	k := &Known{seed: maphash.MakeSeed(), at: make(map[uint64]int32, len(tools)), tools: tools}
	for i := range tools {
		h := maphash.Bytes(k.seed, tools[i].raw)
		if _, ok := k.at[h]; !ok {
			k.at[h] = int32(i) // another tool of the same hash is not found: it is parsed
		}
	}
	return k
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

// ReadToolsKnown is ReadTools of a document that may be a snapshot of
// tools known (nil: none): the snapshot's tools found among them are
// theirs, with their own pointers, and the tools it reads hold no part of
// src. Whatever the document, what it returns is what ReadTools returns
// (TestReadToolsKnown, FuzzReadToolsKnown).
func ReadToolsKnown(src []byte, file string, known *Known) (*Tools, error) {
	if known != nil && PeekHead(src).Schema == SnapshotSchemaID {
		if s, err, ok := ReadSnapshotKnown(bytes.NewReader(src), file, known); ok {
			if err != nil {
				return nil, err
			}
			return &Tools{Snapshot: s}, nil
		}
	}
	return ReadTools(src, file)
}
