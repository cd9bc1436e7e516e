package jcs_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// The ES6 number serialisation test stream of the cyberphone RFC 8785
// reference implementation (testdata/README.md of
// github.com/cyberphone/json-canonicalization). The stream is a sequence of
// lines "hex,expected\n" where hex is the IEEE-754 bit pattern of a double in
// lower-case hexadecimal without leading zeros and expected is its
// ECMAScript Number.prototype.toString form. The values are, in order:
//
//  1. 168 static edge cases (testdata/cyberphone/numgen_static.txt);
//  2. 2000 consecutive bit patterns starting at 0x0010000000000000, the
//     smallest normal double;
//  3. then, forever: a 32-byte block, initially all zero, is replaced by
//     its SHA-256 digest whenever it is used up; each digest yields four
//     doubles read as little-endian 64-bit words, and words that are +-0,
//     NaN or +-Inf are skipped. So the stream never contains NaN or
//     infinities (the static part has none either) and -0/0 appear only
//     among the static values.
//
// The README publishes the SHA-256 of the stream's first N lines:
var numgenCheckpoints = []struct {
	lines int
	size  int64
	sha   string
}{
	{1000, 37967, "be18b62b6f69cdab33a7e0dae0d9cfa869fda80ddc712221570f9f40a5878687"},
	{10000, 399022, "b9f7a8e75ef22a835685a52ccba7f7d6bdc99e34b010992cbc5864cd12be6892"},
	{100000, 4031728, "22776e6d4b49fa294a0d0f349268e5c28808fe7e0cb2bcbe28f63894e494d4c7"},
	{1000000, 40357417, "49415fee2c56c77864931bd3624faad425c3c577d6d74e89a83bc725506dad16"},
	{10000000, 403630048, "b9f8a44a91d46813b21b9602e72f112613c91408db0b8341fb94603d9db135e0"},
	{100000000, 4036326174, "0f7dda6b0837dde083c5d6b896f7d62340c8a2415b0c7121d83145e08a755272"},
}

// numStream produces the values of the test stream.
type numStream struct {
	static []uint64
	n      int      // values produced so far
	block  [32]byte // current SHA-256 block (starts all zero)
	rest   []byte   // unused part of block
}

const numgenSerial = 2000

