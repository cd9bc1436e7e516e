package schemas

import (
	"regexp"
	"testing"
)

// TestDigestRegexp: the digest pattern's byte test (of a string, and of
// bytes for the entries' fast path) matches what package regexp matches
// for it.
func TestDigestRegexp(t *testing.T) {
	re := regexp.MustCompile(digestPattern)
	hex := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, s := range []string{
		"sha256:" + hex, "sha256:" + hex + "\n", "\nsha256:" + hex, "sha256:" + hex[:63], "sha256:" + hex + "0",
		"SHA256:" + hex, "sha256:" + hex[:63] + "A", "sha256:" + hex[:63] + "g", "sha256;" + hex, "", "sha256:",
		"xsha256:" + hex[1:], "sha256:" + hex[:62] + "é", "sha256:" + hex[:63] + "\x00",
	} {
		if got, want := (digestRegexp{}).MatchString(s), re.MatchString(s); got != want {
			t.Errorf("%q: %v, regexp says %v", s, got, want)
		}
		if got, want := isDigest([]byte(s)), re.MatchString(s); got != want {
			t.Errorf("%q as bytes: %v, regexp says %v", s, got, want)
		}
	}
	r, err := artifactRegexp(digestPattern)
	if err != nil || r.String() != digestPattern {
		t.Fatalf("artifactRegexp(digest) = %v, %v", r, err)
	}
	if r, err := artifactRegexp(`^[0-9]{4}$`); err != nil || !r.MatchString("2026") || r.MatchString("26") {
		t.Fatalf("artifactRegexp(other) = %v, %v", r, err)
	}
	if _, err := artifactRegexp(`(`); err == nil {
		t.Fatal("a bad pattern compiled")
	}
}
