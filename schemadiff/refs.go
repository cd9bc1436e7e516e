package schemadiff

import (
	"crypto/sha256"
	"encoding/binary"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// ExternalRefs returns the RFC 6901 pointers, relative to schema (not
// prefixed with the schema's place in the tool), of every "$ref" and
// "$dynamicRef" member whose value is a string that does not start with
// "#": a reference that leaves the document. The walk covers the whole value,
// schema keywords or not ($defs, unknown keywords, enum values, arrays), as
// the effective schema of any such reference is whatever the referenced
// document says when the runtime loads it. An empty reference ("") counts as
// external: it names the base URI, which the schema does not pin. Nothing is
// ever fetched. Pointers come in document order (members in canonical
// order, depth first).
func ExternalRefs(schema jcs.Value) []string {
	var out []string
	for _, r := range schExternalRefs(schema) {
		out = append(out, r.ptr)
	}
	return out
}

// schExtRef is one external reference: where it is and what it says.
type schExtRef struct{ ptr, val string }

func schExternalRefs(v jcs.Value) []schExtRef {
	if !v.Valid() {
		return nil
	}
	var out []schExtRef
	var segs []schSeg
	var walk func(v jcs.Value)
	walk = func(v jcs.Value) {
		switch v.Kind() {
		case jcs.Object:
			for i := 0; i < v.Len(); i++ {
				k, c := v.Member(i)
				segs = append(segs, schSeg{key: k, idx: -1})
				if (k.StrEqual("$ref") || k.StrEqual("$dynamicRef")) && c.Kind() == jcs.String && !strings.HasPrefix(c.Str(), "#") {
					out = append(out, schExtRef{schJoinSegs(segs), c.Str()})
				}
				if c.Kind() == jcs.Object || c.Kind() == jcs.Array {
					walk(c)
				}
				segs = segs[:len(segs)-1]
			}
		case jcs.Array:
			for i := 0; i < v.Len(); i++ {
				c := v.Index(i)
				if c.Kind() == jcs.Object || c.Kind() == jcs.Array {
					segs = append(segs, schSeg{idx: i})
					walk(c)
					segs = segs[:len(segs)-1]
				}
			}
		}
	}
	walk(v)
	return out
}

// schSeg is a pointer segment: an object member's name or an array index.
type schSeg struct {
	key jcs.Value
	idx int
}

func schJoinSegs(segs []schSeg) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		if s.idx >= 0 {
			b.WriteString(strconv.Itoa(s.idx))
		} else {
			b.WriteString(schEscape(s.key.Str()))
		}
	}
	return b.String()
}

// schEscape escapes one JSON pointer segment (RFC 6901).
func schEscape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// schDigest identifies a value by its canonical form: two values have the
// same sum exactly when their RFC 8785 canonical forms are equal (up to a
// SHA-256 collision). hasRef says the value contains a "$ref" or
// "$dynamicRef" member somewhere, so equal bytes do not imply equal meaning.
type schDigest struct {
	sum    [32]byte
	hasRef bool
}

// schAnchor is a plain-name fragment target ($anchor, $dynamicAnchor, or a
// draft-07 "$id": "#name").
type schAnchor struct {
	v         jcs.Value
	path      *schPath
	ambiguous bool
}

// schSide is one of the two schemas being compared, with lazily built
// indexes. Values are identified by their byte offset in their document,
// which is unique per value.
type schSide struct {
	root    jcs.Value
	digests map[int]schDigest // arrays and objects only
	masks   map[int]schMaskMemo
	anchors map[string]schAnchor
	indexed bool
	scratch []byte
	stack   []schDigest
}

type schMaskMemo struct {
	mask  uint8
	ok    bool
	state uint8 // 1 in progress, 2 done
}

