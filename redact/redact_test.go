package redact_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
)

const token = "s3cr3t-T0KEN_value.with\"quote"

func TestEveryFormIsRedacted(t *testing.T) {
	var s redact.Set
	s.AddHeader("Authorization", "Bearer "+token)
	s.AddEscaper(func(x string) string { return strings.ReplaceAll(x, "_", `\_`) }) // a renderer's own form
	jsonForm, _ := json.Marshal(token)
	for _, text := range []string{
		"Bearer " + token,
		"echo: " + token + " end",
		safetext.Quote(token),
		string(jsonForm),
		strings.ReplaceAll(token, "_", `\_`),
		"https://x/?t=" + strings.ReplaceAll(token, `"`, "%22"),
		safetext.Clip("prefix "+token, 20), // clipped in the middle of the token
	} {
		got := s.String(text)
		if strings.Contains(got, "s3cr3t") || strings.Contains(got, "T0KEN") {
			t.Errorf("%q → %q still holds part of the secret", text, got)
		}
		if !strings.Contains(got, redact.Placeholder) {
			t.Errorf("%q → %q: no placeholder", text, got)
		}
	}
	// The scheme word itself is not a secret.
	if got := s.String("use the Bearer scheme"); got != "use the Bearer scheme" {
		t.Errorf("scheme redacted: %q", got)
	}
}

