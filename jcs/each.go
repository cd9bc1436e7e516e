package jcs

import "strconv"

// ParseEach is Parse for a document too large to hold as one tree: when
// src is an object, each element of its top-level member named key (when
// that member is an array) is handed to fn as soon as it is read, and is
// then dropped from the tree. The returned Doc is src's tree with that
// array empty (Len 0; its Raw is still the whole array's bytes); the rest
// of the document is as Parse reads it.
//
// src is validated exactly as Parse validates it, and the error is the
// one Parse returns. fn sees an element before the end of the document is
// read, so an error found later (a syntax error after the array, a
// repeated member, including a second member named key whose elements fn
// is also handed) voids whatever fn made of them: a caller keeps what fn
// made only when ParseEach returns no error.
//
// v and every Value read from it are valid only during the call of fn:
// the tree they index is reused for the next element. What fn keeps must
// be copied out (Str, Canonical and Raw give copies or the bytes of src,
// which stay valid). Memory is that of the largest element's tree, not
// the sum of them. It never parses on more than one goroutine.
func ParseEach(src []byte, key string, fn func(i int, v Value)) (*Doc, error) {
	if len(src) > MaxInputSize {
		return nil, &Error{Offset: 0, Line: 1, Column: 1, Msg: "input larger than 2 GiB"}
	}
	p := parser{src: src, each: &eachSpec{key: key, fn: fn}}
	d, err := p.run()
	if err != nil {
		return nil, err.finish(src)
	}
	return d, nil
}

// eachSpec is ParseEach's member name and callback.
type eachSpec struct {
	key string
	fn  func(int, Value)
	doc Doc // the view fn's Values index, its slices set before each call
}

// eachArray reads the array ParseEach streams: each element is parsed,
// handed to fn, and its nodes (and escapes, floats and decoded strings)
// are dropped again, so the array node holds no children.
func (p *parser) eachArray(depth int) (int32, *Error) {
	n := p.newNode(Array)
	p.pos++
	p.skipWS()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
	} else {
		for idx := 0; ; idx++ {
			p.skipWS()
			nodes, kids, escs, floats, sbuf := len(p.nodes), len(p.kids), len(p.escs), len(p.floats), len(p.sbuf)
			c, err := p.value(depth)
			if err != nil {
				return 0, err.push(strconv.Itoa(idx))
			}
			e := p.each
			e.doc = Doc{src: p.src, nodes: p.nodes, kinds: p.kinds, kids: p.kids, escs: p.escs, floats: p.floats, sbuf: p.sbuf}
			e.fn(idx, Value{&e.doc, c})
			e.doc = Doc{}
			p.nodes, p.kinds, p.kids = p.nodes[:nodes], p.kinds[:nodes], p.kids[:kids]
			p.escs, p.floats, p.sbuf = p.escs[:escs], p.floats[:floats], p.sbuf[:sbuf]
			p.skipWS()
			if p.pos >= len(p.src) {
				return 0, p.errAt(p.pos, "unexpected end of input in array")
			}
			if p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.src[p.pos] == ']' {
				p.pos++
				break
			}
			return 0, p.errAt(p.pos, "unexpected "+describe(p.src[p.pos])+" in array, expected ',' or ']'")
		}
	}
	p.nodes[n].x = int32(len(p.kids))
	p.kids = append(p.kids, 0, int32(p.pos))
	return n, nil
}
