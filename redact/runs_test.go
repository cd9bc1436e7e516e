package redact_test

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// bearer is a random-looking credential (base62 and an underscore).
const bearer = "tok_9f8e7d6c5b4a3Zq8Wm3Rt7Yp2Xk4Nb6Vc1"

func bearerSet() *redact.Set {
	var s redact.Set
	s.AddEscaper(safetext.Escape)
	s.AddHeader("Authorization", "Bearer "+bearer)
	return &s
}

// findIn is where FindInValue finds a secret in a tools/call result whose
// text is text.
func findIn(t *testing.T, s *redact.Set, text string) (label, ptr string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
	doc, err := jcs.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return s.FindInValue(doc.Root())
}

// coreOf is the base64 characters of enc(prefix+secret+suffix) that hold
// only bits of the secret: what no redacted output may hold.
func coreOf(enc *base64.Encoding, prefix int, secret, blob string) string {
	a := prefix % 3
	start := prefix / 3 * 4
	return blob[start+(8*a+5)/6 : start+8*(a+len(secret))/6]
}

// TestEncodedSecrets: the base64 of a secret inside a longer blob, in
// either alphabet, padded or not, at each alignment, and its hexadecimal
// in either case, are redacted and found (with the JSON pointer), and the
// label says which encoding.
func TestEncodedSecrets(t *testing.T) {
	s := bearerSet()
	r := rand.New(rand.NewPCG(1, 2))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		for prefix := range 7 {
			for _, suffix := range []int{0, 1, 2, 5} {
				raw := make([]byte, prefix+len(bearer)+suffix)
				for i := range raw {
					raw[i] = byte(r.IntN(256))
				}
				copy(raw[prefix:], bearer)
				blob := enc.EncodeToString(raw)
				core := coreOf(enc, prefix, bearer, blob)
				text := `{"image":"` + blob + `"}`
				got := s.String(text)
				if strings.Contains(got, core[:redact.MinRun]) || strings.Contains(got, core[len(core)-redact.MinRun:]) || !strings.Contains(got, redact.Placeholder) {
					t.Errorf("prefix %d, suffix %d: %q redacted to %q", prefix, suffix, text, got)
				}
				if label, ptr := findIn(t, s, "data:"+blob); label != "the base64 encoding of the value of header Authorization" || ptr != "/content/0/text" {
					t.Errorf("prefix %d, suffix %d: found %q at %q", prefix, suffix, label, ptr)
				}
			}
		}
	}
	for _, h := range []string{hex.EncodeToString([]byte(bearer)), strings.ToUpper(hex.EncodeToString([]byte(bearer)))} {
		text := "digest 00ff" + h + "ee11"
		if got := s.String(text); got != "digest 00ff"+redact.Placeholder+"ee11" {
			t.Errorf("%q redacted to %q", text, got)
		}
		if label, ptr := findIn(t, s, text); label != "the hexadecimal encoding of the value of header Authorization" || ptr != "/content/0/text" {
			t.Errorf("%q: found %q at %q", text, label, ptr)
		}
	}
	// The whole header value, encoded alone and padded: nothing of it
	// is left (not even the padding's last character).
	whole := base64.StdEncoding.EncodeToString([]byte("Bearer " + bearer))
	if got := s.String("x " + whole + " y"); got != "x "+redact.Placeholder+" y" {
		t.Errorf("%q", got)
	}
}

