package schemadiff

import (
	"math"
	"math/big"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// String and number constraints: minimum, maximum and their exclusive
// forms (draft-04's boolean ones too), multipleOf, minLength, maxLength,
// pattern, format; and count, the numeric limit that arrays and objects
// use too (minItems, maxProperties, ...).

func schNum(f float64) string {
	if math.IsInf(f, 0) {
		return "none"
	}
	return string(jcs.AppendNumber(nil, f))
}

// count compares a numeric limit; absent means def. isMax: smaller is
// tighter.
func (d *schDiffer) count(o, n schNode, kw string, isMax bool, def float64, pol int8) {
	vo, ho := o.get(kw)
	vn, hn := n.get(kw)
	if !ho && !hn {
		return
	}
	if (ho && vo.Kind() != jcs.Number) || (hn && vn.Kind() != jcs.Number) {
		d.malformed(o, n, kw, pol)
		return
	}
	fo, fn := def, def
	if ho {
		fo = vo.Float()
	}
	if hn {
		fn = vn.Float()
	}
	if fo == fn {
		return
	}
	detail := kw + " " + schNum(fo) + " → " + schNum(fn)
	if (fn > fo) != isMax {
		d.emit(ConstraintTightened, schKwPtr(o, n, kw), Narrowing, pol, false, detail, "")
	} else {
		d.emit(ConstraintLoosened, schKwPtr(o, n, kw), Widening, pol, false, detail, "")
	}
}

// schBound is the effective lower or upper numeric bound of a schema.
type schBound struct {
	ok   bool
	val  float64
	excl bool
	kw   string
}

func (b schBound) describe(lower bool) string {
	if !b.ok {
		return "none"
	}
	op := map[[2]bool]string{{true, false}: "≥ ", {true, true}: "> ", {false, false}: "≤ ", {false, true}: "< "}[[2]bool{lower, b.excl}]
	return op + schNum(b.val)
}

// schBounds reads minimum/exclusiveMinimum (lower) or
// maximum/exclusiveMaximum, draft-04 boolean exclusives included.
func schBounds(x schNode, lower bool) (schBound, bool) {
	incl, excl := "maximum", "exclusiveMaximum"
	if lower {
		incl, excl = "minimum", "exclusiveMinimum"
	}
	var cands []schBound
	exclBool := false
	if e, ok := x.get(excl); ok {
		switch e.Kind() {
		case jcs.Number:
			cands = append(cands, schBound{ok: true, val: e.Float(), excl: true, kw: excl})
		case jcs.True:
			exclBool = true
		case jcs.False:
		default:
			return schBound{}, false
		}
	}
	if m, ok := x.get(incl); ok {
		if m.Kind() != jcs.Number {
			return schBound{}, false
		}
		cands = append(cands, schBound{ok: true, val: m.Float(), excl: exclBool, kw: incl})
	}
	var b schBound
	for _, c := range cands {
		if schTighter(c, b, lower) > 0 {
			b = c
		}
	}
	return b, true
}

// schTighter compares bounds: >0 when a admits fewer values than b.
func schTighter(a, b schBound, lower bool) int {
	switch {
	case !a.ok && !b.ok:
		return 0
	case !b.ok:
		return 1
	case !a.ok:
		return -1
	case a.val != b.val:
		if (a.val > b.val) == lower {
			return 1
		}
		return -1
	case a.excl != b.excl:
		if a.excl {
			return 1
		}
		return -1
	}
	return 0
}

func (d *schDiffer) numbers(o, n schNode, pol int8) {
	for _, lower := range [...]bool{true, false} {
		bo, okO := schBounds(o, lower)
		bn, okN := schBounds(n, lower)
		if !okO || !okN {
			if lower {
				d.malformed(o, n, "minimum", pol)
				d.malformed(o, n, "exclusiveMinimum", pol)
			} else {
				d.malformed(o, n, "maximum", pol)
				d.malformed(o, n, "exclusiveMaximum", pol)
			}
			continue
		}
		c := schTighter(bn, bo, lower)
		if c == 0 {
			continue
		}
		ptr := o.path.str() + "/" + bo.kw
		if bn.ok {
			ptr = n.path.str() + "/" + bn.kw
		}
		what := "upper bound "
		if lower {
			what = "lower bound "
		}
		detail := what + bo.describe(lower) + " → " + bn.describe(lower)
		if c > 0 {
			d.emit(ConstraintTightened, ptr, Narrowing, pol, false, detail, "")
		} else {
			d.emit(ConstraintLoosened, ptr, Widening, pol, false, detail, "")
		}
	}

	const kw = "multipleOf"
	vo, ho := o.get(kw)
	vn, hn := n.get(kw)
	if !ho && !hn || d.same(vo, vn) {
		return
	}
	if (ho && (vo.Kind() != jcs.Number || vo.Float() <= 0)) || (hn && (vn.Kind() != jcs.Number || vn.Float() <= 0)) {
		d.malformed(o, n, kw, pol)
		return
	}
	ptr := schKwPtr(o, n, kw)
	switch {
	case !ho:
		d.emit(ConstraintTightened, ptr, Narrowing, pol, false, "multipleOf added: "+schPreview(vn), "")
	case !hn:
		d.emit(ConstraintLoosened, ptr, Widening, pol, false, "multipleOf removed (was "+schPreview(vo)+")", "")
	default:
		ro, okO := new(big.Rat).SetString(string(vo.Canonical()))
		rn, okN := new(big.Rat).SetString(string(vn.Canonical()))
		detail := "multipleOf " + schPreview(vo) + " → " + schPreview(vn)
		switch {
		case okO && okN && new(big.Rat).Quo(rn, ro).IsInt():
			d.emit(ConstraintTightened, ptr, Narrowing, pol, false, detail, "")
		case okO && okN && new(big.Rat).Quo(ro, rn).IsInt():
			d.emit(ConstraintLoosened, ptr, Widening, pol, false, detail, "")
		default:
			d.emit(ConstraintLoosened, ptr, Neutral, pol, false, detail+" (neither divides the other: may accept values rejected before)", "")
		}
	}
}

func (d *schDiffer) strs(o, n schNode, pol int8) {
	d.count(o, n, "minLength", false, 0, pol)
	d.count(o, n, "maxLength", true, math.Inf(1), pol)
	for _, kw := range [...]string{"pattern", "format"} {
		vo, ho := o.get(kw)
		vn, hn := n.get(kw)
		switch {
		case !ho && !hn, d.same(vo, vn):
		case (ho && vo.Kind() != jcs.String) || (hn && vn.Kind() != jcs.String):
			d.malformed(o, n, kw, pol)
		case !ho:
			d.emit(ConstraintTightened, n.path.str()+"/"+kw, Narrowing, pol, false, kw+" added: "+schQuote(vn.Str()), "")
		case !hn:
			d.emit(ConstraintLoosened, o.path.str()+"/"+kw, Widening, pol, true, kw+" removed (was "+schQuote(vo.Str())+")", "")
		default:
			d.emit(ConstraintLoosened, n.path.str()+"/"+kw, Neutral, pol, false,
				kw+" "+schQuote(vo.Str())+" → "+schQuote(vn.Str())+" (not compared: may accept values rejected before)", "")
		}
	}
}
