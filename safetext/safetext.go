// Package safetext is the one place where text that a server, a file or any
// other untrusted source controls is made safe to show to a person.
//
// Every renderer in mcpdrift (terminal, Markdown, SARIF messages, error
// messages) passes untrusted strings through Escape (or Quote) before they
// reach an output. Escape makes the following visible instead of active:
//
//   - C0 and C1 control characters (including ESC, so ANSI/VT escape
//     sequences cannot move the cursor, recolour, or hide text), DEL;
//   - Unicode bidirectional controls (U+061C, U+200E, U+200F, U+202A..U+202E,
//     U+2066..U+2069), the "Trojan Source" characters;
//   - zero-width and invisible formatting characters (U+200B..U+200D, U+2060..U+2064,
//     U+FEFF, U+00AD soft hyphen, U+180E, U+034F);
//   - line and paragraph separators (U+2028, U+2029) and other Unicode
//     format (Cf) characters, tag characters (U+E0000..U+E007F), and
//     private-use / unassigned noncharacters;
//   - invalid UTF-8 bytes.
//
// Escaped runes are written as \uXXXX (or \U00XXXXXX above the BMP),
// invalid bytes as \xNN, and the escape character itself as \\, so the
// output is unambiguous: two different inputs never render the same.
package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every unsafe character escaped (see the package
// documentation). Safe strings are returned unchanged without allocating.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
			i++
			continue
		}
		if r == '\\' {
			b.WriteString(`\\`)
		} else if unsafeRune(r) {
			writeRuneEscape(&b, r)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Quote escapes s and wraps it in double quotes, escaping any double quote
// inside, so the boundaries of the untrusted text are always visible.
func Quote(s string) string {
	e := Escape(s)
	if strings.IndexByte(e, '"') >= 0 {
		e = strings.ReplaceAll(e, `"`, `\"`)
	}
	return `"` + e + `"`
}

// IsSafe reports whether Escape(s) == s.
func IsSafe(s string) bool { return firstUnsafe(s) < 0 }

func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '\\' {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x00ad, r == 0x034f, r == 0x061c, r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5, r == 0x180e:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x2028 && r <= 0x202e, r >= 0x2060 && r <= 0x206f:
		return true
	case r == 0x3164, r == 0xfeff, r == 0xffa0, r >= 0xfff0 && r <= 0xfffb:
		return true
	case r >= 0xe0000 && r <= 0xe007f:
		return true
	case r >= 0xe000 && r <= 0xf8ff, r >= 0xf0000:
		return true // private use
	case r&0xfffe == 0xfffe, r >= 0xfdd0 && r <= 0xfdef:
		return true // noncharacters
	}
	return unicode.Is(unicode.Cf, r) || !unicode.IsGraphic(r) && r != ' '
}

func writeRuneEscape(b *strings.Builder, r rune) {
	if r > 0xffff {
		b.WriteString(`\U`)
		s := strconv.FormatInt(int64(r), 16)
		b.WriteString(strings.Repeat("0", 8-len(s)))
		b.WriteString(s)
		return
	}
	b.WriteString(`\u`)
	s := strconv.FormatInt(int64(r), 16)
	b.WriteString(strings.Repeat("0", 4-len(s)))
	b.WriteString(s)
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// Clip cuts s to at most n bytes on a rune boundary and marks the cut with
// an ellipsis ("…"); n <= 0 or a short s returns s unchanged. Untrusted
// text is clipped before it is quoted, so one long value cannot flood a
// message.
func Clip(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	cut := n
	// Back to the start of the rune the cut falls in: at most 3 bytes (a
	// rune is at most 4), so that a run of invalid continuation bytes is
	// cut where n says, not emptied.
	for cut > 0 && cut > n-3 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if !utf8.RuneStart(s[cut]) {
		cut = n
	}
	return s[:cut] + "…"
}

// ClipEscaped is Clip for text that is already escaped (a message composed
// with Escape and Quote): the cut never falls inside an escape sequence,
// so that no half sequence ("\u00") is shown.
func ClipEscaped(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	c := Clip(s, n)
	cut := len(c) - len("…")
	for i := 0; i < cut; i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			continue
		}
		l := 2
		switch s[i+1] {
		case 'x':
			l = 4
		case 'u':
			l = 6
		case 'U':
			l = 10
		}
		if i+l > cut {
			return s[:i] + "…"
		}
		i += l - 1
	}
	return c
}

