package jcs_test

import (
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/jcs"
)

func numberValue(t testing.TB, text string) jcs.Value {
	t.Helper()
	d, err := jcs.Parse([]byte(text))
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return d.Root()
}

// Inexact: the canonical form denotes another number than the text.
func TestInexactBoundaries(t *testing.T) {
	ones := "1" + strings.Repeat("0", 300) // 10^300 written out: 301 digits
	cases := []struct {
		text    string
		inexact bool
		integer bool
	}{
		{"9007199254740992", false, true},  // 2^53
		{"9007199254740993", true, true},   // 2^53+1 → 9007199254740992
		{"9007199254740994", false, true},  // 2^53+2, a double
		{"9007199254740995", true, true},   // → 9007199254740996
		{"-9007199254740992", false, true}, // -2^53
		{"-9007199254740993", true, true},  // -2^53-1
		{"9007199254740993.0", true, true}, // integral, written with a fraction
		{"9007199254740993e0", true, true}, // integral, written with an exponent
		{"90071992547409930e-1", true, true},
		{"9007199254740992.0", false, true},
		{"900719925474099.2e1", false, true},
		{"12345678901234567890", true, true},    // → 12345678901234567000
		{"1152921504606846976", true, true},     // 2^60 is a double, but prints as 1152921504606847000
		{"1152921504606847000", false, true},    // its canonical text: what the digest says
		{"9223372036854775807", true, true},     // int64 max → 9223372036854776000
		{"18446744073709551615", true, true},    // uint64 max
		{"123456789012345678", true, true},      // 18 digits → 123456789012345680
		{"999999999999999", false, true},        // 15 digits, the parser's fast path
		{"9999999999999999", true, true},        // 16 digits → 10000000000000000
		{"99999999999999999999999", true, true}, // → 1e+23
		{ones, false, true},                     // canonical 1e+300 denotes 10^300 exactly
		{ones[:300], false, true},               // 10^299, 300 digits
		{ones[:300] + "1", true, true},          // 10^300 + 1 → 1e+300
		{"1e300", false, true},
		{"1E3", false, true},
		{"1e21", false, true},
		{"-0", false, true},
		{"-0.0", false, true},
		{"0e-400", false, true},
		{"1.0", false, true},
		{"0.1", false, false}, // not a double, but canonical 0.1 is the same decimal
		{"0.10000000000000000001", true, false},
		{"0.30000000000000004", false, false},
		{"1.5", false, false},
		{"1e-400", true, false}, // underflows to 0
		{"-1e-400", true, false},
		{"1e-99999999999999999999999", true, false}, // underflow, exponent beyond int64
		{"0e99999999999999999999999", false, true},
		{"5e-324", false, false},
		{"4.9406564584124654e-324", true, false}, // → 5e-324
		{"1.7976931348623157e308", false, true},
	}
	for _, c := range cases {
		name := c.text
		if len(name) > 40 {
			name = name[:20] + "…(" + strconv.Itoa(len(c.text)) + ")"
		}
		t.Run(name, func(t *testing.T) {
			v := numberValue(t, c.text)
			if got := v.Inexact(); got != c.inexact {
				t.Errorf("Inexact = %v, want %v (canonical %s)", got, c.inexact, v.Canonical())
			}
			if got := v.IsInteger(); got != c.integer {
				t.Errorf("IsInteger = %v, want %v", got, c.integer)
			}
			if got := refInexact(v); got != c.inexact {
				t.Errorf("the math/big reference says %v", got)
			}
		})
	}
	if numberValue(t, `"9007199254740993"`).Inexact() || numberValue(t, `true`).Inexact() {
		t.Error("only numbers are inexact")
	}
}

// Around the fast path's edges (15 digits, the normal range) and in the
// subnormal range, Inexact agrees with the math/big reference.
func TestInexactAgainstReference(t *testing.T) {
	for _, s := range []string{
		"1e-307", "1e-308", "9.99999999999999e-308", "2.2250738585072014e-308", "2.225073858507201e-308",
		"123456789012345e-320", "123456789012345e-330", "1.5e-310", "4.9e-324", "1e308", "9.99999999999999e307",
		"123456789012345", "1234567890123456", "12345678901234567", "0.000000000000000123456789012345",
		"9007199254740993e-5", "900719925474099.3", "90071992547409.93e2", "1e22", "1e23", "8.41e21", "5e-7", "1.2345678901234567e-7",
	} {
		v := numberValue(t, s)
		if got, want := v.Inexact(), refInexact(v); got != want {
			t.Errorf("%s: Inexact %v, reference %v (canonical %s)", s, got, want, v.Canonical())
		}
	}
}

