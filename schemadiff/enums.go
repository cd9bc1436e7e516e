package schemadiff

import (
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// enum and const: one set of values (a const is a one-element enum);
// enum_widened, enum_narrowed, const_changed.

// schValues is the set of values a position is limited to by enum and
// const (their intersection), restricted to x.vset when it is set; ok is
// false when neither keyword limits it. Keys are canonical (schSide.key).
type schValues struct {
	keys []string
	vals map[string]jcs.Value
}

func (d *schDiffer) values(s *schSide, x schNode) (schValues, bool) {
	e, he := x.get("enum")
	c, hc := x.get("const")
	if !he && !hc {
		return schValues{}, false
	}
	v := schValues{vals: map[string]jcs.Value{}}
	add := func(val jcs.Value) {
		k := s.key(val)
		if _, dup := v.vals[k]; !dup {
			v.vals[k] = val
			v.keys = append(v.keys, k)
		}
	}
	if he {
		for i := 0; i < e.Len(); i++ {
			add(e.Index(i))
		}
	}
	if hc {
		k := s.key(c)
		if he {
			if _, ok := v.vals[k]; !ok {
				return schValues{vals: map[string]jcs.Value{}}, true
			}
			v = schValues{vals: map[string]jcs.Value{k: v.vals[k]}, keys: []string{k}}
		} else {
			add(c)
		}
	}
	if x.vset != nil {
		var keys []string
		for _, k := range v.keys {
			if x.vset[k] {
				keys = append(keys, k)
			} else {
				delete(v.vals, k)
			}
		}
		v.keys = keys
	}
	return v, true
}

func schPreviewValues(v schValues, keys []string) string {
	var b strings.Builder
	for i, k := range keys {
		if i == 8 {
			b.WriteString(", … (" + strconv.Itoa(len(keys)) + " in all)")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(safetext.Clip(string(v.vals[k].Canonical()), 40))
	}
	if len(keys) == 0 {
		b.WriteString("no values")
	}
	return b.String()
}

// enumConst compares the values enum and const limit a position to, as
// one set: a const is a one-element enum. Two constants (without enum) are
// const_changed; otherwise values added are enum_widened, values removed
// enum_narrowed, and a limit added or removed altogether is enum_narrowed
// or enum_widened (const_changed when the limit is a const alone).
func (d *schDiffer) enumConst(o, n schNode, pol int8) {
	eo, heo := o.get("enum")
	en, hen := n.get("enum")
	if (heo && eo.Kind() != jcs.Array) || (hen && en.Kind() != jcs.Array) {
		d.malformed(o, n, "enum", pol)
		return
	}
	co, hco := o.get("const")
	cn, hcn := n.get("const")
	if !heo && !hen && o.vset == nil && n.vset == nil {
		switch {
		case !hco && !hcn, d.same(co, cn):
		case !hcn:
			d.emit(ConstChanged, o.path.str()+"/const", Widening, pol, false, "const removed (was "+schPreview(co)+")", "")
		case !hco:
			d.emit(ConstChanged, n.path.str()+"/const", Narrowing, pol, false, "const added: "+schPreview(cn), "")
		default:
			d.emit(ConstChanged, n.path.str()+"/const", Neutral, pol, false, "const "+schPreview(co)+" → "+schPreview(cn), "")
		}
		return
	}
	kwPtr := func(x schNode, hasEnum bool) string {
		if hasEnum {
			return x.path.str() + "/enum"
		}
		return x.path.str() + "/const"
	}
	vo, okO := d.values(d.old, o)
	vn, okN := d.values(d.new, n)
	switch {
	case !okO && !okN:
	case !okN:
		if !heo {
			d.emit(ConstChanged, o.path.str()+"/const", Widening, pol, false, "const removed (was "+schPreview(co)+")", "")
		} else {
			d.emit(EnumWidened, o.path.str()+"/enum", Widening, pol, false, "enum removed (was "+schPreviewValues(vo, vo.keys)+")", "")
		}
	case !okO:
		if !hen {
			d.emit(ConstChanged, n.path.str()+"/const", Narrowing, pol, false, "const added: "+schPreview(cn), "")
		} else {
			d.emit(EnumNarrowed, n.path.str()+"/enum", Narrowing, pol, false, "enum added: "+schPreviewValues(vn, vn.keys), "")
		}
	default:
		var added, removed []string
		for _, k := range vn.keys {
			if _, ok := vo.vals[k]; !ok {
				added = append(added, k)
			}
		}
		for _, k := range vo.keys {
			if _, ok := vn.vals[k]; !ok {
				removed = append(removed, k)
			}
		}
		ptr := kwPtr(n, hen)
		if len(added) > 0 {
			d.emit(EnumWidened, ptr, Widening, pol, false, "enum values added: "+schPreviewValues(vn, added), "")
		}
		if len(removed) > 0 {
			d.emit(EnumNarrowed, ptr, Narrowing, pol, false, "enum values removed: "+schPreviewValues(vo, removed), "")
		}
	}
}
