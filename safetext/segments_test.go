package safetext

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
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

// Shows finds what a reader sees in escaped text, never the bytes of an
// escape sequence read as text.
func TestShows(t *testing.T) {
	for _, c := range []struct {
		escaped, s string
		want       bool
	}{
		{Quote("\x10000"), "0000", false}, // "\u0010000": found by FuzzParseURL
		{Quote("\x10000"), "000", true},
		{Quote("\x10000"), "\x10000", true},
		{Quote("a\x1bb"), "x1b", false},
		{Quote("a\x1bb"), "a\x1bb", true},
		{Quote("a\x1bb"), "\x1bb", true},
		{Quote("\xff00"), "ff00", false},
		{Quote(`a\b`), `\b`, true},
		{Quote(`a\b`), `\`, true},
		{Quote(`say "pw1234"`), `"pw1234"`, true},
		{Quote(`say "pw1234"`), `pw1234`, true},
		{Quote(`a"b`), `"b`, true},
		{Quote("x\U0001F600y"), "\U0001F600y", true},
		{Quote("x\u202ey"), "202e", false},
		{Escape("plain secret"), "secret", true},
		{Escape("plain"), "secret", false},
		{"anything", "", true},
	} {
		if got := Shows(c.escaped, c.s); got != c.want {
			t.Errorf("Shows(%q, %q) = %v, want %v", c.escaped, c.s, got, c.want)
		}
	}
}

// FuzzShows: what Escape or Quote wrote of a text shows every piece of it
// (cut between runes).
func FuzzShows(f *testing.F) {
	f.Add("a\x10000b", 1, 4)
	f.Add(`q"\x1b`, 0, 3)
	f.Add("a\xff\xe2\x80b\\", 1, 3)
	f.Fuzz(func(t *testing.T, s string, i, j int) {
		if i < 0 || j < i || j > len(s) {
			return
		}
		// a piece whose ends fall between what the escaper reads as one
		// (a rune, or an invalid byte): the escapes of the pieces are then
		// the pieces of the escape
		at := map[int]bool{len(s): true}
		for k := 0; k < len(s); {
			at[k] = true
			_, n := utf8.DecodeRuneInString(s[k:])
			k += n
		}
		if !at[i] || !at[j] {
			return
		}
		piece := s[i:j]
		if !Shows(Quote(s), piece) || !Shows(Escape(s), piece) {
			t.Fatalf("Shows(%q, %q) is false", Quote(s), piece)
		}
	})
}

// Clip cuts between runes, and a run of invalid bytes where n says;
// ClipEscaped never cuts an escape sequence in half.
func TestClipEscaped(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{strings.Repeat("\x80", 10), 4, "\x80\x80\x80\x80…"},
		{"ab\u00e9cd", 3, "ab…"},
		{"ab\U0001F600", 5, "ab…"},
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{`abc\u001bdef`, 6, `abc…`},
		{`abc\u001bdef`, 9, `abc\u001b…`},
		{`abc\\def`, 4, `abc…`},
		{`abc\\def`, 5, `abc\\…`},
		{`a\xffb`, 3, `a…`},
		{`a\U0001f600b`, 8, `a…`},
		{`ab\"cd`, 3, `ab…`},
		{`short`, 10, `short`},
	} {
		if got := ClipEscaped(c.in, c.n); got != c.want {
			t.Errorf("ClipEscaped(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// FuzzClipEscaped: what ClipEscaped keeps of an escaped text is whole
// escape sequences, within n bytes.
func FuzzClipEscaped(f *testing.F) {
	f.Add("a\x1bb\u202ec\\d\xff", 5)
	f.Fuzz(func(t *testing.T, raw string, n int) {
		if n <= 0 || n > 1<<16 {
			return
		}
		e := Quote(raw)
		c := ClipEscaped(e, n)
		if c == e {
			return
		}
		kept, ok := strings.CutSuffix(c, "…")
		if !ok || len(kept) > n || !strings.HasPrefix(e, kept) {
			t.Fatalf("ClipEscaped(%q, %d) = %q", e, n, c)
		}
		// every escape sequence kept is whole: Segments of the kept text
		// are segments of the whole text's
		whole := map[string]bool{}
		for _, s := range Segments(e) {
			if s.Escape {
				whole[s.Text] = true
			}
		}
		for _, s := range Segments(kept) {
			if s.Escape && !whole[s.Text] {
				t.Fatalf("ClipEscaped(%q, %d) = %q: half an escape %q", e, n, c, s.Text)
			}
		}
	})
}

// RequoteGo rewrites Go-quoted spans into Quote's dialect, leaves prose
// apostrophes and spans that do not unquote alone, and is linear: a run
// of unpaired quotes (a server's value inside a library's message) once
// took it quadratic time.
func TestRequoteGo(t *testing.T) {
	for _, c := range []struct {
		in   string
		q    byte
		want string
	}{
		{`additional properties 'x\x1by\u202ez' not allowed`, '\'', `additional properties "x\u001by\u202ez" not allowed`},
		{`additional properties 'a', 'b' not allowed`, '\'', `additional properties "a", "b" not allowed`},
		{`'it\'s "q"' does not match pattern '^a$'`, '\'', `"it's \"q\"" does not match pattern "^a$"`},
		{`the value's type is wrong`, '\'', `the value's type is wrong`},
		{`'\xff' is not valid`, '\'', `"\xff" is not valid`},
		{`'\q' then 'ok'`, '\'', `'\q' then "ok"`},
		{`key "m\x1b" already defined at line 6`, '"', `key "m\u001b" already defined at line 6`},
		{`key "a\"b" x`, '"', `key "a\"b" x`},
		{`lone "`, '"', `lone "`},
		{`end '\`, '\'', `end '\`},
	} {
		if got := RequoteGo(c.in, c.q); got != c.want {
			t.Errorf("RequoteGo(%s, %c) = %s, want %s", c.in, c.q, got, c.want)
		}
	}
	for _, q := range []byte{'\'', '"'} {
		hostile := "('" + strings.Repeat(`\`+string(q), 100000) + `\.` + string(q)
		start := time.Now()
		RequoteGo(hostile, q)
		if d := time.Since(start); d > time.Second {
			t.Errorf("RequoteGo of %d bytes of unpaired %c took %v", len(hostile), q, d)
		}
	}
}

func FuzzRequoteGo(f *testing.F) {
	f.Add(`a 'x\x1b' b`, true)
	f.Add(`k "\u202e" "`, false)
	f.Fuzz(func(t *testing.T, msg string, single bool) {
		q := byte('"')
		if single {
			q = '\''
		}
		out := RequoteGo(msg, q)
		// what is not a quoted span is kept; what is, is never less safe
		if IsSafe(strings.ReplaceAll(msg, `\`, "")) && !IsSafe(strings.ReplaceAll(out, `\`, "")) {
			t.Fatalf("RequoteGo(%q) = %q holds what msg did not", msg, out)
		}
	})
}

// TestInertGo: a library's message with raw text (the regexp package's
// expression between backquotes, a metaschema error's newlines, a control
// character outside any quote) comes out inert, each value quoted once
// in safetext's dialect, and a value the caller knows is read whole even
// where the library's quoting is ambiguous ('a\' for a\).
func TestInertGo(t *testing.T) {
	cases := []struct {
		msg   string
		known map[string]string
		want  string
	}{
		{"error parsing regexp: missing closing ): `\x1b[2J(`", nil, `error parsing regexp: missing closing ): "\u001b[2J("`},
		{"line one\nline 'x\\x1b' two", nil, `line one\u000aline "x\u001b" two`},
		{"raw \x1b and a \\ outside", nil, `raw \u001b and a \\ outside`},
		{`additional properties 'a\', 'b @o #1' not allowed`, map[string]string{`'a\'`: `a\`, `'b @o #1'`: "b @o #1"}, `additional properties "a\\", "b @o #1" not allowed`},
		// without the values, the ambiguity stays (inert still)
		{`additional properties 'a\', 'b' not allowed`, nil, `additional properties "a', "b' not allowed`},
		{"unterminated 'x\x1b", nil, `unterminated 'x\u001b`},
		{"a `b", nil, "a `b"},
		// Go's %q spans beside the library's: requoted, not escaped again
		{`invalid $schema in "mem:///s": parse "http://a/\"\x1b": bad`, nil, `invalid $schema in "mem:///s": parse "http://a/\"\u001b": bad`},
		{`'a\' and "b"`, nil, `'a\\' and "b"`},
	}
	for _, c := range cases {
		got := InertGo(c.msg, '\'', c.known)
		if got != c.want {
			t.Errorf("InertGo(%q)\n got %s\nwant %s", c.msg, got, c.want)
		}
		if Inert(got) != got {
			t.Errorf("InertGo(%q) = %q is not inert", c.msg, got)
		}
	}
}

// TestInertGoLinear: a message of quotes is read in linear time, with
// the most values the caller may know (a known value is looked for only
// at an ambiguous span).
func TestInertGoLinear(t *testing.T) {
	known := map[string]string{}
	for i := range 256 {
		v := strings.Repeat("v", i) + `\`
		known["'"+v+"'"] = v
	}
	for _, msg := range []string{strings.Repeat("'", 1<<20), strings.Repeat(`'\'`, 1<<15), strings.Repeat(`"\"`, 1<<18)} {
		start := time.Now()
		InertGo(msg, '\'', known)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%d bytes of %.4q took %v", len(msg), msg, d)
		}
	}
}

func FuzzInertGo(f *testing.F) {
	f.Add("a 'x\\x1b' `\x1b` b\n", "x")
	f.Add(`k 'a\', 'b'`, `a\`)
	f.Fuzz(func(t *testing.T, msg, value string) {
		out := InertGo(msg, '\'', map[string]string{"'" + value + "'": value})
		if Inert(out) != out {
			t.Fatalf("InertGo(%q) = %q holds an active character", msg, out)
		}
	})
}

// TestQuoteEnd: the closing quote of a span, a backslash escaping the
// byte after it.
func TestQuoteEnd(t *testing.T) {
	for _, c := range []struct {
		s    string
		q    byte
		want int
	}{
		{`"ab"c`, '"', 3},
		{`"a\"b"`, '"', 5},
		{`"a\\"b"`, '"', 4},
		{`"a\`, '"', -1},
		{`"ab`, '"', -1},
		{`'a\'b'`, '\'', 5},
	} {
		if got := QuoteEnd(c.s, 0, c.q); got != c.want {
			t.Errorf("QuoteEnd(%s) = %d, want %d", c.s, got, c.want)
		}
	}
}
