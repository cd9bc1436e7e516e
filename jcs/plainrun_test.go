package jcs

import (
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
// finds, for every byte value at every position of a word and across
// word ends, after runs of plain bytes and after other marked bytes (the
// borrows of the SWAR tests must never mark a byte below the first one).
func TestPlainRun(t *testing.T) {
	for c := range 256 {
		for pos := range 19 {
			for _, fill := range []byte{'a', ' ', '~', 0x7f, '!', '#', '[', ']'} {
				src := make([]byte, 19)
				for i := range src {
					src[i] = fill
				}
				src[pos] = byte(c)
				for start := range min(pos+1, 9) {
					if got, want := plainRun(src, start), plainRunByTable(src, start); got != want {
						t.Fatalf("byte %#x at %d (fill %q), from %d: %d, want %d", c, pos, fill, start, got, want)
					}
				}
			}
		}
	}
	// Two marked bytes: the lower one is found, whatever the upper one.
	for lo := range 256 {
		for _, hi := range []byte{0, 0x1f, '"', '\\', 0x80, 0xff} {
			for a := range 8 {
				for b := a + 1; b < 9; b++ {
					src := []byte("abcdefghijk")
					src[a], src[b] = byte(lo), hi
					if got, want := plainRun(src, 0), plainRunByTable(src, 0); got != want {
						t.Fatalf("%#x at %d, %#x at %d: %d, want %d", lo, a, hi, b, got, want)
					}
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("abc \"\\\x00\x1f\x20\x7f\x80\xc3\xa9\xff")
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
		if got, want := plainRun(src, start), plainRunByTable(src, start); got != want {
			t.Fatalf("%q from %d: %d, want %d", src, start, got, want)
		}
	}
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
