package probe

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// GenerateArguments builds arguments for a tool from its DECLARED input
// schema (the question is whether the server honours what it published),
// deterministically from seed and the tool name. It fills required
// properties only, picks enum/const values, respects numeric bounds and
// string lengths and a few formats; patterns are not honoured (the server
// may then refuse the arguments with -32602, which is reported as such).
func GenerateArguments(toolName string, schema jcs.Value, seed int64) []byte {
	h := fnv.New64a()
	h.Write([]byte(toolName))
	g := &argGen{rng: rand.New(rand.NewPCG(uint64(seed), h.Sum64())), root: schema}
	out := g.value(nil, schema, 0)
	if len(out) == 0 || out[0] != '{' {
		return []byte("{}")
	}
	return out
}

type argGen struct {
	rng  *rand.Rand
	root jcs.Value
}

const maxArgDepth = 8

func (g *argGen) value(dst []byte, s jcs.Value, depth int) []byte {
	if !s.Valid() || s.Kind() != jcs.Object || depth > maxArgDepth {
		if depth == 0 {
			return append(dst, "{}"...)
		}
		return append(dst, `"mcpdrift"`...)
	}
	if ref, ok := s.Get("$ref"); ok && ref.Kind() == jcs.String {
		// An internal reference; an external one is never fetched.
		if t, ok := g.root.ResolveFragment(ref.Str()); ok {
			return g.value(dst, t, depth+1)
		}
		return append(dst, "null"...)
	}
	if c, ok := s.Get("const"); ok {
		return c.AppendCanonical(dst)
	}
	if e, ok := s.Get("enum"); ok && e.Kind() == jcs.Array && e.Len() > 0 {
		return e.Index(g.rng.IntN(e.Len())).AppendCanonical(dst)
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if b, ok := s.Get(kw); ok && b.Kind() == jcs.Array && b.Len() > 0 {
			if _, typed := s.Get("type"); !typed {
				return g.value(dst, b.Index(0), depth+1)
			}
		}
	}
	switch typeOf(s) {
	case "object":
		dst = append(dst, '{')
		props, _ := s.Get("properties")
		req, _ := s.Get("required")
		first := true
		if req.Valid() && req.Kind() == jcs.Array {
			seen := map[string]bool{}
			for i := 0; i < req.Len(); i++ {
				name := req.Index(i).Str()
				if seen[name] {
					continue
				}
				seen[name] = true
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = jcs.AppendString(dst, name)
				dst = append(dst, ':')
				var ps jcs.Value
				if props.Valid() && props.Kind() == jcs.Object {
					ps, _ = props.Get(name)
				}
				dst = g.value(dst, ps, depth+1)
			}
		}
		return append(dst, '}')
	case "array":
		n := 0
		if m, ok := s.Get("minItems"); ok && m.Kind() == jcs.Number {
			n = min(int(m.Float()), 3)
		}
		items, _ := s.Get("items")
		dst = append(dst, '[')
		for i := range n {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = g.value(dst, items, depth+1)
		}
		return append(dst, ']')
	case "integer", "number":
		lo, hi := 1.0, 100.0
		if m, ok := s.Get("minimum"); ok && m.Kind() == jcs.Number {
			lo = m.Float()
		}
		if m, ok := s.Get("exclusiveMinimum"); ok && m.Kind() == jcs.Number {
			lo = m.Float() + 1
		}
		if m, ok := s.Get("maximum"); ok && m.Kind() == jcs.Number {
			hi = m.Float()
		}
		if m, ok := s.Get("exclusiveMaximum"); ok && m.Kind() == jcs.Number {
			hi = m.Float() - 1
		}
		if hi < lo {
			hi = lo
		}
		v := lo + float64(g.rng.IntN(int(min(hi-lo, 10))+1))
		return strconv.AppendInt(dst, int64(v), 10)
	case "boolean":
		return append(dst, "false"...)
	case "null":
		return append(dst, "null"...)
	}
	return jcs.AppendString(dst, g.str(s))
}

func (g *argGen) str(s jcs.Value) string {
	if f, ok := s.Get("format"); ok {
		switch f.Str() {
		case "uri", "url", "iri":
			return "https://example.invalid/mcpdrift"
		case "email":
			return "mcpdrift@example.invalid"
		case "date-time":
			return "2026-01-01T00:00:00Z"
		case "date":
			return "2026-01-01"
		case "uuid":
			return "00000000-0000-4000-8000-000000000000"
		}
	}
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := []byte("mcpdrift-")
	for range 6 {
		b = append(b, letters[g.rng.IntN(len(letters))])
	}
	if m, ok := s.Get("maxLength"); ok && m.Kind() == jcs.Number && int(m.Float()) < len(b) {
		b = b[:max(int(m.Float()), 0)]
	}
	if m, ok := s.Get("minLength"); ok && m.Kind() == jcs.Number {
		for len(b) < min(int(m.Float()), 1024) {
			b = append(b, 'x')
		}
	}
	return string(b)
}

