package schemadiff

import (
	"math"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// The type keyword: the set of JSON types a position accepts (a bit mask,
// integer inside number), narrowed by enum and const values, references and
// allOf/anyOf/oneOf branches; type_widened, type_narrowed, type_changed.

const (
	schTNull uint8 = 1 << iota
	schTBoolean
	schTObject
	schTArray
	schTNumber
	schTString
	schTInteger
	schTAll = 1<<7 - 1
)

var schTypeNames = []struct {
	name string
	bit  uint8
}{
	{"array", schTArray}, {"boolean", schTBoolean}, {"integer", schTInteger}, {"null", schTNull},
	{"number", schTNumber}, {"object", schTObject}, {"string", schTString},
}

func schTypeBit(s string) uint8 {
	for _, t := range schTypeNames {
		if t.name == s {
			if t.bit == schTNumber {
				return schTNumber | schTInteger
			}
			return t.bit
		}
	}
	return 0
}

// schTypeMask reads a type keyword's value (absent: every type).
func schTypeMask(v jcs.Value, has bool) (uint8, bool) {
	if !has {
		return schTAll, true
	}
	switch v.Kind() {
	case jcs.String:
		b := schTypeBit(v.Str())
		return b, b != 0
	case jcs.Array:
		var m uint8
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			if e.Kind() != jcs.String {
				return 0, false
			}
			b := schTypeBit(e.Str())
			if b == 0 {
				return 0, false
			}
			m |= b
		}
		return m, true
	}
	return 0, false
}

func schTypeString(m uint8) string {
	switch m {
	case schTAll:
		return "any"
	case 0:
		return "nothing"
	}
	var parts []string
	for _, t := range schTypeNames {
		if m&t.bit != 0 && !(t.bit == schTInteger && m&schTNumber != 0) {
			parts = append(parts, t.name)
		}
	}
	return strings.Join(parts, "|")
}

// effMask is the set of JSON types v can accept: its type keyword
// intersected with what its references, allOf, anyOf and oneOf allow.
// Memoised per value; a cycle counts as any type.
func (d *schDiffer) effMask(s *schSide, v jcs.Value, rd int) uint8 {
	switch schClass(v) {
	case schNone:
		return 0
	case schAny, schBad:
		return schTAll
	}
	off := v.Offset()
	if m, ok := s.masks[off]; ok {
		if m.state == 1 {
			return schTAll
		}
		return m.mask
	}
	s.masks[off] = schMaskMemo{state: 1}
	t, has := v.Get("type")
	m, ok := schTypeMask(t, has)
	if !ok {
		m = schTAll
	}
	m &= d.compMask(s, v, rd)
	if e, ok := v.Get("enum"); ok && e.Kind() == jcs.Array {
		var u uint8
		for i := 0; i < e.Len(); i++ {
			u |= schValueType(e.Index(i))
		}
		m &= u
	}
	if c, ok := v.Get("const"); ok {
		m &= schValueType(c)
	}
	s.masks[off] = schMaskMemo{mask: m, ok: true, state: 2}
	return m
}

// schValueType is the type bit of an instance value (an integral number is
// an integer).
func schValueType(v jcs.Value) uint8 {
	switch v.Kind() {
	case jcs.Null:
		return schTNull
	case jcs.True, jcs.False:
		return schTBoolean
	case jcs.Object:
		return schTObject
	case jcs.Array:
		return schTArray
	case jcs.String:
		return schTString
	case jcs.Number:
		if f := v.Float(); f == math.Trunc(f) {
			return schTInteger
		}
		return schTNumber
	}
	return 0
}

// compMask is what v's references and combinators allow.
func (d *schDiffer) compMask(s *schSide, v jcs.Value, rd int) uint8 {
	m := uint8(schTAll)
	if !v.Valid() || v.Kind() != jcs.Object {
		return m
	}
	if rd < d.opt.MaxRefDepth {
		for _, kw := range [...]string{"$ref", "$dynamicRef"} {
			if r, ok := v.Get(kw); ok && r.Kind() == jcs.String && s.internalRef(r.Str(), v) {
				if t, _, problem := s.resolveAt(r.Str(), v); problem == "" {
					m &= d.effMask(s, t, rd+1)
				}
			}
		}
	}
	if a, ok := v.Get("allOf"); ok && a.Kind() == jcs.Array {
		for i := 0; i < a.Len(); i++ {
			m &= d.effMask(s, a.Index(i), rd)
		}
	}
	for _, kw := range [...]string{"anyOf", "oneOf"} {
		if a, ok := v.Get(kw); ok && a.Kind() == jcs.Array {
			var u uint8
			for i := 0; i < a.Len(); i++ {
				u |= d.effMask(s, a.Index(i), rd)
			}
			m &= u
		}
	}
	return m
}

func (d *schDiffer) typeKw(o, n schNode, pol int8, rd int) {
	to, ho := o.get("type")
	tn, hn := n.get("type")
	if !ho && !hn {
		return // type changes inside combinators are found there
	}
	mo, okO := schTypeMask(to, ho)
	mn, okN := schTypeMask(tn, hn)
	if !okO || !okN {
		d.malformed(o, n, "type", pol)
		return
	}
	mo &= d.effMask(d.old, o.v, rd)
	mn &= d.effMask(d.new, n.v, rd)
	if o.tmask != 0 {
		mo &= o.tmask
	}
	if n.tmask != 0 {
		mn &= n.tmask
	}
	d.typeChange(schKwPtr(o, n, "type"), mo, mn, pol)
}

func (d *schDiffer) typeChange(ptr string, mo, mn uint8, pol int8) {
	if mo == mn {
		return
	}
	detail := "type " + schTypeString(mo) + " → " + schTypeString(mn)
	switch {
	case mn&mo == mo:
		d.emit(TypeWidened, ptr, Widening, pol, false, detail, "")
	case mn&mo == mn:
		d.emit(TypeNarrowed, ptr, Narrowing, pol, false, detail, "")
	default:
		d.emit(TypeChanged, ptr, Neutral, pol, false, detail, "")
	}
}

// schTypeGroups counts the groups of JSON types in a mask (integer and
// number are one).
func schTypeGroups(m uint8) int {
	n := 0
	for _, g := range [...]uint8{schTNull, schTBoolean, schTObject, schTArray, schTNumber | schTInteger, schTString} {
		if m&g != 0 {
			n++
		}
	}
	return n
}