func TestBasicCredentialParts(t *testing.T) {
	var s redact.Set
	s.AddHeader("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("alice-admin:hunter2-long-pass")))
	for _, part := range []string{"alice-admin:hunter2-long-pass", "hunter2-long-pass", "alice-admin"} {
		if got := s.String("x " + part + " y"); strings.Contains(got, part) {
			t.Errorf("%s not redacted: %q", part, got)
		}
	}
}

func TestURLSecrets(t *testing.T) {
	var s redact.Set
	raw := "https://user-name:pa%24%24word-123@example.com/mcp?api_key=k3y-v4lue-1234&region=eu-west-1"
	s.AddURL(raw)
	for _, part := range []string{"pa$$word-123", "pa%24%24word-123", "k3y-v4lue-1234", "user-name"} {
		if got := s.String("[" + part + "]"); strings.Contains(got, part) {
			t.Errorf("%s not redacted: %q", part, got)
		}
	}
	got := redact.SanitizeURL(raw)
	if got != "https://example.com/mcp?api_key=&region=" {
		t.Errorf("sanitized %q", got)
	}
}

func TestShortValuesAreReported(t *testing.T) {
	var s redact.Set
	if short := s.AddHeader("X-Debug", "1"); len(short) != 1 {
		t.Errorf("short %v", short)
	}
	if !s.Empty() {
		t.Error("a one-byte value must not be recorded: it would redact every 1")
	}
	if got := s.String("version 1.0.1"); got != "version 1.0.1" {
		t.Errorf("%q", got)
	}
}

func TestFindInValueDecodes(t *testing.T) {
	var s redact.Set
	s.Add("the value of header X-Api-Key", "abcdef123456")
	doc, err := jcs.Parse([]byte(`{"name":"t","inputSchema":{"properties":{"k":{"description":"key \u0061bcdef123456"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	label, ptr := s.FindInValue(doc.Root())
	if label != "the value of header X-Api-Key" || ptr != "/inputSchema/properties/k/description" {
		t.Errorf("%q %q", label, ptr)
	}
	if strings.Contains(label, "abcdef") {
		t.Error("the label holds the value")
	}
	doc, _ = jcs.Parse([]byte(`{"name":"t"}`))
	if l, _ := s.FindInValue(doc.Root()); l != "" {
		t.Errorf("false positive %q", l)
	}
	// Percent-encoded as Go would not (a "t" as %74, "1" as %31), beside
	// a malformed escape: found; a '+' is not a space, and text with a
	// stray '%' and no secret is not.
	for src, want := range map[string]string{
		`{"d":"100% sure: ?k=%61bcdef%3123456&x=%zz"}`: "/d",
		`{"d":"%61%62%63%64%65%66%31%32%33%34%35%36"}`: "/d",
		`{"d":"abcdef+123456 at 100%"}`:                "",
		`{"d":"%61bcdef12345"}`:                        "",
	} {
		doc, err := jcs.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if _, ptr := s.FindInValue(doc.Root()); ptr != want {
			t.Errorf("%s: found at %q, want %q", src, ptr, want)
		}
	}
	// The pointer names array indexes and member names, escaped (RFC
	// 6901), and a member name that holds the secret.
	for src, want := range map[string]string{
		`{"a":[1,{"x":"no"},{"b/c":{"d~e":["", "abcdef123456"]}}]}`:  "/a/2/b~1c/d~0e/1",
		`{"a":{"k":"no"},"b":{"\u0061bcdef123456 key":1}}`:           "/b/abcdef123456 key",
		`["no",[[],["nope",{"":"xabcdef123456x"}]]]`:                 "/1/1/1/",
		`{"a":{"b":[{"c":"no"}]},"z":["abcdef12345","bcdef123456"]}`: "",
	} {
		doc, err := jcs.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if _, ptr := s.FindInValue(doc.Root()); ptr != want {
			t.Errorf("%s: found at %q, want %q", src, ptr, want)
		}
	}
	// Reading a document that holds no secret allocates the same few
	// things whatever its size (nothing per string or member).
	big := `{"tools":[` + strings.Repeat(`{"name":"n","d":{"a":["x","y",{"b":"zzzzzz"}]}},`, 500) + `{}]}`
	doc, _ = jcs.Parse([]byte(big))
	if n := testing.AllocsPerRun(20, func() { s.FindInValue(doc.Root()) }); n > 3 {
		t.Errorf("%v allocations reading a document of 3,500 strings that holds no secret", n)
	}
}

func TestNilAndEmpty(t *testing.T) {
	var s *redact.Set
	if s.String("x") != "x" || string(s.Bytes([]byte("y"))) != "y" || s.Find("z") != "" || !s.Empty() {
		t.Error("nil set must redact nothing")
	}
	var e redact.Set
	b := []byte("unchanged")
	if got := e.Bytes(b); &got[0] != &b[0] {
		t.Error("an empty set must not copy")
	}
}

func TestWriter(t *testing.T) {
	var s redact.Set
	s.Add("x", "topsecret-value")
	var buf bytes.Buffer
	w := s.Writer(&buf)
	n, err := fmt.Fprintf(w, "a topsecret-value b\n")
	if err != nil || n != len("a topsecret-value b\n") {
		t.Fatal(n, err)
	}
	if buf.String() != "a "+redact.Placeholder+" b\n" {
		t.Errorf("%q", buf.String())
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("Bearer abcdefghijkl", "xx abcdefghijkl yy")
	f.Add("Basic "+base64.StdEncoding.EncodeToString([]byte("user01:password01")), "password01…")
	f.Fuzz(func(t *testing.T, header, text string) {
		var s redact.Set
		s.AddHeader("Authorization", header)
		out := s.String(text)
		// Whatever was recorded never survives in the output.
		for _, l := range s.Labels() {
			_ = l
		}
		v := strings.TrimSpace(header)
		if len(v) >= redact.MinLen && strings.Contains(out, v) {
			t.Fatalf("%q survives in %q", v, out)
		}
	})
}

// A query key's raw bytes that are not printable ASCII (url.Parse keeps
// them) are percent-encoded in a sanitized URL, which is printed: the
// key stays recognisable and the value goes. Found by FuzzResolve.
func TestSanitizeURLPrintableKeys(t *testing.T) {
	for in, want := range map[string]string{
		"http://0?\x87":              "http://0?%87=",
		"http://h/p?a\xffb=secret&c": "http://h/p?a%FFb=&c=",
		"https://h/?tok%20en=v":      "https://h/?tok%20en=",
		"http://0/v1/traces?\\=":     "http://0/v1/traces?%5C=",
		"http://h/?a\"b<c>=v":        "http://h/?a%22b%3Cc%3E=",
		"http://0?% 000 0\xa2\xa2":   "http://0?%25%20000%200%A2%A2=", // found by FuzzURLCredentials: sanitized again, the same
	} {
		if got := redact.SanitizeURL(in); got != want {
			t.Errorf("SanitizeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzPercentDecoded: where net/url's path unescaping accepts text,
// percentDecoded reads it alike; where it refuses (a malformed escape),
// percentDecoded still decodes every well-formed escape and keeps the
// rest, never growing the text.
func FuzzPercentDecoded(f *testing.F) {
	for _, s := range []string{"", "%", "%7", "%74ok", "100%", "a%zz%41", "%E2%80%A6", "+%2B+", "%%41"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := redact.PercentDecodedForTest(s)
		if u, err := url.PathUnescape(s); err == nil && got != u {
			t.Fatalf("%q: %q, net/url %q", s, got, u)
		}
		if len(got) > len(s) {
			t.Fatalf("%q grew to %q", s, got)
		}
	})
}

// TestClippedPrefixes: a prefix of a secret cut right before "…" is
// redacted, and found in a parsed value in any spelling (the ellipsis
// escaped, an escape inside the prefix, percent-encoded), when it holds
// MinLen bytes or more past an authorization value's scheme; "Bearer…" and
// a prefix shorter than that are text like any other, in both.
func TestClippedPrefixes(t *testing.T) {
	const token = "tok_9f8e7d6c5b4a-SECRET"
	var s redact.Set
	s.AddHeader("Authorization", "Bearer "+token)
	s.Add("a password", "p4ssw0rd-long")
	for text, redacted := range map[string]bool{
		"see Bearer…":              false,
		"see Bearer …":             false,
		"see Bearer tok…":          false, // 3 bytes of the credential
		"see Bearer tok_9…":        false,
		"see Bearer tok_9f…":       true, // the credential's own 6-byte prefix
		"uses " + token[:12] + "…": true,
		"uses " + token[:5] + "…":  false,
		"p4ssw0…":                  true,
		"p4ssw…":                   false,
		"tok_9f8e7d6c":             false, // no ellipsis: not cut
	} {
		got := s.String(text)
		if redacted != (got != text) {
			t.Errorf("%q: redacted to %q, want redacted %v", text, got, redacted)
		}
		if redacted && (!strings.Contains(got, redact.Placeholder) || strings.Contains(got, "tok_9f") || strings.Contains(got, "p4ssw0")) {
			t.Errorf("%q: redacted to %q", text, got)
		}
	}
	for src, want := range map[string]string{
		`{"d":"uses tok_9f8e7d6c5b4a-SEC…"}`:      "a clipped prefix of the value of header Authorization",
		`{"d":"uses tok_9f8e7d6c5b4a-SEC\u2026"}`: "a clipped prefix of the value of header Authorization",
		`{"d":"uses tok\u005f9f8e7d…"}`:           "a clipped prefix of the value of header Authorization",
		`{"d":["x",{"k":"?a=%74ok_9f8e7d…"}]}`:    "a clipped prefix of the value of header Authorization",
		`{"d":"Bearer tok_9f8e7d…"}`:              "a clipped prefix of the value of header Authorization",
		`{"d":"p4ssw0rd…"}`:                       "a clipped prefix of a password",
		`{"d":"Authorization: Bearer…"}`:          "",
		`{"d":"Bearer tok…"}`:                     "",
		`{"d":"tok_9f8e7d and then…"}`:            "",
		`{"d":"uses tok_9f8e7d6c5b4a-SECRET"}`:    "the value of header Authorization",
	} {
		doc, err := jcs.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if label, ptr := s.FindInValue(doc.Root()); label != want || (want != "" && !strings.HasPrefix(ptr, "/d")) {
			t.Errorf("%s: found %q at %q, want %q", src, label, ptr, want)
		}
	}
}

// FuzzClippedAgrees: for plain text (letters, digits and a few marks, so
// that every escaped form of a secret is the secret itself), what the
// redaction changes in text is what FindInValue finds in it as a JSON
// string: a clipped prefix the redaction cuts is one pin refuses, and a
// text pin accepts is one the redaction leaves alone (a snapshot is never
// written redacted).
func FuzzClippedAgrees(f *testing.F) {
	f.Add("Bearer tok_9f8e7d6c5b4a", "uses tok_9f8e7d…")
	f.Add("Bearer tok_9f8e7d6c5b4a", "send Bearer…")
	f.Add("Token abc-def-ghi", "Token abc-de… and more")
	f.Add("Bearer tok_9f8e7d6c5b4a3Zq8Wm3Rt7", "get_6c5b4a3Zq8Wm3Rt7 and dG9rXzlmOGU3ZDZjNWI0YT")
	f.Add("Bearer tok_9f8e7d6c5b4a3Zq8Wm3Rt7", "746f6b5f3966386537643663356234613 and…")
	f.Add("Bearer 3f9a2b7c4d1e8f06a5b4", "uses 3F9A2B7C4D… and 4b5a60f8e1d4c7b2a9f3")
	f.Fuzz(func(t *testing.T, header, text string) {
		plain := func(s string) bool {
			for _, r := range s {
				if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' || r == ' ' || r == '…') {
					return false
				}
			}
			return true
		}
		if !plain(header) || !plain(text) || strings.Contains(header, "…") {
			return
		}
		var s redact.Set
		s.AddHeader("Authorization", header)
		doc, err := jcs.Parse([]byte(`"` + text + `"`))
		if err != nil {
			t.Fatal(err)
		}
		label, _ := s.FindInValue(doc.Root())
		if changed := s.String(text) != text; changed != (label != "") {
			t.Fatalf("header %q, text %q: redacted to %q, found %q", header, text, s.String(text), label)
		}
	})
}

// TestClippedReviewCases: what an adversarial review found. The scheme
// rule is an Authorization value's only: a secret with a space elsewhere
// (a passphrase, another header's value) is cut from 6 bytes as any other.
// A prefix in an escaped spelling before an escaped or percent-encoded
// ellipsis is cut too. And a text of many ellipses is read in one pass
// per secret.
func TestClippedReviewCases(t *testing.T) {
	var s redact.Set
	s.Add("a passphrase", "correct horse battery staple")
	s.AddHeader("X-Token", "0123456789abcdef0123 v2")
	s.AddHeader("X-Api-Key", `ak"0123456789xyz`)
	s.AddHeader("X-Other", "my secret value")
	for _, text := range []string{
		"correct hors…",
		`uses 0123456789abcdef012…`,
		`uses ak\\\"0123456789\u2026`,
		`uses my+secret+val\u2026`,
		`uses 0123456789abcdef012%E2%80%A6`,
	} {
		if got := s.String(text); got == text || !strings.Contains(got, redact.Placeholder) {
			t.Errorf("%q: redacted to %q", text, got)
		}
	}
	doc, err := jcs.Parse([]byte(`{"d":"uses 0123456789abcdef012…"}`))
	if err != nil {
		t.Fatal(err)
	}
	if label, _ := s.FindInValue(doc.Root()); label != "a clipped prefix of the value of header X-Token" {
		t.Errorf("found %q", label)
	}
	// Many ellipses, a long secret: one pass per secret.
	var long redact.Set
	long.Add("a long secret", strings.Repeat("k3y", 1400))
	text := `"` + strings.Repeat("…", 300000) + `"`
	doc, err = jcs.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if label, _ := long.FindInValue(doc.Root()); label != "" {
		t.Errorf("found %q", label)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("FindInValue over 300,000 ellipses took %v", d)
	}
	start = time.Now()
	if got := long.String(text); got != text {
		t.Error("a text of ellipses was redacted")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("String over 300,000 ellipses took %v", d)
	}
}

// TestJSONEscapedSecret: a secret spelled with JSON escapes is redacted
// in what a reader decodes, and the other bytes are kept.
func TestJSONEscapedSecret(t *testing.T) {
	var s redact.Set
	s.Add("the --header value", "tok_9f8e7d6c5b4a3210")
	for _, in := range []string{
		`{"result":{"content":[{"type":"text","text":"tok\u005f9f8e7d6c5b4a3210"}]},"id":1}`,
		`{"a":"\u0074\u006fk_9f8e7d6c5b4a3210 and more","b":"x\n"}`,
		`{"tok\u005f9f8e7d6c5b4a3210":1,"z":"plain"}`,
		`["tok_9f8e7d6c5b4a3210","\u0074ok_9f8e7d6c5b4a3210"]`,
	} {
		out := s.JSON([]byte(in))
		d, err := jcs.Parse(out)
		if err != nil {
			t.Fatalf("%s: not JSON after redaction: %s", in, out)
		}
		if strings.Contains(string(d.Root().Canonical()), "9f8e7d6c5b4a3210") || strings.Contains(string(out), "9f8e7d6c5b4a3210") {
			t.Errorf("%s: a reader still decodes the secret: %s", in, out)
		}
	}
	plain := []byte(`{"a":"caf\u00e9","b":"nothing secret"}`)
	if got := s.JSON(plain); string(got) != string(plain) {
		t.Errorf("changed bytes with no secret in them: %s", got)
	}
}

// FuzzJSON: whatever JSON text a server sends, what a reader decodes from
// Set.JSON's output holds no secret, and the output is still JSON.
func FuzzJSON(f *testing.F) {
	f.Add(`{"a":"tok\u005f9f8e7d6c5b4a3210"}`, "tok_9f8e7d6c5b4a3210")
	f.Add(`["\u0074ok_9f8e7d6c5b4a3210",{"tok_9f8e7d6c5b4a3210":1}]`, "tok_9f8e7d6c5b4a3210")
	f.Add(`{"x":"s\u0065cret-value-1"}`, "secret-value-1")
	f.Fuzz(func(t *testing.T, text, secret string) {
		if len(secret) < redact.MinLen || strings.ContainsAny(secret, "[]\\\"") || !utf8.ValidString(secret) {
			return
		}
		if _, err := jcs.Parse([]byte(text)); err != nil {
			return
		}
		var s redact.Set
		s.Add("fuzz", secret)
		out := s.JSON([]byte(text))
		d2, err := jcs.Parse(out)
		if err != nil {
			// A secret that ordinary JSON holds (digits in a number) is
			// written over as Bytes does, breaking the text: no reader
			// decodes it then, and the bytes hold no secret.
			if strings.Contains(string(out), secret) {
				t.Fatalf("the bytes still hold the secret: %q", out)
			}
			return
		}
		var walk func(v jcs.Value)
		walk = func(v jcs.Value) {
			switch v.Kind() {
			case jcs.String:
				if strings.Contains(v.Str(), secret) {
					t.Fatalf("a reader decodes the secret from %q", out)
				}
			case jcs.Array:
				for i := range v.Len() {
					walk(v.Index(i))
				}
			case jcs.Object:
				for i := range v.Len() {
					k, x := v.Member(i)
					walk(k)
					walk(x)
				}
			}
		}
		walk(d2.Root())
	})
}
