package schemas

import (
	"strings"
	"testing"
)

// Found by the review: a library message quoting with Go's %q (double quotes: the
// net/url error inside "invalid $schema in %q: %v", "invalid regex %q at
// %q") is read by requote (InertGo with q '\”) as plain text and escaped
// again: a server's $schema with an ESC shows \\x1b (escaped twice), and
// its double quote (\" in %q) becomes \\", which ends safetext's quote
// early, so the rest of the value stands outside any quote.
func TestCompileErrorQuotedOnce(t *testing.T) {
	for s, want := range map[string]string{
		`{"$schema":"http://a/\"\u001b"}`: `"http://a/\"\u001b"`,
		`{"$ref":"#/$defs/a\"\u001b\\"}`:  `"#/$defs/a\"\u001b\\"`, // ends in a backslash: the library's 'a\'
	} {
		_, err := Compile([]byte(s))
		if err == nil {
			t.Fatal("no error")
		}
		msg := err.Error()
		if strings.Contains(msg, `\\x1b`) || strings.Contains(msg, `\\u001b`) || !strings.Contains(msg, want) {
			t.Errorf("compile error escaped twice, or the value not quoted once (%s): %s", want, msg)
		}
	}
}

// The same for a validation problem: a format checker's error quotes the
// instance with %q (net/url's parse "…"), and the server's value is shown
// escaped twice, its quote ended early.
func TestFormatErrorQuotedOnce(t *testing.T) {
	ps := problemsOf(t, `{"$schema":"http://json-schema.org/draft-07/schema#","format":"uri"}`, `"http://a\"b\u001b c/ @org/security #1"`)
	for _, p := range ps {
		if strings.Contains(p.Msg, `\\x1b`) || strings.Contains(p.Msg, `\\"`) {
			t.Errorf("escaped twice: %s", p.Msg)
		}
	}
}

// Found by the review: kindValues reads only string and []string fields, but the
// library quotes strings it holds in fields of type any and []any too
// (Enum.Want, Const.Want, Format.Got: display(v) is quote(v) for a
// string). An enum value ending in a backslash, which the library writes
// 'a\', still shifts the next value out of its quotes.
func TestEnumTrailingBackslash(t *testing.T) {
	ps := problemsOf(t, `{"enum":["a\\","b @org/security #1"]}`, `"zz"`)
	for _, p := range ps {
		t.Logf("%s", p.Msg)
		if !strings.Contains(p.Msg, `"b @org/security #1"`) {
			t.Errorf("the second enum value is not quoted: %s", p.Msg)
		}
	}
}

func TestFormatGotTrailingBackslash(t *testing.T) {
	ps := problemsOf(t, `{"$schema":"http://json-schema.org/draft-07/schema#","format":"regex"}`, `"x\u001b(\\"`)
	for _, p := range ps {
		t.Logf("%s", p.Msg)
		if strings.Contains(p.Msg, `\\x1b`) || strings.Contains(p.Msg, `\\u001b`) {
			t.Errorf("the value is escaped twice: %s", p.Msg)
		}
	}
}
