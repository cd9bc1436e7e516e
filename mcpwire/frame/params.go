package frame

import (
	"math"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// ParamHeader is one Mcp-Param-{Name} header of a 2026-07-28 tools/call.
type ParamHeader struct {
	Name  string // the whole header name: "Mcp-Param-" + the annotation
	Value string // encoded (mcpwire.EncodeHeaderValue)
	Text  string // the value before encoding (what CheckHeaderValue compares)
	// Integer: the argument is a JSON number (an integer), so a header
	// with the same number in another spelling (2.0 for 2) agrees too. A
	// string argument's header agrees only as the same text.
	Integer bool
}

// The bound of the walk: a schema is server-controlled. The depth is all
// a parsed schema can nest (an annotation ParamAnnotationProblem calls
// valid is never left without its header). The number of headers is not
// bounded here: every annotation of a tool that is served gets its header
// (one left out would go unchecked at the gateway), and they are at most
// the arguments present, whose size the message's bound limits.
const maxParamDepth = jcs.MaxDepth / 2

// ParamHeaders derives the Mcp-Param-{Name} headers of a tools/call from
// the tool's inputSchema and the call's arguments, as an HTTP client must
// send them (SEP-2243): one for each property annotated "x-mcp-header":
// NAME (reached from the root through properties chains only) whose
// argument is present and not null — a string as it is, an integer in
// decimal (within JavaScript's safe integers, as the transport requires),
// a boolean as true or false, encoded with EncodeHeaderValue. An argument
// of another type, and an annotation that is not an HTTP header name, get
// no header (the annotation is invalid: ParamAnnotationProblem, which a
// client's tools/list excludes the tool for). Headers come in the order of
// the property names (as the parsed schema keeps its members).
func ParamHeaders(inputSchema, args jcs.Value) []ParamHeader {
	want, _ := ParamHeadersAndNames(inputSchema, args, false)
	return want
}

// ParamHeaderNames returns the Mcp-Param-{Name} header names the
// inputSchema's annotations name: every property reached from the root
// through properties chains whose x-mcp-header is a header name, in the
// order ParamHeaders derives them, whatever the arguments.
func ParamHeaderNames(inputSchema jcs.Value) []string {
	_, names := ParamHeadersAndNames(inputSchema, jcs.Value{}, true)
	return names
}

// ParamHeadersAndNames is ParamHeaders of args and, with names, also
// ParamHeaderNames, in one walk of the schema: what CheckParamHeaders
// takes. Without arguments (args not an object) there are no headers, and
// the names are all the schema's.
func ParamHeadersAndNames(inputSchema, args jcs.Value, names bool) ([]ParamHeader, []string) {
	if !inputSchema.Valid() {
		return nil, nil
	}
	w := paramWalk{names: names}
	if !args.Valid() || args.Kind() != jcs.Object {
		if !names {
			return nil, nil
		}
		args = jcs.Value{}
	}
	w.walk(inputSchema, args, 0)
	return w.want, w.named
}

// paramWalk walks a schema's properties chains beside the arguments
// (arg invalid: none present below), gathering the headers derived and,
// with names, every annotated header name.
type paramWalk struct {
	names bool
	want  []ParamHeader
	named []string
}

func (w *paramWalk) walk(schema, arg jcs.Value, depth int) {
	if depth > maxParamDepth || schema.Kind() != jcs.Object {
		return
	}
	props, ok := schema.Get("properties")
	if !ok || props.Kind() != jcs.Object {
		return
	}
	for i := range props.Len() {
		k, sub := props.Member(i)
		if sub.Kind() != jcs.Object {
			continue
		}
		var v jcs.Value
		if arg.Valid() && arg.Kind() == jcs.Object {
			if got, ok := arg.Get(k.Str()); ok && got.Kind() != jcs.Null {
				v = got
			}
		}
		if !v.Valid() && !w.names {
			continue
		}
		if h, ok := sub.Get("x-mcp-header"); ok && h.Kind() == jcs.String && httpguts.ValidHeaderFieldName(h.Str()) {
			name := mcpwire.HeaderParamPrefix + h.Str()
			if w.names {
				w.named = append(w.named, name)
			}
			if v.Valid() {
				if val, ok := paramValue(v); ok {
					w.want = append(w.want, ParamHeader{Name: name, Value: mcpwire.EncodeHeaderValue(val), Text: val, Integer: v.Kind() == jcs.Number})
				}
			}
		}
		w.walk(sub, v, depth+1)
	}
}

func paramValue(v jcs.Value) (string, bool) {
	switch v.Kind() {
	case jcs.String:
		return v.Str(), true
	case jcs.True:
		return "true", true
	case jcs.False:
		return "false", true
	case jcs.Number:
		f := v.Float()
		if f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
			return "", false
		}
		return strconv.FormatInt(int64(f), 10), true
	}
	return "", false
}

// CheckParamHeaders checks a tools/call's Mcp-Param-* headers in h as a
// server checks them: want (ParamHeaders of the tool's inputSchema and
// the call's arguments) must each be present once (SingleHeader) and
// carry the argument's value (CheckHeaderValue; an integer argument's is
// also matched as the same number, as a JSON parser reads it, so 2.0 is
// 2: sameInteger), and a header of names (ParamHeaderNames of the
// inputSchema; ParamHeadersAndNames gives both) that want does not hold
// must be absent: its argument is absent, null, not a string, integer or
// boolean, or an integer beyond the safe range, so it has no header, and
// one sent is not the body's. The first disagreement is a -32020 (HTTP
// 400). The one check of these headers, for the mock server and the
// gateway.
func CheckParamHeaders(h http.Header, want []ParamHeader, names []string) *Error {
	for _, ph := range want {
		raw, e := SingleHeader(h, ph.Name)
		if e != nil {
			return e
		}
		if e := CheckHeaderValue(ph.Name, raw, ph.Text); e != nil && !(ph.Integer && sameInteger(raw, ph.Text)) {
			return e
		}
	}
	if len(names) == len(want) {
		return nil // every annotated argument gave its header
	}
	derived := make(map[string]bool, len(want))
	for _, ph := range want {
		derived[strings.ToLower(ph.Name)] = true
	}
	for _, n := range names {
		if !derived[strings.ToLower(n)] && len(h.Values(n)) > 0 {
			return Errorf(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: unexpected %s header: its argument is absent, null, or not a string, an integer or a boolean", shownName(n))
		}
	}
	return nil
}

// sameInteger: raw (a header value, trimmed) decodes to a JSON number
// that reads as the same float64 as want, the integer derived from the
// body. It is the one reading of both sides: the body's number is read
// as a JSON parser reads it (2.0 and 1.0000000000000001 are the integers
// 2 and 1 to the go-sdk and TypeScript servers alike, and ParamHeaders
// derives them so), and the header is held to it, as a JSON number only
// (no +, no leading zero, no hex; an exponent beyond float64 is no
// number). A string argument's header is never read as a number.
func sameInteger(raw, want string) bool {
	got, err := mcpwire.DecodeHeaderValue(raw)
	if err != nil || !jsonNumber(got) {
		return false
	}
	g, gerr := strconv.ParseFloat(got, 64)
	w, werr := strconv.ParseFloat(want, 64)
	return gerr == nil && werr == nil && g == w
}

// jsonNumber: s is a JSON number (RFC 8259: -?int frac? exp?), nothing
// else (no +, no leading zero, no hex, no fraction form).
func jsonNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
