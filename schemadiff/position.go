package schemadiff

import (
	"strconv"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// A schema position (schNode: a value and where it is, or would be) and its
// JSON pointer (schPath, a chain built only when a change is reported).

// schNode is a schema position: its value (the zero Value when absent)
// and its pointer inside its schema (where it would be, when absent).
type schNode struct {
	v    jcs.Value
	path *schPath
	// outer: positions whose annotations lie over this one's, outermost
	// first (as the references a position stands for do). A branch of an
	// anyOf compared with a schema that is not a choice has the anyOf (and
	// the references to it) as outer layers: an annotation the anyOf
	// carries is the branch's too.
	outer []schNode
	// tmask restricts the position to instances of these types (0: none):
	// a schema of several types compared with the branch of a choice that
	// takes some of them (see lift) is compared as that part of itself.
	tmask uint8
	// vset restricts the position to these values (keys of schSide.key;
	// nil: none): an enum compared with the branch of a choice that takes
	// some of its values (see lift) is compared as that part of itself.
	vset map[string]bool
}

// schPath is a JSON pointer kept as a chain of escaped segments, so that
// descending costs O(1); str builds the text only for a reported change.
type schPath struct {
	parent *schPath
	seg    string
}

func (p *schPath) str() string {
	n := 0
	for q := p; q != nil; q = q.parent {
		n += 1 + len(q.seg)
	}
	b := make([]byte, n)
	for q := p; q != nil; q = q.parent {
		n -= len(q.seg)
		copy(b[n:], q.seg)
		n--
		b[n] = '/'
	}
	return string(b)
}

func (x schNode) get(kw string) (jcs.Value, bool) {
	if !x.v.Valid() || x.v.Kind() != jcs.Object {
		return jcs.Value{}, false
	}
	return x.v.Get(kw)
}

func (x schNode) has(kw string) bool {
	_, ok := x.get(kw)
	return ok
}

// child is the subschema position under keyword kw (kw needs no escaping).
func (x schNode) child(kw string) schNode {
	v, _ := x.get(kw)
	return schNode{v: v, path: &schPath{x.path, kw}}
}

// member is the position kw/key (an object-valued keyword's member).
func (x schNode) member(kw, key string) schNode {
	var v jcs.Value
	if o, ok := x.get(kw); ok && o.Kind() == jcs.Object {
		v, _ = o.Get(key)
	}
	return schNode{v: v, path: &schPath{&schPath{x.path, kw}, jcs.PointerToken(key)}}
}

// elem is the position kw/i (an array-valued keyword's element).
func (x schNode) elem(kw string, i int) schNode {
	var v jcs.Value
	if a, ok := x.get(kw); ok && a.Kind() == jcs.Array && i < a.Len() {
		v = a.Index(i)
	}
	return schNode{v: v, path: &schPath{&schPath{x.path, kw}, strconv.Itoa(i)}}
}

func schOff(v jcs.Value) int {
	if !v.Valid() {
		return -1
	}
	return v.Offset()
}

func schNodePtr(o, n schNode) string {
	if n.v.Valid() {
		return n.path.str()
	}
	return o.path.str()
}

// kwPtr is where keyword kw is: on the new side if it has it, else on the
// old side.
func schKwPtr(o, n schNode, kw string) string {
	if n.has(kw) {
		return n.path.str() + "/" + kw
	}
	if o.has(kw) {
		return o.path.str() + "/" + kw
	}
	return schNodePtr(o, n) + "/" + kw
}
