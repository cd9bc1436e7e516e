package store

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/safetext"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in, kind, path, display string
		secrets                 int
	}{
		{"sqlite:/var/h.db", KindSQLite, "/var/h.db", "/var/h.db", 0},
		{"sqlite:rel/h.db", KindSQLite, "rel/h.db", "rel/h.db", 0},
		{"sqlite:///abs/h.db", KindSQLite, "/abs/h.db", "/abs/h.db", 0},
		{"SQLITE:x.db", KindSQLite, "x.db", "x.db", 0},
		{"postgres://u:pw@db:5432/mcp?sslmode=require&password=pw2", KindPostgres, "", "postgres://u@db:5432/mcp?password=&sslmode=", 2},
		{"postgresql://db/mcp", KindPostgres, "", "postgresql://db/mcp", 0},
	} {
		l, err := ParseURL(c.in)
		if err != nil || l.Kind != c.kind || l.Path != c.path || l.Display != c.display || len(l.Secrets) != c.secrets {
			t.Errorf("%s: %+v %v", c.in, l, err)
		}
	}
	for _, bad := range []string{"", "x.db", "/abs/x.db", "mysql://h/db", "sqlite:", "sqlite:a?mode=ro", "postgres:db", "sqlite:a\nb", "sqlite:\xff"} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseSinceKeep(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2026-11-30T10:00:00Z":      time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
		"2026-11-30T10:00:00+02:00": time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		"2026-11-30":                time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
		"24h":                       now.Add(-24 * time.Hour),
		"7d":                        now.Add(-7 * 24 * time.Hour),
		"2w":                        now.Add(-14 * 24 * time.Hour),
		"90m":                       now.Add(-90 * time.Minute),
	} {
		got, err := ParseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("since %s: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "yesterday", "-1h", "7days", "1e9d", "0099-01-01", "99999999999999999999d"} {
		if _, err := ParseSince(bad, now); err == nil {
			t.Errorf("since %q accepted", bad)
		}
	}
	for in, want := range map[string]Keep{"30": {Scans: 30}, "90d": {Age: 90 * 24 * time.Hour}, "12w": {Age: 12 * 7 * 24 * time.Hour}, "720h": {Age: 720 * time.Hour}} {
		got, err := ParseKeep(in)
		if err != nil || got != want {
			t.Errorf("keep %s: %+v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "0", "-3", "0d", "-1h", "forever", "1.5", "876001h"} {
		if _, err := ParseKeep(bad); err == nil {
			t.Errorf("keep %q accepted", bad)
		}
	}
}

// noRaw fails when an error message holds a character safetext would
// escape (server- and user-given text must reach stderr escaped).
func noRaw(t *testing.T, err error) {
	t.Helper()
	if err != nil && !safetext.IsSafe(strings.ReplaceAll(err.Error(), `\`, "")) {
		t.Fatalf("unescaped text in %q", err.Error())
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"sqlite:/a/b.db", "sqlite:///x", "postgres://u:p@h:1/d?password=q&x=1", "postgresql://h/d#frag", "postgres://[::1", "sqlite:\x1b[2J", "x", "sqlite://u:hunter22@h/a?x", "ftp://u:hunter22@h/", "postgres://app:S3cretPw?x@db/mcp", "sqlite://u:S3cret#Pw@h/a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseURL(s)
		noRaw(t, err)
		if err != nil {
			// The message is escaped text: an escape sequence can spell
			// a password's bytes ("\u0010000" holds "0000", found by
			// the fuzzer) without showing it. And what the URL gives is
			// shown quoted: the message's own words ("store", "give",
			// "4096") are no password's.
			msg := err.Error()
			given := ""
			if i, j := strings.IndexByte(msg, '"'), strings.LastIndexByte(msg, '"'); i < j {
				given = msg[i : j+1]
			}
			// Text the URL also holds outside its password (a host
			// "cret" beside the password "cret#", found by the fuzzer)
			// is the URL's to show: its showing is no password's.
			public := withoutPasswords(s)
			for _, sec := range secretsIn(s) {
				if len(sec) > 3 && !strings.Contains(public, sec) && safetext.Shows(given, sec) {
					t.Fatalf("the password %q is in the error %q", sec, err.Error())
				}
			}
			// Nor a piece of it: url.Parse's errors quote the piece they
			// refused, which a password holding a delimiter makes a
			// piece of the password (the port of "u:S3cret?x@h").
			for _, sec := range secretPiecesIn(s) {
				if len(sec) > 3 && !strings.Contains(public, sec) && safetext.Shows(given, sec) {
					t.Fatalf("the password %q is in the error %q", sec, err.Error())
				}
			}
			return
		}
		switch l.Kind {
		case KindSQLite:
			if l.Path == "" || strings.ContainsAny(l.Path, "?#\x00") {
				t.Fatalf("path %q", l.Path)
			}
		case KindPostgres:
			// the display has no password and no query value
			d, err := url.Parse(l.Display)
			if err != nil {
				t.Fatalf("display %q does not parse: %v", l.Display, err)
			}
			if _, ok := d.User.Password(); ok {
				t.Fatalf("display %q has a password", l.Display)
			}
			for k, vs := range d.Query() {
				for _, v := range vs {
					if v != "" {
						t.Fatalf("display %q has a value for %q", l.Display, k)
					}
				}
			}
		default:
			t.Fatalf("kind %q", l.Kind)
		}
	})
}

// passwordAt is where the password of s stands, the text between
// "://user:" and "@", roughly: what a password in s could be. The user is a
// user name: it holds none of the '/', '?' and '#' that end a URL's
// authority, so that "0000://#:0000@" (a fragment, found by the fuzzer:
// the error quoted the scheme "0000") has no password; the password may
// hold them (the store reads it leniently, up to the '@').
func passwordAt(s string) (from, to int, ok bool) {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return 0, 0, false
	}
	ui, _, ok := strings.Cut(rest, "@")
	if !ok {
		return 0, 0, false
	}
	user, pw, ok := strings.Cut(ui, ":")
	if !ok || strings.ContainsAny(user, "/?#") {
		return 0, 0, false
	}
	from = len(s) - len(rest) + len(user) + 1
	return from, from + len(pw), true
}

// secretsIn is the password of s (passwordAt), if it has one.
func secretsIn(s string) []string {
	from, to, ok := passwordAt(s)
	if !ok {
		return nil
	}
	return []string{s[from:to]}
}

// withoutPasswords is s with its password cut out where it stands (a NUL
// in its place, so that no text is made across the cut).
func withoutPasswords(s string) string {
	from, to, ok := passwordAt(s)
	if !ok {
		return s
	}
	return s[:from] + "\x00" + s[to:]
}

// secretPiecesIn are the pieces of the password of s between the
// characters that end an authority for url.Parse.
func secretPiecesIn(s string) []string {
	var out []string
	for _, pw := range secretsIn(s) {
		out = append(out, strings.FieldsFunc(pw, func(r rune) bool { return strings.ContainsRune("/?#@:[]", r) })...)
	}
	return out
}

func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"2026-11-30T10:00:00Z", "2026-11-30", "24h", "7d", "2w", "-1h", "1e400d", "\xff"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSince(s, now)
		noRaw(t, err)
		if err == nil && (got.Year() > 9999 || got.Year() < 1870) {
			t.Fatalf("%q: %v", s, got)
		}
		k, err := ParseKeep(s)
		noRaw(t, err)
		if err == nil && k.IsZero() {
			t.Fatalf("keep %q is everything", s)
		}
		sh, err := ParseShard(s)
		noRaw(t, err)
		if err == nil && (sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count) {
			t.Fatalf("shard %q: %+v", s, sh)
		}
	})
}

// TestParseURLNeverShowsPassword: whatever is wrong with a store URL, its
// message shows no password the URL carries (found by FuzzParseURL: an
// unknown scheme that was the password).
func TestParseURLNeverShowsPassword(t *testing.T) {
	for _, c := range []struct{ in, secret string }{
		{"0000://:0000@", "0000"},
		{"hunter22://u:hunter22@h/d", "hunter22"},
		{"sqlite://:s3cretpw@x?y", "s3cretpw"},
		{"sqlite://u:s3cr%65tpw@x#y", "s3cretpw"},
		{"sqlite://u:s3cr%65tpw@x#y", "s3cr%65tpw"},
		{"postgres://u:pa55word@[::1", "pa55word"},
		{"postgres:u:pa55word@h/d", "pa55word"},
		{"postgress://h/d?password=qwerty12", "qwerty12"},
	} {
		_, err := ParseURL(c.in)
		if err == nil {
			t.Errorf("%q accepted", c.in)
			continue
		}
		if strings.Contains(err.Error(), c.secret) {
			t.Errorf("%q: the password is in %q", c.in, err.Error())
		}
	}
}
