package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// rawUnsafe reports the first character of out that safetext would escape,
// other than '\n' (and ESC when allowESC).
func rawUnsafe(out string, allowESC bool) (rune, bool) {
	for i, r := range out {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(out[i:]); size <= 1 {
				return r, true
			}
		}
		if r == '\n' || r == '\\' || (allowESC && r == 0x1b) {
			continue
		}
		if !safetext.IsSafe(string(r)) {
			return r, true
		}
	}
	return 0, false
}

func TestHostileNames(t *testing.T) {
	r := hostile()
	for _, format := range Formats() {
		for _, color := range []bool{false, true} {
			out := render(t, r, format, Options{Color: color, ArtifactURI: "a\u202eb.json"})
			if c, bad := rawUnsafe(out, color && format == "text"); bad {
				t.Errorf("%s (color %v): raw unsafe character %U in output", format, color, c)
			}
			if strings.Contains(out, "name\nline2") || strings.Contains(out, "changed\nbut") {
				t.Errorf("%s: an untrusted newline reached the output", format)
			}
			// Injections of each medium.
			var banned []string
			switch format {
			case "markdown":
				// Everything: table breaks, links, HTML, mentions.
				banned = hostileParts
				banned = append(banned, "<b>", "|x|", "http://", "@")
			case "json", "sarif":
				// JSON strings may hold "| col |" or "@everyone" as
				// data; HTML stays escaped.
				banned = []string{"<img", "<b>"}
				if format == "sarif" {
					// SARIF viewers resolve "[text](target)" links in
					// plain-text messages.
					banned = append(banned, "[x](http://evil)")
				}
			}
			for _, s := range banned {
				if strings.Contains(out, s) {
					t.Errorf("%s: raw %q in output:\n%s", format, s, out)
				}
			}
			if format == "text" && !color && strings.ContainsRune(out, 0x1b) {
				t.Errorf("text without colour holds ESC")
			}
		}
	}
}

// Every hostile piece, alone as a tool name, in every format.
func TestHostilePartsAlone(t *testing.T) {
	for _, part := range append(hostileParts, "\u2028", "\u2066", "\ufeff", "\x00", "\x7f", "\x9b", "\xff", "\U000E0041") {
		r := granularFindings()
		r.Findings[0].Name = part
		r.Details[0].Name = part
		for _, format := range Formats() {
			out := render(t, r, format, Options{})
			if c, bad := rawUnsafe(out, false); bad {
				t.Errorf("%s, name %q: raw %U", format, part, c)
			}
			if format == "markdown" && strings.Contains(out, part) {
				t.Errorf("markdown: raw %q", part)
			}
		}
	}
}

// The JSON and SARIF documents stay valid and decode to the original text.
func TestHostileJSONDecodes(t *testing.T) {
	r := hostile()
	var back gate.Report
	if err := json.Unmarshal([]byte(render(t, r, "json", Options{})), &back); err != nil {
		t.Fatal(err)
	}
	if back.Findings[0].Name != hostileName || back.ServerID != r.ServerID || back.Findings[1].Name != r.Findings[1].Name {
		t.Errorf("names do not round-trip: %q %q", back.Findings[0].Name, back.ServerID)
	}
	if !json.Valid([]byte(render(t, r, "sarif", Options{}))) {
		t.Error("SARIF is not valid JSON")
	}
}

func TestJSONEscapeInvisible(t *testing.T) {
	in := "a\u202eb\u200bc\u2028d\u2029e\ufefff\U000E0041g\x7fh\u00adi\u061cj\ue000k é 日本 \U0001F600"
	var buf bytes.Buffer
	if err := writeJSON(&buf, map[string]string{"k": in}); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	for _, want := range []string{`\u202e`, `\u200b`, `\u2028`, `\u2029`, `\ufeff`, `\udb40\udc41`, `\u007f`, `\u00ad`, `\u061c`, `\ue000`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("%s not escaped in %s", want, out)
		}
	}
	for _, keep := range []string{"é", "日本", "\U0001F600"} {
		if !strings.Contains(string(out), keep) {
			t.Errorf("visible %q was escaped: %s", keep, out)
		}
	}
	if c, bad := rawUnsafe(string(out), false); bad {
		t.Errorf("raw %U left", c)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back["k"] != in {
		t.Errorf("round trip: %q, want %q", back["k"], in)
	}
	// An invalid byte, which Marshal never writes, becomes \ufffd.
	if got := string(indentJSON(nil, []byte("[\"a\xffb\"]"))); got != "[\n  \"a\\ufffdb\"\n]" {
		t.Errorf("invalid byte: %q", got)
	}
}

