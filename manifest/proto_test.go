package manifest

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// TestProtoIn: a member named "__proto__" is found at any depth, however
// its name is spelled in the bytes, and a string value of that text is
// not a member.
func TestProtoIn(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"name":"a","inputSchema":{"type":"object"}}`, ""},
		{`{"name":"__proto__","description":"__proto__"}`, ""},
		{`{"name":"a","__proto__":{}}`, "/__proto__"},
		{`{"name":"a","inputSchema":{"properties":{"x":{"__proto__":1}}}}`, "/inputSchema/properties/x/__proto__"},
		{`{"name":"a","inputSchema":{"properties":{"x":{"\u005f_proto__":1}}}}`, "/inputSchema/properties/x/__proto__"},
		{`{"name":"a","icons":[{},{"src":"x","__pro\u0074o__":{}}]}`, "/icons/1/__proto__"},
		{`{"name":"a","_meta":{"a/b":{"__proto__":{}}}}`, "/_meta/a~1b/__proto__"},
		{`{"name":"a","description":"\u00e9","x":{"__proto_":1}}`, ""},
	} {
		d, err := jcs.Parse([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := protoIn(d.Root()); got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzProtoIn: the raw-bytes filter before the walk never hides a
// "__proto__" member the walk finds, however its name is escaped.
func FuzzProtoIn(f *testing.F) {
	for _, s := range []string{`{"__proto__":1}`, `{"a":{"\u005f_proto__":{}}}`, `{"a":[{"__proto\u005f":1}]}`, `{"a":[{"__proto\u005F":1}]}`, `{"__pr\u006fto__":1}`, `{"b_":"x_"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := jcs.Parse([]byte(s))
		if err != nil {
			return
		}
		_, walk := protoPath(d.Root(), nil)
		if got := protoIn(d.Root()); (got != "") != walk {
			t.Fatalf("%s: protoIn %q, the walk finds one: %v", s, got, walk)
		}
	})
}
