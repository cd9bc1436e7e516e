package schemadiff

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// One side of a comparison: a schema document whose values are identified
// by their byte offset, their digests (canonical forms, memoised), and
// what is built from it lazily: resources and anchors (resolve.go), type
// masks (types.go), normal forms (normalize.go).

// schDigest identifies a value by its canonical form: two values have the
// same sum exactly when their RFC 8785 canonical forms are equal (up to a
// SHA-256 collision). hasRef says the value contains a "$ref" or
// "$dynamicRef" member somewhere, so equal bytes do not imply equal meaning.
type schDigest struct {
	sum    [32]byte
	hasRef bool
}

// schSide is one of the two schemas being compared, with lazily built
// indexes. Values are identified by their byte offset in their document,
// which is unique per value.
type schSide struct {
	root    jcs.Value
	digests map[int]schDigest // arrays and objects only
	masks   map[int]schMaskMemo
	// Resources, by URI, and the resource of every object that holds a
	// reference (built by index).
	root0     *schResource
	resources map[string]*schResource
	scopes    map[int]*schResource
	indexed   bool
	nz        *nrmSide // normal forms
	scratch   []byte
	stack     []schDigest
}

type schMaskMemo struct {
	mask  uint8
	ok    bool
	state uint8 // 1 in progress, 2 done
}

func newSchSide(root jcs.Value) *schSide {
	s := &schSide{root: root, digests: make(map[int]schDigest), masks: make(map[int]schMaskMemo)}
	s.nz = &nrmSide{s: s, budget: schDefaultMaxNodes}
	return s
}

// digest returns the digest of an array or object (memoised). Scalar
// members are written into their container's stream as canonical bytes;
// use schSame or key for scalars. The recursion is bounded by jcs.MaxDepth.
func (s *schSide) digest(v jcs.Value) schDigest {
	off := v.Offset()
	if d, ok := s.digests[off]; ok {
		return d
	}
	var d schDigest
	n := v.Len()
	isObj := v.Kind() == jcs.Object
	child := func(i int) jcs.Value {
		if isObj {
			_, c := v.Member(i)
			return c
		}
		return v.Index(i)
	}
	// Containers first (they use s.scratch and s.stack above base), then
	// this value's stream.
	base := len(s.stack)
	for i := range n {
		if isObj {
			k, _ := v.Member(i)
			if k.StrEqual("$ref") || k.StrEqual("$dynamicRef") {
				d.hasRef = true
			}
		}
		if c := child(i); c.Kind() == jcs.Array || c.Kind() == jcs.Object {
			cd := s.digest(c)
			d.hasRef = d.hasRef || cd.hasRef
			s.stack = append(s.stack, cd)
		}
	}
	buf := s.scratch[:0]
	buf = append(buf, byte(v.Kind()))
	buf = binary.AppendUvarint(buf, uint64(n))
	k := base
	for i := range n {
		if isObj {
			key, _ := v.Member(i)
			at := len(buf)
			buf = append(buf, 0, 0, 0, 0)
			buf = key.AppendCanonical(buf)
			binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
		}
		c := child(i)
		switch c.Kind() {
		case jcs.Array, jcs.Object:
			buf = append(buf, 'c')
			buf = append(buf, s.stack[k].sum[:]...)
			k++
		default:
			buf = append(buf, 's', byte(c.Kind()))
			at := len(buf)
			buf = append(buf, 0, 0, 0, 0)
			buf = c.AppendCanonical(buf)
			binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
		}
	}
	s.stack = s.stack[:base]
	d.sum = sha256.Sum256(buf)
	s.scratch = buf
	s.digests[off] = d
	return d
}

// key identifies a value by its canonical form, for set membership.
func (s *schSide) key(v jcs.Value) string {
	switch v.Kind() {
	case jcs.Array, jcs.Object:
		d := s.digest(v)
		return "c" + string(d.sum[:])
	}
	return "s" + string(v.Canonical())
}

// hasRef reports whether v contains a "$ref" or "$dynamicRef" member.
func (s *schSide) hasRef(v jcs.Value) bool {
	switch v.Kind() {
	case jcs.Array, jcs.Object:
		return s.digest(v).hasRef
	}
	return false
}
