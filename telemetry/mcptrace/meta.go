package mcptrace

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// FromMeta reads the trace context a message carries in params._meta.
// Without a traceparent it returns the zero SpanContext and no error.
// A traceparent that is not a JSON string, that W3C's grammar refuses or
// that is oversized gives an error (one of the Err values) and the zero
// SpanContext: the context is dropped whole, never used as a parent,
// never propagated (a tracestate beside it too: W3C reads tracestate only
// beside a valid traceparent). A tracestate refused alike is dropped
// alone: the SpanContext is the traceparent's, without a tracestate, and
// the error says what was dropped.
func FromMeta(m *frame.Message) (SpanContext, error) {
	meta, ok := m.Meta()
	if !ok {
		return SpanContext{}, nil
	}
	tp, hasTP := meta.Get(MetaTraceParent)
	ts, hasTS := meta.Get(MetaTraceState)
	if !hasTP {
		if hasTS {
			return SpanContext{}, ErrTraceState
		}
		return SpanContext{}, nil
	}
	if tp.Kind() != jcs.String {
		return SpanContext{}, ErrTraceParent
	}
	if len(tp.Raw()) > 2*MaxTraceParentLen+2 {
		return SpanContext{}, ErrTraceParentSize // before decoding a huge string
	}
	sc, err := ParseTraceParent(tp.Str())
	if err != nil {
		return SpanContext{}, err
	}
	sc.Remote = true
	if !hasTS {
		return sc, nil
	}
	switch {
	case ts.Kind() != jcs.String:
		return sc, ErrTraceState
	case len(ts.Raw()) > 6*MaxTraceStateLen+2:
		return sc, ErrTraceStateSize
	}
	canon, err := ParseTraceState(ts.Str())
	if err != nil {
		return sc, err
	}
	sc.TraceState = canon
	return sc, nil
}

// HasContext reports whether params._meta holds a traceparent or a
// tracestate member (valid or not).
func HasContext(m *frame.Message) bool {
	meta, ok := m.Meta()
	if !ok {
		return false
	}
	_, a := meta.Get(MetaTraceParent)
	_, b := meta.Get(MetaTraceState)
	return a || b
}

// RewriteMeta returns m's bytes with the trace context in params._meta
// replaced by sc's: traceparent (and tracestate when sc has one) set,
// any traceparent and tracestate the message carried removed. Every
// other byte is kept as it was, except that a _meta object that held a
// context is written again without the whitespace it had between its
// members (in their order). A message
// without params gets {"_meta":{...}}; one whose params or _meta is not an
// object is returned unchanged (it cannot carry a context). With an
// invalid sc it only removes what was there.
//
// It is for the gateway's one deliberate change to forwarded bytes, made
// only when tracing is on, and for mcpclient's own requests.
func RewriteMeta(m *frame.Message, sc SpanContext) []byte {
	add := metaMembers(sc)
	base := m.Root.Offset()
	raw := m.Raw
	params, hasParams := m.Root.Get("params")
	if !hasParams {
		if len(add) == 0 || len(raw) == 0 || raw[len(raw)-1] != '}' {
			return raw
		}
		out := make([]byte, 0, len(raw)+len(add)+24)
		out = append(out, raw[:len(raw)-1]...)
		if m.Root.Len() > 0 {
			out = append(out, ',')
		}
		out = append(out, `"params":{"_meta":{`...)
		out = append(out, add...)
		return append(out, "}}}"...)
	}
	if params.Kind() != jcs.Object {
		return raw
	}
	meta, hasMeta := params.Get("_meta")
	if !hasMeta {
		if len(add) == 0 {
			return raw
		}
		at := params.Offset() - base + 1 // just after params' "{"
		out := make([]byte, 0, len(raw)+len(add)+16)
		out = append(out, raw[:at]...)
		out = append(out, `"_meta":{`...)
		out = append(out, add...)
		out = append(out, '}')
		if params.Len() > 0 {
			out = append(out, ',')
		}
		return append(out, raw[at:]...)
	}
	if meta.Kind() != jcs.Object {
		return raw
	}
	start := meta.Offset() - base
	end := start + len(meta.Raw())
	_, hasTP := meta.Get(MetaTraceParent)
	_, hasTS := meta.Get(MetaTraceState)
	if !hasTP && !hasTS {
		// Nothing to remove: the members are inserted before the closing
		// brace, and every byte that was there stays.
		if len(add) == 0 {
			return raw
		}
		out := make([]byte, 0, len(raw)+len(add)+1)
		out = append(out, raw[:end-1]...)
		if meta.Len() > 0 {
			out = append(out, ',')
		}
		out = append(out, add...)
		return append(out, raw[end-1:]...)
	}
	// The members in the order they were written (jcs keeps them sorted).
	type member struct{ k, v jcs.Value }
	kept := make([]member, 0, meta.Len())
	for i := range meta.Len() {
		k, v := meta.Member(i)
		if k.Str() != MetaTraceParent && k.Str() != MetaTraceState {
			kept = append(kept, member{k, v})
		}
	}
	slices.SortFunc(kept, func(a, b member) int { return a.k.Offset() - b.k.Offset() })
	var obj bytes.Buffer
	obj.WriteByte('{')
	n := 0
	for _, mb := range kept {
		k, v := mb.k, mb.v
		if n > 0 {
			obj.WriteByte(',')
		}
		obj.Write(k.Raw())
		obj.WriteByte(':')
		obj.Write(v.Raw())
		n++
	}
	if len(add) > 0 {
		if n > 0 {
			obj.WriteByte(',')
		}
		obj.Write(add)
	}
	obj.WriteByte('}')
	out := make([]byte, 0, len(raw)-len(meta.Raw())+obj.Len())
	out = append(out, raw[:start]...)
	out = append(out, obj.Bytes()...)
	return append(out, raw[end:]...)
}

// metaMembers are the _meta members of sc ("" when sc is not valid).
func metaMembers(sc SpanContext) []byte {
	if !sc.Valid() {
		return nil
	}
	b := []byte(`"` + MetaTraceParent + `":`)
	b = appendJSONString(b, sc.TraceParent())
	if sc.TraceState != "" {
		b = append(b, `,"`+MetaTraceState+`":`...)
		b = appendJSONString(b, sc.TraceState)
	}
	return b
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // ASCII from the parsers: never fails
	return append(b, q...)
}