func typeOf(s jcs.Value) string {
	t, ok := s.Get("type")
	if !ok {
		if _, ok := s.Get("properties"); ok {
			return "object"
		}
		return "string"
	}
	if t.Kind() == jcs.Array {
		for i := 0; i < t.Len(); i++ {
			if x := t.Index(i).Str(); x != "null" {
				return x
			}
		}
		return "null"
	}
	return t.Str()
}

// CallCheck is one tools/call that was sent, with what it returned.
type CallCheck struct {
	Tool string
	// DeclaredOutput is the declared outputSchema (zero when none).
	DeclaredOutput jcs.Value
	// Result is the result object as received; Code a JSON-RPC error code;
	// Err a failure to get a usable answer (escaped), unless InputRequired:
	// the server asked for input, which mcpdrift does not provide.
	Result        []byte
	Code          int
	Err           string
	InputRequired bool
}

// protocolErrorCodes are JSON-RPC errors a server may rightly send for a
// call (bad arguments, unknown tool, malformed request); anything else is a
// tool failure that should have come back as a result with isError.
var protocolErrorCodes = map[int]bool{-32700: true, -32600: true, -32601: true, -32602: true}

// checkCall applies the MCP-DRIFT-CALL-* rules. Findings never quote a
// value the tool returned: they carry the JSON pointer, the declared
// constraint and the observed JSON type.
func checkCall(r *Result, c CallCheck) {
	switch {
	case c.InputRequired:
		r.Notes = append(r.Notes, fmt.Sprintf("tools/call %s was answered with a request for input (resultType \"input_required\"), which mcpdrift does not provide: it answers no server request with content; its output was not checked", safetext.Quote(c.Tool)))
		return
	case c.Err != "":
		r.add("MCP-DRIFT-CALL-NO-ANSWER", c.Tool, "the call got no answer, so the tool's behaviour was not checked: "+safetext.Inert(c.Err), "", nil)
		return
	case c.Code != 0 && protocolErrorCodes[c.Code]:
		r.Notes = append(r.Notes, fmt.Sprintf("tools/call %s was refused with JSON-RPC error %d (the generated arguments may not satisfy a pattern or format)", safetext.Quote(c.Tool), c.Code))
		return
	case c.Code != 0:
		r.add("MCP-DRIFT-CALL-ERROR-SHAPE", c.Tool, fmt.Sprintf("the tool failed with JSON-RPC error %d instead of a result with isError: true", c.Code), "", nil)
		return
	}
	doc, err := jcs.Parse(c.Result)
	if err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("tools/call %s returned a result that is not strict JSON", safetext.Quote(c.Tool)))
		return
	}
	res := doc.Root()
	if e, ok := res.Get("isError"); ok && e.Kind() == jcs.True {
		r.Notes = append(r.Notes, fmt.Sprintf("tools/call %s reported a tool error (isError: true); its output was not checked", safetext.Quote(c.Tool)))
		return
	}
	if !c.DeclaredOutput.Valid() || c.DeclaredOutput.Kind() == jcs.Null {
		return
	}
	sc, ok := res.Get("structuredContent")
	if !ok || sc.Kind() == jcs.Null {
		r.add("MCP-DRIFT-CALL-NO-STRUCTURED-CONTENT", c.Tool, "the tool declares an outputSchema and returned no structuredContent", "", nil)
		return
	}
	problems, err := validateOutput(c.DeclaredOutput, sc)
	if err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("the declared outputSchema of %s could not be compiled, so its output was not checked: %s", safetext.Quote(c.Tool), safetext.Inert(err.Error())))
		return
	}
	for _, p := range problems {
		r.add("MCP-DRIFT-CALL-OUTPUT-SCHEMA", c.Tool, p, "", nil)
	}
}

// validateOutput validates structuredContent against the declared schema
// (no external loading) and describes each failure by pointer, constraint
// and observed type, never by value.
func validateOutput(schema, instance jcs.Value) ([]string, error) {
	problems, err := schemas.ValidateDocument(schema.Raw(), instance.Raw())
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range problems {
		v := instance
		for _, seg := range p.Segments {
			switch v.Kind() {
			case jcs.Object:
				v, _ = v.Get(seg)
			case jcs.Array:
				if i, err := strconv.Atoi(seg); err == nil && i < v.Len() {
					v = v.Index(i)
				}
			}
		}
		observed := "absent"
		if v.Valid() {
			observed = v.Kind().String()
		}
		ptr := p.Pointer
		if ptr == "" {
			ptr = "/"
		}
		msg := fmt.Sprintf("%s: does not satisfy the declared %s; observed %s", safetext.Quote(ptr), safetext.Quote(p.Keyword), observed)
		if !seen[msg] && len(out) < 20 {
			seen[msg] = true
			out = append(out, msg)
		}
	}
	return out, nil
}
