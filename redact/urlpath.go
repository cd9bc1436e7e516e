package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// A URL's path is not a place for a credential, but hosted MCP servers put
// one there (a per-user key as a path segment, as in
// https://host/mcp/sk-ak-…/sse), and the URL is then the only credential
// there is. mcpdrift cannot know which segment is secret, so here, and
// only here, it judges by the look: a segment is a credential when it is
// one of the shapes tokens have and path words do not (credentialLike).
// Such a segment is a secret of the run (AddURL) and is left out of a
// recorded URL (SanitizeURL). A false alarm only hides a segment of an
// address; a miss writes a key.

// tokenPrefixes are the prefixes of well-known credential formats (API
// keys and tokens of OpenAI and Anthropic, Stripe, GitHub, GitLab, Slack,
// AWS, Google, npm, PyPI, Hugging Face, Zapier) and of a JWT.
var tokenPrefixes = []string{
	"sk-", "sk_", "pk_live_", "rk_live_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
	"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xapp-", "AKIA", "ASIA", "AIza", "ya29.", "npm_", "pypi-",
	"hf_", "eyJ",
}

// hexKey is 32 hexadecimal digits or more: a key or a hash.
var hexKey = regexp.MustCompile(`^[0-9a-fA-F]{32,}$`)

var uuidSegment = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// minCredential is the shortest segment taken for a credential.
const minCredential = 16

// CredentialLike reports whether a URL's path segment (decoded) is taken
// for a credential: what AddURL redacts and SanitizeURL leaves out, and
// what a lock refuses to store.
func CredentialLike(seg string) bool { return credentialLike(seg) }

// credentialLike reports whether a path segment (decoded) looks like a
// credential: at least minCredential bytes, and a known token prefix, or a
// UUID, or 32 hexadecimal digits or more (the whole segment or one of its
// words), or random-looking letters and digits (randomLooking). A segment
// of words joined by separators (manyWords: all-MiniLM-L6-v2,
// k8s-mcp-server-v2, o4-mini-2025-04-16) is judged word by word, since a
// word does not change class where the separators are; any other, a key
// written in groups (K7QX-M2PA-9WZR-T4NB, key-K7QX-M2PA-9WZR-T4NB-H8)
// included, is judged whole.
func credentialLike(seg string) bool {
	if len(seg) < minCredential {
		return false
	}
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(seg, p) {
			return true
		}
	}
	if uuidSegment.MatchString(seg) || hexKey.MatchString(seg) {
		return true
	}
	whole := !manyWords(seg)
	if whole && randomLooking(seg) {
		return true
	}
	for w := range strings.FieldsFuncSeq(seg, notAlnum) {
		if hexKey.MatchString(w) || !whole && randomLooking(w) {
			return true
		}
	}
	return false
}

func notAlnum(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
}

// manyWords reports whether seg is words joined by separators, as names
// are: more than one byte in eight is a byte other than a letter or a digit
// (a random base64url key of 24 bytes has four such bytes once in 160),
// one of its words is a plain word (plainWord: all, mcp, Instruct, mini),
// and no run of its words is groups of one length (three or more of 3
// bytes or more, or four or more of 2 or more: how keys are written for
// people to read, after a word or before a shorter last group).
func manyWords(seg string) bool {
	seps := 0
	for i := 0; i < len(seg); i++ {
		if notAlnum(rune(seg[i])) {
			seps++
		}
	}
	if seps*8 <= len(seg) {
		return false
	}
	plain, run, n := false, 0, -1
	for w := range strings.FieldsFuncSeq(seg, notAlnum) {
		plain = plain || plainWord(w)
		if len(w) == n {
			run++
		} else {
			run, n = 1, len(w)
		}
		if n >= 3 && run >= 3 || n >= 2 && run >= 4 {
			return false
		}
	}
	return plain
}

// plainWord reports whether w (letters and digits) is a word as people
// write one: 3 letters or more, no digit, all lowercase, all uppercase or
// capitalised.
func plainWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	upper := 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '0' && c <= '9':
			return false
		case c >= 'A' && c <= 'Z':
			if i > 0 && upper < i {
				return false // an uppercase letter after a lowercase one
			}
			upper++
		}
	}
	return upper <= 1 || upper == len(w)
}

// randomLooking reports whether s holds at least 12 letters and digits
// with at least two each of two of lowercase, uppercase and digits, whose
// class changes, other than where a capitalised word or an acronym starts,
// at least every fourth of them (every fifth without uppercase, every
// sixth without lowercase): what random tokens are and path words
// (mcp-server-2025-06-18, streamableHttpServer, GoogleCloudPlatform,
// OpenAPI2MCPServer, v1) are not.
func randomLooking(s string) bool {
	// The letters and digits of s, in order (separators and other bytes
	// skipped: base64url keys hold - and _), by class, and how often the
	// class changes in a way words do not: a lowercase letter to an
	// uppercase one, a letter to a digit or back. A capitalised word
	// starting (uppercase to lowercase) and an acronym (uppercase to
	// uppercase) are what names are made of (GoogleCloudPlatform,
	// YouTubeTranscriptMCP); in a random token a counted change is nearly
	// every other byte.
	var lower, upper, digit, changes int
	prev := -1
	for i := 0; i < len(s); i++ {
		k := -1
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			k, lower = 0, lower+1
		case c >= 'A' && c <= 'Z':
			k, upper = 1, upper+1
		case c >= '0' && c <= '9':
			k, digit = 2, digit+1
		default:
			continue
		}
		if prev >= 0 && k != prev && !(prev == 1 && k == 0) {
			changes++
		}
		prev = k
	}
	n := lower + upper + digit
	classes := 0
	for _, c := range []int{lower, upper, digit} {
		if c >= 2 {
			classes++
		}
	}
	switch {
	case n < 12 || classes < 2:
		return false
	case lower == 0:
		// Uppercase and digits (base32): only letter-digit changes count,
		// and a digit is one byte in five.
		return changes*6 >= n
	case upper == 0:
		// Lowercase and digits (base36, hex).
		return changes*5 >= n
	}
	return changes*4 >= n
}