// referenceIndent is what writeJSON wrote before indentJSON, the oracle of
// its tests: json.Indent, then every unsafe rune escaped.
func referenceIndent(t testing.TB, src []byte) []byte {
	var buf bytes.Buffer
	if err := json.Indent(&buf, src, "", "  "); err != nil {
		t.Fatalf("json.Indent: %v", err)
	}
	b := buf.Bytes()
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf && c != 0x7f {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && size <= 1) || runeNeedsJSONEscape(r) {
			out = appendJSONRuneEscape(out, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// TestIndentJSONAgrees: indentJSON writes, byte for byte, what json.Indent
// and then the escaping of unsafe runes write, over every report of the
// test data and documents built to hit its cases (empty objects and
// arrays, nesting, escapes next to quotes and ends, unsafe runes at every
// position of a string).
func TestIndentJSONAgrees(t *testing.T) {
	docs := []string{
		`{}`, `[]`, `""`, `0`, `null`, `[{}]`, `{"a":[]}`, `[[],{},[{}]]`, `{"a":{"b":{"c":[1,2,{"d":null}]}}}`,
		`["\\"]`, `["\""]`, `["a\\\"b"]`, `["\\\\"]`, `{"\"":"\\"}`, `["\u2028"]`, `[-1.5e+10,true,false]`,
		"[\"\u202e\"]", "[\"x\u202e\"]", "[\"\u202ex\"]", "{\"\u200b\":\"\U000E0041\x7f\"}", "[\"é日本\U0001F600\"]",
		"[\"\xff\"]", "[\"\xe2\x80\"]", "[\"a\\\"\xef\xbf\xbe\"]",
	}
	for _, d := range docs {
		if got, want := indentJSON(nil, []byte(d)), referenceIndent(t, []byte(d)); !bytes.Equal(got, want) {
			t.Errorf("%q:\n got %q\nwant %q", d, got, want)
		}
	}
	// Every report the package's tests render goes through writeJSON;
	// a large marshalled value too.
	type entry struct {
		Name string         `json:"name"`
		Tags []string       `json:"tags"`
		M    map[string]any `json:"m"`
	}
	var big []entry
	for i := range 2000 {
		big = append(big, entry{Name: fmt.Sprintf("tool_%d\u202e<&>", i), Tags: []string{}, M: map[string]any{"a": []any{i, "b\"", map[string]any{}}}})
	}
	src, err := json.Marshal(big)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := indentJSON(nil, src), referenceIndent(t, src); !bytes.Equal(got, want) {
		t.Error("a large document differs")
	}
	// writeJSON into a bytes.Buffer (indented in its own room) writes
	// what it writes to any other writer, after what the buffer held.
	var plain strings.Builder
	if err := writeJSON(&plain, big); err != nil {
		t.Fatal(err)
	}
	for _, held := range []string{"", "before\n", strings.Repeat("x", 70000)} {
		buf := bytes.NewBufferString(held)
		if err := writeJSON(buf, big); err != nil {
			t.Fatal(err)
		}
		if buf.String() != held+plain.String() {
			t.Errorf("writeJSON into a buffer holding %d bytes differs from writeJSON elsewhere", len(held))
		}
	}
}

func FuzzIndentJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c\u202e\\\""}],"d":{}}`))
	f.Add([]byte("[\"\xff\u2028\U000E0041\"]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			t.Fatal(err)
		}
		src := compact.Bytes()
		if got, want := indentJSON(nil, src), referenceIndent(t, src); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %q\nwant %q", src, got, want)
		}
	})
}

func stripANSI(s string) string {
	for _, c := range ansiCodes {
		s = strings.ReplaceAll(s, c, "")
	}
	return s
}

func TestTextColor(t *testing.T) {
	for _, fx := range allFixtures {
		plain := render(t, fx.r(), "text", Options{})
		if strings.ContainsRune(plain, 0x1b) {
			t.Errorf("%s: ESC in text without colour", fx.name)
		}
		colored := render(t, fx.r(), "text", Options{Color: true})
		if !strings.ContainsRune(colored, 0x1b) {
			t.Errorf("%s: no colour with Color set", fx.name)
		}
		// ESC appears only as our SGR sequences: removing them leaves
		// the plain rendering, with no ESC at all.
		if got := stripANSI(colored); got != plain {
			t.Errorf("%s: coloured text minus colour codes differs from plain text:\n%s\n---\n%s", fx.name, got, plain)
		}
		n := 0
		for _, c := range ansiCodes {
			n += strings.Count(colored, c)
		}
		if n != strings.Count(colored, "\x1b") {
			t.Errorf("%s: ESC outside our colour codes", fx.name)
		}
	}
	// Verdict colours.
	for _, tc := range []struct {
		r    *gate.Report
		code string
	}{
		{granularFindings(), ansiRed + "REVIEW REQUIRED"},
		{granularInconclusive(), ansiYellow + "INCONCLUSIVE"},
		{coarseCoverageWarning(), ansiYellow + "PASS WITH WARNINGS"},
		{coarseClean(), ansiGreen + "PASS"},
	} {
		if out := render(t, tc.r, "text", Options{Color: true}); !strings.HasPrefix(out, "mcpdrift gate: "+tc.code+ansiReset) {
			t.Errorf("verdict %s not coloured %q:\n%s", tc.r.Verdict, tc.code, out)
		}
	}
}

func TestMDEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain_name":         `plain\_name`,
		"a|b":                `a\|b`,
		"[x](http://evil)":   `\[x\](http&#58;//evil)`,
		"<img src=x>":        `&lt;img src=x&gt;`,
		"@everyone":          `&#64;everyone`,
		"a\nb":               `a\\u000ab`,
		"x\u202ey":           `x\\u202ey`,
		"`code` *b* ~s~ #1!": "\\`code\\` \\*b\\* \\~s\\~ \\#1\\!",
		`back\slash`:         `back\\\\slash`,
		"a&amp;b":            `a&amp;amp;b`,
		"www.evil.com":       `www\.evil\.com`,
		"$x$":                `\$x\$`,
	} {
		if got := mdEscape(in); got != want {
			t.Errorf("mdEscape(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every Markdown table row keeps its header's cell count whatever the
// names are.
func TestMarkdownTableIntact(t *testing.T) {
	for _, fx := range allFixtures {
		checkMarkdownTables(t, fx.name, render(t, fx.r(), "markdown", Options{}))
	}
}

func checkMarkdownTables(t testing.TB, name, out string) {
	t.Helper()
	want := -1 // separators in the current table's header; -1 outside tables
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			want = -1
			continue
		}
		got := unescapedPipes(line)
		if want < 0 {
			want = got
			continue
		}
		if got != want {
			t.Errorf("%s: table row has %d cell separators, header %d: %q", name, got, want, line)
		}
	}
}

// unescapedPipes counts the | that GFM treats as cell separators.
func unescapedPipes(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

// No line of text output is longer than its content needs: control
// characters never hide or rewrite anything.
func TestTextOnlyPrintable(t *testing.T) {
	out := render(t, hostile(), "text", Options{})
	for _, r := range out {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			t.Fatalf("control or format character %U in text output", r)
		}
	}
}

// A composed message's quoted values (a server's names and error text)
// are shown in Markdown inside code elements, where GitHub makes no
// mention and no issue reference of "@org/security" or "#1"; what is
// outside them is mcpdrift's own words.
func TestMarkdownMessageMentions(t *testing.T) {
	for in, want := range map[string]string{
		`cannot observe "https://h/mcp": the server said "ping @org/security #1"`: `cannot observe <code>&quot;https&#58;//h/mcp&quot;</code>&#58; the server said <code>&quot;ping &#64;org/security \#1&quot;</code>`,
		`tool "a\"b" and "c\\"`: `tool <code>&quot;a\\&quot;b&quot;</code> and <code>&quot;c\\\\&quot;</code>`,
		`a lone " stays`:        `a lone &quot; stays`,
		"no quotes @ all":       "no quotes &#64; all",
	} {
		if got := mdMsg(in); got != want {
			t.Errorf("mdMsg(%s)\n = %s\nwant %s", in, got, want)
		}
	}
	// Whatever the message, no @ or # is left outside a code element.
	for _, in := range []string{safetext.Quote("@a #1") + " @ " + safetext.Quote(`x"@y`), `"unterminated @x`, `a "b" #c "d`} {
		out := mdMsg(in)
		outside := out
		for {
			i := strings.Index(outside, "<code>")
			if i < 0 {
				break
			}
			j := strings.Index(outside[i:], "</code>")
			outside = outside[:i] + outside[i+j+len("</code>"):]
		}
		// the entities and the escaped \# are mdInert's; a bare @ or #
		// outside code would be GitHub's to link
		if strings.ContainsAny(strings.NewReplacer("&#64;", "", "&#58;", "", `\#`, "").Replace(outside), "@#") {
			t.Errorf("mdMsg(%s) = %s", in, out)
		}
	}
}
