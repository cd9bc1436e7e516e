package store

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Backend kinds.
const (
	KindSQLite   = "sqlite"
	KindPostgres = "postgres"
)

// Location is a parsed store URL.
type Location struct {
	Kind string // KindSQLite or KindPostgres
	// Path is the SQLite file (as given; relative to the working
	// directory when not absolute).
	Path string
	// URL is the PostgreSQL connection URL as given (it may hold a
	// password: never print it; use Display).
	URL string
	// Display names the store for people: the path, or the URL without
	// user info password and with query values emptied.
	Display string
	// Secrets are the values of the URL that must never be written (the
	// password); callers register them with their redaction set.
	Secrets []string
}

// ParseURL reads a --store value: "sqlite:PATH" (also "sqlite://PATH" and
// "sqlite:///abs/path"), or "postgres://…"/"postgresql://…" (a libpq URL).
// A bare path is refused, so that a typo never creates a file somewhere
// unexpected.
func ParseURL(s string) (Location, error) {
	if s == "" {
		return Location{}, urlErr("empty store URL: give sqlite:PATH or postgres://…")
	}
	if len(s) > 4096 {
		return Location{}, urlErr("store URL longer than 4096 bytes")
	}
	if !utf8.ValidString(s) || strings.ContainsAny(s, "\x00\r\n") {
		return Location{}, urlErr("store URL holds a control character or invalid UTF-8")
	}
	// What a message shows of the URL never holds a password it carries,
	// whatever the URL is (an unknown scheme, a sqlite path with user
	// info): each is replaced by *** in what is shown.
	secrets := urlPasswords(s)
	shown := func(x string) string {
		for _, sec := range secrets {
			x = strings.ReplaceAll(x, sec, "***")
		}
		return x
	}
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Location{}, urlErr("%s has no scheme: give sqlite:PATH or postgres://…", safetext.Quote(shown(s)))
	}
	switch strings.ToLower(scheme) {
	case "sqlite", "sqlite3":
		p := rest
		if strings.HasPrefix(p, "//") {
			p = p[2:] // sqlite://rel or sqlite:///abs
		}
		if p == "" {
			return Location{}, urlErr("sqlite: needs a path (sqlite:PATH)")
		}
		if strings.ContainsAny(p, "?#") {
			return Location{}, urlErr("the sqlite path %s holds ? or #, which SQLite would read as URI parameters", safetext.Quote(shown(p)))
		}
		return Location{Kind: KindSQLite, Path: p, Display: p}, nil
	case "postgres", "postgresql":
		u, err := url.Parse(s)
		if err != nil {
			return Location{}, urlErr("the PostgreSQL URL does not parse: %s", safetext.Inert(shown(redactParseErr(err, s))))
		}
		if !strings.HasPrefix(rest, "//") {
			return Location{}, urlErr("a PostgreSQL store URL is postgres://[user[:password]@]host[:port]/database")
		}
		if u.User == nil && len(userInfoPasswords(s)) > 0 {
			// "postgres://app:/S3cret@db/x" parses, as the host "app:"
			// and the path "/S3cret@db/x": the password would be the
			// database's name, shown by the URL's display and by the
			// server's errors. Refused, and nothing of it shown.
			return Location{}, urlErr("the PostgreSQL URL's user info does not read as user:password@ (a password holding '/', '?', '#' or '@' must be percent-encoded)")
		}
		loc := Location{Kind: KindPostgres, URL: s}
		if u.User != nil {
			if pw, ok := u.User.Password(); ok && pw != "" {
				loc.Secrets = append(loc.Secrets, pw)
			}
		}
		for k, vs := range u.Query() {
			if strings.EqualFold(k, "password") {
				for _, v := range vs {
					if v != "" {
						loc.Secrets = append(loc.Secrets, v)
					}
				}
			}
		}
		d := *u
		if d.User != nil {
			d.User = url.User(d.User.Username())
		}
		if d.RawQuery != "" {
			q := d.Query()
			for k := range q {
				q[k] = []string{""}
			}
			d.RawQuery = q.Encode()
		}
		d.Fragment, d.RawFragment = "", ""
		loc.Display = d.String()
		return loc, nil
	}
	return Location{}, urlErr("unknown store scheme %s: give sqlite:PATH or postgres://…", safetext.Quote(shown(scheme)))
}

