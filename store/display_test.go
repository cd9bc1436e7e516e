package store

import (
	"strings"
	"testing"
)

// Found by the second review: a password with an unencoded '/' or '?' right after the
// user's ':' (or after digits) parses as host:port plus path/query, and the
// Display shows the password's piece.
func TestDisplayHidesPasswordWithDelimiter(t *testing.T) {
	for _, c := range []struct{ url, piece string }{
		{"postgres://app:/S3cretPw@db/x", "S3cretPw"},
		{"postgres://app:5432/S3cretPw@db/x", "S3cretPw"},
		{"postgres://app:?S3cretPw@db/x", "S3cretPw"},
		{"postgres://app:12?S3cretPw@db/x", "S3cretPw"},
	} {
		loc, err := ParseURL(c.url)
		var msg string
		if err != nil {
			msg = err.Error()
		}
		if strings.Contains(loc.Display, c.piece) || strings.Contains(msg, c.piece) {
			t.Errorf("%s: Display %q, err %q, secrets %q", c.url, loc.Display, msg, loc.Secrets)
		}
	}
}

// What the refusal above must not catch: a password given as a query
// value, user info that parses, an '@' in a query after a path.
func TestUserInfoRefusalLeavesPlainURLs(t *testing.T) {
	for _, s := range []string{"postgres://h:5432/db?password=pw&user=u", "postgres://u:p%2Fq@h/db", "postgres://h/db?x=a:b@c", "postgresql://u@h/db"} {
		if _, err := ParseURL(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}
