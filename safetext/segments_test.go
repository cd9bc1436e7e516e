package safetext

import (
	"reflect"
	"strings"
	"testing"
)

// Segments splits escaped text back into its plain runs and its escapes,
// losing nothing: a quote's \" is plain, every escape sequence of the one
// escaper is one segment.
func TestSegments(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Segment
	}{
		{Quote("a\u202eb\\c\"d\x1b\xff\U000e0041"), []Segment{{Text: `"a`}, {Text: `\u202e`, Escape: true}, {Text: "b"}, {Text: `\\`, Escape: true},
			{Text: `c\"d`}, {Text: `\u001b`, Escape: true}, {Text: `\xff`, Escape: true}, {Text: `\U000e0041`, Escape: true}, {Text: `"`}}},
		{EscapeASCII("d\u0435lete"), []Segment{{Text: "d"}, {Text: `\u0435`, Escape: true}, {Text: "lete"}}},
		{"plain", []Segment{{Text: "plain"}}},
		{"", nil},
		{`\z`, []Segment{{Text: `\`, Escape: true}, {Text: "z"}}},
	} {
		if got := Segments(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Segments(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func FuzzSegments(f *testing.F) {
	f.Add("a\u202eb\\c\"d\x1b\xff")
	f.Add("\u200b\ufeff\U000e0041 ok")
	f.Fuzz(func(t *testing.T, s string) {
		for _, esc := range []string{Escape(s), Quote(s), EscapeASCII(s), QuoteASCII(s)} {
			var b strings.Builder
			for _, seg := range Segments(esc) {
				b.WriteString(seg.Text)
				if !seg.Escape && (strings.ContainsRune(seg.Text, '\u202e') || !IsSafe(strings.ReplaceAll(seg.Text, `\"`, ``))) {
					t.Fatalf("plain segment %q of %q holds an unsafe character", seg.Text, esc)
				}
			}
			if b.String() != esc {
				t.Fatalf("segments of %q join to %q", esc, b.String())
			}
		}
	})
}
