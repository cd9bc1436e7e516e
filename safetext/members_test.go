package safetext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestMemberKeyJoinsWhatDecodersJoin: every pair of code points that one
// of the decoders' relations makes one (Go's simple-folding orbits, as
// encoding/json and bytes.EqualFold match; the upper-, lower- and
// title-case mappings .NET and Java compare) has one key.
func TestMemberKeyJoinsWhatDecodersJoin(t *testing.T) {
	pairs := 0
	check := func(a, b rune, why string) {
		t.Helper()
		pairs++
		if MemberKey(string(a)) != MemberKey(string(b)) {
			t.Fatalf("%U and %U (%s) have different keys", a, b, why)
		}
		if !SameMember([]byte("x"+string(a)), []byte("x"+string(b))) {
			t.Fatalf("SameMember(%U, %U) (%s) is false", a, b, why)
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) || r == 0 {
			continue
		}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			check(r, f, "simple fold orbit")
		}
		check(r, unicode.ToUpper(r), "upper case")
		check(r, unicode.ToLower(r), "lower case")
		check(r, unicode.ToTitle(r), "title case")
	}
	if pairs < 3000 {
		t.Fatalf("only %d pairs checked", pairs)
	}
}

// TestMemberKeyEncodingJSON asks encoding/json itself: a member name that
// it decodes into a field has the field name's key.
func TestMemberKeyEncodingJSON(t *testing.T) {
	type target struct {
		Name    string `json:"name"`
		Kind    string `json:"kind"`
		Session string `json:"session"`
		ID      string `json:"id"`
	}
	for _, member := range []string{"NAME", "Name", "naMe", "\u212Aind", "KIND", "\u017Fession", "SESSION", "Id", "iD"} {
		var v target
		if err := json.Unmarshal([]byte(`{"`+member+`":"x"}`), &v); err != nil {
			t.Fatal(err)
		}
		field := map[bool]string{v.Name == "x": "name", v.Kind == "x": "kind", v.Session == "x": "session", v.ID == "x": "id"}[true]
		if field == "" {
			t.Fatalf("encoding/json matched %q to no field (the test's premise)", member)
		}
		if MemberKey(member) != MemberKey(field) {
			t.Errorf("encoding/json reads %q as %q, but their keys differ", member, field)
		}
	}
}

func TestMemberKeyCases(t *testing.T) {
	same := [][2]string{
		{"name", "NAME"}, {"params", "PARAMS"}, {"params", "param\u017F"}, {"kind", "\u212Aind"},
		{"id", "\u0131d"}, {"id", "\u0130d"}, {"name", "name\x00"}, {"name", "name\x00suffix"},
		{"\u00C9t\u00E9", "\u00E9T\u00C9"}, {"\u01C4", "\u01C5"}, {"\u01C5", "\u01C6"},
	}
	for _, p := range same {
		if MemberKey(p[0]) != MemberKey(p[1]) || !SameMember([]byte(p[0]), []byte(p[1])) {
			t.Errorf("%q and %q should be one member", p[0], p[1])
		}
	}
	differ := [][2]string{
		{"name", "names"}, {"name", "nаme"}, {"ss", "\u00DF"}, {"e\u0301", "\u00E9"}, {"a_b", "a-b"}, {"", "x"},
	}
	for _, p := range differ {
		if MemberKey(p[0]) == MemberKey(p[1]) || SameMember([]byte(p[0]), []byte(p[1])) {
			t.Errorf("%q and %q should be two members", p[0], p[1])
		}
	}
}

// TestSameMemberASCII: the ASCII path agrees with the keys for every pair
// of printable ASCII strings of one and two bytes.
func TestSameMemberASCII(t *testing.T) {
	var all []string
	for a := byte(0x20); a < 0x7f; a++ {
		all = append(all, string([]byte{a}))
		for _, b := range []byte("aZ_0~") {
			all = append(all, string([]byte{a, b}))
		}
	}
	for _, a := range all {
		for _, b := range all {
			want := strings.EqualFold(a, b)
			if got := SameMember([]byte(a), []byte(b)); got != want {
				t.Fatalf("SameMember(%q, %q) = %v", a, b, got)
			}
			if got := MemberKey(a) == MemberKey(b); got != want {
				t.Fatalf("keys of %q and %q: equal %v", a, b, got)
			}
		}
	}
}

func FuzzMemberKey(f *testing.F) {
	for _, s := range []string{"name", "NAME", "\u212A", "\u0131d", "a\x00b", "\u00DF"} {
		f.Add(s, strings.ToUpper(s))
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		key := MemberKey(a) == MemberKey(b)
		if SameMember([]byte(a), []byte(b)) != key {
			t.Fatalf("SameMember(%q, %q) disagrees with the keys", a, b)
		}
		// Whatever bytes.EqualFold (encoding/json's matching) joins, the
		// key joins (before a NUL, where the key stops).
		ca, _, _ := strings.Cut(a, "\x00")
		cb, _, _ := strings.Cut(b, "\x00")
		if bytes.EqualFold([]byte(ca), []byte(cb)) && !key {
			t.Fatalf("%q and %q are EqualFold but have different keys", a, b)
		}
		if MemberKey(MemberKey(a)) != MemberKey(a) {
			t.Fatalf("MemberKey is not idempotent on %q", a)
		}
	})
}
