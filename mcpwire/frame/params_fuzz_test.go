package frame

import (
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// FuzzSameInteger: for any header value and integer argument, the check
// agrees with math/big's reading of the same text rounded to the nearest
// float64 (as a JSON parser reads the body) when it is a JSON number of a
// modest exponent (big.Rat is the reference; it is not asked about huge
// exponents, which cost it their size), and a value that is not a JSON
// number never agrees. A string argument's header agrees
// only as the same text.
func FuzzSameInteger(f *testing.F) {
	for _, s := range []string{"42", "42.0", "4.2e1", "+42", "042", "0x2A", "-0", "1e999999999", "420e-1", "1.0000000000000001", "", " ", "1e", "-", ".5"} {
		f.Add(s, int64(42))
	}
	f.Add("9007199254740991.4", int64(9007199254740991))
	f.Fuzz(func(t *testing.T, value string, want int64) {
		if want > 1<<53-1 || want < -(1<<53-1) {
			return
		}
		w := strconv.FormatInt(want, 10)
		got := sameInteger(value, w)
		if !jsonNumber(value) {
			if got {
				t.Fatalf("%q (not a JSON number) agrees with %s", value, w)
			}
			return
		}
		_, exp, _ := strings.Cut(strings.ToLower(value), "e")
		if e, err := strconv.Atoi(exp); exp != "" && (err != nil || e > 4096 || e < -4096) {
			return
		}
		r, ok := new(big.Rat).SetString(value)
		if !ok {
			t.Fatalf("big.Rat cannot read the JSON number %q", value)
		}
		f, _ := r.Float64()
		if ref := f == float64(want); got != ref {
			t.Fatalf("%q against %s: %v, math/big says %v", value, w, got, ref)
		}
		// A string argument's header is its text, nothing else.
		h := http.Header{"Mcp-Param-S": {value}}
		e := CheckParamHeaders(h, []ParamHeader{{Name: "Mcp-Param-S", Value: w, Text: w}}, nil)
		if (e == nil) != (strings.Trim(value, " \t") == w) {
			t.Fatalf("string %s, header %q: %v", w, value, e)
		}
	})
}
