package jcs_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// vector is one conformance case. If out is non-empty the input must be
// accepted and canonicalize to exactly out; otherwise it must be rejected
// with an *jcs.Error whose Pointer is ptr, whose Offset is off and whose Msg
// contains msg.
type vector struct {
	name string
	in   string
	out  string
	ptr  string
	off  int
	msg  string
}

func vok(name, in, out string) vector { return vector{name: name, in: in, out: out} }

func vbad(name, in, ptr string, off int, msg string) vector {
	return vector{name: name, in: in, ptr: ptr, off: off, msg: msg}
}

// rfc8785Example is the RFC 8785 section 3.2.2 example input, formatted as
// in the RFC.
const rfc8785Example = `{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`

// rfc8785Sorting is the RFC 8785 section 3.2.3 sorting example.
const rfc8785Sorting = `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`

// Expected outputs below were checked against a reference canonicalizer in
// Node.js (see TestVectorsAgainstNode).
var fixedVectors = []vector{
	// RFC 8785 examples.
	vok("rfc8785/3.2.2", rfc8785Example,
		`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`),
	vok("rfc8785/3.2.2-one-line",
		`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
		`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`),
	vok("rfc8785/3.2.3-sorting", rfc8785Sorting,
		"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\","+
			"\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"),

	// Numbers: ECMAScript Number.prototype.toString.
	vok("num/0", `0`, `0`),
	vok("num/-0", `-0`, `0`),
	vok("num/-0.0", `-0.0`, `0`),
	vok("num/0.0", `0.0`, `0`),
	vok("num/-0e5", `-0e5`, `0`),
	vok("num/0E-5", `0E-5`, `0`),
	vok("num/-0-in-array", `[-0,-0.0,0]`, `[0,0,0]`),
	vok("num/1", `1`, `1`),
	vok("num/-1", `-1`, `-1`),
	vok("num/100", `100`, `100`),
	vok("num/1e2", `1e2`, `100`),
	vok("num/10.0", `10.0`, `10`),
	vok("num/1.50", `1.50`, `1.5`),
	vok("num/0.1e1", `0.1e1`, `1`),
	vok("num/123e-2", `123e-2`, `1.23`),
	vok("num/1E20", `1E20`, `100000000000000000000`),
	vok("num/1e+20", `1e+20`, `100000000000000000000`),
	vok("num/1e20-digits", `100000000000000000000`, `100000000000000000000`),
	vok("num/1e21", `1e21`, `1e+21`),
	vok("num/1e+21", `1e+21`, `1e+21`),
	vok("num/21-nines", `999999999999999999999`, `1e+21`),
	vok("num/999999999999999900000", `999999999999999900000`, `999999999999999900000`),
	vok("num/999999999999999700000", `999999999999999700000`, `999999999999999700000`),
	vok("num/123456789012345678901", `123456789012345678901`, `123456789012345680000`),
	vok("num/15-digits", `123456789012345`, `123456789012345`),
	vok("num/-15-digits", `-999999999999999`, `-999999999999999`),
	vok("num/16-digits", `1234567890123456`, `1234567890123456`),
	vok("num/17-digits", `12345678901234567`, `12345678901234568`),
	vok("num/2^53", `9007199254740992`, `9007199254740992`),
	vok("num/2^53+1", `9007199254740993`, `9007199254740992`),
	vok("num/-2^53-1", `-9007199254740993`, `-9007199254740992`),
	vok("num/2^53+2", `9007199254740994`, `9007199254740994`),
	vok("num/1e-6", `1e-6`, `0.000001`),
	vok("num/0.000001", `0.000001`, `0.000001`),
	vok("num/1e-7", `1e-7`, `1e-7`),
	vok("num/0.0000001", `0.0000001`, `1e-7`),
	vok("num/0.00000123", `0.00000123`, `0.00000123`),
	vok("num/0.000000123", `0.000000123`, `1.23e-7`),
	vok("num/9.999999999999997e-7", `9.999999999999997e-7`, `9.999999999999997e-7`),
	vok("num/5e-324", `5e-324`, `5e-324`),
	vok("num/-5e-324", `-5e-324`, `-5e-324`),
	vok("num/4.940656458412465e-324", `4.940656458412465e-324`, `5e-324`),
	vok("num/round-up-to-min-subnormal", `2.4703282292062328e-324`, `5e-324`),
	vok("num/round-down-to-zero", `2.4703282292062327e-324`, `0`),
	vok("num/1e-400", `1e-400`, `0`),
	vok("num/-1e-400", `-1e-400`, `0`),
	vok("num/min-normal", `2.2250738585072014e-308`, `2.2250738585072014e-308`),
	vok("num/max", `1.7976931348623157e+308`, `1.7976931348623157e+308`),
	vok("num/max-lower-e", `1.7976931348623157e308`, `1.7976931348623157e+308`),
	vok("num/-max", `-1.7976931348623157e308`, `-1.7976931348623157e+308`),
	vok("num/rounds-to-max", `1.7976931348623158e308`, `1.7976931348623157e+308`),
	vok("num/1.5e300", `1.5e300`, `1.5e+300`),
	vok("num/2.5e-5", `2.5e-5`, `0.000025`),
	vok("num/0.1", `0.1`, `0.1`),
	vok("num/0.2", `0.2`, `0.2`),
	vok("num/0.3", `0.3`, `0.3`),
	vok("num/0.1+0.2", `0.30000000000000004`, `0.30000000000000004`),
	vok("num/0.1-long", `0.1000000000000000055511151231257827`, `0.1`),
	vok("num/1.0000000000000001", `1.0000000000000001`, `1`),
	vok("num/1.0000000000000002", `1.0000000000000002`, `1.0000000000000002`),
	vok("num/2.675", `2.675`, `2.675`),
	vok("num/1.005", `1.005`, `1.005`),
	vok("num/0.7", `0.7`, `0.7`),
	vok("num/4.35", `4.35`, `4.35`),
	vok("num/100.00000000000001", `100.00000000000001`, `100.00000000000001`),
	vok("num/many-digits", `3.141592653589793238462643383279`, `3.141592653589793`),
	vok("num/long-zero-fraction", `1.000000000000000000000000000000000000000000000000000`, `1`),
	// RFC 8785 Appendix B values.
	vok("num/B/9.999999999999997e+22", `9.999999999999997e+22`, `9.999999999999997e+22`),
	vok("num/B/1e+23", `1e+23`, `1e+23`),
	vok("num/B/1.0000000000000001e+23", `1.0000000000000001e+23`, `1.0000000000000001e+23`),
	vok("num/B/333333333.3333332", `333333333.3333332`, `333333333.3333332`),
	vok("num/B/333333333.33333325", `333333333.33333325`, `333333333.33333325`),
	vok("num/B/333333333.33333343", `333333333.33333343`, `333333333.33333343`),
	vok("num/B/-0.0000033333333333333333", `-0.0000033333333333333333`, `-0.0000033333333333333333`),
	vok("num/B/295147905179352830000", `295147905179352830000`, `295147905179352830000`),
	vok("num/B/1424953923781206.2", `1424953923781206.2`, `1424953923781206.2`),
	vok("num/B/2^68", `2.9514790517935283e20`, `295147905179352830000`),

	// Strings.
	vok("str/empty", `""`, `""`),
	vok("str/plain", `"abc"`, `"abc"`),
	vok("str/quote-backslash", `"\"\\"`, `"\"\\"`),
	vok("str/short-escapes", `"\b\f\n\r\t"`, `"\b\f\n\r\t"`),
	vok("str/solidus", `"\/"`, `"/"`),
	vok("str/raw-solidus", `"a/b"`, `"a/b"`),
	vok("str/u-quote-backslash", `"\u0022\u005C\u005c"`, `"\"\\\\"`),
	vok("str/del", `"\u007f"`, "\"\x7f\""),
	vok("str/raw-del", "\"\x7f\"", "\"\x7f\""),
	vok("str/line-separators", `"\u2028\u2029"`, "\"\u2028\u2029\""),
	vok("str/html", `"\u003c/script\u003e\u0026"`, `"</script>&"`),
	vok("str/raw-html", `"</script>&'"`, `"</script>&'"`),
	vok("str/latin1", `"\u00e9\u00E9"`, `"éé"`),
	vok("str/raw-non-ascii", `"é€😀"`, `"é€😀"`),
	vok("str/surrogate-pair", `"\ud83d\ude00"`, `"😀"`),
	vok("str/surrogate-pair-mixed-case", `"\uD83d\udE00"`, `"😀"`),
	vok("str/max-code-point", `"\udbff\udfff"`, "\"\U0010ffff\""),
	vok("str/raw-max-code-point", "\"\xf4\x8f\xbf\xbf\"", "\"\U0010ffff\""),
	vok("str/noncharacter", `"\uffff\ufffe"`, "\"\uffff\ufffe\""),
	vok("str/bom-in-string", `"\ufeff"`, "\"\ufeff\""),
	vok("str/replacement-char", "\"\xef\xbf\xbd\"", "\"\ufffd\""),
	vok("str/nul", `"\u0000"`, `"\u0000"`),
	vok("str/escape-then-raw", `"\n é"`, `"\n é"`),
	vok("str/escaped-at-end", `"abc\n"`, `"abc\n"`),

	// Object member ordering and names.
	vok("obj/sort", `{"b":1,"a":2}`, `{"a":2,"b":1}`),
	vok("obj/sort-escaped-key", `{"\u0062":1,"a":2}`, `{"a":2,"b":1}`),
	vok("obj/prefix", `{"aa":1,"a":2,"":3}`, `{"":3,"a":2,"aa":1}`),
	vok("obj/numeric-strings", `{"9":1,"10":2,"1":3}`, `{"1":3,"10":2,"9":1}`),
	vok("obj/case", `{"a":1,"B":2,"A":3,"b":4}`, `{"A":3,"B":2,"a":1,"b":4}`),
	// é (U+00E9) and e + U+0301 are different names; 'e' (0x65) sorts first.
	vok("obj/nfc-vs-nfd", `{"é":1,"e\u0301":2}`, "{\"e\u0301\":2,\"é\":1}"),
	// U+10000 is D800 DC00 in UTF-16 and sorts before U+FFFF, although its
	// UTF-8 form (F0...) sorts after U+FFFF's (EF...).
	vok("obj/utf16-not-utf8-order", `{"\uffff":1,"\ud800\udc00":2}`, "{\"\U00010000\":2,\"\uffff\":1}"),
	vok("obj/supplementary-order", `{"\ud83d\ude01":1,"\ud83d\ude00":2,"\ud83c\udf00":3}`, `{"🌀":3,"😀":2,"😁":1}`),
	vok("obj/escaped-names", `{"\n":1,"\"":2,"\\":3,"\u0000":4}`, `{"\u0000":4,"\n":1,"\"":2,"\\":3}`),
	vok("obj/nested-sort", `{"z":{"y":1,"x":[{"b":0,"a":0}]},"a":null}`, `{"a":null,"z":{"x":[{"a":0,"b":0}],"y":1}}`),
	vok("obj/same-name-different-objects", `[{"a":1},{"a":2}]`, `[{"a":1},{"a":2}]`),
	vok("obj/same-name-different-depth", `{"a":{"a":{"a":1}}}`, `{"a":{"a":{"a":1}}}`),

	// Top-level scalars, empty containers, whitespace.
	vok("top/null", `null`, `null`),
	vok("top/true", `true`, `true`),
	vok("top/false", `false`, `false`),
	vok("top/string", `"x"`, `"x"`),
	vok("top/number", `1.5`, `1.5`),
	vok("empty/object", `{}`, `{}`),
	vok("empty/array", `[]`, `[]`),
	vok("empty/nested", `[{},[],{"a":[]},[[]]]`, `[{},[],{"a":[]},[[]]]`),
	vok("empty/with-space", "{ \n}", `{}`),
	vok("empty/array-with-space", "[\t]", `[]`),
	vok("ws/around-scalar", " \t\r\n1 \t\r\n", `1`),
	vok("ws/around-literal", "\ntrue\n", `true`),
	vok("ws/everywhere", "\t\n\r {\r\n\"a\"\t:\n[ 1 ,\t2 ] , \"b\" : { } }\n", `{"a":[1,2],"b":{}}`),
	vok("ws/none", `{"a":[1,2],"b":{}}`, `{"a":[1,2],"b":{}}`),

	// Rejections: duplicate names, at any depth, after unescaping.
	vbad("dup/top", `{"a":1,"a":2}`, "/a", 7, "duplicate member name"),
	vbad("dup/escaped", `{"a":1,"\u0061":2}`, "/a", 7, "duplicate member name"),
	vbad("dup/escaped-first", `{"\u0061":1,"a":2}`, "/a", 12, "duplicate member name"),
	vbad("dup/nested", `{"x":[{"k":1,"k":2}]}`, "/x/0/k", 13, "duplicate member name"),
	vbad("dup/non-adjacent", `{"a":1,"b":2,"c":3,"a":4}`, "/a", 19, "duplicate member name"),
	vbad("dup/pointer-escape-slash", `{"a/b":1,"a\/b":2}`, "/a~1b", 9, "duplicate member name"),
	vbad("dup/pointer-escape-tilde", `{"~":0,"\u007e":1}`, "/~0", 7, "duplicate member name"),
	vbad("dup/empty-name", `{"":0,"":1}`, "/", 6, "duplicate member name"),
	vbad("dup/surrogate-pair", `{"😀":0,"\ud83d\ude00":1}`, "/😀", 10, "duplicate member name"),
	vbad("dup/multiline", "{\n  \"a\": 1,\n  \"a\": 2\n}", "/a", 14, "duplicate member name"),

	// Rejections: surrogates.
	vbad("sur/lone-high", `"\ud800"`, "", 1, "lone high surrogate"),
	vbad("sur/lone-high-then-char", `"\ud800x"`, "", 1, "lone high surrogate"),
	vbad("sur/high-then-non-low", `"\ud800\u0041"`, "", 1, "lone high surrogate"),
	vbad("sur/high-then-high", `"\ud800\ud800"`, "", 1, "lone high surrogate"),
	vbad("sur/high-then-private-use", `"\ud800\ue000"`, "", 1, "lone high surrogate"),
	vbad("sur/high-then-ffff", `"\udbff\uffff"`, "", 1, "lone high surrogate"),
	vbad("sur/high-then-below-low", `"\udbff\udbff"`, "", 1, "lone high surrogate"),
	vbad("sur/high-then-short-escape", `"\ud800\n"`, "", 1, "lone high surrogate"),
	vbad("sur/high-then-bad-hex", `"\ud800\uzzzz"`, "", 1, "lone high surrogate"),
	vbad("sur/high-at-end", `"\ud800`, "", 1, "lone high surrogate"),
	vbad("sur/lone-low", `"\udc00"`, "", 1, "lone low surrogate"),
	vbad("sur/reversed-pair", `"\ude00\ud83d"`, "", 1, "lone low surrogate"),
	vbad("sur/low-after-text", `"ab\udfff"`, "", 3, "lone low surrogate"),
	vbad("sur/pair-then-high", `"\ud83d\ude00\ud83d"`, "", 13, "lone high surrogate"),
	vbad("sur/in-array", `["\ud83d"]`, "/0", 2, "lone high surrogate"),
	vbad("sur/in-name", `{"\udc00":1}`, "", 2, "lone low surrogate"),
	vbad("sur/in-value", `{"k":"\udc00"}`, "/k", 6, "lone low surrogate"),

	// Rejections: invalid UTF-8.
	vbad("utf8/ff", "\"\xff\"", "", 1, "invalid UTF-8"),
	vbad("utf8/fe", "\"a\xfe\"", "", 2, "invalid UTF-8"),
	vbad("utf8/overlong-nul", "\"\xc0\x80\"", "", 1, "invalid UTF-8"),
	vbad("utf8/overlong-slash", "\"\xc0\xaf\"", "", 1, "invalid UTF-8"),
	vbad("utf8/overlong-3", "\"\xe0\x80\xaf\"", "", 1, "invalid UTF-8"),
	vbad("utf8/encoded-high-surrogate", "\"\xed\xa0\x80\"", "", 1, "invalid UTF-8"),
	vbad("utf8/encoded-low-surrogate", "\"\xed\xbf\xbf\"", "", 1, "invalid UTF-8"),
	vbad("utf8/encoded-surrogate-pair", "\"\xed\xa0\xbd\xed\xb8\x80\"", "", 1, "invalid UTF-8"),
	vbad("utf8/truncated-2", "\"\xc3\"", "", 1, "invalid UTF-8"),
	vbad("utf8/truncated-3", "\"\xe2\x82\"", "", 1, "invalid UTF-8"),
	vbad("utf8/truncated-4", "\"ab\xf0\x9f\x98\"", "", 3, "invalid UTF-8"),
	vbad("utf8/truncated-at-eof", "\"\xf0\x9f\x98", "", 1, "invalid UTF-8"),
	vbad("utf8/above-max", "\"\xf4\x90\x80\x80\"", "", 1, "invalid UTF-8"),
	vbad("utf8/lone-continuation", "\"\x80\"", "", 1, "invalid UTF-8"),
	vbad("utf8/after-escape", "\"\\n\xff\"", "", 3, "invalid UTF-8"),
	vbad("utf8/in-name", "{\"\xff\":1}", "", 2, "invalid UTF-8"),
	vbad("utf8/in-nested-value", "{\"a\":[\"ok\",\"\xc0\x80\"]}", "/a/1", 12, "invalid UTF-8"),
	vbad("utf8/outside-string", "[\xff]", "/0", 1, "unexpected byte 0xff"),

	// Rejections: numbers.
	vbad("num/1e400", `1e400`, "", 0, "outside the range"),
	vbad("num/-1e400", `-1e400`, "", 0, "outside the range"),
	vbad("num/just-above-max", `1.7976931348623159e308`, "", 0, "outside the range"),
	vbad("num/400-digits", "1"+strings.Repeat("0", 400), "", 0, "outside the range"),
	vbad("num/1e400-in-array", `[1,1e400]`, "/1", 3, "outside the range"),
	vbad("num/1e999-multiline", "[\n1,\n\n  1e999]", "/1", 8, "outside the range"),
	vbad("num/NaN", `NaN`, "", 0, "NaN is not a JSON number"),
	vbad("num/nan", `nan`, "", 0, "NaN is not a JSON number"),
	vbad("num/NaN-in-object", `{"n":NaN}`, "/n", 5, "NaN is not a JSON number"),
	vbad("num/-NaN", `-NaN`, "", 1, "at least one digit"),
	vbad("num/Infinity", `Infinity`, "", 0, "Infinity is not a JSON number"),
	vbad("num/-Infinity", `-Infinity`, "", 0, "-Infinity is not a JSON number"),
	vbad("num/-Infinity-in-array", `[0,-Infinity]`, "/1", 3, "-Infinity is not a JSON number"),
	vbad("num/inf", `inf`, "", 0, "unexpected 'i'"),
	vbad("num/01", `01`, "", 0, "leading zeros"),
	vbad("num/-01", `-01`, "", 1, "leading zeros"),
	vbad("num/00", `00`, "", 0, "leading zeros"),
	vbad("num/0.0-leading", `[00.5]`, "/0", 1, "leading zeros"),
	vbad("num/+1", `+1`, "", 0, "may not start with '+'"),
	vbad("num/.5", `.5`, "", 0, "digits before '.'"),
	vbad("num/-.5", `-.5`, "", 1, "at least one digit"),
	vbad("num/1.", `1.`, "", 2, "digits after '.'"),
	vbad("num/1.e5", `1.e5`, "", 2, "digits after '.'"),
	vbad("num/1.-in-array", `[1.]`, "/0", 3, "digits after '.'"),
	vbad("num/1e", `1e`, "", 2, "digits in its exponent"),
	vbad("num/1E+", `1E+`, "", 3, "digits in its exponent"),
	vbad("num/1e-x", `[1e-x]`, "/0", 4, "digits in its exponent"),
	vbad("num/minus", `-`, "", 1, "at least one digit"),
	vbad("num/minus-space", `- 1`, "", 1, "at least one digit"),
	vbad("num/hex", `0x10`, "", 1, "trailing data"),
	vbad("num/underscore", `1_000`, "", 1, "trailing data"),
	vbad("num/comma-decimal", `[1,5.]`, "/1", 5, "digits after '.'"),

	// Rejections: trailing data.
	vbad("trail/garbage", `{}x`, "", 2, "trailing data"),
	vbad("trail/second-value", `1 2`, "", 2, "trailing data"),
	vbad("trail/second-object", `{} {}`, "", 3, "trailing data"),
	vbad("trail/extra-bracket", `[1]]`, "", 3, "trailing data"),
	vbad("trail/two-strings", `"a""b"`, "", 3, "trailing data"),
	vbad("trail/literal-suffix", `nullx`, "", 4, "trailing data"),
	vbad("trail/nul-byte", "{}\x00", "", 2, "trailing data"),
	vbad("trail/bom-at-end", "{}\xef\xbb\xbf", "", 2, "trailing data"),

	// Rejections: strings.
	vbad("str/raw-tab", "\"a\tb\"", "", 2, "raw control character"),
	vbad("str/raw-nul", "\"\x00\"", "", 1, "raw control character"),
	vbad("str/raw-newline", "\"\n\"", "", 1, "raw control character"),
	vbad("str/raw-1f", "\"\x1f\"", "", 1, "raw control character"),
	vbad("str/raw-control-after-escape", "\"\\n\x01\"", "", 3, "raw control character"),
	vbad("str/raw-control-in-name", "{\"a\rb\":1}", "", 3, "raw control character"),
	vbad("esc/x", `"\x41"`, "", 1, `invalid escape \x`),
	vbad("esc/U", `"\U0041"`, "", 1, `invalid escape \U`),
	vbad("esc/apostrophe", `"\'"`, "", 1, `invalid escape \'`),
	vbad("esc/a", `"ab\a"`, "", 3, `invalid escape \a`),
	vbad("esc/0", `"\0"`, "", 1, `invalid escape \0`),
	vbad("esc/u-short", `"\u12"`, "", 1, `invalid \u escape`),
	vbad("esc/u-bad-hex", `"\u12G4"`, "", 1, `invalid \u escape`),
	vbad("esc/u-sign", `"\u+123"`, "", 1, `invalid \u escape`),
	vbad("esc/u-at-eof", `"\u00`, "", 1, `invalid \u escape`),
	vbad("esc/in-array", `[1,"\q"]`, "/1", 4, `invalid escape \q`),

	// Rejections: unterminated input.
	vbad("eof/string", `"abc`, "", 0, "unterminated string"),
	vbad("eof/string-after-escape", `"ab\n`, "", 0, "unterminated string"),
	vbad("eof/string-backslash", `"ab\`, "", 0, "unterminated string"),
	vbad("eof/string-escaped-quote", `"ab\"`, "", 0, "unterminated string"),
	vbad("eof/string-in-array", `["abc`, "/0", 1, "unterminated string"),
	vbad("eof/quote", `"`, "", 0, "unterminated string"),
	vbad("eof/array-open", `[`, "/0", 1, "unexpected end of input, expected a value"),
	vbad("eof/array-after-value", `[1,2`, "", 4, "unexpected end of input in array"),
	vbad("eof/array-after-comma", `[1,`, "/1", 3, "unexpected end of input, expected a value"),
	vbad("eof/object-open", `{`, "", 1, "unexpected end of input in object"),
	vbad("eof/object-after-name", `{"a"`, "", 4, "unexpected end of input in object"),
	vbad("eof/object-after-colon", `{"a":`, "/a", 5, "unexpected end of input, expected a value"),
	vbad("eof/object-after-value", `{"a":1`, "", 6, "unexpected end of input in object"),
	vbad("eof/object-after-comma", `{"a":1,`, "", 7, "unexpected end of input in object"),
	vbad("eof/nested", `{"a":[{"b":[`, "/a/0/b/0", 12, "unexpected end of input, expected a value"),
	vbad("eof/literal", `tru`, "", 0, "invalid literal, expected true"),

	// Rejections: structure.
	vbad("struct/array-trailing-comma", `[1,]`, "/1", 3, "unexpected ']', expected a value"),
	vbad("struct/array-leading-comma", `[,1]`, "/0", 1, "unexpected ',', expected a value"),
	vbad("struct/array-missing-comma", `[1 2]`, "", 3, "expected ',' or ']'"),
	vbad("struct/array-closed-by-brace", `[1}`, "", 2, "expected ',' or ']'"),
	vbad("struct/array-brace", `[}`, "/0", 1, "unexpected '}', expected a value"),
	vbad("struct/object-trailing-comma", `{"a":1,}`, "", 7, "expected a member name string"),
	vbad("struct/object-leading-comma", `{,"a":1}`, "", 1, "expected a member name string"),
	vbad("struct/object-bare-name", `{a:1}`, "", 1, "expected a member name string"),
	vbad("struct/object-number-name", `{1:1}`, "", 1, "expected a member name string"),
	vbad("struct/object-single-quote", `{'a':1}`, "", 1, "expected a member name string"),
	vbad("struct/object-missing-colon", `{"a" 1}`, "", 5, "expected ':'"),
	vbad("struct/object-equals", `{"a"=1}`, "", 4, "expected ':'"),
	vbad("struct/object-missing-comma", `{"a":1 "b":2}`, "", 7, "expected ',' or '}'"),
	vbad("struct/object-closed-by-bracket", `{"a":1]`, "", 6, "expected ',' or '}'"),
	vbad("struct/object-missing-value", `{"a":}`, "/a", 5, "unexpected '}', expected a value"),
	vbad("struct/comment", `[1,/*x*/2]`, "/1", 3, "unexpected '/'"),
	vbad("struct/close-only", `]`, "", 0, "unexpected ']'"),
	vbad("lit/True", `True`, "", 0, "unexpected 'T'"),
	vbad("lit/nul", `nul`, "", 0, "invalid literal, expected null"),
	vbad("lit/fals-in-array", `[fals]`, "/0", 1, "invalid literal, expected false"),
	vbad("lit/undefined", `undefined`, "", 0, "unexpected 'u'"),

	// Rejections: empty input, whitespace, byte order mark.
	vbad("empty/input", ``, "", 0, "empty input"),
	vbad("empty/whitespace", " \t\r\n", "", 4, "only whitespace"),
	vbad("bom/object", "\xef\xbb\xbf{}", "", 0, "byte order mark"),
	vbad("bom/alone", "\xef\xbb\xbf", "", 0, "byte order mark"),
	vbad("bom/after-space", " \xef\xbb\xbf{}", "", 1, "unexpected byte 0xef"),
	vbad("ws/form-feed", "\f1", "", 0, "unexpected byte 0xc"),
	vbad("ws/vertical-tab", "\v1", "", 0, "unexpected byte 0xb"),
	vbad("ws/nbsp", "\u00a01", "", 0, "unexpected byte 0xc2"),
	vbad("ws/ideographic-space", "[\u30001]", "/0", 1, "unexpected byte 0xe3"),
}

// generatedVectors returns vectors that are easier to build in a loop.
func generatedVectors() []vector {
	var vs []vector

	// Every C0 control character, written as \u escapes in both cases, has
	// exactly one canonical form.
	short := map[byte]string{'\b': `\b`, '\t': `\t`, '\n': `\n`, '\f': `\f`, '\r': `\r`}
	var allIn, allOut strings.Builder
	for c := byte(0); c < 0x20; c++ {
		want, found := short[c]
		if !found {
			want = fmt.Sprintf(`\u%04x`, c)
		}
		lower := fmt.Sprintf(`\u%04x`, c)
		upper := fmt.Sprintf(`\u%04X`, c)
		vs = append(vs, vok("ctl/"+upper, `"`+upper+`"`, `"`+want+`"`))
		vs = append(vs, vok("ctl/name/"+lower, `{"`+lower+`":0}`, `{"`+want+`":0}`))
		allIn.WriteString(upper)
		allOut.WriteString(want)
	}
	vs = append(vs, vok("ctl/all", `"`+allIn.String()+`"`, `"`+allOut.String()+`"`))

	// Printable ASCII written as \u escapes comes out raw, except '"' and '\'.
	allIn.Reset()
	allOut.Reset()
	for c := 0x20; c < 0x80; c++ {
		fmt.Fprintf(&allIn, `\u%04X`, c)
		switch c {
		case '"':
			allOut.WriteString(`\"`)
		case '\\':
			allOut.WriteString(`\\`)
		default:
			allOut.WriteByte(byte(c))
		}
	}
	vs = append(vs, vok("ascii/escaped", `"`+allIn.String()+`"`, `"`+allOut.String()+`"`))

	// Nesting: MaxDepth levels are accepted, one more is rejected, for both
	// arrays and objects, with the pointer of the offending container.
	d := jcs.MaxDepth
	vs = append(vs,
		vok("depth/arrays-max", strings.Repeat("[", d)+strings.Repeat("]", d), strings.Repeat("[", d)+strings.Repeat("]", d)),
		vok("depth/objects-max", strings.Repeat(`{"a":`, d-1)+"{}"+strings.Repeat("}", d-1), strings.Repeat(`{"a":`, d-1)+"{}"+strings.Repeat("}", d-1)),
		vok("depth/objects-max-leaf", strings.Repeat(`{"a":`, d)+"1"+strings.Repeat("}", d), strings.Repeat(`{"a":`, d)+"1"+strings.Repeat("}", d)),
		vok("depth/mixed-max", strings.Repeat(`[{"a":`, d/2)+"null"+strings.Repeat("}]", d/2), strings.Repeat(`[{"a":`, d/2)+"null"+strings.Repeat("}]", d/2)),
		vbad("depth/arrays-over", strings.Repeat("[", d+1)+strings.Repeat("]", d+1), strings.Repeat("/0", d), d, "nesting deeper than 1000"),
		vbad("depth/objects-over", strings.Repeat(`{"a":`, d+1)+"1"+strings.Repeat("}", d+1), strings.Repeat("/a", d), 5*d, "nesting deeper than 1000"),
		vbad("depth/empty-object-over", strings.Repeat(`{"a":`, d)+"{}"+strings.Repeat("}", d), strings.Repeat("/a", d), 5*d, "nesting deeper than 1000"),
		vbad("depth/mixed-over", strings.Repeat(`[{"a":`, d/2)+"[]"+strings.Repeat("}]", d/2), strings.Repeat("/0/a", d/2), 6*(d/2), "nesting deeper than 1000"),
	)
	return vs
}

func allVectors() []vector {
	return append(append([]vector(nil), fixedVectors...), generatedVectors()...)
}

func TestVectors(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range allVectors() {
		if seen[v.name] {
			t.Errorf("duplicate vector name %q", v.name)
		}
		seen[v.name] = true
		t.Run(v.name, func(t *testing.T) {
			got, err := jcs.Canonicalize([]byte(v.in))
			if v.out != "" {
				if err != nil {
					t.Fatalf("Canonicalize(%q) failed: %v", clipStr(v.in), err)
				}
				if string(got) != v.out {
					t.Fatalf("Canonicalize(%q)\n got %q\nwant %q", clipStr(v.in), got, v.out)
				}
				again, err := jcs.Canonicalize(got)
				if err != nil || !bytes.Equal(again, got) {
					t.Fatalf("canonical form is not a fixed point: %q -> %q, %v", got, again, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Canonicalize(%q) = %q, want an error %q", clipStr(v.in), got, v.msg)
			}
			if got != nil {
				t.Errorf("Canonicalize returned output %q together with an error", got)
			}
			e := checkJCSError(t, []byte(v.in), err)
			if e.Pointer != v.ptr {
				t.Errorf("Pointer = %q, want %q (%v)", clipStr(e.Pointer), clipStr(v.ptr), clipStr(e.Msg))
			}
			if e.Offset != v.off {
				t.Errorf("Offset = %d, want %d (%v)", e.Offset, v.off, e.Msg)
			}
			if !strings.Contains(e.Msg, v.msg) {
				t.Errorf("Msg = %q, want it to contain %q", e.Msg, v.msg)
			}
			// Parse reports the same error.
			if _, perr := jcs.Parse([]byte(v.in)); perr == nil || perr.Error() != err.Error() {
				t.Errorf("Parse error %v differs from Canonicalize error %v", perr, err)
			}
		})
	}
}

// checkJCSError asserts the invariants every rejection must satisfy and returns
// the *jcs.Error.
func checkJCSError(t testing.TB, in []byte, err error) *jcs.Error {
	t.Helper()
	var e *jcs.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *jcs.Error", err, err)
	}
	if e.Offset < 0 || e.Offset > len(in) {
		t.Errorf("Offset %d outside the input (length %d)", e.Offset, len(in))
	}
	if e.Line < 1 || e.Column < 1 {
		t.Errorf("Line %d, Column %d: both must be >= 1", e.Line, e.Column)
	}
	if e.Offset >= 0 && e.Offset <= len(in) {
		line := bytes.Count(in[:e.Offset], []byte("\n")) + 1
		col := e.Offset - bytes.LastIndexByte(in[:e.Offset], '\n')
		if e.Line != line || e.Column != col {
			t.Errorf("Line:Column = %d:%d, want %d:%d for offset %d", e.Line, e.Column, line, col, e.Offset)
		}
	}
	if e.Msg == "" {
		t.Errorf("empty Msg")
	}
	if e.Pointer != "" && e.Pointer[0] != '/' {
		t.Errorf("Pointer %q is not an RFC 6901 pointer", e.Pointer)
	}
	s := e.Error()
	// Error() quotes the pointer; very long pointers (deep documents) are
	// shortened to a prefix, so for those look for the quoted prefix.
	mention := safetext.Quote(e.Pointer)
	if len(e.Pointer) > 160 {
		cut := 64
		for !utf8.RuneStart(e.Pointer[cut]) {
			cut--
		}
		mention = strings.TrimSuffix(safetext.Quote(e.Pointer[:cut]), `"`)
	}
	if !strings.Contains(s, "JSON pointer "+mention) {
		t.Errorf("Error() = %q does not mention the pointer %q", clipStr(s), clipStr(e.Pointer))
	}
	if !strings.Contains(s, e.Msg) || !strings.Contains(s, "byte "+strconv.Itoa(e.Offset)) {
		t.Errorf("Error() = %q does not mention the message and offset", clipStr(s))
	}
	if !strings.Contains(s, fmt.Sprintf("line %d, column %d", e.Line, e.Column)) {
		t.Errorf("Error() = %q does not mention line and column", clipStr(s))
	}
	return e
}

func clipStr[T string | []byte](s T) string {
	if len(s) > 80 {
		return string(s[:60]) + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return string(s)
}

// TestLocations checks Line and Column of errors on later lines.
func TestLocations(t *testing.T) {
	cases := []struct {
		in        string
		line, col int
		ptr       string
	}{
		{"{\n  \"a\": 1,\n  \"a\": 2\n}", 3, 3, "/a"},
		{"[\n1,\n\n  1e999]", 4, 3, "/1"},
		{"[\r\n  \"x\",\r\n  \"\\q\"\r\n]", 3, 4, "/1"},
		{"{\"a\":\n\n\n[tru]}", 4, 2, "/a/0"},
		{" \n \n ", 3, 2, ""},
		{"{\"a\":1}\n\n x", 3, 2, ""},
	}
	for _, c := range cases {
		_, err := jcs.Canonicalize([]byte(c.in))
		if err == nil {
			t.Errorf("%q: accepted", c.in)
			continue
		}
		e := checkJCSError(t, []byte(c.in), err)
		if e.Line != c.line || e.Column != c.col || e.Pointer != c.ptr {
			t.Errorf("%q: got %d:%d %q, want %d:%d %q (%v)", c.in, e.Line, e.Column, e.Pointer, c.line, c.col, c.ptr, e)
		}
	}
}

// TestAppendNumberAppendixB checks AppendNumber on the IEEE-754 bit patterns
// of RFC 8785 Appendix B, and that Canonicalize gives the same result for the
// Go shortest representation of each value.
func TestAppendNumberAppendixB(t *testing.T) {
	cases := []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
		// Boundaries of the fixed-point range.
		{math.Float64bits(1e21), "1e+21"},
		{math.Float64bits(1e-6), "0.000001"},
		{math.Float64bits(1e-7), "1e-7"},
		{math.Float64bits(123e-20), "1.23e-18"},
		{math.Float64bits(-1.5), "-1.5"},
		{math.Float64bits(0.5), "0.5"},
		{math.Float64bits(1e300), "1e+300"},
		{math.Float64bits(4.35), "4.35"},
	}
	for _, c := range cases {
		f := math.Float64frombits(c.bits)
		got := jcs.AppendNumber([]byte("x"), f)
		if string(got) != "x"+c.want {
			t.Errorf("AppendNumber(%#016x) = %q, want %q", c.bits, got[1:], c.want)
		}
		in := strconv.FormatFloat(f, 'g', -1, 64)
		out, err := jcs.Canonicalize([]byte(in))
		if err != nil || string(out) != c.want {
			t.Errorf("Canonicalize(%s) = %q, %v; want %q", in, out, err, c.want)
		}
	}
	// NaN and infinities are not rejected by AppendNumber (its contract
	// requires finite input) but can never come out of Parse.
	for _, in := range []string{"NaN", "Infinity", "-Infinity", "1e309", "-1e309"} {
		if _, err := jcs.Canonicalize([]byte(in)); err == nil {
			t.Errorf("Canonicalize(%s) accepted", in)
		}
	}
}

// TestCyberphone runs the test pairs of the cyberphone reference
// implementation (testdata/cyberphone, see its README) byte for byte.
func TestCyberphone(t *testing.T) {
	names := []string{"arrays", "french", "structures", "unicode", "values", "weird"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			in := readTestdata(t, "cyberphone/input/"+name+".json")
			want := readTestdata(t, "cyberphone/output/"+name+".json")
			hexText := readTestdata(t, "cyberphone/outhex/"+name+".txt")
			fromHex, err := hexBytes(string(hexText))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fromHex, want) {
				t.Fatalf("testdata inconsistent: outhex/%s.txt differs from output/%s.json", name, name)
			}
			got, err := jcs.Canonicalize(in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got  %q\nwant %q", got, want)
			}
		})
	}
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hexBytes(s string) ([]byte, error) {
	var out []byte
	for _, f := range strings.Fields(s) {
		v, err := strconv.ParseUint(f, 16, 8)
		if err != nil {
			return nil, err
		}
		out = append(out, byte(v))
	}
	return out, nil
}

// TestDeepNestingRejectedQuickly feeds 100,000 levels of nesting: it must be
// rejected at MaxDepth without exhausting the stack, well within a second.
func TestDeepNestingRejectedQuickly(t *testing.T) {
	const n = 100_000
	inputs := map[string][]byte{
		"arrays":         []byte(strings.Repeat("[", n) + strings.Repeat("]", n)),
		"objects":        []byte(strings.Repeat(`{"":`, n) + "0" + strings.Repeat("}", n)),
		"arrays-open":    []byte(strings.Repeat("[", n)),
		"objects-open":   []byte(strings.Repeat(`{"a":`, n)),
		"mixed-unclosed": []byte(strings.Repeat(`[{"x":`, n/2)),
	}
	for name, in := range inputs {
		start := time.Now()
		_, err := jcs.Canonicalize(in)
		elapsed := time.Since(start)
		if err == nil {
			t.Fatalf("%s: %d levels accepted", name, n)
		}
		e := checkJCSError(t, in, err)
		if !strings.Contains(e.Msg, "nesting deeper than") {
			t.Errorf("%s: Msg = %q, want the nesting limit", name, e.Msg)
		}
		if segs := strings.Count(e.Pointer, "/"); segs != jcs.MaxDepth {
			t.Errorf("%s: pointer has %d segments, want %d", name, segs, jcs.MaxDepth)
		}
		if elapsed > time.Second {
			t.Errorf("%s: rejecting took %v, want < 1s", name, elapsed)
		}
		t.Logf("%s: rejected in %v", name, elapsed)
	}
}

// TestManyKeys canonicalizes an object with 200,000 members given in random
// order.
func TestManyKeys(t *testing.T) {
	t.Parallel()
	const n = 200_000
	keys := make([]string, n)
	for i := range keys {
		// A mix of ASCII, BMP and supplementary names so that UTF-16
		// ordering matters; the index keeps them unique.
		switch i % 4 {
		case 0:
			keys[i] = fmt.Sprintf("k%07d", i)
		case 1:
			keys[i] = fmt.Sprintf("é%d", i)
		case 2:
			keys[i] = fmt.Sprintf("\uff21%d", i) // fullwidth A
		case 3:
			keys[i] = fmt.Sprintf("\U0001F600%d", i)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var in bytes.Buffer
	in.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			in.WriteString(", ")
		}
		fmt.Fprintf(&in, "\"%s\": %d", k, i) // keys need no escaping
	}
	in.WriteByte('}')

	start := time.Now()
	out, err := jcs.Canonicalize(in.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d members (%d bytes) canonicalized in %v", n, in.Len(), time.Since(start))

	// Reference: sort by UTF-16 code units.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	u16 := make([][]uint16, n)
	for i, k := range keys {
		u16[i] = utf16.Encode([]rune(k))
	}
	sort.Slice(idx, func(a, b int) bool { return lessUTF16(u16[idx[a]], u16[idx[b]]) })
	var want bytes.Buffer
	want.WriteByte('{')
	for j, i := range idx {
		if j > 0 {
			want.WriteByte(',')
		}
		want.WriteString(`"` + keys[i] + `"`)
		want.WriteByte(':')
		want.WriteString(strconv.Itoa(i))
	}
	want.WriteByte('}')
	if !bytes.Equal(out, want.Bytes()) {
		t.Fatalf("output differs from the UTF-16 sorted reference")
	}

	// A duplicate anywhere among them is found.
	dup := append(bytes.Clone(bytes.TrimSuffix(in.Bytes(), []byte("}"))), ",\""+keys[n/2]+"\":0}"...)
	_, err = jcs.Canonicalize(dup)
	if err == nil {
		t.Fatal("duplicate among 200,000 members not detected")
	}
	if e := checkJCSError(t, dup, err); e.Pointer != "/"+keys[n/2] || e.Offset != in.Len() {
		t.Errorf("duplicate reported at %d %q, want %d %q", e.Offset, e.Pointer, in.Len(), "/"+keys[n/2])
	}
}

func lessUTF16(a, b []uint16) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// nodeCanonicalizer is a reference RFC 8785 canonicalizer: JSON.stringify for
// primitives (ECMAScript number and string serialisation are exactly what
// RFC 8785 specifies) and Array.prototype.sort's default UTF-16 code unit
// order for member names. Input: a JSON array of base64 texts on stdin.
const nodeCanonicalizer = `
const canon = v => v === null || typeof v !== 'object' ? JSON.stringify(v)
  : Array.isArray(v) ? '[' + v.map(canon).join(',') + ']'
  : '{' + Object.keys(v).sort().map(k => JSON.stringify(k) + ':' + canon(v[k])).join(',') + '}';
const ins = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(ins.map(b => Buffer.from(canon(JSON.parse(Buffer.from(b, 'base64').toString('utf8'))), 'utf8').toString('base64'))));
`

// TestVectorsAgainstNode cross-checks the expected output of every accepted
// vector with Node.js. It only runs with MCPDRIFT_JCS_NODE=1 and node on PATH.
func TestVectorsAgainstNode(t *testing.T) {
	if os.Getenv("MCPDRIFT_JCS_NODE") != "1" {
		t.Skip("set MCPDRIFT_JCS_NODE=1 to cross-check expected outputs with node")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	var accepted []vector
	for _, v := range allVectors() {
		if v.out != "" {
			accepted = append(accepted, v)
		}
	}
	for _, name := range []string{"arrays", "french", "structures", "unicode", "values", "weird"} {
		accepted = append(accepted, vector{name: "cyberphone/" + name,
			in:  string(readTestdata(t, "cyberphone/input/"+name+".json")),
			out: string(readTestdata(t, "cyberphone/output/"+name+".json"))})
	}
	enc := make([]string, len(accepted))
	for i, v := range accepted {
		enc[i] = base64.StdEncoding.EncodeToString([]byte(v.in))
	}
	stdin, _ := json.Marshal(enc)
	cmd := exec.Command(node, "-e", nodeCanonicalizer)
	cmd.Stdin = bytes.NewReader(stdin)
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var outs []string
	if err := json.Unmarshal(stdout, &outs); err != nil || len(outs) != len(accepted) {
		t.Fatalf("node output: %v (%d results for %d inputs)", err, len(outs), len(accepted))
	}
	for i, v := range accepted {
		got, _ := base64.StdEncoding.DecodeString(outs[i])
		if string(got) != v.out {
			t.Errorf("%s: node says %q, vector says %q", v.name, got, v.out)
		}
	}
	t.Logf("node agrees on %d accepted vectors", len(accepted))
}