func TestNumberKey(t *testing.T) {
	same := [][]string{
		{"1", "1.0", "1e0", "10E-1", "0.1e1", "100e-2", "1.000e+0"},
		{"0", "-0", "0.0", "-0e5", "0e-400"},
		{"9007199254740993", "9007199254740993.0", "9007199254740993e0", "90071992547409930e-1"},
		{"1e-99999999999999999999", "10e-100000000000000000000", "0.1e-99999999999999999998"},
		{"-12.5", "-125e-1", "-0.125E2"},
	}
	for _, group := range same {
		k := numberValue(t, group[0]).NumberKey()
		for _, s := range group[1:] {
			if got := numberValue(t, s).NumberKey(); got != k {
				t.Errorf("%s key %q, %s key %q: the same value", group[0], k, s, got)
			}
			if !jcs.NumbersEqual(numberValue(t, group[0]), numberValue(t, s)) {
				t.Errorf("NumbersEqual(%s, %s) = false", group[0], s)
			}
		}
	}
	differ := [][2]string{
		{"9007199254740993", "9007199254740992"},
		{"1", "-1"},
		{"1", "10"},
		{"0.1", "0.10000000000000000001"},
		{"1e-99999999999999999999", "1e-99999999999999999998"},
		{"1e-400", "0"},
	}
	for _, p := range differ {
		a, b := numberValue(t, p[0]), numberValue(t, p[1])
		if a.NumberKey() == b.NumberKey() || jcs.NumbersEqual(a, b) {
			t.Errorf("%s and %s are different numbers (keys %q %q)", p[0], p[1], a.NumberKey(), b.NumberKey())
		}
	}
	if numberValue(t, `"1"`).NumberKey() != "" || jcs.NumbersEqual(numberValue(t, `"1"`), numberValue(t, `1`)) {
		t.Error("a string is not a number")
	}
}

func TestInexactNumbersPointers(t *testing.T) {
	doc := `{"b":[1,9007199254740993,{"x/y~z":12345678901234567890}],"a":{"maximum":9007199254740993.0,"minimum":-9007199254740992,"f":0.1},"c":1e-400}`
	root := numberValue(t, doc)
	found, total := jcs.InexactNumbers(root, -1)
	var got []string
	for _, n := range found {
		got = append(got, n.Pointer+"="+string(n.Value.Raw()))
	}
	// Document order.
	want := []string{"/b/1=9007199254740993", "/b/2/x~1y~0z=12345678901234567890", "/a/maximum=9007199254740993.0", "/c=1e-400"}
	if !slices.Equal(got, want) || total != 4 {
		t.Errorf("got %v (total %d), want %v", got, total, want)
	}
	found, total = jcs.InexactNumbers(root, 2)
	if len(found) != 2 || total != 4 || found[1].Pointer != "/b/2/x~1y~0z" {
		t.Errorf("limit 2: %v total %d", found, total)
	}
	a, _ := root.Get("a")
	if found, _ := jcs.InexactNumbers(a, -1); len(found) != 1 || found[0].Pointer != "/maximum" {
		t.Errorf("pointers are relative to the value searched: %v", found)
	}
	if found, total := jcs.InexactNumbers(numberValue(t, `{"a":[1,2.5,"9007199254740993"]}`), -1); found != nil || total != 0 {
		t.Errorf("nothing inexact: %v %d", found, total)
	}
}

func TestPrecisionChanges(t *testing.T) {
	old := numberValue(t, `{"type":"integer","maximum":9007199254740993,"enum":[1,12345678901234567890],"x":{"k":0.1},"gone":9007199254740993}`)
	new := numberValue(t, `{"enum":[1.0,12345678901234567000],"maximum":9007199254740992,"type":"integer","x":{"k":0.10000000000000000001},"added":9007199254740993}`)
	found, total := jcs.PrecisionChanges(old, new, -1)
	var got []string
	for _, p := range found {
		got = append(got, p.Pointer+" "+string(p.Old.Raw())+"→"+string(p.New.Raw()))
	}
	want := []string{"/enum/1 12345678901234567890→12345678901234567000", "/maximum 9007199254740993→9007199254740992", "/x/k 0.1→0.10000000000000000001"}
	if !slices.Equal(got, want) || total != 3 {
		t.Errorf("got %v (total %d), want %v", got, total, want)
	}
	if found, total := jcs.PrecisionChanges(old, old, -1); found != nil || total != 0 {
		t.Errorf("a value against itself: %v", found)
	}
	// Equal values written differently (1 and 1.0) are no change.
	if found, _ := jcs.PrecisionChanges(numberValue(t, `[1,2e0]`), numberValue(t, `[1.0,2]`), -1); found != nil {
		t.Errorf("1 and 1.0: %v", found)
	}
}

// refInexact is the math/big reference: the text's exact rational against
// the canonical text's exact rational. Exponents beyond ±20000 are decided
// by the one thing that can happen to them when the text is shorter than
// 19000 bytes (the number underflows to 0: inexact unless it is zero; it
// cannot overflow, the parser refuses that), so the reference stays fast.
func refInexact(v jcs.Value) bool {
	raw := string(v.Raw())
	if i := strings.IndexAny(raw, "eE"); i >= 0 {
		e, err := strconv.Atoi(raw[i+1:])
		if (err != nil || e > 20000 || e < -20000) && len(raw) < 19000 {
			mant, _ := new(big.Rat).SetString(raw[:i])
			return mant.Sign() != 0
		}
	}
	a, ok1 := new(big.Rat).SetString(raw)
	b, ok2 := new(big.Rat).SetString(string(v.Canonical()))
	if !ok1 || !ok2 {
		panic("reference cannot read " + raw)
	}
	return a.Cmp(b) != 0
}

