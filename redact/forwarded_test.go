package redact_test

import (
	"encoding/base32"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/redact"
)

// randomKey is n random letters and digits, as an issued key's.
func randomKey(r *rand.Rand, n int) string {
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[r.IntN(len(alnum))]
	}
	return string(b)
}

// TestForwardedCredentialTold: a downstream's Authorization is held only
// when its credential cannot be ordinary text; a value a client chose to
// cut words or JSON out of everyone's output is not, and redacts nothing.
func TestForwardedCredentialTold(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	for value, held := range map[string]bool{
		"Bearer " + bearer:                                true,
		"Bearer " + jwt:                                   true,
		"Bearer 3f9a2b7c4d1e8f06a5b4c3d2e1f0a9b8":         true,
		"Basic dXNlcjpYcTdacjJLcDlMbTNXcThU":              true, // user:Xq7Zr2Kp9Lm3Wq8T
		"ghp_16C7e42F292c6912E7710c838347Ae178B4a":        true, // no scheme: the value is the credential
		"Bearer search_issues":                            false,
		`Bearer "jsonrpc":"2.0"`:                          false,
		"Bearer search_issues_and_pull_requests":          false, // words
		"Bearer productionEnvironmentToken":               false, // an identifier of words
		"Bearer 00000000-0000-0000-0000-000000000000":     false,
		"Bearer 0123456789abcdef0123456789abcdef":         false, // a counting sequence
		"Bearer aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": false,
		"Bearer Xq7Zr2Kp9Lm":                              false, // 11: shorter than a credential
		"Bearer Xq7Zr2Kp9Lm3 search":                      false, // not one token
		"Bearer " + strings.Repeat("Xq7Zr2Kp9Lm3", 400):   false, // longer than any credential
	} {
		var s redact.Set
		if got := s.AddForwarded("Authorization", value); got != held {
			t.Errorf("%.40s: held %v, want %v", value, got, held)
		}
		if !held && !s.Empty() {
			t.Errorf("%.40s: recorded, not held", value)
		}
	}
	// A Basic credential's password is held when it is told apart too.
	var basic redact.Set
	basic.AddForwarded("Authorization", "Basic dXNlcjpYcTdacjJLcDlMbTNXcThU")
	basic.AddForwarded("Authorization", "Basic YWRtaW46c2VhcmNoX2lzc3Vlcw==") // admin:search_issues
	if basic.String("Xq7Zr2Kp9Lm3Wq8T") == "Xq7Zr2Kp9Lm3Wq8T" || basic.String("search_issues") != "search_issues" {
		t.Error("a Basic password: held when it cannot be text, not otherwise")
	}
	var s redact.Set
	s.AddForwarded("Authorization", "Bearer search_issues")
	s.AddForwarded("Authorization", `Bearer "jsonrpc":"2.0"`)
	msg := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"search_issues"}]}}`
	if got := s.JSON([]byte(msg)); string(got) != msg {
		t.Errorf("a client's chosen text rewrote a message: %s", got)
	}
}

// TestForwardedCredentialRedacted: a credential held is redacted as the
// run's own are, whole, in any form and by its parts, and found; but no
// clipped prefix of it counts (a prefix of words would be ordinary text):
// a clipped echo loses its parts that look random.
func TestForwardedCredentialRedacted(t *testing.T) {
	var s redact.Set
	if !s.AddForwarded("Authorization", "Bearer "+bearer) {
		t.Fatal("not held")
	}
	for _, text := range []string{
		"echo " + bearer,
		`{"e":"` + escapeAll(bearer) + `"}`,
		"a tool get_" + bearer[len(bearer)-20:],
		redact.PercentAllForTest(bearer, false),
	} {
		if got := string(s.JSON([]byte(text))); strings.Contains(got, bearer[len(bearer)-12:]) || !strings.Contains(got, redact.Placeholder) {
			t.Errorf("%.30s… redacted to %.60s…", text, got)
		}
		if s.Find(strings.ReplaceAll(text, `\u`, "")) == "" && !strings.Contains(text, `\u`) {
			t.Errorf("%.30s… not found", text)
		}
	}
	for text, want := range map[string]string{
		"uses tok_9f8e7d…":          "uses tok_9f8e7d…", // 6 bytes: text like any other
		"uses " + bearer[:20] + "…": "uses tok_" + redact.Placeholder + "…",
	} {
		if got := s.String(text); got != want {
			t.Errorf("%q redacted to %q", text, got)
		}
	}
}

// escapeAll spells every character of s as a JSON \u escape.
func escapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

// TestForwardedCredentialsBounded: a client that sends a fresh credential
// with each request leaves at most MaxForwarded held, and the set it
// rebuilds is no larger at the 600th than at the MaxForwarded-th (it was
// every value ever seen, a cost growing with each request); the least
// recently seen goes first, and a credential seen again is kept. The
// run's own secrets are never evicted, even one a downstream sent too.
func TestForwardedCredentialsBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var s redact.Set
	own := "tok_" + randomKey(r, 32)
	s.AddHeader("Authorization", "Bearer "+own)
	s.AddForwarded("Authorization", "Bearer "+own)
	later := randomKey(r, 32) // a downstream's first, then the run's own
	s.AddForwarded("Authorization", "Bearer "+later)
	s.Add("an env value", later)
	kept := randomKey(r, 32)
	s.AddForwarded("Authorization", "Bearer "+kept)
	second := randomKey(r, 32)
	s.AddForwarded("Authorization", "Bearer "+second)
	formsAt := map[int]int{}
	for i := 2; i <= 600; i++ {
		if !s.AddForwarded("Authorization", "Bearer "+randomKey(r, 32)) {
			t.Fatalf("credential %d not held", i)
		}
		s.AddForwarded("Authorization", "Bearer "+kept) // seen again with every request
		if i == redact.MaxForwarded || i == 600 {
			formsAt[i] = redact.FormsForTest(&s)
		}
	}
	if n := s.ForwardedHeld(); n != redact.MaxForwarded {
		t.Errorf("%d held", n)
	}
	if formsAt[600] > formsAt[redact.MaxForwarded]*11/10 {
		t.Errorf("the set rebuilt at the 600th credential has %d forms, at the %dth %d: it grows", formsAt[600], redact.MaxForwarded, formsAt[redact.MaxForwarded])
	}
	if s.Find("x "+kept) == "" || s.Find("x "+own) == "" || s.Find("x "+later) == "" {
		t.Error("the credential seen with every request, or the run's own, was evicted")
	}
	if s.Find("x "+second) != "" {
		t.Error("the least recently seen credential is held")
	}
}

// TestLosslessSpellings: a secret spelled so that a reader gets it back
// whole is redacted from bytes and from a JSON message, and found (Find,
// FindInValue): a hexadecimal secret in the other letter case (the same
// token to a hex decoder), every byte percent-encoded with uppercase or
// lowercase hex digits, base32 at each alignment of a 5-byte group,
// reversed. Its characters one per dash are not (README: not covered).
func TestLosslessSpellings(t *testing.T) {
	const hexToken = "3f9a2b7c4d1e8f06a5b4c3d2e1f0a9b8"
	for _, secret := range []string{hexToken, strings.ToUpper(hexToken), bearer} {
		var s redact.Set
		s.AddHeader("Authorization", "Bearer "+secret)
		spell := map[string]string{
			"percent-encoded (upper)": redact.PercentAllForTest(secret, true),
			"percent-encoded (lower)": redact.PercentAllForTest(secret, false),
			"reversed":                reverse(secret),
		}
		if secret != bearer {
			spell["lowercase"], spell["uppercase"] = strings.ToLower(secret), strings.ToUpper(secret)
		}
		for a := range 5 {
			blob := base32.StdEncoding.EncodeToString([]byte(strings.Repeat("\x07", a) + secret + "\x01\x02"))
			spell[fmt.Sprintf("base32 at %d", a)] = blob
		}
		for name, text := range spell {
			msg := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"got ` + text + ` back"}]}}`
			got := string(s.JSON([]byte(msg)))
			if !strings.Contains(got, redact.Placeholder) || strings.Contains(got, text) {
				t.Errorf("%s: not redacted", name)
			}
			if s.Find("got "+text) == "" {
				t.Errorf("%s: not found", name)
			}
			if l, ptr := findIn(t, &s, "got "+text); l == "" || ptr != "/content/0/text" {
				t.Errorf("%s: FindInValue found %q at %q", name, l, ptr)
			}
		}
	}
	// A word's other case is the word: only a hexadecimal secret's counts.
	var s redact.Set
	s.Add("a password", "correct-Horse-battery")
	if got := s.String("CORRECT-HORSE-BATTERY"); got != "CORRECT-HORSE-BATTERY" {
		t.Errorf("%q", got)
	}
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// TestOtherCaseClipped: a hexadecimal secret's other letter case cut right
// before an ellipsis is redacted and found alike (FuzzClippedAgrees).
func TestOtherCaseClipped(t *testing.T) {
	var s redact.Set
	s.Add("a key", "3f9a2b7c4d1e8f06a5b4")
	for text, want := range map[string]bool{"uses 3F9A2B7C…": true, "uses 3F9A2…": false} {
		if got := s.String(text) != text; got != want {
			t.Errorf("%q: redacted %v", text, got)
		}
		if l, _ := findIn(t, &s, text); (l != "") != want {
			t.Errorf("%q: found %q", text, l)
		}
	}
}

// TestForwardedConcurrent: credentials evicted while other goroutines
// redact and find (go test -race): a reader's view of the secrets is
// never changed under it.
func TestForwardedConcurrent(t *testing.T) {
	var s redact.Set
	s.AddHeader("Authorization", "Bearer "+bearer)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range 50 {
				if g%2 == 0 {
					s.AddForwarded("Authorization", "Bearer "+randomKey(r, 24))
					continue
				}
				if s.Find("x "+bearer) == "" || !strings.Contains(string(s.Bytes([]byte("x "+bearer))), redact.Placeholder) {
					t.Error("the run's own secret went")
				}
			}
		}()
	}
	wg.Wait()
}