// TestSecretParts: MinRun or more characters of a secret's run found
// anywhere are redacted with what of the run goes on around them, and
// found: the token's last 20 characters in a tool's name, a token split
// across two strings of 12 characters or more each. A part of 11
// characters is text like any other.
func TestSecretParts(t *testing.T) {
	s := bearerSet()
	last20 := bearer[len(bearer)-20:]
	for text, want := range map[string]string{
		"get_" + last20 + "_data":                               "get_" + redact.Placeholder + "_data",
		`{"a":"` + bearer[:22] + `","b":"` + bearer[22:] + `"}`: `{"a":"tok_` + redact.Placeholder + `","b":"` + redact.Placeholder + `"}`,
		"x" + bearer[10:22] + "y":                               "x" + redact.Placeholder + "y", // exactly MinRun, the run's letters around it are not the run's next
		"key " + bearer[10:21] + " end":                         "key " + bearer[10:21] + " end",
		"two pieces " + bearer[4:15] + " " + bearer[15:26]:      "two pieces " + bearer[4:15] + " " + bearer[15:26],
	} {
		got := s.String(text)
		if got != want {
			t.Errorf("%q redacted to %q, want %q", text, got, want)
		}
		label, ptr := findIn(t, s, text)
		if found := label != ""; found != (want != text) || found && (label != "a part of the value of header Authorization" || ptr != "/content/0/text") {
			t.Errorf("%q: found %q at %q", text, label, ptr)
		}
	}
	// The same in a tools/list: the name is the part's pointer.
	doc, err := jcs.Parse([]byte(`{"tools":[{"name":"echo"},{"name":"fetch_` + last20 + `","description":"d"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if label, ptr := s.FindInValue(doc.Root()); label != "a part of the value of header Authorization" || ptr != "/tools/1/name" {
		t.Errorf("found %q at %q", label, ptr)
	}
	if got := s.Find("fetch_" + last20); got != "a part of the value of header Authorization" {
		t.Errorf("Find: %q", got)
	}
}

// TestPartsNotCounted: what is not a secret's part, or not one that
// counts, is left alone and not found: ordinary text, a short secret's
// pieces, and a secret that is words, one repeated character, a counting
// sequence, or a JWT's header and claims (other JWTs of the issuer share
// them); a JWT's signature counts.
func TestPartsNotCounted(t *testing.T) {
	jwt := func(claims, sig string) string {
		return "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + "." + sig
	}
	var s redact.Set
	s.Add("a short key", "k3y-Abc9Z")
	s.Add("a word", "internationalization-service-account")
	s.Add("an identifier", "XMLHttpRequestHandlerFactory")
	s.Add("one character", strings.Repeat("a", 40))
	s.Add("a sequence", "abcdefghijklmnopqrstuvwxyz0123456789")
	s.Add("a JWT", jwt(`{"iss":"https://auth.example.com/","sub":"user-1","exp":1900000000}`, "Zx8Qm2Rt7Yp3Wk9Nb4Vc6Jd1Lf5Hg0Ts"))
	for _, text := range []string{
		"Search the web and return the top results as a list of URLs with titles.",
		"k3y-Abc9 and Abc9Z",
		"The internationalization of the service account is done by XMLHttpRequestHandler.",
		strings.Repeat("a", 39),
		"abcdefghijklmnopqrstuvwxyz012345678 and 0123456789",
		"token " + jwt(`{"iss":"https://auth.example.com/","sub":"user-2","exp":1900000001}`, "Pq4Lm8Nz2Xw6Ry0Tv3Ks7Hj1Gb5Fd9Ca"),
		strings.Repeat("ZeroWidthSpaceXMLHttpRequest ", 3),
	} {
		if got := s.String(text); got != text {
			t.Errorf("%q redacted to %q", text, got)
		}
		if label, ptr := findIn(t, &s, text); label != "" {
			t.Errorf("%q: found %q at %q", text, label, ptr)
		}
	}
	if got := s.String("sig Zx8Qm2Rt7Yp3Wk9Nb4V"); got != "sig "+redact.Placeholder {
		t.Errorf("a JWT's signature part: %q", got)
	}
}

// TestPartsHostileCost: a text made of a secret's parts that do not count
// or do not go on, or of the secret over and over, is read in one pass:
// no part is followed further than the text is the run.
func TestPartsHostileCost(t *testing.T) {
	long := make([]byte, 4096)
	r := rand.New(rand.NewPCG(3, 4))
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for i := range long {
		long[i] = alnum[r.IntN(len(alnum))]
	}
	var s redact.Set
	s.Add("a long key", string(long))
	s.AddHeader("Authorization", "Bearer "+bearer)
	for name, text := range map[string]string{
		"pieces of 11":        strings.Repeat(string(long[100:111])+"-", 100000),
		"the key but its end": strings.Repeat(string(long[:4095])+"-", 250),
		"the key over again":  strings.Repeat(string(long), 250),
		"grams shuffled":      shuffledGrams(string(long), 1<<20, r),
	} {
		start := time.Now()
		got := s.String(text)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: %v", name, d)
		}
		if strings.Contains(got, string(long[100:112])) {
			t.Errorf("%s: a part survives", name)
		}
		start = time.Now()
		findIn(t, &s, text)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: FindInValue took %v", name, d)
		}
	}
}

// shuffledGrams is n bytes of the secret's pieces of 4 to 11 bytes in a
// random order: every gram the index holds, few parts.
func shuffledGrams(secret string, n int, r *rand.Rand) string {
	var b strings.Builder
	for b.Len() < n {
		i := r.IntN(len(secret) - 12)
		b.WriteString(secret[i : i+4+r.IntN(8)])
	}
	return b.String()
}

// FuzzEncodedAndParts: whatever a text holds beside a secret's encoding
// at any alignment (base64, hexadecimal, base32) or another spelling that
// loses nothing of it (percent-encoded, reversed), the redacted text
// holds no encoding or such spelling of the secret and
// no part of it that counts, redacting it again changes nothing, and
// FindInValue finds a secret in the text.
func FuzzEncodedAndParts(f *testing.F) {
	f.Add(bearer, "a tool named get_Xk4Nb6Vc1 and ", uint8(0), uint8(1))
	f.Add("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "prefix", uint8(2), uint8(0))
	f.Add("ak-0123456789-SECRETKEY-qQ7rT2wX", "", uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, secret, text string, prefix, how uint8) {
		if strings.ContainsAny(secret, "[]") || strings.Contains(text, redact.Placeholder) {
			return // a secret that holds the placeholder's marks is its own case
		}
		var s redact.Set
		if !s.Add("a secret", secret) || secret == "" {
			return
		}
		raw := append([]byte(text[:min(len(text), int(prefix%8))]), secret...)
		var echo, whole string // whole: a spelling no redacted text holds
		switch how % 8 {
		case 0:
			echo = base64.StdEncoding.EncodeToString(raw)
		case 1:
			echo = base64.RawURLEncoding.EncodeToString(raw)
		case 2:
			echo = hex.EncodeToString(raw)
		case 3:
			echo = strings.ToUpper(hex.EncodeToString(raw))
		case 4:
			echo = base32.StdEncoding.EncodeToString(raw)
		case 5:
			echo = redact.PercentAllForTest(secret, prefix%2 == 0)
			whole = echo
		case 6:
			b := []byte(secret)
			slices.Reverse(b)
			echo = string(b)
			if len(echo) >= redact.MinRun {
				whole = echo
			}
		default:
			echo = secret[len(secret)/2:]
		}
		in := text + echo + text
		out := s.String(in)
		b64, hx, b32 := redact.EncodingsForTest(secret)
		for _, form := range slices.Concat(b64, hx, b32) {
			if strings.Contains(out, form) {
				t.Fatalf("%q: the encoding %q survives in %q", in, form, out)
			}
		}
		if whole != "" && strings.Contains(out, whole) {
			t.Fatalf("%q: the spelling %q survives in %q", in, whole, out)
		}
		for _, part := range redact.PartsForTest(secret) {
			if strings.Contains(out, part) {
				t.Fatalf("%q: the part %q survives in %q", in, part, out)
			}
		}
		if again := s.String(out); again != out {
			t.Fatalf("%q: redacted %q, then %q", in, out, again)
		}
		// What is redacted is found (but a clipped escaped form, which
		// FindInValue reads decoded: TestClippedPrefixes).
		clip := strings.Contains(in, "…") || strings.Contains(in, `\u2026`) || strings.Contains(strings.ToLower(in), "%e2%80%a6")
		if b, err := json.Marshal(in); err == nil && out != in && !clip && utf8.ValidString(in) {
			if doc, err := jcs.Parse(b); err == nil {
				if label, _ := s.FindInValue(doc.Root()); label == "" {
					t.Fatalf("%q redacted to %q, but not found", in, out)
				}
			}
		}
	})
}
