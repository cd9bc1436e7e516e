package frame

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

func schemaOf(t testing.TB, s string) jcs.Value {
	t.Helper()
	d, err := jcs.Parse([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return d.Root()
}

// TestParamAnnotationValid: what the transport allows is never a problem
// (a false alarm makes a gateway hide a tool a conforming client keeps).
func TestParamAnnotationValid(t *testing.T) {
	for _, s := range []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`,
		// the conformance suite's valid_tool and its custom-headers tool
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`,
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"priority":{"type":"integer","x-mcp-header":"Priority"},"verbose":{"type":"boolean","x-mcp-header":"Verbose"},"float_val":{"type":"number"},"query":{"type":"string"}}}`,
		// any depth through properties
		`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"object","properties":{"c":{"type":"integer","x-mcp-header":"Deep-C"}}}}}}}`,
		// every tchar
		"{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"string\",\"x-mcp-header\":\"!#$%&'*+-.^_`|~09AZaz\"}}}",
		// a property named x-mcp-header is a property, not an annotation
		`{"type":"object","properties":{"x-mcp-header":{"type":"object"}}}`,
		// data that looks like an annotation is data
		`{"type":"object","default":{"x-mcp-header":"a b"},"examples":[{"x-mcp-header":""}],"properties":{"v":{"type":"string","enum":[{"x-mcp-header":1}],"const":{"x-mcp-header":[]}}}}`,
		// an escaped key spelling another word
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-heade\u0073":"V"}}}`,
		// not an object: not this check's to say
		`null`, `[]`, `"x-mcp-header"`,
	} {
		if p := ParamAnnotationProblem(schemaOf(t, s)); p != "" {
			t.Errorf("%s: %s", s, p)
		}
	}
	if p := ParamAnnotationProblem(jcs.Value{}); p != "" {
		t.Errorf("zero value: %s", p)
	}
}

// TestParamAnnotationInvalid: every tool the official conformance suite's
// http-invalid-tool-headers scenario says a client MUST exclude, and the
// other ways the transport's rules are broken, each with the words that
// say where and why.
func TestParamAnnotationInvalid(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":""}}}`, `at "/properties/value" is not a non-empty string`},
		{`{"type":"object","properties":{"data":{"type":"object","x-mcp-header":"Data"}}}`, `"Data" at "/properties/data" annotates a property of type "object"`},
		{`{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}}}`, `of type "array"`},
		{`{"type":"object","properties":{"nil":{"type":"null","x-mcp-header":"Nil"}}}`, `of type "null"`},
		{`{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}`, `of type "number"; only string, integer and boolean properties may carry one (not number)`},
		{`{"type":"object","properties":{"field1":{"type":"string","x-mcp-header":"Region"},"field2":{"type":"string","x-mcp-header":"Region"}}}`, `"Region" at "/properties/field2" names the header "Region" at "/properties/field1" names too`},
		{`{"type":"object","properties":{"field1":{"type":"string","x-mcp-header":"MyField"},"field2":{"type":"string","x-mcp-header":"myfield"}}}`, `"myfield" at "/properties/field2" names the header "MyField"`},
		{`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"My Region"}}}`, `"My Region" at "/properties/value" is not an HTTP header name`},
		{`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Region:Primary"}}}`, `is not an HTTP header name`},
		{`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Région"}}}`, `is not an HTTP header name`},
		{`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Region\t1"}}}`, `"Region\u00091"`},
		{`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"A\r\nX-Injected: 1"}}}`, `"A\u000d\u000aX-Injected: 1" at "/properties/value" is not an HTTP header name`},
		{`{"type":"object","properties":{"value":{"type":"string","x-mcp-header":7}}}`, `is not a non-empty string`},
		{`{"type":"object","properties":{"value":{"x-mcp-header":"V"}}}`, `annotates a property with no "type"`},
		{`{"type":"object","properties":{"value":{"type":["string","null"],"x-mcp-header":"V"}}}`, `whose "type" is not one type name`},
		// not reached through properties only
		{`{"type":"object","x-mcp-header":"Root"}`, `x-mcp-header at the schema's root is not on a property`},
		{`{"type":"object","properties":{"ids":{"type":"array","items":{"type":"string","x-mcp-header":"Id"}}}}`, `at "/properties/ids/items" is not on a property reached from the schema's root through properties only`},
		{`{"type":"object","properties":{"t":{"anyOf":[{"type":"string","x-mcp-header":"Target"}]}}}`, `at "/properties/t/anyOf/0"`},
		{`{"type":"object","$defs":{"r":{"type":"string","x-mcp-header":"R"}},"properties":{"r":{"$ref":"#/$defs/r"}}}`, `at "/$defs/r"`},
		{`{"type":"object","if":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`, `at "/if/properties/a"`},
		{`{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"Extra"}}`, `at "/additionalProperties"`},
		{`{"type":"object","patternProperties":{"^a/b~":{"type":"string","x-mcp-header":"P"}}}`, `at "/patternProperties/^a~1b~0"`},
		// the key spelled with escapes is the key
		{`{"type":"object","properties":{"v":{"type":"number","x\u002dmcp-header":"V"}}}`, `of type "number"`},
	} {
		p := ParamAnnotationProblem(schemaOf(t, c.schema))
		if p == "" || !strings.Contains(p, c.want) || !strings.Contains(p, "must exclude the tool") {
			t.Errorf("%s:\n got %q\nwant it to say %q", c.schema, p, c.want)
		}
		if safetext.Inert(p) != p {
			t.Errorf("%s: the problem is not inert: %q", c.schema, p)
		}
	}
}

