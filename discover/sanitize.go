package discover

import (
	"net/url"
	"strings"

	"github.com/mcpdrift/mcpdrift/redact"
)

// What an inventory shows of an entry, and what it never does.
//
//   - env and header values: never; only their names.
//   - a URL: without its user info, with every query value emptied (the
//     names kept: ?api_key=) and without its fragment (redact.SanitizeURL);
//     a path segment that looks like a credential is replaced too
//     (a hosted server's key); a URL that has none of these is written as
//     the file has it.
//   - args, as typed, except:
//     a URL-shaped arg (with "://") is cleaned as a URL is;
//     the value of a flag whose name says it holds a secret (token,
//     secret, passw, key, auth, credential, bearer, cookie, session,
//     private, pat, pwd) is replaced, whether it is attached
//     (--api-key=V) or the next arg (--api-key V);
//     the value of a header given as an arg (--header / -H "Name: V"),
//     an env assignment given as an arg (-e / --env NAME=V) and a NAME=V
//     arg whose NAME says it holds a secret are replaced;
//     an arg shaped like a known credential (Bearer/Basic credentials,
//     sk-, ghp_, github_pat_, xox?-, glpat-, AKIA, AIza, JWTs, ...) is
//     replaced.
//
// Each replacement is redact.Placeholder, and the server is marked
// Redacted: what is listed is then not what the client runs or sends,
// and a caller that connects (or runs the command, with the user's
// consent) reads the entry again from its file (LoadEntry).

// cleanURL returns raw as an inventory shows it, and whether anything was
// removed.
func cleanURL(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.ContainsAny(raw, "@?#") {
			return "(an unparsable URL)", true
		}
		return raw, false
	}
	if u.User == nil && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery && !strings.Contains(raw, "#") && !redact.HasCredentialShape(raw) {
		return raw, false
	}
	if c := redact.SanitizeURL(raw); c != "" {
		return c, true
	}
	return "(a URL with nothing but a fragment)", true
}

// secretWords are the parts of a flag or variable name that say its value
// is a secret.
var secretWords = []string{"token", "secret", "passw", "key", "auth", "credential", "bearer", "cookie", "session", "private"}

// secretName reports whether a flag or variable name says its value is a
// secret.
func secretName(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(n, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		if part == "pat" || part == "pwd" || part == "pw" {
			return true
		}
	}
	return false
}

// tokenPrefixes are how well-known credentials begin.
var tokenPrefixes = []string{
	"sk-", "sk_live_", "sk_test_", "rk_live_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"xoxb-", "xoxp-", "xoxa-", "xoxs-", "xapp-", "glpat-", "AKIA", "ASIA", "AIza", "ya29.", "npm_", "pypi-",
	"hf_", "dop_v1_", "shpat_", "SG.", "eyJ",
}

// tokenShaped reports whether s looks like a credential: a Bearer or Basic
// credential, or a well-known token prefix followed by at least 12 more
// characters with no space.
func tokenShaped(s string) bool {
	l := strings.ToLower(s)
	if strings.HasPrefix(l, "bearer ") || strings.HasPrefix(l, "basic ") || strings.HasPrefix(l, "token ") {
		return true
	}
	if strings.ContainsAny(s, " \t") {
		return false
	}
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(s, p) && len(s) >= len(p)+12 {
			return true
		}
	}
	return false
}

// cleanArgs returns args as an inventory shows them, and whether anything
// was replaced.
func cleanArgs(args []string) ([]string, bool) {
	if len(args) == 0 {
		return nil, false
	}
	out := make([]string, len(args))
	changed := false
	set := func(i int, v string) {
		if v != args[i] {
			changed = true
		}
		out[i] = v
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		out[i] = a
		flag := strings.HasPrefix(a, "-") && len(a) > 1
		switch {
		case tokenShaped(a):
			set(i, redact.Placeholder)
		case flag && strings.Contains(a, "="):
			name, val, _ := strings.Cut(a, "=")
			switch {
			case headerFlag(name):
				set(i, name+"="+cleanHeaderArg(val))
			case envFlag(name):
				set(i, name+"="+cleanAssignment(val, true))
			case secretName(name):
				set(i, name+"="+redact.Placeholder)
			case strings.Contains(val, "://"):
				v, _ := cleanURL(val)
				set(i, name+"="+v)
			}
		case flag && i+1 < len(args):
			next := args[i+1]
			switch {
			case headerFlag(a):
				i++
				out[i] = next
				set(i, cleanHeaderArg(next))
			case envFlag(a):
				i++
				out[i] = next
				set(i, cleanAssignment(next, true))
			case secretName(a) && !strings.HasPrefix(next, "-"):
				i++
				out[i] = next
				set(i, redact.Placeholder)
			}
		case !flag && assignment(a):
			set(i, cleanAssignment(a, false))
		case strings.Contains(a, "://"):
			v, _ := cleanURL(a)
			set(i, v)
		}
	}
	return out, changed
}

// assignment reports whether a is NAME=value with NAME an environment
// variable's name.
func assignment(a string) bool {
	name, _, ok := strings.Cut(a, "=")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func headerFlag(f string) bool { return f == "-H" || f == "--header" || f == "--headers" }

func envFlag(f string) bool { return f == "-e" || f == "--env" || f == "--set-env" }

// cleanHeaderArg replaces the value of "Name: value".
func cleanHeaderArg(h string) string {
	name, _, ok := strings.Cut(h, ":")
	if !ok {
		return redact.Placeholder
	}
	return name + ": " + redact.Placeholder
}

// cleanAssignment replaces the value of NAME=value when always is set or
// NAME says it is a secret (or the value looks like a credential, or is a
// URL with credentials).
func cleanAssignment(a string, always bool) string {
	name, val, ok := strings.Cut(a, "=")
	if !ok {
		return a // -e NAME passes the variable through: no value here
	}
	switch {
	case always || secretName(name) || tokenShaped(val):
		return name + "=" + redact.Placeholder
	case strings.Contains(val, "://"):
		v, _ := cleanURL(val)
		return name + "=" + v
	}
	return a
}