func newSchSide(root jcs.Value) *schSide {
	return &schSide{root: root, digests: make(map[int]schDigest), masks: make(map[int]schMaskMemo)}
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

// schDataKeywords hold instance data, not schemas: the anchor index does not
// look inside them.
var schDataKeywords = map[string]bool{"enum": true, "const": true, "default": true, "examples": true}

// index builds the anchor table once.
func (s *schSide) index() {
	if s.indexed {
		return
	}
	s.indexed = true
	s.anchors = make(map[string]schAnchor)
	var segs []string
	var walk func(v jcs.Value)
	add := func(name string, v jcs.Value) {
		if a, ok := s.anchors[name]; ok {
			if a.v.Offset() != v.Offset() {
				a.ambiguous = true
				s.anchors[name] = a
			}
			return
		}
		var p *schPath
		for _, seg := range segs {
			p = &schPath{p, schEscape(seg)}
		}
		s.anchors[name] = schAnchor{v: v, path: p}
	}
	walk = func(v jcs.Value) {
		switch v.Kind() {
		case jcs.Object:
			for _, kw := range [...]string{"$anchor", "$dynamicAnchor"} {
				if a, ok := v.Get(kw); ok && a.Kind() == jcs.String && a.Str() != "" {
					add(a.Str(), v)
				}
			}
			if id, ok := v.Get("$id"); ok && id.Kind() == jcs.String && strings.HasPrefix(id.Str(), "#") && len(id.Str()) > 1 {
				add(id.Str()[1:], v)
			}
			for i := 0; i < v.Len(); i++ {
				k, c := v.Member(i)
				ks := k.Str()
				if schDataKeywords[ks] {
					continue
				}
				segs = append(segs, ks)
				walk(c)
				segs = segs[:len(segs)-1]
			}
		case jcs.Array:
			for i := 0; i < v.Len(); i++ {
				segs = append(segs, strconv.Itoa(i))
				walk(v.Index(i))
				segs = segs[:len(segs)-1]
			}
		}
	}
	walk(s.root)
}

// resolve finds the target of an internal reference ("#", "#/json/pointer"
// with ~0, ~1 and %-escapes, or "#anchor") and returns it with its
// canonical pointer. problem is non-empty when the reference cannot be
// resolved.
func (s *schSide) resolve(ref string) (target jcs.Value, path *schPath, problem string) {
	if !strings.HasPrefix(ref, "#") {
		return jcs.Value{}, nil, "not an internal reference"
	}
	if !s.root.Valid() {
		return jcs.Value{}, nil, "the schema is absent"
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return jcs.Value{}, nil, "invalid %-escape in the reference"
	}
	if frag == "" {
		return s.root, nil, ""
	}
	if frag[0] != '/' {
		s.index()
		a, ok := s.anchors[frag]
		switch {
		case !ok:
			return jcs.Value{}, nil, "no $anchor named " + strconv.Quote(frag)
		case a.ambiguous:
			return jcs.Value{}, nil, "the anchor " + strconv.Quote(frag) + " is defined more than once"
		}
		return a.v, a.path, ""
	}
	v := s.root
	var p *schPath
	for _, seg := range strings.Split(frag[1:], "/") {
		if strings.Contains(seg, "~") {
			var u strings.Builder
			for i := 0; i < len(seg); i++ {
				if seg[i] != '~' {
					u.WriteByte(seg[i])
					continue
				}
				if i+1 < len(seg) && (seg[i+1] == '0' || seg[i+1] == '1') {
					u.WriteByte("~/"[seg[i+1]-'0'])
					i++
					continue
				}
				return jcs.Value{}, nil, "invalid ~ escape in the JSON pointer"
			}
			seg = u.String()
		}
		switch v.Kind() {
		case jcs.Object:
			c, ok := v.Get(seg)
			if !ok {
				return jcs.Value{}, nil, "no member " + strconv.Quote(seg) + " at " + strconv.Quote(p.str())
			}
			v = c
		case jcs.Array:
			i, ok := schIndex(seg)
			if !ok || i >= v.Len() {
				return jcs.Value{}, nil, "no element " + strconv.Quote(seg) + " at " + strconv.Quote(p.str())
			}
			v = v.Index(i)
		default:
			return jcs.Value{}, nil, "the pointer goes through a " + v.Kind().String() + " at " + strconv.Quote(p.str())
		}
		p = &schPath{p, schEscape(seg)}
	}
	return v, p, ""
}

// schIndex parses a JSON pointer array index (no sign, no leading zeros).
func schIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}
