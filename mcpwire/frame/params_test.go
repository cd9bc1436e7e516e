package frame

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

func TestParamHeaders(t *testing.T) {
	schema := `{"type":"object","properties":{
		"owner":{"type":"string","x-mcp-header":"Owner"},
		"repo":{"type":"string"},
		"stats":{"type":"boolean","x-mcp-header":"Include-Stats"},
		"page":{"type":"integer","x-mcp-header":"Page"},
		"ratio":{"type":"number","x-mcp-header":"Ratio"},
		"where":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}},
		"gone":{"type":"string","x-mcp-header":"Gone"}}}`
	cases := []struct {
		args string
		want []ParamHeader
	}{
		{`{"owner":"acme","repo":"app","stats":true,"page":2,"where":{"region":"Zürich"},"gone":null}`, []ParamHeader{
			{"Mcp-Param-Owner", "acme", "acme", false}, {"Mcp-Param-Page", "2", "2", true}, {"Mcp-Param-Include-Stats", "true", "true", false},
			{"Mcp-Param-Region", "=?base64?WsO8cmljaA==?=", "Zürich", false}}},
		{`{"page":2.0,"ratio":0.5,"stats":false}`, []ParamHeader{{"Mcp-Param-Page", "2", "2", true}, {"Mcp-Param-Include-Stats", "false", "false", false}}},
		{`{"repo":"app"}`, nil},
		{`{"owner":12}`, []ParamHeader{{"Mcp-Param-Owner", "12", "12", true}}},
	}
	s := parseValue(t, schema)
	for _, c := range cases {
		got := ParamHeaders(s, parseValue(t, c.args))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.args, got, c.want)
		}
	}
	if got := ParamHeaders(s, parseValue(t, `[1]`)); got != nil {
		t.Errorf("arguments not an object: %+v", got)
	}
	if got := ParamHeaders(jcs.Value{}, parseValue(t, `{"owner":"x"}`)); got != nil {
		t.Errorf("no schema: %+v", got)
	}
}

func TestCheckParamHeaders(t *testing.T) {
	s := parseValue(t, `{"type":"object","properties":{
		"owner":{"type":"string","x-mcp-header":"Owner"},
		"page":{"type":"integer","x-mcp-header":"Page"},
		"where":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}}`)
	want := ParamHeaders(s, parseValue(t, `{"owner":"acme","page":2,"where":{"region":"Zürich"}}`))
	cases := []struct {
		name string
		h    http.Header
		ok   bool
	}{
		{"all agree", http.Header{"Mcp-Param-Owner": {"acme"}, "Mcp-Param-Page": {"2"}, "Mcp-Param-Region": {"=?base64?WsO8cmljaA==?="}}, true},
		{"integer numerically, padding trimmed", http.Header{"Mcp-Param-Owner": {" acme\t"}, "Mcp-Param-Page": {"2.0"}, "Mcp-Param-Region": {"=?base64?WsO8cmljaA==?="}}, true},
		{"missing", http.Header{"Mcp-Param-Owner": {"acme"}, "Mcp-Param-Page": {"2"}}, false},
		{"repeated", http.Header{"Mcp-Param-Owner": {"acme", "acme"}, "Mcp-Param-Page": {"2"}, "Mcp-Param-Region": {"=?base64?WsO8cmljaA==?="}}, false},
		{"another value", http.Header{"Mcp-Param-Owner": {"evil"}, "Mcp-Param-Page": {"2"}, "Mcp-Param-Region": {"=?base64?WsO8cmljaA==?="}}, false},
		{"another number", http.Header{"Mcp-Param-Owner": {"acme"}, "Mcp-Param-Page": {"3"}, "Mcp-Param-Region": {"=?base64?WsO8cmljaA==?="}}, false},
		{"raw non-ASCII", http.Header{"Mcp-Param-Owner": {"acme"}, "Mcp-Param-Page": {"2"}, "Mcp-Param-Region": {"Zürich"}}, false},
		{"bad base64", http.Header{"Mcp-Param-Owner": {"acme"}, "Mcp-Param-Page": {"2"}, "Mcp-Param-Region": {"=?base64?!!?="}}, false},
	}
	for _, c := range cases {
		e := CheckParamHeaders(c.h, want, ParamHeaderNames(s))
		if (e == nil) != c.ok {
			t.Errorf("%s: got %v, want ok=%v", c.name, e, c.ok)
		}
		if e != nil && (e.Code != -32020 || e.Status != http.StatusBadRequest) {
			t.Errorf("%s: %d/%d, want -32020/400", c.name, e.Code, e.Status)
		}
	}
	if e := CheckParamHeaders(http.Header{}, nil, nil); e != nil {
		t.Errorf("no annotated argument: %v", e)
	}
}