// FuzzInexactNumbers checks InexactNumbers against the math/big reference
// on every number of any accepted document: the same set, in document
// order, with pointers that lead to the number. PrecisionChanges of the
// document against its own canonical form finds exactly the same numbers.
func FuzzInexactNumbers(f *testing.F) {
	for _, s := range []string{
		`9007199254740993`, `[9007199254740992,9007199254740993,-9007199254740993]`,
		`{"maximum":9007199254740993.0,"minimum":9007199254740993e0}`,
		`[12345678901234567890,1152921504606846976,0.1,0.10000000000000000001,1e-400,5e-324]`,
		`{"a/b":{"~":[1e300,` + "1" + strings.Repeat("0", 300) + `]}}`,
		`[1e-99999999999999999999999,0e99999999999999999999,-0,1.0,1E3]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := jcs.Parse(b)
		if err != nil {
			return
		}
		type num struct {
			ptr string
			v   jcs.Value
		}
		var want []num
		var walk func(v jcs.Value, ptr string)
		walk = func(v jcs.Value, ptr string) {
			switch v.Kind() {
			case jcs.Number:
				if refInexact(v) {
					want = append(want, num{ptr, v})
				}
			case jcs.Array:
				for i := range v.Len() {
					walk(v.Index(i), ptr+"/"+strconv.Itoa(i))
				}
			case jcs.Object:
				for i := range v.Len() {
					k, val := v.Member(i)
					walk(val, ptr+"/"+strings.ReplaceAll(strings.ReplaceAll(k.Str(), "~", "~0"), "/", "~1"))
				}
			}
		}
		walk(d.Root(), "")
		slices.SortFunc(want, func(a, b num) int { return a.v.Offset() - b.v.Offset() })
		found, total := jcs.InexactNumbers(d.Root(), -1)
		if total != len(want) || len(found) != len(want) {
			t.Fatalf("found %d (total %d), reference %d", len(found), total, len(want))
		}
		for i := range want {
			if found[i].Pointer != want[i].ptr || found[i].Value.Offset() != want[i].v.Offset() {
				t.Fatalf("%d: %q at %d, reference %q at %d", i, found[i].Pointer, found[i].Value.Offset(), want[i].ptr, want[i].v.Offset())
			}
			if !found[i].Value.Inexact() {
				t.Fatal("Inexact disagrees with InexactNumbers")
			}
		}
		canon, err := jcs.Parse(d.Root().Canonical())
		if err != nil {
			t.Fatalf("canonical form does not parse: %v", err)
		}
		pairs, n := jcs.PrecisionChanges(d.Root(), canon.Root(), -1)
		if n != len(want) || len(pairs) != n {
			t.Fatalf("PrecisionChanges against the canonical form: %d, reference %d", n, len(want))
		}
		ptrs := make([]string, len(pairs))
		for i, p := range pairs {
			ptrs[i] = p.Pointer
			if string(p.Old.Canonical()) != string(p.New.Canonical()) || jcs.NumbersEqual(p.Old, p.New) {
				t.Fatalf("%s: not a precision change", p.Pointer)
			}
		}
		wantPtrs := make([]string, len(want))
		for i := range want {
			wantPtrs[i] = want[i].ptr
		}
		slices.Sort(ptrs)
		slices.Sort(wantPtrs)
		if !slices.Equal(ptrs, wantPtrs) {
			t.Fatalf("PrecisionChanges %v, reference %v", ptrs, wantPtrs)
		}
	})
}

// BenchmarkInexactNumbers scans the ~1 MB corpus document (172 tools, no
// inexact number: the common case) and the same document with an inexact
// integer in every tool. Compare with BenchmarkCanonicalSHA256 (the digest
// path, which never calls it).
func BenchmarkInexactNumbers(b *testing.B) {
	plain := corpus.Tools(172, 1)
	big := []byte(strings.ReplaceAll(string(plain), `"type":"object"`, `"type":"object","x-max":9007199254740993`))
	for _, c := range []struct {
		name string
		doc  []byte
	}{{"none", plain}, {"one-per-object", big}} {
		d, err := jcs.Parse(c.doc)
		if err != nil {
			b.Fatal(err)
		}
		_, total := jcs.InexactNumbers(d.Root(), -1)
		b.Run(c.name+"/n="+strconv.Itoa(total), func(b *testing.B) {
			b.SetBytes(int64(len(c.doc)))
			b.ReportAllocs()
			for b.Loop() {
				jcs.InexactNumbers(d.Root(), 100)
			}
		})
	}
}
