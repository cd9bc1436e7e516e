package jcs_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// rfc6901Doc is the example document of RFC 6901 section 5.
const rfc6901Doc = `{
  "foo": ["bar", "baz"],
  "": 0,
  "a/b": 1,
  "c%d": 2,
  "e^f": 3,
  "g|h": 4,
  "i\\j": 5,
  "k\"l": 6,
  " ": 7,
  "m~n": 8
}`

// rfc6901Examples are RFC 6901's examples: the pointer (section 5), its
// URI fragment form (section 6) and the canonical form of what it names.
var rfc6901Examples = []struct{ ptr, frag, want string }{
	{"", "#", `{"":0," ":7,"a/b":1,"c%d":2,"e^f":3,"foo":["bar","baz"],"g|h":4,"i\\j":5,"k\"l":6,"m~n":8}`},
	{"/foo", "#/foo", `["bar","baz"]`},
	{"/foo/0", "#/foo/0", `"bar"`},
	{"/", "#/", `0`},
	{"/a~1b", "#/a~1b", `1`},
	{"/c%d", "#/c%25d", `2`},
	{"/e^f", "#/e%5Ef", `3`},
	{"/g|h", "#/g%7Ch", `4`},
	{"/i\\j", "#/i%5Cj", `5`},
	{"/k\"l", "#/k%22l", `6`},
	{"/ ", "#/%20", `7`},
	{"/m~0n", "#/m~0n", `8`},
}

func TestPointerRFC6901(t *testing.T) {
	d, err := jcs.Parse([]byte(rfc6901Doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rfc6901Examples {
		v, ok := d.Root().Resolve(e.ptr)
		if !ok || string(v.Canonical()) != e.want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", e.ptr, v.Canonical(), ok, e.want)
		}
		v, ok = d.Root().ResolveFragment(e.frag)
		if !ok || string(v.Canonical()) != e.want {
			t.Errorf("ResolveFragment(%q) = %s, %v; want %s", e.frag, v.Canonical(), ok, e.want)
		}
		toks, ok := jcs.SplitPointer(e.ptr)
		if !ok || jcs.PointerJoin("", toks...) != e.ptr {
			t.Errorf("SplitPointer(%q) = %q, %v", e.ptr, toks, ok)
		}
	}
	for _, bad := range []string{"foo", "/foo/1/x", "/foo/01", "/foo/-", "/foo/+1", "/foo/2", "/m~2n", "/m~", "/nope"} {
		if v, ok := d.Root().Resolve(bad); ok || v.Valid() {
			t.Errorf("Resolve(%q) named something", bad)
		}
	}
	for _, bad := range []string{"", "foo", "other.json#/foo", "#foo", "#/c%zzd"} {
		if _, ok := d.Root().ResolveFragment(bad); ok {
			t.Errorf("ResolveFragment(%q) named something", bad)
		}
	}
	if _, ok := (jcs.Value{}).Resolve(""); ok {
		t.Error("the zero Value resolved")
	}
}

func TestPointerTokens(t *testing.T) {
	for _, c := range []struct {
		tok, want string
		ok        bool
	}{
		{"", "", true}, {"a", "a", true}, {"~0", "~", true}, {"~1", "/", true},
		{"~01", "~1", true}, {"~10", "/0", true}, {"a~0~1b", "a~/b", true},
		{"~", "~", false}, {"~2", "~2", false}, {"~~1", "~/", false}, {"a~", "a~", false},
	} {
		got, ok := jcs.UnescapePointerToken(c.tok)
		if got != c.want || ok != c.ok {
			t.Errorf("UnescapePointerToken(%q) = %q, %v; want %q, %v", c.tok, got, ok, c.want, c.ok)
		}
	}
	if got := jcs.PointerJoin("/a", "b/c", "~", ""); got != "/a/b~1c/~0/" {
		t.Errorf("PointerJoin = %q", got)
	}
	if got := jcs.PointerJoin("/a"); got != "/a" {
		t.Errorf("PointerJoin without tokens = %q", got)
	}
	for _, c := range []struct {
		tok string
		n   int
		ok  bool
	}{{"0", 0, true}, {"10", 10, true}, {"999999999", 999999999, true}, {"", 0, false}, {"01", 0, false},
		{"-1", 0, false}, {"+1", 0, false}, {"1e2", 0, false}, {"1000000000", 0, false}} {
		if n, ok := jcs.PointerIndex(c.tok); n != c.n || ok != c.ok {
			t.Errorf("PointerIndex(%q) = %d, %v", c.tok, n, ok)
		}
	}
}

// The escape and the unescape are inverses, a pointer split and joined
// again is itself, and resolving a pointer in RFC 6901's example document
// agrees with stepping through its tokens one by one, and with its URI
// fragment form.
func FuzzPointer(f *testing.F) {
	for _, e := range rfc6901Examples {
		f.Add(e.ptr)
	}
	for _, s := range []string{"~", "~2", "/~", "/a/~01", "//", "a/b", "/foo/00", "/foo/1/", "\xff/~1"} {
		f.Add(s)
	}
	d, err := jcs.Parse([]byte(rfc6901Doc))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if u, ok := jcs.UnescapePointerToken(jcs.PointerToken(s)); !ok || u != s {
			t.Fatalf("token %q escaped and unescaped is %q, %v", s, u, ok)
		}
		toks := strings.Split(s, "/")
		joined := jcs.PointerJoin("", toks...)
		if back, ok := jcs.SplitPointer(joined); !ok || !slices.Equal(back, toks) {
			t.Fatalf("%q joined is %q, split again %q, %v", toks, joined, back, ok)
		}
		toks, ok := jcs.SplitPointer(s)
		if ok && jcs.PointerJoin("", toks...) != s {
			t.Fatalf("pointer %q split and joined is %q", s, jcs.PointerJoin("", toks...))
		}
		v, found := d.Root().Resolve(s)
		if found && !ok {
			t.Fatalf("%q resolved though it is not a pointer", s)
		}
		w, stepped := d.Root(), ok
		for _, tok := range toks {
			if w, stepped = w.Step(tok); !stepped {
				break
			}
		}
		if found != stepped || (found && v.Offset() != w.Offset()) {
			t.Fatalf("%q: Resolve found %v, stepping %v", s, found, stepped)
		}
		f, ok := d.Root().ResolveFragment("#" + (&url.URL{Fragment: s}).EscapedFragment())
		if ok != found || (ok && f.Offset() != v.Offset()) {
			t.Fatalf("%q: the fragment form resolved %v, the pointer %v", s, ok, found)
		}
	})
}