func parseValue(t *testing.T, s string) jcs.Value {
	t.Helper()
	d, err := jcs.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d.Root()
}

// TestParamHeadersSafeIntegers: an integer argument is mirrored only within
// JavaScript's safe integers (−2^53+1 to 2^53−1, as the transport says),
// and a valid annotation deeper than 32 levels still gets its header.
func TestParamHeadersSafeIntegers(t *testing.T) {
	schema, _ := jcs.Parse([]byte(`{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}`))
	for arg, want := range map[string]string{
		`9007199254740991`: "9007199254740991", `-9007199254740991`: "-9007199254740991",
		`9007199254740992`: "", `-9007199254740992`: "", `1e300`: "", `2.5`: "",
	} {
		args, _ := jcs.Parse([]byte(`{"n":` + arg + `}`))
		got := ""
		if hs := ParamHeaders(schema.Root(), args.Root()); len(hs) == 1 {
			got = hs[0].Text
		}
		if got != want {
			t.Errorf("%s: header %q, want %q", arg, got, want)
		}
	}
	s, a := `{"type":"string","x-mcp-header":"Deep"}`, `"v"`
	for range 40 {
		s, a = `{"type":"object","properties":{"a":`+s+`}}`, `{"a":`+a+`}`
	}
	ds, _ := jcs.Parse([]byte(s))
	da, _ := jcs.Parse([]byte(a))
	if p := ParamAnnotationProblem(ds.Root()); p != "" {
		t.Fatal(p)
	}
	if hs := ParamHeaders(ds.Root(), da.Root()); len(hs) != 1 || hs[0].Name != "Mcp-Param-Deep" {
		t.Errorf("deep annotation: %v", hs)
	}
}

// TestParamHeadersUnbounded: every annotated argument present gets its
// header, the 65th and after too (at most 64 were derived, and a valid
// tool's later headers went unchecked).
func TestParamHeadersUnbounded(t *testing.T) {
	const n = 200
	var props, args strings.Builder
	for i := range n {
		if i > 0 {
			props.WriteByte(',')
			args.WriteByte(',')
		}
		fmt.Fprintf(&props, `"p%d":{"type":"integer","x-mcp-header":"H%d"}`, i, i)
		fmt.Fprintf(&args, `"p%d":%d`, i, i)
	}
	schema := parseValue(t, `{"type":"object","properties":{`+props.String()+`}}`)
	if p := ParamAnnotationProblem(schema); p != "" {
		t.Fatal(p)
	}
	got := ParamHeaders(schema, parseValue(t, `{`+args.String()+`}`))
	if len(got) != n {
		t.Fatalf("%d headers, want %d", len(got), n)
	}
	seen := map[string]bool{}
	for _, h := range got {
		if want := "Mcp-Param-H" + h.Text; h.Name != want || seen[h.Name] {
			t.Fatalf("header %+v: want %s, once", h, want)
		}
		seen[h.Name] = true
	}
}

