package frame

import (
	"math"
	"net/http"
	"strconv"

	"golang.org/x/net/http/httpguts"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// ParamHeader is one Mcp-Param-{Name} header of a 2026-07-28 tools/call.
type ParamHeader struct {
	Name  string // the whole header name: "Mcp-Param-" + the annotation
	Value string // encoded (mcpwire.EncodeHeaderValue)
	Text  string // the value before encoding (what CheckHeaderValue compares)
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
	if !inputSchema.Valid() || !args.Valid() || args.Kind() != jcs.Object {
		return nil
	}
	var out []ParamHeader
	walkParams(inputSchema, args, &out, 0)
	return out
}

func walkParams(schema, arg jcs.Value, out *[]ParamHeader, depth int) {
	if depth > maxParamDepth || schema.Kind() != jcs.Object || arg.Kind() != jcs.Object {
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
		v, present := arg.Get(k.Str())
		if !present || v.Kind() == jcs.Null {
			continue
		}
		if h, ok := sub.Get("x-mcp-header"); ok && h.Kind() == jcs.String && httpguts.ValidHeaderFieldName(h.Str()) {
			if val, ok := paramValue(v); ok {
				*out = append(*out, ParamHeader{Name: mcpwire.HeaderParamPrefix + h.Str(), Value: mcpwire.EncodeHeaderValue(val), Text: val})
			}
		}
		walkParams(sub, v, out, depth+1)
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

// CheckParamHeaders checks a tools/call's Mcp-Param-* headers in h against
// want (ParamHeaders of the tool's inputSchema and the call's arguments)
// as a server checks them: each must be present once (SingleHeader) and
// carry the argument's value (CheckHeaderValue; an integer argument is
// also matched numerically, so 42.0 is 42). The first disagreement is a
// -32020 (HTTP 400). The one check of these headers, for the mock server
// and the gateway.
func CheckParamHeaders(h http.Header, want []ParamHeader) *Error {
	for _, ph := range want {
		raw, e := SingleHeader(h, ph.Name)
		if e != nil {
			return e
		}
		if e := CheckHeaderValue(ph.Name, raw, ph.Text); e != nil && !sameInteger(raw, ph.Text) {
			return e
		}
	}
	return nil
}

// sameInteger: raw (a header value, trimmed) decodes to a number equal to
// want, a decimal integer.
func sameInteger(raw, want string) bool {
	w, err := strconv.ParseInt(want, 10, 64)
	if err != nil {
		return false
	}
	got, err := mcpwire.DecodeHeaderValue(raw)
	if err != nil {
		return false
	}
	f, err := strconv.ParseFloat(got, 64)
	return err == nil && f == float64(w)
}
