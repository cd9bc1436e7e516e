package safetext

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestSafeName(t *testing.T) {
	for _, ok := range []string{"a", "delete_file", "github.add-deploy_key", "A.B-C_9", strings.Repeat("x", 128)} {
		if !SafeName(ok) {
			t.Errorf("SafeName(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", 129), "github/add", "a b", "a:b", "d\u0435lete_file", "café",
		"del\u200bete", "ＤＥＬＥＴＥ", "a\\b", "a\"b", "\xff", "a\x00"} {
		if SafeName(bad) {
			t.Errorf("SafeName(%q) = true", bad)
		}
	}
}

func TestEscapeName(t *testing.T) {
	cases := []struct{ in, want string }{
		{"delete_file", "delete_file"},
		{"d\u0435lete_file", `d\u0435lete_file`},
		{"del\u200bete_file", `del\u200bete_file`},
		{"caf\u00e9", `caf\u00e9`},
		{"cafe\u0301", `cafe\u0301`},
		{"github/add key", `github\u002fadd\u0020key`},
		{`back\slash`, `back\u005cslash`},
		{"x\U0001D41D", `x\U0001d41d`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"tag\U000E0041", `tag\U000e0041`},
	}
	for _, c := range cases {
		if got := EscapeName(c.in); got != c.want {
			t.Errorf("EscapeName(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := OutsideSafeSet("d\u0435l\u0435te/x\xff"); string(got) != "\u0435/\ufffd" {
		t.Errorf("OutsideSafeSet: %q", string(got))
	}
}

func TestEscapeASCII(t *testing.T) {
	for _, s := range []string{"plain name_1.x", "\x1b[31m", "a\\b", "tab\there", "| col |[x](http://evil)<b>@all"} {
		if EscapeASCII(s) != Escape(s) || QuoteASCII(s) != Quote(s) {
			t.Errorf("%q: ASCII input must escape as Escape does: %q vs %q", s, EscapeASCII(s), Escape(s))
		}
	}
	cases := []struct{ in, want string }{
		{"d\u0435lete_file", `d\u0435lete_file`},
		{"café 日本", `caf\u00e9 \u65e5\u672c`},
		{"\U0001D41Dx", `\U0001d41dx`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"bad\xff", `bad\xff`},
	}
	for _, c := range cases {
		if got := EscapeASCII(c.in); got != c.want {
			t.Errorf("EscapeASCII(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := QuoteASCII(`say "d` + "\u0435" + `"`); got != `"say \"d\u0435\""` {
		t.Errorf("QuoteASCII: %s", got)
	}
}

// Every class of disguise the issue names, and the others of its kind,
// folds to the ASCII name.
func TestFoldDisguises(t *testing.T) {
	const want = "delete_file"
	for _, s := range []string{
		// Look-alikes from other scripts.
		"d\u0435lete_file", // Cyrillic е
		"d\u0435l\u0435t\u0435_fil\u0435",
		"delet\u0435_f\u0456le", // Cyrillic і
		"del\u0435te_fi\u04cfe", // Cyrillic palochka for l
		"d\u0435\u217cete_file", // small roman numeral fifty for l
		"delete_fi\u01c0e",      // Latin dental click for l
		"de1ete_fi1e",           // digit one for l
		// Compatibility forms.
		"ＤＥＬＥＴＥ_file",     // fullwidth
		"ＤＥＬＥＴＥ＿ＦＩＬＥ",     // fullwidth low line too
		"𝐝𝐞𝐥𝐞𝐭𝐞_file",     // mathematical bold
		"𝒹𝑒𝓁𝑒𝓉𝑒_𝒻𝒾𝓁𝑒",     // mathematical script
		"𝕕𝕖𝕝𝕖𝕥𝕖_𝕗𝕚𝕝𝕖",     // double-struck
		"𝚍𝚎𝚕𝚎𝚝𝚎_𝚏𝚒𝚕𝚎",     // monospace
		"𝖉𝖊𝖑𝖊𝖙𝖊_𝖋𝖎𝖑𝖊",     // bold fraktur
		"delete_\ufb01le", // ﬁ ligature
		"ⓓⓔⓛⓔⓣⓔ_ⓕⓘⓛⓔ",     // circled
		"ᵈᵉˡᵉᵗᵉ_file",     // modifier letters
		// Combining marks.
		"de\u0301lete_file",
		"d\u00e8lete_file",
		"delete\u0323_file",
		"delete_file\u20dd", // enclosing circle (Me)
		// Invisible and default-ignorable characters.
		"del\u200bete_file", "del\u200cete_file", "del\u200dete_file", "del\u2060ete_file",
		"del\ufeffete_file", "del\u00adete_file", "del\u034fete_file", "del\u180eete_file",
		"del\U000E0041ete_file", "del\U000E007Fete_file", "del\ufe0fete_file", "del\ufe00ete_file",
		"del\U000E0100ete_file", "\u202edelete_file", "del\u2066ete_file\u2069", "del\u3164ete_file",
		// Case.
		"DELETE_FILE", "Delete_File", "dElEtE_fIlE",
	} {
		if got := Fold(s); got != want {
			t.Errorf("Fold(%q) = %q, want %q", s, got, want)
		}
	}
	if Fold("delete_fiie") == want || Fold("read_file") == want {
		t.Error("Fold is too coarse")
	}
}

func TestSkeleton(t *testing.T) {
	cases := []struct{ in, want string }{
		{"paypal", "paypal"},
		{"p\u0430yp\u0430l", "paypal"}, // Cyrillic а
		{"𝔭𝒶ỿ𝕡𝕒ℓ", "paypal"},
		{"del\u200bete", "delete"}, // default-ignorable removed
		{"I", "l"},                 // case-sensitive: capital I is confusable with l
		{"i", "i"},
		{"m", "rn"},
		{"r00t", "rOOt"},
		{"caf\u00e9", "cafe\u0301"}, // NFD
		{"\xff", "\ufffd"},
	}
	for _, c := range cases {
		if got := Skeleton(c.in); got != c.want {
			t.Errorf("Skeleton(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// NFCKey, CaseKey and Fold are nested: equal under one means equal under
// the next.
func TestFoldsNest(t *testing.T) {
	pairs := [][2]string{
		{"caf\u00e9", "cafe\u0301"},
		{"Delete_File", "delete_file"},
		{"STRASSE", "stra\u00dfe"},
		{"\u212b", "\u00e5"}, // angstrom sign and å
	}
	for _, p := range pairs {
		a, b := p[0], p[1]
		if NFCKey(a) == NFCKey(b) && CaseKey(a) != CaseKey(b) {
			t.Errorf("%q %q: NFC-equal but not case-equal", a, b)
		}
		if CaseKey(a) != CaseKey(b) {
			t.Errorf("%q %q: want case-equal", a, b)
		}
		if Fold(a) != Fold(b) {
			t.Errorf("%q %q: case-equal but not Fold-equal", a, b)
		}
	}
}

// Fold settles on every code point, and what it returns is its own fold.
// The ASCII fast paths agree with the general code.
func TestFoldEveryCodePoint(t *testing.T) {
	step := rune(1)
	if testing.Short() {
		step = 7
	}
	for r := rune(0); r <= utf8.MaxRune; r += step {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		if _, mapped := prototype(r); !mapped && !IsDefaultIgnorable(r) &&
			!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf) {
			continue // unassigned or private use: no decomposition, no case, no prototype
		}
		s := string(r)
		f := Fold(s)
		if Fold(f) != f {
			t.Fatalf("Fold(%U) = %q is not its own fold (%q)", r, f, Fold(f))
		}
		if FoldRune(r) != f {
			t.Fatalf("FoldRune(%U) = %q, Fold = %q", r, FoldRune(r), f)
		}
	}
	for c := 0; c < 128; c++ {
		s := string(rune(c))
		if foldASCII(s) != foldSlow(s) {
			t.Errorf("ASCII fold of %q: %q vs %q", s, foldASCII(s), foldSlow(s))
		}
		if p, ok := prototype(rune(c)); ok && norm.NFD.String(p) != p {
			t.Errorf("the prototype of %q has a canonical decomposition; skeletonASCII is wrong", s)
		}
	}
	for _, s := range []string{"m%\"`|10I", "aMb", "x0y1zI"} {
		if foldASCII(s) != foldSlow(s) {
			t.Errorf("ASCII fold of %q: %q vs %q", s, foldASCII(s), foldSlow(s))
		}
		k := norm.NFD.String(s)
		var b strings.Builder
		for _, r := range k {
			if p, ok := prototype(r); ok {
				b.WriteString(p)
			} else {
				b.WriteRune(r)
			}
		}
		if Skeleton(s) != norm.NFD.String(b.String()) {
			t.Errorf("ASCII skeleton of %q: %q", s, Skeleton(s))
		}
	}
	buf, ok := AppendFoldASCII(nil, []byte("Remove_Member"))
	if !ok || string(buf) != Fold("Remove_Member") {
		t.Errorf("AppendFoldASCII: %q %v", buf, ok)
	}
	if _, ok := AppendFoldASCII(nil, []byte("d\u0435l")); ok {
		t.Error("AppendFoldASCII accepted non-ASCII input")
	}
}

// The default-ignorable table (Unicode ConfusablesVersion) agrees with the
// property as derived from the standard library's Unicode tables, on every
// code point those tables know.
func TestDefaultIgnorableTable(t *testing.T) {
	derived := func(r rune) bool {
		switch {
		case unicode.Is(unicode.White_Space, r),
			r >= 0xfff9 && r <= 0xfffb,
			r >= 0x13430 && r <= 0x13440,
			unicode.Is(unicode.Prepended_Concatenation_Mark, r):
			return false
		}
		return unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r)
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C) ||
			unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cs, r) {
			// Unassigned in the standard library's Unicode version: the
			// table is authoritative (and Other_Default_Ignorable_Code_Point
			// covers unassigned ranges anyway).
			if unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) != IsDefaultIgnorable(r) {
				t.Errorf("%U: table %v", r, IsDefaultIgnorable(r))
			}
			continue
		}
		if derived(r) != IsDefaultIgnorable(r) {
			t.Errorf("%U: derived %v, table %v", r, derived(r), IsDefaultIgnorable(r))
		}
	}
	t.Logf("tables: Unicode %s; normalization (x/text) %s; standard library %s", ConfusablesVersion, norm.Version, unicode.Version)
}

// Fuzz the folds and escapers: Fold is idempotent and nested over the
// case key; EscapeName is injective and stays in its alphabet; the ASCII
// escapers print only ASCII.
func FuzzNameFolds(f *testing.F) {
	for _, s := range []string{"delete_file", "d\u0435lete_file", "del\u200bete", "ＤＥＬＥＴＥ", "𝐝𝐞𝐥𝐞𝐭𝐞", "\ufb01", "e\u0301",
		"\u13a3", "\uab73", "ǅ", "İ", "ß", "%", "\xff", "", "\\u0435", "I", "l"} {
		f.Add(s, "delete_file")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		fa := Fold(a)
		if Fold(fa) != fa {
			t.Fatalf("Fold(%q) = %q, but Fold of that is %q", a, fa, Fold(fa))
		}
		if Fold(CaseKey(a)) != fa {
			t.Fatalf("Fold(%q) = %q differs from the fold of its case key %q", a, fa, Fold(CaseKey(a)))
		}
		if NFCKey(a) == NFCKey(b) && CaseKey(a) != CaseKey(b) {
			t.Fatalf("%q, %q: NFC-equal but not case-equal", a, b)
		}
		if CaseKey(a) == CaseKey(b) && fa != Fold(b) {
			t.Fatalf("%q, %q: case-equal but not Fold-equal", a, b)
		}
		ea, eb := EscapeName(a), EscapeName(b)
		if a != b && ea == eb {
			t.Fatalf("%q and %q both escape as %s", a, b, ea)
		}
		for i := 0; i < len(ea); i++ {
			if !safeNameByte(ea[i]) && ea[i] != '\\' {
				t.Fatalf("EscapeName(%q) = %s holds %q", a, ea, ea[i])
			}
		}
		if SafeName(a) && ea != a {
			t.Fatalf("a safe name was escaped: %q", a)
		}
		if qa, qb := QuoteASCII(a), QuoteASCII(b); a != b && qa == qb {
			t.Fatalf("%q and %q both quote as %s", a, b, qa)
		}
		for _, r := range QuoteASCII(a) {
			if r < 0x20 || r >= 0x7f {
				t.Fatalf("QuoteASCII(%q) holds %U", a, r)
			}
		}
		_ = Skeleton(a)
	})
}