func newNumStream(t testing.TB) *numStream {
	t.Helper()
	s := &numStream{}
	for _, f := range strings.Fields(string(readTestdata(t, "cyberphone/numgen_static.txt"))) {
		v, err := strconv.ParseUint(f, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		s.static = append(s.static, v)
	}
	if len(s.static) != 168 {
		t.Fatalf("numgen_static.txt has %d values, want 168", len(s.static))
	}
	return s
}

func (s *numStream) next() uint64 {
	defer func() { s.n++ }()
	if s.n < len(s.static) {
		return s.static[s.n]
	}
	if i := s.n - len(s.static); i < numgenSerial {
		return 0x0010000000000000 + uint64(i)
	}
	for {
		if len(s.rest) == 0 {
			s.block = sha256.Sum256(s.block[:])
			s.rest = s.block[:]
		}
		bits := binary.LittleEndian.Uint64(s.rest)
		s.rest = s.rest[8:]
		// Skip +-0 and the all-ones exponent (NaN, +-Inf).
		if bits&^(1<<63) != 0 && bits&0x7ff0000000000000 != 0x7ff0000000000000 {
			return bits
		}
	}
}

// numgenHasher hashes stream lines and checks the published checkpoints.
type numgenHasher struct {
	t     testing.TB
	what  string
	h     hash.Hash
	lines int
	size  int64
	next  int // index into numgenCheckpoints
	line  []byte
}

func newNumgenHasher(t testing.TB, what string) *numgenHasher {
	return &numgenHasher{t: t, what: what, h: sha256.New()}
}

func (nh *numgenHasher) add(bits uint64, text []byte) {
	nh.line = strconv.AppendUint(nh.line[:0], bits, 16)
	nh.line = append(nh.line, ',')
	nh.line = append(nh.line, text...)
	nh.line = append(nh.line, '\n')
	nh.h.Write(nh.line)
	nh.size += int64(len(nh.line))
	nh.lines++
	if nh.next < len(numgenCheckpoints) && numgenCheckpoints[nh.next].lines == nh.lines {
		c := numgenCheckpoints[nh.next]
		nh.next++
		got := hex.EncodeToString(nh.h.Sum(nil))
		if got != c.sha || nh.size != c.size {
			nh.t.Errorf("%s: after %d lines: sha256 %s, %d bytes; published %s, %d bytes",
				nh.what, c.lines, got, nh.size, c.sha, c.size)
		} else {
			nh.t.Logf("%s: %d lines: sha256 %s (%d bytes) matches", nh.what, c.lines, got, nh.size)
		}
	}
}

// TestNumgen canonicalizes the first million values of the stream as JSON
// arrays of 1000 numbers each, written with
// strconv.FormatFloat(f, 'g', -1, 64), and hashes "hex,element\n" for every
// element of the canonical arrays. For the first 100,000 values it also
// hashes jcs.AppendNumber's output directly and compares it element by
// element with Canonicalize's and with an independent formatter.
//
// Stream length: 1,000,000 values by default; 100,000 with -short;
// 10,000,000 with MCPDRIFT_NUMGEN_10M=1 and 100,000,000 with
// MCPDRIFT_NUMGEN_100M=1, both ignored under -short:
//
//	MCPDRIFT_NUMGEN_10M=1 go test -run TestNumgen ./jcs/
func TestNumgen(t *testing.T) {
	t.Parallel()
	total := 1_000_000
	switch {
	case testing.Short():
		total = 100_000
	case os.Getenv("MCPDRIFT_NUMGEN_100M") == "1":
		total = 100_000_000
	case os.Getenv("MCPDRIFT_NUMGEN_10M") == "1":
		total = 10_000_000
	}
	const direct = 100_000
	const batch = 1000

	start := time.Now()
	s := newNumStream(t)
	viaCanon := newNumgenHasher(t, "Canonicalize")
	viaAppend := newNumgenHasher(t, "AppendNumber")
	var (
		in       []byte
		bitsBuf  = make([]uint64, batch)
		num, ref []byte
	)
	for done := 0; done < total; done += batch {
		in = append(in[:0], '[')
		for i := range batch {
			bits := s.next()
			bitsBuf[i] = bits
			f := math.Float64frombits(bits)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				t.Fatalf("value %d (%x) is not finite", done+i+1, bits)
			}
			if i > 0 {
				in = append(in, ',')
			}
			in = strconv.AppendFloat(in, f, 'g', -1, 64)
		}
		in = append(in, ']')
		out, err := jcs.Canonicalize(in)
		if err != nil {
			t.Fatalf("batch at %d: %v", done, err)
		}
		if len(out) < 2 || out[0] != '[' || out[len(out)-1] != ']' {
			t.Fatalf("batch at %d: output is not an array: %.80q", done, out)
		}
		body := out[1 : len(out)-1]
		for i := range batch {
			elem := body
			if j := bytes.IndexByte(body, ','); j >= 0 {
				elem, body = body[:j], body[j+1:]
			} else {
				body = nil
			}
			if len(elem) == 0 {
				t.Fatalf("batch at %d: too few elements in %.80q", done, out)
			}
			viaCanon.add(bitsBuf[i], elem)
			if done+i < direct {
				f := math.Float64frombits(bitsBuf[i])
				num = jcs.AppendNumber(num[:0], f)
				viaAppend.add(bitsBuf[i], num)
				ref = es6Reference(ref[:0], f)
				if !bytes.Equal(num, elem) || !bytes.Equal(num, ref) {
					t.Fatalf("value %d (%x): AppendNumber %q, Canonicalize %q, reference %q",
						done+i+1, bitsBuf[i], num, elem, ref)
				}
			}
		}
		if body != nil {
			t.Fatalf("batch at %d: too many elements", done)
		}
	}
	if viaCanon.lines != total {
		t.Fatalf("hashed %d lines, want %d", viaCanon.lines, total)
	}
	checked := 0
	for _, c := range numgenCheckpoints {
		if c.lines <= total {
			checked++
		}
	}
	if viaCanon.next != checked {
		t.Errorf("checked %d checkpoints, want %d", viaCanon.next, checked)
	}
	t.Logf("%d values in %v", total, time.Since(start))
}

// es6Reference formats f as Number.prototype.toString by a different route
// from jcs.AppendNumber: Go's shortest 'f' or 'e' formatting, chosen by
// magnitude, with the exponent's leading zero removed.
func es6Reference(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
	return append(dst, mant+"e"+sign+digits...)
}

// TestNumgenStreamStart checks the generator against lines of the published
// stream quoted in the cyberphone README and against its stated structure.
func TestNumgenStreamStart(t *testing.T) {
	s := newNumStream(t)
	var first []uint64
	for range 168 + numgenSerial + 8 {
		first = append(first, s.next())
	}
	if first[0] != 0 || first[1] != 0x8000000000000000 || first[167] != 0x43143ff3c1cb0959 {
		t.Errorf("static values out of order: %x %x ... %x", first[0], first[1], first[167])
	}
	if first[168] != 0x0010000000000000 || first[168+numgenSerial-1] != 0x0010000000000000+numgenSerial-1 {
		t.Errorf("serial values wrong: %x ... %x", first[168], first[168+numgenSerial-1])
	}
	d := sha256.Sum256(make([]byte, 32))
	if want := binary.LittleEndian.Uint64(d[:8]); first[168+numgenSerial] != want {
		t.Errorf("first random value %x, want %x", first[168+numgenSerial], want)
	}
	// Sample lines from the README.
	for _, line := range []string{
		"4340000000000001,9007199254740994",
		"4340000000000002,9007199254740996",
		"444b1ae4d6e2ef50,1e+21",
		"3eb0c6f7a0b5ed8d,0.000001",
		"3eb0c6f7a0b5ed8c,9.999999999999997e-7",
		"8000000000000000,0",
		"0,0",
	} {
		h, want, _ := strings.Cut(line, ",")
		bits, _ := strconv.ParseUint(h, 16, 64)
		if got := jcs.AppendNumber(nil, math.Float64frombits(bits)); string(got) != want {
			t.Errorf("%s: AppendNumber = %s, want %s", h, got, want)
		}
	}
}
