package safetext_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/safetext"
)

func TestEscape(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain name_1.x", "plain name_1.x"},
		{"café 日本語 😀", "café 日本語 😀"},
		{"\x1b[31mred\x1b[0m", `\u001b[31mred\u001b[0m`},
		{"a\nb\tc\rd", `a\u000ab\u0009c\u000dd`},
		{"\u202eevil\u202c", `\u202eevil\u202c`},
		{"zero\u200bwidth\u200d\ufeff", `zero\u200bwidth\u200d\ufeff`},
		{"iso\u2066late\u2069", `iso\u2066late\u2069`},
		{"line\u2028sep\u2029", `line\u2028sep\u2029`},
		{"del\x7f c1\u0085", `del\u007f c1\u0085`},
		{"soft\u00adhyphen", `soft\u00adhyphen`},
		{"tag\U000E0041", `tag\U000e0041`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{`back\slash`, `back\\slash`},
		{"private\ue000use", `private\ue000use`},
	}
	for _, c := range cases {
		if got := safetext.Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if safetext.IsSafe(c.in) != (c.in == c.want) {
			t.Errorf("IsSafe(%q) disagrees with Escape", c.in)
		}
	}
	if got := safetext.Quote(`say "hi"` + "\x1b"); got != `"say \"hi\"\u001b"` {
		t.Errorf("Quote: %s", got)
	}
}

// Distinct inputs never render the same (so escaping cannot be used to
// impersonate another name), and output is always safe.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"a", "\\u001b", "\x1b", "\u202e", `\x`, "\xff", "é"} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, eb := safetext.Escape(a), safetext.Escape(b)
		if a != b && ea == eb {
			t.Fatalf("%q and %q both render as %q", a, b, ea)
		}
		if !utf8.ValidString(ea) || !safetext.IsSafe(strings.ReplaceAll(ea, `\`, "")) {
			t.Fatalf("unsafe output %q", ea)
		}
		for _, r := range ea {
			if r < 0x20 || r == 0x7f || (r >= 0x200b && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Fatalf("raw %U in %q", r, ea)
			}
		}
	})
}

func TestInert(t *testing.T) {
	escaped := safetext.Quote("bad \x1b[31m \\ line")
	if got := safetext.Inert(escaped); got != escaped {
		t.Errorf("an escaped message was escaped again: %q", got)
	}
	if got := safetext.Inert("raw \x1b[31m"); got != safetext.Escape("raw \x1b[31m") {
		t.Errorf("an active character was let through: %q", got)
	}
	if got := safetext.Inert("bidi \u202e"); got == "bidi \u202e" {
		t.Error("a bidi override was let through")
	}
}