// urlPasswords are the passwords a store URL may carry, read leniently
// (whatever the scheme, parsed or not): the user info's password, after
// the first ':' of the authority and before an '@' (before each '@' of
// the URL, since a password may hold an unencoded '/', '?', '#' or '@',
// which end the authority for url.Parse), and the values of password
// query parameters. Empty ones are left out, and the longest come first
// so that one that holds another is replaced whole.
func urlPasswords(s string) []string {
	out := userInfoPasswords(s)
	if u, err := url.Parse(s); err == nil {
		if u.User != nil {
			if pw, ok := u.User.Password(); ok && pw != "" {
				out = append(out, pw)
			}
		}
		for k, vs := range u.Query() {
			if strings.EqualFold(k, "password") {
				for _, v := range vs {
					if v != "" {
						out = append(out, v)
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}

// userInfoPasswords are the passwords of the user info urlPasswords
// reads leniently, up to each '@' of s.
func userInfoPasswords(s string) []string {
	var out []string
	if _, rest, ok := strings.Cut(s, "//"); ok {
		for at, n := 0, 0; n < maxUserInfoReadings; n++ {
			i := strings.IndexByte(rest[at:], '@')
			if i < 0 {
				break
			}
			at += i
			// A user name holds no delimiter: "h/db?x=a:b@c" has none.
			if user, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" && !strings.ContainsAny(user, "/?#") {
				out = append(out, pw)
				if u, err := url.PathUnescape(pw); err == nil && u != pw && u != "" {
					out = append(out, u)
				}
			}
			at++
		}
	}
	return out
}

// maxUserInfoReadings bounds the '@'s urlPasswords reads a password up
// to (a URL is at most 4096 bytes; a real one has one or two).
const maxUserInfoReadings = 64

// redactParseErr is a url.Parse error without the URL: url.Error's text
// quotes the whole input, and its inner errors quote the piece they
// refused (an invalid port, a host's character, an escape), which is a
// piece of the password when the password holds an unencoded delimiter
// ("postgres://app:S3cret?x@db" has the port ":S3cret"). Every quoted
// span is dropped, and a URL with user info is told how to write one.
func redactParseErr(err error, s string) string {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = ue.Err.Error()
	}
	msg = strings.ReplaceAll(dropQuoted(msg), s, "…")
	if strings.Contains(s, "@") {
		msg += " (a password holding '/', '?', '#' or '@' must be percent-encoded)"
	}
	return msg
}

// dropQuoted replaces each double-quoted span of msg (as Go's %q writes
// one: its quotes escaped inside) by "…".
func dropQuoted(msg string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			break
		}
		j := safetext.QuoteEnd(msg, i, '"')
		b.WriteString(msg[:i])
		b.WriteString("…")
		if j < 0 {
			return b.String() // unterminated: the rest is dropped too
		}
		msg = msg[j+1:]
	}
	b.WriteString(msg)
	return b.String()
}

func urlErr(format string, args ...any) error {
	return &Error{Kind: ErrURL, Err: fmt.Errorf(format, args...)}
}

// DefaultPath is the default SQLite store: $XDG_STATE_HOME/mcpdrift/history.db,
// else ~/.local/state/mcpdrift/history.db.
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpdrift", "history.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errorf(ErrURL, "no default store: neither XDG_STATE_HOME nor a home directory is set; give --store sqlite:PATH")
	}
	return filepath.Join(home, ".local", "state", "mcpdrift", "history.db"), nil
}

// DefaultURL is "sqlite:" + DefaultPath().
func DefaultURL() (string, error) {
	p, err := DefaultPath()
	if err != nil {
		return "", err
	}
	return "sqlite:" + p, nil
}