// Inert returns a message that its producer already escaped (composed
// with Escape and Quote, as every mcpdrift error message is) unchanged,
// and escapes it when it holds an active character anyway. Escaping an
// escaped message again would double every backslash on each pass
// ("\\x1b" becomes "\\\\x1b"), which is what Inert avoids: only the
// backslash, which Escape treats as unsafe to keep its output
// unambiguous, is let through.
func Inert(s string) string {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return Escape(s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || unsafeRune(r) {
			return Escape(s)
		}
		i += size
	}
	return s
}

// Segment is a run of text an escaper produced: plain text, or one escape
// sequence (Escape true).
type Segment struct {
	Text   string
	Escape bool
}

// Segments splits text that Escape, Quote, EscapeASCII or QuoteASCII
// produced into runs of plain text and their escape sequences (\\, \xNN,
// \uXXXX, \UXXXXXXXX), so a renderer can mark each escape as one (the HTML
// report highlights them). It escapes nothing itself: give it escaped
// text only. The \" of a quote is plain text; a backslash that starts no
// escape sequence (which an escaper never writes) is an escape of its own.
func Segments(escaped string) []Segment {
	var out []Segment
	plain := 0
	for i := 0; i < len(escaped); {
		if escaped[i] != '\\' {
			i++
			continue
		}
		n := escapeLen(escaped[i:])
		if n == 0 { // \" stays plain
			i += 2
			continue
		}
		if i > plain {
			out = append(out, Segment{Text: escaped[plain:i]})
		}
		out = append(out, Segment{Text: escaped[i : i+n], Escape: true})
		i += n
		plain = i
	}
	if plain < len(escaped) {
		out = append(out, Segment{Text: escaped[plain:]})
	}
	return out
}

// escapeLen is the length of the escape sequence s starts with (s[0] is a
// backslash), 0 for \" (not an escape of a character).
func escapeLen(s string) int {
	if len(s) < 2 {
		return 1
	}
	hex := func(n int) int {
		if len(s) < 2+n {
			return 1
		}
		for _, c := range []byte(s[2 : 2+n]) {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return 1
			}
		}
		return 2 + n
	}
	switch s[1] {
	case '"':
		return 0
	case '\\':
		return 2
	case 'x':
		return hex(2)
	case 'u':
		return hex(4)
	case 'U':
		return hex(8)
	}
	return 1
}

// Shows reports whether text that Escape or Quote produced shows s to a
// reader: whether s, escaped as Escape (or Quote) writes it, occurs in
// escaped without splitting an escape sequence. A test that searches what
// was written for a secret needs it: the text "\u0010000" holds the bytes
// "0000" but shows the runes U+0010, '0', '0', '0', never "0000".
func Shows(escaped, s string) bool {
	if s == "" {
		return true
	}
	// cut[i] is true when position i splits an escape sequence (or a \"
	// of a quote).
	cut := make([]bool, len(escaped)+1)
	for i := 0; i < len(escaped); {
		if escaped[i] != '\\' {
			i++
			continue
		}
		n := escapeLen(escaped[i:])
		if n == 0 {
			n = 2
		}
		for j := i + 1; j < i+n; j++ {
			cut[j] = true
		}
		i += n
	}
	e := Escape(s)
	forms := []string{e}
	if strings.IndexByte(e, '"') >= 0 {
		forms = append(forms, strings.ReplaceAll(e, `"`, `\"`))
	}
	for _, f := range forms {
		for off := 0; off+len(f) <= len(escaped); {
			i := strings.Index(escaped[off:], f)
			if i < 0 {
				break
			}
			i += off
			if !cut[i] && !cut[i+len(f)] {
				return true
			}
			off = i + 1
		}
	}
	return false
}