// TestParamAnnotationLinear: a schema is server-controlled; the walk's
// cost grows with the schema's size (many annotated properties, each
// checked against the others through one map, and a deep chain), not
// with its square.
func TestParamAnnotationLinear(t *testing.T) {
	wide := func(n int) jcs.Value {
		var b strings.Builder
		b.WriteString(`{"type":"object","properties":{`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"p` + strconv.Itoa(i) + `":{"type":"string","x-mcp-header":"H` + strconv.Itoa(i) + `"}`)
		}
		b.WriteString(`}}`)
		return schemaOf(t, b.String())
	}
	deep := func(n int) jcs.Value {
		s := `{"type":"string","x-mcp-header":"Deep"}`
		for range n {
			s = `{"type":"object","properties":{"a":` + s + `}}`
		}
		return schemaOf(t, s)
	}
	cost := func(v jcs.Value) time.Duration {
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			if p := ParamAnnotationProblem(v); p != "" {
				t.Fatal(p)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	for _, c := range []struct {
		name string
		make func(int) jcs.Value
		n    int
	}{{"wide", wide, 20000}, {"deep", deep, 120}} {
		small, large := cost(c.make(c.n)), cost(c.make(4*c.n))
		if large > 10*small+5*time.Millisecond {
			t.Errorf("%s: %d → %d: %v → %v (linear growth gives about 4×)", c.name, c.n, 4*c.n, small, large)
		}
	}
}

// TestParamAnnotationLinearInPointers: a long key above many members
// (and many properties) costs its length once, not once per member: the
// a walk that assembles a pointer per member is quadratic. Four times the
// input allocates about four times as much.
func TestParamAnnotationLinearInPointers(t *testing.T) {
	long := func(n int) jcs.Value {
		var b strings.Builder
		b.WriteString(`{"type":"object","properties":{"ok":{"type":"string","x-mcp-header":"Ok"},"`)
		b.WriteString(strings.Repeat("k~/", 16*n))
		b.WriteString(`":{"type":"object","properties":{`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"p` + strconv.Itoa(i) + `":{"type":"string"}`)
		}
		b.WriteString(`}`)
		for i := range n {
			b.WriteString(`,"m` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
		}
		b.WriteString(`}}}`)
		return schemaOf(t, b.String())
	}
	allocated := func(v jcs.Value) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if p := ParamAnnotationProblem(v); p != "" {
			t.Fatal(p)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	const n = 500
	small, large := allocated(long(n)), allocated(long(4*n))
	t.Logf("%d → %d members: %d → %d bytes allocated", n, 4*n, small, large)
	if large > 10*small {
		t.Errorf("%d → %d members under a %d → %d byte key: %d → %d bytes allocated (linear growth gives about 4×)", n, 4*n, 48*n, 192*n, small, large)
	}
	// The pointer of a problem under the long key is still said whole.
	bad := `{"type":"object","properties":{"` + strings.Repeat("a~", 8) + `":{"type":"object","properties":{"q":{"type":"number","x-mcp-header":"Q"}}}}}`
	if got, want := ParamAnnotationProblem(schemaOf(t, bad)), `"/properties/`+strings.Repeat("a~0", 8)+`/properties/q"`; !strings.Contains(got, want) {
		t.Errorf("problem %q does not name %s", got, want)
	}
}

// TestMaySpellParamAnnotation: every spelling of the key a JSON parser
// reads as x-mcp-header passes the filter, each letter escaped in either
// case of hex digits; text without one does not.
func TestMaySpellParamAnnotation(t *testing.T) {
	key := ParamAnnotation
	for i := range len(key) {
		for _, hex := range []string{"%04x", "%04X"} {
			spelled := key[:i] + `\u` + fmt.Sprintf(hex, key[i]) + key[i+1:]
			src := `{"type":"object","properties":{"v":{"type":"number","` + spelled + `":"V"}}}`
			if !MaySpellParamAnnotation([]byte(src)) {
				t.Errorf("%s: not seen", spelled)
			}
			if p := ParamAnnotationProblem(schemaOf(t, src)); !strings.Contains(p, `of type "number"`) {
				t.Errorf("%s: %q", spelled, p)
			}
		}
	}
	for _, s := range []string{`{"type":"object"}`, `{"description":"caf\u00e9 \u00E9 \u0041\u005a"}`, `x-mcp-heade`, `\u00`, `\u006`} {
		if MaySpellParamAnnotation([]byte(s)) {
			t.Errorf("%s: seen", s)
		}
	}
}
