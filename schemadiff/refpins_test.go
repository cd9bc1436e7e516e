package schemadiff

import (
	"net/url"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

func TestRefDocument(t *testing.T) {
	ok := map[string]string{
		"https://schemas.example.com/a.json#/$defs/x": "https://schemas.example.com/a.json",
		"https://Schemas.Example.COM:443/a.json#x":    "https://schemas.example.com/a.json",
		"HTTP://example.com:80":                       "http://example.com/",
		"http://example.com:8080/a?v=2#frag":          "http://example.com:8080/a?v=2",
		"https://example.com/a.json?":                 "https://example.com/a.json",
		"https://[2001:DB8::1]:443/s.json":            "https://[2001:db8::1]/s.json",
		"https://example.com/a%20b.json#":             "https://example.com/a%20b.json",
	}
	for in, want := range ok {
		got, err := RefDocument(in)
		if err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"a.json#/x":                          "relative",
		"#/defs/x":                           "relative",
		"":                                   "relative",
		"urn:example:schema":                 "only http and https",
		"file:///etc/passwd":                 "only http and https",
		"https:///a.json":                    "no host",
		"https://user:pw@example.com/a.json": "user info",
		"https://mcpdrift.invalid/x.json":    "relative $id",
		"http://[::1":                        "not a URL",
	}
	for in, want := range bad {
		if _, err := RefDocument(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func TestToolRefs(t *testing.T) {
	tl, err := manifest.ParseToolList([]byte(`[{"name":"t","inputSchema":{"$id":"https://s.example/root.json","type":"object",
	  "properties":{"a":{"$ref":"a.json#/x"},"b":{"$ref":"#/$defs/b"},"c":{"$ref":"urn:x"}},"$defs":{"b":{"type":"string"}}},
	  "outputSchema":{"$ref":"https://o.example/out.json"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	got := ToolRefs(&tl.Tools[0])
	want := []ToolRef{
		{Pointer: "/inputSchema/properties/a/$ref", Ref: "a.json#/x", Document: "https://s.example/a.json"},
		{Pointer: "/inputSchema/properties/c/$ref", Ref: "urn:x", Why: "only http and https documents can be pinned"},
		{Pointer: "/outputSchema/$ref", Ref: "https://o.example/out.json", Document: "https://o.example/out.json"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// The same refs judged: present, pinned or not.
	cs := RefChanges(&tl.Tools[0], &RefPins{Pinned: map[string]string{"https://o.example/out.json": "sha256:" + strings.Repeat("0", 64)}})
	kinds := []string{}
	for _, c := range cs {
		kinds = append(kinds, c.Kind)
	}
	if strings.Join(kinds, ",") != "external_ref_present,external_ref_present,external_ref_pinned" {
		t.Errorf("kinds %v", kinds)
	}
	if cs := RefChanges(&tl.Tools[0], nil); len(cs) != 3 || cs[2].Kind != ExternalRefPresent {
		t.Errorf("no record: %+v", cs)
	}
}

// FuzzRefDocument: RefDocument never panics; what it returns is an
// absolute http(s) URL with a host, no user info and no fragment, and it
// is a fixed point (the document of a document is itself).
func FuzzRefDocument(f *testing.F) {
	for _, s := range []string{"https://schemas.example.com/a.json#/$defs/x", "HTTP://A.example:80", "a.json", "https://u@h/", "https://[::1]:443/x?#", "https://h/%zz", "https://h/a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := RefDocument(s)
		if err != nil {
			return
		}
		u, perr := url.Parse(d)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(d, "#") {
			t.Fatalf("%q gave %q (%v)", s, d, perr)
		}
		if again, err := RefDocument(d); err != nil || again != d {
			t.Fatalf("%q gave %q, which gives %q %v", s, d, again, err)
		}
	})
}

// SchemaMayReferOut is a filter before the external-reference walk: when it says
// no, the walk finds none, however the keys and values are escaped.
func TestMayRefOut(t *testing.T) {
	for src, want := range map[string]bool{
		`{"type":"string"}`:                            false,
		`{"$ref":"#/$defs/x","$defs":{"x":{}}}`:        false,
		`{"$ref":"\u0023/$defs/x","$defs":{"x":{}}}`:   false,
		`{"$ref":"https://e.example/a.json"}`:          true,
		`{"\u0024ref":"https://e.example/a.json"}`:     true,
		`{"$dynamicRef":"a.json"}`:                     true,
		`{"$ref":""}`:                                  true,
		`{"a":[{"b":{"$ref":"x.json"}}]}`:              true,
		`{"$refs":"x.json","$ref ":"y.json"}`:          false,
		`{"$ref":{"not":"a string"}}`:                  false,
		`[{"$ref":"x.json"}]`:                          true,
		`{"enum":[{"$ref":"x.json"}],"type":"object"}`: true,
	} {
		v := parseSchema(t, src)
		if got := manifest.SchemaMayReferOut(v); got != want {
			t.Errorf("%s: %v, want %v", src, got, want)
		}
	}
}

func parseSchema(t testing.TB, src string) jcs.Value {
	d, err := jcs.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return d.Root()
}

func FuzzMayRefOut(f *testing.F) {
	for _, s := range []string{`{"$ref":"#/x"}`, `{"\u0024ref":"a.json"}`, `{"$id":"https://e.example/r.json","properties":{"a":{"$ref":"r.json"}}}`, `[{"$dynamicRef":"\u0023x"}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := jcs.Parse([]byte(s))
		if err != nil {
			return
		}
		if v := d.Root(); !manifest.SchemaMayReferOut(v) && len(newSchSide(v).externalRefs()) > 0 {
			t.Fatalf("%s: SchemaMayReferOut says no, the walk finds %v", s, newSchSide(v).externalRefs())
		}
	})
}

// FuzzMayReferOut: what a tool learnt when it was read (MayReferOut) is
// the walk of its schemas as parsed again, whatever the escaping of "$ref"
// and "$dynamicRef".
func FuzzMayReferOut(f *testing.F) {
	for _, s := range []string{`{"$ref":"a.json"}`, `{"\u0024ref":"a.json"}`, `{"$re\u0066":"a.json"}`, `{"$dynamicRef":"x.json"}`, `{"$dynamic\u0052ef":"x.json"}`, `{"$dynamicRe\u0066":"x.json"}`, `{"type":"object"}`} {
		f.Add(s, `{}`)
		f.Add(`{}`, s)
	}
	f.Fuzz(func(t *testing.T, in, out string) {
		src := `{"name":"t","inputSchema":` + in + `,"outputSchema":` + out + `}`
		d, err := jcs.Parse([]byte(src))
		if err != nil {
			return
		}
		tool, err := manifest.ToolFromValue(d.Root(), "")
		if err != nil {
			return
		}
		p := tool.Proj()
		want := p.InputSchema.Valid() && manifest.SchemaMayReferOut(p.InputSchema) || p.OutputSchema.Valid() && manifest.SchemaMayReferOut(p.OutputSchema)
		if got := tool.MayReferOut(); got != want {
			t.Fatalf("%s: MayReferOut %v, the walk %v", src, got, want)
		}
	})
}
