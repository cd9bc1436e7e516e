package redact

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// JSON returns the JSON text b with every secret replaced, as Bytes does,
// and also where a JSON escape spells it: a string (or member name) whose
// escapes ("tok\u005f9f8e…", "\u0074ok_…") hide a secret from the bytes
// is written again, redacted, as a JSON string; every other byte is
// kept. A reader decodes the escapes, so redacting only the bytes would
// hand it the secret. Text that is not strict JSON gets Bytes alone.
func (s *Set) JSON(b []byte) []byte {
	out := s.Bytes(b)
	if s.Empty() || bytes.IndexByte(out, '\\') < 0 {
		return out
	}
	doc, err := jcs.Parse(out)
	if err != nil {
		return out
	}
	type edit struct {
		start, end int
		repl       []byte
	}
	var edits []edit
	var walk func(v jcs.Value)
	str := func(v jcs.Value) {
		raw := v.Raw()
		if bytes.IndexByte(raw, '\\') < 0 {
			return // no escape: Bytes saw what a reader decodes
		}
		dec := v.Str()
		if red := s.String(dec); red != dec {
			q, _ := json.Marshal(red)
			edits = append(edits, edit{v.Offset(), v.Offset() + len(raw), q})
		}
	}
	walk = func(v jcs.Value) {
		switch v.Kind() {
		case jcs.String:
			str(v)
		case jcs.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case jcs.Object:
			for i := range v.Len() {
				k, x := v.Member(i)
				str(k)
				walk(x)
			}
		}
	}
	walk(doc.Root())
	if len(edits) == 0 {
		return out
	}
	// Members are visited in canonical order, not in the order of the text.
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	res := make([]byte, 0, len(out))
	at := 0
	for _, e := range edits {
		res = append(res, out[at:e.start]...)
		res = append(res, e.repl...)
		at = e.end
	}
	return append(res, out[at:]...)
}
