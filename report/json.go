package report

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// renderJSON writes the report as the versioned JSON contract
// (gate.ReportSchemaID): indented by two spaces, with a trailing newline.
// encoding/json's HTML escaping stays on, so the document can be embedded
// in HTML; indentJSON then escapes what encoding/json leaves raw.
func renderJSON(w io.Writer, r *gate.Report, _ Options) error {
	c := *r
	// The contract has arrays, never null, for these fields.
	if c.Findings == nil {
		c.Findings = []gate.Finding{}
	}
	if c.Inconclusive == nil {
		c.Inconclusive = []string{}
	}
	if c.Warnings == nil {
		c.Warnings = []string{}
	}
	if c.Details == nil {
		c.Details = []gate.Detail{}
	}
	return writeJSON(w, &c)
}

// WriteJSON writes v as every JSON document of mcpdrift is written
// (writeJSON): for the commands whose JSON is not a report (scan's summary,
// history's timeline).
func WriteJSON(w io.Writer, v any) error { return writeJSON(w, v) }

// writeJSON is the one JSON writer of every report format: indented by two
// spaces, HTML escaping on, invisible characters escaped, with a trailing
// newline: what a json.Encoder with SetIndent("", "  ") writes, with every
// character safetext considers unsafe written as a \uXXXX escape.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if bb, ok := w.(*bytes.Buffer); ok {
		// Indented straight into the buffer's own room, made once: not
		// into an array of its own and then through the doubling arrays
		// of a buffer grown by Write, fresh memory several times the
		// report's size.
		bb.Grow(2*len(b) + 2)
		out := indentJSON(bb.AvailableBuffer(), b)
		_, err = bb.Write(append(out, '\n'))
		return err
	}
	out := indentJSON(make([]byte, 0, 2*len(b)+1), b)
	_, err = w.Write(append(out, '\n'))
	return err
}

// indentJSON appends to dst the document src, as json.Marshal wrote it,
// indented as json.Indent(dst, src, "", "  ") indents it, with every
// character safetext considers unsafe (bidirectional controls, zero-width
// and other format characters, line and paragraph separators, DEL, C1
// controls, private-use characters and noncharacters) written as a
// \uXXXX escape (a surrogate pair above the BMP), in one pass. The
// document decodes to exactly the same values.
//
// It relies on src being Marshal's own output, which json.Indent would
// scan and validate again (most of what a large report's writing cost):
// no whitespace, C0 controls escaped, invalid UTF-8 replaced
// (an invalid byte, which Marshal never writes, becomes \ufffd, as
// Marshal would write it). Outside strings such a document is ASCII, so
// every rewritten rune is inside a string, where \uXXXX is always valid.
func indentJSON(dst, src []byte) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	for i := 0; i < len(src); {
		switch c := src[i]; c {
		case '"':
			dst = append(dst, c)
			i++
			for i < len(src) {
				// The run of bytes written as they are.
				j := i
				for j < len(src) && src[j] != '"' && src[j] != '\\' && src[j] < 0x7f {
					j++
				}
				dst = append(dst, src[i:j]...)
				if i = j; i == len(src) {
					break
				}
				c := src[i]
				if c == '"' {
					dst = append(dst, c)
					i++
					break
				}
				if c == '\\' {
					dst = append(dst, src[i:min(i+2, len(src))]...)
					i += 2
					continue
				}
				r, size := utf8.DecodeRune(src[i:])
				if (r == utf8.RuneError && size <= 1) || runeNeedsJSONEscape(r) {
					dst = appendJSONRuneEscape(dst, r)
				} else {
					dst = append(dst, src[i:i+size]...)
				}
				i += size
			}
		case '{', '[':
			dst = append(dst, c)
			i++
			if i < len(src) && (src[i] == '}' || src[i] == ']') {
				dst = append(dst, src[i]) // empty: {} and [] stay as they are
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
			i++
		case ',':
			dst = append(dst, c)
			newline()
			i++
		case ':':
			dst = append(dst, ':', ' ')
			i++
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst
}

// runeNeedsJSONEscape uses safetext's definition of an unsafe character, so
// there is one list of them in mcpdrift.
func runeNeedsJSONEscape(r rune) bool {
	if r < 0x7f {
		return false // ASCII: encoding/json has already escaped C0
	}
	return !safetext.IsSafe(string(r))
}

func appendJSONRuneEscape(out []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		out = appendU4(out, 0xd800+(r>>10))
		return appendU4(out, 0xdc00+(r&0x3ff))
	}
	return appendU4(out, r)
}

func appendU4(out []byte, r rune) []byte {
	s := strconv.FormatInt(int64(r), 16)
	out = append(out, '\\', 'u')
	for n := len(s); n < 4; n++ {
		out = append(out, '0')
	}
	return append(out, s...)
}
