package redact

import (
	"encoding/base64"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// A gateway that forwards a downstream's Authorization upstream (the
// proxy on loopback without a listen token) sends a credential it did not
// choose and cannot verify: any local client may send any value. Its
// redaction is for an upstream that echoes it where the downstream does
// not read alone: into another session's answers, the decision log,
// spans, stderr. But every secret of a Set is redacted from everything
// the process writes, so a value recorded as it came would let one client
// choose text to cut out of every other client's answers and the audit
// trail ("Bearer search_issues": a tool's name; `Bearer "jsonrpc":"2.0"`:
// the JSON of every message), and a client sending a fresh value with
// each request would grow the Set, and the work of each rebuild of it,
// without bound. So, unlike the run's own secrets (a --header, URL
// credentials, env values: every one of MinLen bytes or more, each kept
// for the run), a downstream's credential is
//
//   - recorded only when it can be told apart from ordinary text
//     (distinguishable): the credential after the auth scheme (or the
//     whole value, without one), of minCredential to maxForwardedLen
//     bytes, in a bearer token's characters (RFC 7235 token68: letters,
//     digits, - . _ ~ + / and trailing =), holding a part that counts
//     (runs.go): 12 letters and digits in a row that look random. Text
//     that holds it whole holds those 12, which no word, identifier,
//     JSON or counting sequence does. For Basic, the decoded password
//     too, when it is told apart so itself;
//   - redacted whole, in every form a run's own secret is (written,
//     spelled, encoded) and by its parts, but never as a clipped prefix
//     (a prefix of words would be ordinary text): a clipped echo loses
//     only its parts that count;
//   - one of at most MaxForwarded held, the least recently seen evicted
//     when another arrives (a credential seen again is the most recent);
//     adding one rebuilds a Set of the run's secrets and at most
//     MaxForwarded credentials of at most maxForwardedLen bytes: bounded
//     work, however many were seen before.
//
// Not covered: a credential that is not told apart (shorter than
// minCredential, a password or a value of words, other characters,
// longer than maxForwardedLen) is forwarded but not redacted, and a
// credential evicted (MaxForwarded others seen since it was last seen:
// one client sending fresh values evicts the others' until their next
// request) is no longer redacted. And a client can still choose a value
// to be redacted from everyone's output when it knows text there that
// holds 12 letters and digits that look random (an identifier, a digest
// another session's answer shows); it cannot choose words.

// MaxForwarded is how many downstreams' credentials a Set holds at once.
const MaxForwarded = 16

// maxForwardedLen is the longest downstream credential recorded, in
// bytes: a JWT with many claims fits.
const maxForwardedLen = 4096

// heldCredential is a header value a downstream sent whose credential a
// Set holds, and the id its secrets carry (secret.forwarded).
type heldCredential struct {
	value string
	id    uint64
}

// AddForwarded records the credential of a header value a downstream
// sent that the gateway forwards (its Authorization) when it can be told
// apart from ordinary text, among at most MaxForwarded, and reports
// whether it is held (see above). A value seen again costs a look-up.
func (s *Set) AddForwarded(name, value string) bool {
	if s == nil {
		return false
	}
	value = strings.TrimSpace(value)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, h := range s.forwarded {
		if h.value == value {
			s.forwarded = append(slices.Delete(s.forwarded, i, i+1), h) // the most recently seen now
			return true
		}
	}
	creds := forwardedCredentials(value)
	if len(creds) == 0 {
		return false
	}
	if len(s.forwarded) >= MaxForwarded {
		gone := s.forwarded[0].id
		s.forwarded = slices.Delete(s.forwarded, 0, 1)
		// A new array: a reader may hold a view of the old one.
		s.secrets = slices.DeleteFunc(slices.Clone(s.secrets), func(x secret) bool { return x.forwarded == gone })
		s.built = false
	}
	s.lastID++
	s.forwarded = append(s.forwarded, heldCredential{value: value, id: s.lastID})
	label := "the credential a downstream sent in header " + name
	for _, c := range creds {
		if i := slices.IndexFunc(s.secrets, func(x secret) bool { return x.value == c }); i >= 0 {
			if s.secrets[i].forwarded != 0 {
				// Another value a downstream sent holds it too (another
				// scheme's spelling): it goes with the later.
				x := s.secrets[i]
				x.forwarded = s.lastID
				s.secrets = replaced(s.secrets, i, x)
			}
			continue // or the run's own
		}
		x := newSecret(label, c, false)
		x.forwarded, x.floor = s.lastID, len(c)
		s.secrets = append(s.secrets, x)
		s.built = false
	}
	return true
}

// ForwardedHeld is how many downstreams' credentials s holds (at most
// MaxForwarded).
func (s *Set) ForwardedHeld() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.forwarded)
}

// forwardedCredentials are the secrets AddForwarded records of a header
// value: its credential (after the auth scheme, or the value without
// one) and a Basic credential's password, each when distinguishable.
func forwardedCredentials(value string) []string {
	cred := value
	scheme, rest, ok := strings.Cut(value, " ")
	if ok && httpguts.ValidHeaderFieldName(scheme) {
		cred = strings.TrimSpace(rest)
	}
	if !distinguishable(cred) {
		return nil
	}
	out := []string{cred}
	if ok && strings.EqualFold(scheme, "Basic") {
		if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
			if _, pass, ok := strings.Cut(string(dec), ":"); ok && distinguishable(pass) {
				out = append(out, pass)
			}
		}
	}
	return out
}

// distinguishable reports whether a credential a downstream sent can be
// told apart from ordinary text (AddForwarded): minCredential to
// maxForwardedLen bytes of token68 (letters, digits, - . _ ~ + /, then
// = only), with a run of MinRun letters and digits or more that holds
// MinRun in a row that look random (randomLooking), in a run that does
// not begin "eyJ" (a JWT's header and claims, which its issuer's other
// tokens share: its signature counts).
func distinguishable(cred string) bool {
	if len(cred) < minCredential || len(cred) > maxForwardedLen {
		return false
	}
	body := strings.TrimRight(cred, "=")
	for i := 0; i < len(body); i++ {
		if c := body[i]; !alnum(c) && strings.IndexByte("-._~+/", c) < 0 {
			return false
		}
	}
	for i := 0; i < len(body); {
		j := i
		for j < len(body) && alnum(body[j]) {
			j++
		}
		if t := body[i:j]; len(t) >= MinRun && !strings.HasPrefix(t, "eyJ") {
			for w := 0; w+MinRun <= len(t); w++ {
				if randomLooking(t[w : w+MinRun]) {
					return true
				}
			}
		}
		i = j + 1
	}
	return false
}