// writtenPath is the path of raw as it is written: from the '/' after the
// authority to the query or the fragment. url.URL keeps no such thing when
// the path is not a valid encoding (a space, a non-ASCII byte, a '{'): it
// then escapes the decoded path again, and a %2F becomes a '/'.
func writtenPath(raw string) (path string, at int) {
	end := len(raw)
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		end = i
	}
	start := 0
	if i := strings.Index(raw[:end], "://"); i >= 0 {
		j := strings.IndexByte(raw[i+3:end], '/')
		if j < 0 {
			return "", end
		}
		start = i + 3 + j
	}
	return raw[start:end], start
}

// PathSegments splits the path of the URL raw at '/' as it is written,
// each segment as written and decoded (as written when it does not
// decode): the one way mcpdrift cuts a path, so that what is judged a
// credential and what is expanded or replaced are the same segments.
func PathSegments(raw string) (written, decoded []string) {
	p, _ := writtenPath(raw)
	written = strings.Split(p, "/")
	decoded = make([]string, len(written))
	for i, s := range written {
		d, err := url.PathUnescape(s)
		if err != nil {
			d = s
		}
		decoded[i] = d
	}
	return written, decoded
}

// MapPathSegments returns the URL raw with each segment of its path, as
// written (PathSegments), replaced by what f makes of it (written and
// decoded); the rest of raw stays byte for byte. An error of f is
// returned as it is.
func MapPathSegments(raw string, f func(written, decoded string) (string, error)) (string, error) {
	written, decoded := PathSegments(raw)
	out := make([]string, len(written))
	for i := range written {
		s, err := f(written[i], decoded[i])
		if err != nil {
			return "", err
		}
		out[i] = s
	}
	p, start := writtenPath(raw)
	return raw[:start] + strings.Join(out, "/") + raw[start+len(p):], nil
}

// pathCredentials returns the segments of raw's path (PathSegments), the
// indexes of those that look like a credential once decoded, and those
// decoded.
func pathCredentials(raw string) (segs []string, at []int, decoded []string) {
	segs, all := PathSegments(raw)
	for i, d := range all {
		if credentialLike(d) {
			at = append(at, i)
			decoded = append(decoded, d)
		}
	}
	return segs, at, decoded
}

// sentCredentials returns the decoded path segments that look like a
// credential in the path Go sends for raw (url.URL's EscapedPath): when
// the path as written is not a valid encoding, Go escapes the decoded path
// again, and a %2F in a segment becomes a '/' between two.
func sentCredentials(raw string) (decoded []string) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	for s := range strings.SplitSeq(u.EscapedPath(), "/") {
		d, err := url.PathUnescape(s)
		if err != nil {
			d = s
		}
		if credentialLike(d) {
			decoded = append(decoded, d)
		}
	}
	return decoded
}

// credentialForms are the forms of every credential the URL raw holds in
// its path, as written or as sent (pathForms of each).
func credentialForms(raw string) []string {
	var forms []string
	segs, at, decoded := pathCredentials(raw)
	for k, i := range at {
		forms = append(append(forms, segs[i]), pathForms(decoded[k])...)
	}
	for _, d := range sentCredentials(raw) {
		forms = append(forms, pathForms(d)...)
	}
	return forms
}

// HasCredentialShape reports whether the URL raw has a path segment (as
// written or as sent) or a query key that looks like a credential (what
// SanitizeURL replaces).
func HasCredentialShape(raw string) bool {
	if _, at, _ := pathCredentials(raw); len(at) > 0 || len(sentCredentials(raw)) > 0 {
		return true
	}
	_, bad := queryKeyCredentials(raw)
	return len(bad) > 0
}

// queryKeyCredentials returns the query of raw split at '&', and the
// indexes of the parameters whose key (decoded) looks like a credential:
// a key with no value (?sk-ak-...) is a credential as much as a value is.
func queryKeyCredentials(raw string) (parts []string, at []int) {
	i := strings.IndexByte(raw, '?')
	if i < 0 {
		return nil, nil
	}
	q := raw[i+1:]
	if j := strings.IndexByte(q, '#'); j >= 0 {
		q = q[:j]
	}
	parts = strings.Split(q, "&")
	for k, kv := range parts {
		key, _, _ := strings.Cut(kv, "=")
		if d, err := url.QueryUnescape(key); err == nil {
			key = d
		}
		if credentialLike(key) {
			at = append(at, k)
		}
	}
	return parts, at
}

// pathForms are the forms a path segment's value takes in what is written
// about a URL: as it is, path-escaped (url.PathEscape), and as Go escapes
// a path again when the URL's own form is not a valid encoding (a '/' and
// a ';' kept).
func pathForms(v string) []string {
	return []string{v, url.PathEscape(v), (&url.URL{Path: v}).EscapedPath(), url.QueryEscape(v)}
}

// AddPathValue records v, a credential that is a segment of a URL's path,
// in each form it can take there (pathForms); false when v is too short
// to be redacted (MinLen).
func (s *Set) AddPathValue(label, v string) bool {
	ok := true
	for _, f := range pathForms(v) {
		ok = s.Add(label, f) && ok
	}
	return ok
}
