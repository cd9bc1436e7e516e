package jcs

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestSameTokens(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"a":1}`, "{\n  \"a\": 1\n}", true},
		{`{"a":1}`, `{"a":1.0}`, false},
		{`{"a":"x y"}`, `{"a":"xy"}`, false},
		{`{"a":"x\"y"}`, `{"a":"x\"y"}`, true},
		{`{"a":"x\"y "}`, `{"a":"x\"y"}`, false},
		{`{"a":"\\"}`, ` { "a" : "\\" } `, true},
		{`{"a":"\u0041"}`, `{"a":"A"}`, false},
		{`[1,2]`, `[1,2,3]`, false},
		{`[1,2]`, `[1, 2 ]`, true},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, false},
	} {
		if got := SameTokens([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("SameTokens(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := SameTokens([]byte(c.b), []byte(c.a)); got != c.want {
			t.Errorf("SameTokens(%s, %s) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}

// FuzzSameTokens: texts are the same tokens exactly when encoding/json's
// Compact (which drops the whitespace between tokens and changes nothing
// else) makes them the same bytes.
func FuzzSameTokens(f *testing.F) {
	f.Add([]byte(`{"a":1}`), []byte("{ \"a\" : 1 }"))
	f.Add([]byte(`["x\" y"]`), []byte(`[ "x\" y" ]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if _, err := Parse(a); err != nil {
			return
		}
		if _, err := Parse(b); err != nil {
			return
		}
		var ca, cb bytes.Buffer
		if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
			t.Fatalf("Compact refused a text Parse took: %q or %q", a, b)
		}
		if SameTokens(a, b) != bytes.Equal(ca.Bytes(), cb.Bytes()) {
			t.Fatalf("SameTokens(%q, %q) disagrees with json.Compact", a, b)
		}
	})
}
