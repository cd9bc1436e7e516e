package jcs

import (
	"bytes"
	"testing"
)

// FuzzValueEnd: a text Parse accepts is one value, and ValueEnd finds its
// end wherever it starts, whatever follows it.
func FuzzValueEnd(f *testing.F) {
	for _, s := range []string{`{"a":"\\\"}"}`, `["\\\\",{"b":[1,2]}]`, `"x\\"`, `-1.5e3`, `true`, `{"k":"\"\\\\\"]"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		v := bytes.Trim(src, " \t\r\n")
		if _, err := Parse(v); err != nil {
			return
		}
		for _, tail := range []string{"", ",", "]", ` , "x"}`} {
			text := append(append([]byte("  "), v...), tail...)
			if end, ok := ValueEnd(text, SkipSpace(text, 0)); !ok || end != 2+len(v) {
				t.Fatalf("%q + %q: ValueEnd %d %v, want %d", v, tail, end, ok, 2+len(v))
			}
		}
	})
}

// TestMemberStart finds a member's value past others, strings holding
// brackets and escaped quotes, and refuses what is not an object.
func TestMemberStart(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int // -1: not found
	}{
		{`{"a":1,"tools":[]}`, 15},
		{`{"a":"]\"}","b":{"c":["tools"]}, "tools" : [1]}`, 43},
		{` { "tools":[]}`, 11},
		{`{"a":1}`, -1},
		{`["tools",[]]`, -1},
		{`{"a":1 "tools":[]}`, -1},
		{`{"\u0074ools":[]}`, -1},
	} {
		got, ok := MemberStart([]byte(c.src), "tools")
		if !ok {
			got = -1
		}
		if got != c.want {
			t.Errorf("%s: %d, want %d", c.src, got, c.want)
		}
	}
}
