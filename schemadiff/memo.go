package schemadiff

import (
	"reflect"
	"slices"
	"sync"

	"github.com/mcpdrift/mcpdrift/manifest"
)

// A DiffMemo remembers what DiffTool said of a pair of tools (the same
// two tool values, by address) under one set of options, so that two
// passes over the same lists diff each changed tool once: lock check
// decides every tool (decide.DecideTools) and then reports the structural
// changes of the same lists (Compare), which diffed every changed tool a
// second time. A call with other options (another classifier, another
// trust record, other bounds) is not answered from it. The tools must not
// change while the memo is in use. Safe for concurrent use.
type DiffMemo struct {
	mu   sync.Mutex
	set  bool
	opt  ToolOptions
	diff map[[2]*manifest.Tool][]Change
}

// lookup is what DiffTool said of o and n under opt, if it was asked.
func (m *DiffMemo) lookup(o, n *manifest.Tool, opt ToolOptions) ([]Change, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.set || !sameToolOptions(m.opt, opt) {
		return nil, false
	}
	cs, ok := m.diff[[2]*manifest.Tool{o, n}]
	return slices.Clone(cs), ok
}

// store records what DiffTool said of o and n under opt; the memo keeps
// the options of its first answer and ignores answers under others.
func (m *DiffMemo) store(o, n *manifest.Tool, opt ToolOptions, cs []Change) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.set {
		m.set, m.opt, m.diff = true, opt, map[[2]*manifest.Tool][]Change{}
	}
	if sameToolOptions(m.opt, opt) {
		m.diff[[2]*manifest.Tool{o, n}] = slices.Clone(cs)
	}
}

// sameToolOptions reports whether a and b are the same options: the same
// classifier, bounds and trust record (the same maps, so the same
// documents; nil and an empty map differ, as they do to a diff).
func sameToolOptions(a, b ToolOptions) bool {
	a.Memo, b.Memo = nil, nil
	ar, br := a.Schema.Refs, b.Schema.Refs
	a.Schema.Refs, b.Schema.Refs = nil, nil
	if a != b || (ar == nil) != (br == nil) {
		return false
	}
	return ar == nil || sameMap(ar.Pinned, br.Pinned) && sameMap(ar.Verified, br.Verified)
}

func sameMap(a, b map[string]string) bool {
	return (a == nil) == (b == nil) && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