// TestCheckParamHeadersUnsetArguments: a header the schema annotates whose
// argument gives none — absent, null, an object or array, a fraction, an
// integer beyond the safe range, or under an object argument that is
// absent or not an object — is a mismatch, as the go-sdk server says
// ("unexpected header for absent or null parameter"). It was not checked
// at all, and the gateway forwarded it to the upstream as it came.
func TestCheckParamHeadersUnsetArguments(t *testing.T) {
	s := parseValue(t, `{"type":"object","properties":{
		"owner":{"type":"string","x-mcp-header":"Owner"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"f":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}}`)
	names := ParamHeaderNames(s)
	if want := []string{"Mcp-Param-Region", "Mcp-Param-N", "Mcp-Param-Owner"}; !reflect.DeepEqual(names, want) { // the parsed schema's member order
		t.Fatalf("names %q, want %q", names, want)
	}
	for _, c := range []struct{ args, header, value string }{
		{`{}`, "Mcp-Param-Owner", "forged"},
		{`{"owner":null}`, "Mcp-Param-Owner", "forged"},
		{`{"owner":{"x":1}}`, "Mcp-Param-Owner", "forged"},
		{`{"owner":["a"]}`, "Mcp-Param-Owner", "forged"},
		{`{"n":1.5}`, "Mcp-Param-N", "7"},
		{`{"n":9007199254740993}`, "Mcp-Param-N", "7"},
		{`{"f":{}}`, "Mcp-Param-Region", "us"},
		{`{"f":"eu"}`, "Mcp-Param-Region", "us"},
		{`{}`, "mcp-param-region", "us"},
	} {
		args := parseValue(t, c.args)
		want := ParamHeaders(s, args)
		if e := CheckParamHeaders(http.Header{}, want, names); e != nil {
			t.Errorf("%s without headers: %v", c.args, e)
		}
		h := http.Header{}
		h.Add(c.header, c.value) // canonicalizes, as a server reads it
		e := CheckParamHeaders(h, want, names)
		if e == nil || e.Code != -32020 || e.Status != http.StatusBadRequest || !strings.Contains(e.Message, "unexpected") {
			t.Errorf("%s with %s: %v, want -32020 unexpected header", c.args, c.header, e)
		}
	}
}

// TestSameIntegerExact: an integer argument's header agrees as the same
// number, read as the body is read (float64, as every JSON parser the
// peers use); a string argument's only as the same text. Before, a string
// "42" took "42.0", "+42", "042" or "0x2Ap0". The body and the header
// are read alike: the body's 1.0000000000000001 derives the header 1, and
// a header 1.0000000000000001 agrees with the integer 1.
func TestSameIntegerExact(t *testing.T) {
	schema := parseValue(t, `{"type":"object","properties":{"id":{"type":"string","x-mcp-header":"Id"},"n":{"type":"integer","x-mcp-header":"N"}}}`)
	check := func(args, header, value string) *Error {
		h := http.Header{}
		h.Set(header, value)
		return CheckParamHeaders(h, ParamHeaders(schema, parseValue(t, args)), []string{header})
	}
	for _, v := range []string{"42.0", "4.2e1", "+42", "042", "0x2Ap0", "42.000000000000001", "42e0"} {
		if e := check(`{"id":"42"}`, "Mcp-Param-Id", v); e == nil {
			t.Errorf("string argument \"42\", header %q: accepted", v)
		}
	}
	for _, c := range []struct {
		arg, value string
		ok         bool
	}{
		{"42", "42", true}, {"42", "42.0", true}, {"42", "4.2e1", true}, {"42", "420e-1", true}, {"42", "42.000", true},
		{"0", "-0", true}, {"0", "0e999999999", true}, {"-7", "-7.0", true}, {"9007199254740991", "9007199254740991", true},
		{"1", "1.0000000000000001", true}, {"1.0000000000000001", "1", true}, {"1.0000000000000001", "1.0000000000000001", true},
		{"9007199254740991", "9007199254740991.4", true}, {"9007199254740991", "9007199254740990", false}, {"1", "1.000001", false},
		{"42", "+42", false}, {"42", "042", false}, {"42", "0x2A", false}, {"42", "42.", false}, {"42", ".42e2", false},
		{"1", "1e999999999", false}, {"1", "1e-999999999", false}, {"-42", "42", false}, {"42", "-42", false},
		{"1", "0.0000000000000000000000000000000000000000000000000000000000000000000001e70", true},
	} {
		if e := check(`{"n":`+c.arg+`}`, "Mcp-Param-N", c.value); (e == nil) != c.ok {
			t.Errorf("integer argument %s, header %q: %v, want ok=%v", c.arg, c.value, e, c.ok)
		}
	}
}