// RequoteGo rewrites the spans of msg that a Go library quoted in Go's
// dialect (strconv.Quote's escapes between q and q: q '"' as %q writes
// them, or q the apostrophe with \' for a quote, as some libraries write them) as
// Quote writes them, so that a message holds one dialect: "x\x1b" reads
// "x\u001b", as everywhere else in mcpdrift's output. A span that does
// not unquote (an apostrophe of prose) stays as it is, up to and with its
// closing q. Linear in len(msg): each byte is read once.
func RequoteGo(msg string, q byte) string { return requoteGo(msg, q, false, nil) }

// InertGo is RequoteGo for a library's message that may also hold text
// raw, and Go's %q spans beside its q spans: what is not a quoted span is
// escaped (Escape: a control character,
// a newline of a message of several lines, a backslash), and a span
// between backquotes (as the regexp package shows an expression, raw) is
// quoted (Quote). Every byte of the result is then inside a quote of
// safetext's or escaped: Inert lets it through as it is. Linear in
// len(msg) (times the literals of known at a q).
//
// known maps the literals the library wrote (each a value it quoted, in
// its quoting) to their values, when the caller knows them: each is
// matched whole at a q whose span is ambiguous (holds \q), the longest
// first. A
// library whose quoting is ambiguous (one that writes the value a\ as
// 'a\', which reads as the start of a value with a quote in it) is then
// read right for the values it was given.
func InertGo(msg string, q byte, known map[string]string) string {
	return requoteGo(msg, q, true, known)
}

// QuoteEnd is the index of the quote q that closes the span s[i] opens
// (a backslash escapes the byte after it), or -1 when none does: how a
// quoted value's end is found in text Quote or Go's %q wrote.
func QuoteEnd(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j
		}
	}
	return -1
}

// longestKnown is the longest literal of known that s starts with.
func longestKnown(s string, known map[string]string) (string, bool) {
	best, ok := "", false
	for lit := range known {
		if len(lit) > len(best) && strings.HasPrefix(s, lit) {
			best, ok = lit, true
		}
	}
	return best, ok
}

func requoteGo(msg string, q byte, inert bool, known map[string]string) string {
	if !inert && strings.IndexByte(msg, q) < 0 {
		return msg
	}
	var b strings.Builder
	b.Grow(len(msg) + 8)
	plain := func(s string) {
		if inert {
			s = Escape(s)
		}
		b.WriteString(s)
	}
	// dead: a quote kind whose span ran to the end unterminated; its
	// later quotes are plain text (so that the reading stays linear).
	var dead [256]bool
	from := 0 // the start of the plain text not yet written
	for i := 0; i < len(msg); {
		c := msg[i]
		if inert && c == '`' {
			if k := strings.IndexByte(msg[i+1:], '`'); k >= 0 {
				plain(msg[from:i])
				b.WriteString(Quote(msg[i+1 : i+1+k]))
				i += k + 2
				from = i
				continue
			}
		}
		// Inert reads Go's %q spans too: a library quotes some values
		// with q and others with %q.
		if (c != q && (!inert || c != '"')) || dead[c] {
			i++
			continue
		}
		j := QuoteEnd(msg, i, c)
		span := msg[i+1:]
		if j >= 0 {
			span = msg[i+1 : j]
		}
		// A quote inside is escaped (\q): the value may end in a
		// backslash instead (the library's ambiguity).
		if c == q && strings.IndexByte(span, c) >= 0 {
			if lit, ok := longestKnown(msg[i:], known); ok {
				plain(msg[from:i])
				b.WriteString(Quote(known[lit]))
				i += len(lit)
				from = i
				continue
			}
		}
		if j < 0 {
			dead[c] = true // unterminated: plain text
			i++
			continue
		}
		lit := msg[i : j+1]
		if c != '"' {
			inner := strings.ReplaceAll(msg[i+1:j], `\`+string(c), string(c))
			lit = `"` + strings.ReplaceAll(inner, `"`, `\"`) + `"`
		}
		if u, err := strconv.Unquote(lit); err == nil {
			plain(msg[from:i])
			b.WriteString(Quote(u))
			i = j + 1
			from = i
			continue
		}
		i = j + 1 // not a quote: plain text, with its closing quote
	}
	plain(msg[from:])
	return b.String()
}
