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
// UUID, or 32 hexadecimal digits or more, or a run of at least 12 bytes (between separators - _ . ~ + = :)
// with at least two each of two of lowercase, uppercase and digits, whose
// class changes at least every fourth byte — what random tokens are and
// path words (mcp-server-2025-06-18, streamableHttpServer, v1) are not.
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
	for piece := range strings.FieldsFuncSeq(seg, func(r rune) bool { return strings.ContainsRune("-_.~+=:", r) }) {
		if len(piece) < 12 {
			continue
		}
		// The class of each byte (lowercase, uppercase, digit, other), and
		// how often it changes: often in a random token, at the few word
		// boundaries of a path word (streamableHttp, v20250618release).
		var n [4]int
		changes, prev := 0, -1
		for i := 0; i < len(piece); i++ {
			k := 3
			switch c := piece[i]; {
			case c >= 'a' && c <= 'z':
				k = 0
			case c >= 'A' && c <= 'Z':
				k = 1
			case c >= '0' && c <= '9':
				k = 2
			}
			n[k]++
			if prev >= 0 && k != prev {
				changes++
			}
			prev = k
		}
		classes := 0
		for _, c := range n[:3] {
			if c >= 2 {
				classes++
			}
		}
		if classes >= 2 && changes*4 >= len(piece) {
			return true
		}
	}
	return false
}

// pathCredentials returns the indexes, in the segments of u's escaped path
// split at '/', of those that look like a credential once decoded, with
// each segment as written and decoded.
func pathCredentials(u *url.URL) (segs []string, at []int, decoded []string) {
	segs = strings.Split(u.EscapedPath(), "/")
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil {
			d = s
		}
		if credentialLike(d) {
			at = append(at, i)
			decoded = append(decoded, d)
		}
	}
	return segs, at, decoded
}
