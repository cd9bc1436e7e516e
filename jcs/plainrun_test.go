package jcs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf16"
)

// plainRunByTable is the byte-at-a-time scan plainRun replaces.
func plainRunByTable(src []byte, i int) int {
	for i < len(src) && !strTable[src[i]] {
		i++
	}
	return i
}

// TestPlainRun: the eight-bytes-at-a-time scan finds the byte the table
// finds (scanAgrees).
func TestPlainRun(t *testing.T) {
	scanAgrees(t, plainRun, plainRunByTable, []byte{'a', ' ', '~', 0x7f, '!', '#', '[', ']'}, 1)
}

// scanAgrees fails unless scan finds the byte ref finds: for every byte
// value at every position of a word and across word ends, after runs of
// each fill byte and after other marked bytes (the borrows of the SWAR
// tests must never mark a byte below the first one: with two marked
// bytes the lower one is found, whatever the upper one), and in random
// strings.
func scanAgrees(t *testing.T, scan, ref func([]byte, int) int, fills []byte, seed uint64) {
	t.Helper()
	for c := range 256 {
		for pos := range 19 {
			for _, fill := range fills {
				src := bytes.Repeat([]byte{fill}, 19)
				src[pos] = byte(c)
				for start := range min(pos+1, 9) {
					if got, want := scan(src, start), ref(src, start); got != want {
						t.Fatalf("byte %#x at %d (fill %#x), from %d: %d, want %d", c, pos, fill, start, got, want)
					}
				}
			}
		}
	}
	for lo := range 256 {
		for _, hi := range []byte{0, 0x1f, '"', '\\', 0x80, 0xff} {
			for a := range 8 {
				for b := a + 1; b < 9; b++ {
					src := []byte("abcdefghijk")
					src[a], src[b] = byte(lo), hi
					if got, want := scan(src, 0), ref(src, 0); got != want {
						t.Fatalf("%#x at %d, %#x at %d: %d, want %d", lo, a, hi, b, got, want)
					}
				}
			}
		}
	}
	randomStrings(seed, func(src []byte, start int) {
		if got, want := scan(src, start), ref(src, start); got != want {
			t.Fatalf("%q from %d: %d, want %d", src, start, got, want)
		}
	})
}

// randomStrings calls f with 200,000 random strings of up to 40 bytes,
// mostly letters and one in six of the bytes a scan marks or must not,
// each with a random start.
func randomStrings(seed uint64, f func(src []byte, start int)) {
	r := rand.New(rand.NewPCG(seed, 2))
	alphabet := []byte("abc \"\\\x00\x08\x1f\x20\x7f\x80\xc3\xa9\xff")
	for range 200000 {
		src := make([]byte, r.IntN(40))
		for i := range src {
			if r.IntN(6) == 0 {
				src[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				src[i] = byte('a' + r.IntN(26))
			}
		}
		start := 0
		if len(src) > 0 {
			start = r.IntN(len(src))
		}
		f(src, start)
	}
}

// escapeRunByBytes is escapeRun a byte at a time.
func escapeRunByBytes(s []byte, i int) int {
	for i < len(s) && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\' {
		i++
	}
	return i
}

// appendStringByBytes is appendString as it was written before
// escapeRun: every byte tested on its own.
func appendStringByBytes(dst, s []byte) []byte {
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"':
			dst = append(dst, '\\', '"')
		case c == '\\':
			dst = append(dst, '\\', '\\')
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = fmt.Appendf(dst, "\\u%04x", c)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// TestEscapeRun: the eight-bytes-at-a-time scan for the bytes a string
// must escape finds the byte a byte-at-a-time scan finds (scanAgrees);
// and appendString, which reads with it, writes what escaping byte by
// byte writes, for every byte value at every position and random strings.
func TestEscapeRun(t *testing.T) {
	scanAgrees(t, escapeRun, escapeRunByBytes, []byte{'a', ' ', '~', 0x7f, 0x80, 0xff, '!', '#', '[', ']'}, 5)
	for c := range 256 {
		for pos := range 19 {
			src := bytes.Repeat([]byte{'a'}, 19)
			src[pos] = byte(c)
			if got, want := AppendString(nil, string(src)), appendStringByBytes(nil, src); !bytes.Equal(got, want) {
				t.Fatalf("AppendString(%q) = %q, want %q", src, got, want)
			}
		}
	}
	randomStrings(6, func(src []byte, _ int) {
		if got, want := AppendString([]byte("x"), string(src)), appendStringByBytes([]byte("x"), src); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %q, want %q", src, got, want)
		}
	})
}

// TestCompareUTF16: member names sort by their UTF-16 code units (RFC 8785
// section 3.2.3), checked against encoding both names, for names mixing
// ASCII, two- and three-byte characters on both sides of the surrogate
// range and four-byte ones (which UTF-16 sorts below U+E000..U+FFFF).
func TestCompareUTF16(t *testing.T) {
	alphabet := []rune{'a', 'b', 'z', '~', 0x7f, 0x80, 0xe9, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfb01, 0xffff, 0x10000, 0x1f600, 0x10ffff}
	r := rand.New(rand.NewPCG(3, 4))
	sign := func(x int) int { return min(max(x, -1), 1) }
	for range 200000 {
		var ra, rb []rune
		for range r.IntN(5) {
			ra = append(ra, alphabet[r.IntN(len(alphabet))])
		}
		rb = slices.Clone(ra[:r.IntN(len(ra)+1)])
		for range r.IntN(4) {
			rb = append(rb, alphabet[r.IntN(len(alphabet))])
		}
		want := sign(slices.Compare(utf16.Encode(ra), utf16.Encode(rb)))
		if got := sign(compareUTF16([]byte(string(ra)), []byte(string(rb)))); got != want {
			t.Fatalf("%q vs %q: %d, want %d", string(ra), string(rb), got, want)
		}
	}
}
