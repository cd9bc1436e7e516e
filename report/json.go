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
// in HTML; jsonEscapeInvisible then escapes what encoding/json leaves raw.
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

// writeJSON is the one JSON writer of every report format: indented by two
// spaces, HTML escaping on, invisible characters escaped.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(jsonEscapeInvisible(buf.Bytes()))
	return err
}

// jsonEscapeInvisible rewrites a JSON document produced by encoding/json so
// that no character safetext considers unsafe appears raw: bidirectional
// controls (U+202E ...), zero-width and other format characters, line and
// paragraph separators, DEL, C1 controls, private-use characters and
// noncharacters become \uXXXX escapes (surrogate pairs above the BMP). The
// document decodes to exactly the same values.
//
// It relies on encoding/json having escaped C0 controls and replaced
// invalid UTF-8: outside strings a JSON document is ASCII, so every
// rewritten rune is inside a string, where \uXXXX is always valid.
func jsonEscapeInvisible(b []byte) []byte {
	i := firstInvisible(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf && c != 0x7f {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && size <= 1) || runeNeedsJSONEscape(r) {
			// An invalid byte (never produced by encoding/json) becomes
			// \ufffd, as encoding/json itself would write it.
			out = appendJSONRuneEscape(out, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

func firstInvisible(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && size <= 1) || runeNeedsJSONEscape(r) {
			return i
		}
		i += size
	}
	return -1
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
