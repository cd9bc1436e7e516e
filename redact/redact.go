// Package redact keeps the secrets a run sent (header values, URL
// credentials and query values, environment values given to a stdio
// child) and removes them from every byte the run writes or prints.
//
// mcpdrift knows every secret it sends, so it does not guess at what looks
// like a token (but for a URL's path segments, urlpath.go): it redacts
// exactly those values, wherever they turn up — in
// a tool description a server echoed them into, in an error message, in a
// URL. A secret is searched for in each form an mcpdrift renderer could
// have written it in (raw, escaped or quoted by safetext, through the
// layers the report renderers register with AddEscaper, JSON-escaped, and
// each composition of those; URL-escaped), and also
// as a clipped prefix (of at least MinLen bytes, past the auth scheme of
// an authorization value) right before "…" (safetext.Clip cuts long
// untrusted text that way), so a message that cut a secret in half does
// not print the half. And as a server may echo it otherwise (runs.go):
// base64-encoded at any alignment in either alphabet, in hexadecimal, or
// in base32 at any alignment; spelled so that a reader gets it back whole
// (forms.go: every byte percent-encoded, a hexadecimal secret in the
// other letter case, reversed); and in part, MinRun or more characters of
// a run of its letters and digits that looks random, wherever they are.
//
// A value shorter than MinLen cannot be told apart from ordinary text: it
// is sent but not redacted, and Add reports it so the caller can say so.
// A credential a downstream sent that a gateway forwards is not the run's
// choice: it is held only when it cannot be ordinary text, and among a
// bounded few (AddForwarded, forwarded.go).
//
// Redaction is for what is written. Digests are always computed from the
// bytes the server sent; an artifact that would have to carry a secret (a
// snapshot of a tool list that reflects a credential) is refused by its
// writer, using Find, rather than rewritten.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"golang.org/x/net/http/httpguts"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Placeholder replaces a secret in output.
const Placeholder = "[REDACTED]"

// MinLen is the shortest value redacted (in bytes).
const MinLen = 6

// ellipsis is what safetext.Clip appends to clipped text.
const ellipsis = "…"

// Set is a set of secrets. The zero value is empty and ready; a nil *Set
// redacts nothing. It is safe for concurrent use.
type Set struct {
	mu sync.RWMutex
	// secrets are appended to, or replaced by a new array, never changed
	// in place: a reader holds a view of them outside the lock (Find,
	// FindInValue).
	secrets  []secret
	escapers []func(string) string
	c        *compiled // nil until built, or when there is nothing to redact
	built    bool
	// forwarded are the downstreams' credentials held (AddForwarded),
	// least recently seen first, at most MaxForwarded; lastID numbers
	// them.
	forwarded []heldCredential
	lastID    uint64
}

type secret struct {
	value string
	label string // where it came from, e.g. "the value of header Authorization"; never the value
	// auth says value is an Authorization header's "Scheme credential":
	// a clipped prefix of it counts only past the scheme (schemePart).
	auth bool
	// floor is the shortest clipped prefix of value that counts (MinLen,
	// past the scheme when auth), and clip value's KMP table: both made
	// once, when the secret is recorded, for clippedLabelIn.
	floor int
	clip  form
	// forwarded is the id of the downstream's credential (AddForwarded)
	// this is, 0 for the run's own secrets: no clipped prefix of it counts
	// (floor is its length), and it goes when the credential is evicted.
	forwarded uint64
}

// newSecret is a secret with what clippedLabelIn reads of it.
func newSecret(label, value string, auth bool) secret {
	floor := MinLen
	if auth {
		floor += len(schemePart(value))
	}
	return secret{value: value, label: label, auth: auth, floor: floor, clip: newForm(value)}
}

// replaced is secrets with secrets[i] replaced by x, in a new array: a
// reader may hold a view of the old one.
func replaced(secrets []secret, i int, x secret) []secret {
	out := slices.Clone(secrets)
	out[i] = x
	return out
}

// AddEscaper registers a renderer's layer: how it writes text that
// safetext already escaped or quoted (Markdown's escaping of a message,
// SARIF's brackets, the HTML report's markup). A secret is looked for in
// every form of it through each layer, JSON-encoded or not.
func (s *Set) AddEscaper(f func(string) string) {
	if s == nil || f == nil {
		return
	}
	s.mu.Lock()
	s.escapers = append(s.escapers, f)
	s.built = false
	s.mu.Unlock()
}

// Add records a secret value and where it came from (label never holds
// the value). It reports false when the value is too short to be redacted
// (it is then not recorded). Empty values are ignored (and reported true).
func (s *Set) Add(label, value string) bool {
	return s.add(label, value, false)
}

// add is Add of a value that is an authorization value when auth
// (secret.auth; recorded before as another, it becomes one).
func (s *Set) add(label, value string, auth bool) bool {
	if s == nil || value == "" {
		return true
	}
	if len(value) < MinLen {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.secrets {
		if x.value == value {
			if auth && !x.auth || x.forwarded != 0 {
				// An authorization value now, or the run's own (a
				// downstream sent it first: it is no longer evicted).
				l := x.label
				if x.forwarded != 0 {
					l = label
				}
				s.secrets = replaced(s.secrets, i, newSecret(l, value, auth || x.auth))
				s.built = false
			}
			return true
		}
	}
	s.secrets = append(s.secrets, newSecret(label, value, auth))
	s.built = false
	return true
}

// AddHeader records the value of a header sent, and the credential inside
// an authorization value: for "Bearer T" also T, for "Basic B64" also the
// decoded "user:pass" and its two halves. It returns the labels of the
// parts too short to redact.
func (s *Set) AddHeader(name, value string) (short []string) {
	label := "the value of header " + name
	value = strings.TrimSpace(value)
	if !s.add(label, value, strings.EqualFold(name, "Authorization") || strings.EqualFold(name, "Proxy-Authorization")) {
		short = append(short, label)
	}
	scheme, cred, ok := strings.Cut(value, " ")
	cred = strings.TrimSpace(cred)
	if !ok || cred == "" || !httpguts.ValidHeaderFieldName(scheme) {
		return short
	}
	// The credential after an auth scheme, on its own: a server may echo
	// the token without the scheme.
	if !s.Add(label, cred) {
		// The scheme is not named: in a value that is no "Scheme
		// credential" (another header's), the first word is the secret.
		short = append(short, label+" (the part after its first word)")
	}
	if strings.EqualFold(scheme, "Basic") {
		if dec, err := base64.StdEncoding.DecodeString(cred); err == nil && utf8.Valid(dec) {
			user, pass, _ := strings.Cut(string(dec), ":")
			s.Add(label, string(dec))
			s.Add(label+" (user)", user)
			if !s.Add(label+" (password)", pass) {
				short = append(short, label+" (the Basic password)")
			}
		}
	}
	return short
}

// AddURL records the credentials a URL carries: the user info (user name
// and password), every query value, and every path segment that looks like
// a credential (urlpath.go), decoded and as written.
func (s *Set) AddURL(raw string) (short []string) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	if u.User != nil {
		s.Add("the user info of the URL", u.User.String())
		if !s.Add("the user name of the URL", u.User.Username()) {
			short = append(short, "the user name of the URL")
		}
		if p, ok := u.User.Password(); ok && !s.Add("the password of the URL", p) {
			short = append(short, "the password of the URL")
		}
	}
	for _, f := range credentialForms(raw) {
		s.Add("a path segment of the URL that looks like a credential", f)
	}
	if parts, keys := queryKeyCredentials(raw); len(keys) > 0 {
		for _, k := range keys {
			key, _, _ := strings.Cut(parts[k], "=")
			s.Add("a query key of the URL that looks like a credential", key)
			if d, err := url.QueryUnescape(key); err == nil {
				s.AddPathValue("a query key of the URL that looks like a credential", d)
			}
		}
	}
	if u.RawQuery != "" {
		for _, kv := range strings.Split(u.RawQuery, "&") {
			k, v, _ := strings.Cut(kv, "=")
			label := "a query value of the URL"
			if dk, err := url.QueryUnescape(k); err == nil {
				label = "the URL query parameter " + safetext.Quote(dk)
			}
			if v == "" {
				continue
			}
			ok := s.Add(label, v)
			if dv, err := url.QueryUnescape(v); err == nil {
				ok = s.Add(label, dv) && ok
			}
			if !ok {
				short = append(short, label)
			}
		}
	}
	return short
}

// Empty reports whether there is nothing to redact.
func (s *Set) Empty() bool {
	if s == nil {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.secrets) == 0
}

// form is one written form of a secret with its KMP failure table, for
// finding the longest prefix of it that ends right before an ellipsis.
type form struct {
	text string
	fail []int
	// anchor is the secret's longest run of ASCII letters and digits,
	// which every form of it holds as it is (no escaper touches them):
	// text that lacks it lacks the form, and one scan for the anchor
	// spares one per form (a secret with characters the layers escape
	// has dozens). "" when the run is too short to tell.
	anchor string
	// floor is the shortest clipped prefix of the form that counts:
	// MinLen bytes past the form's auth scheme and the space after it
	// ("Bearer " of "Bearer tok…"), as a secret counts only with MinLen
	// bytes ("Bearer…" and "Bearer tok…" are text like any other; the
	// credential, a secret of its own, is looked for on its own too);
	// MinRun characters of an encoding (runs.go), which is letters and
	// digits that a hex dump or a base64 blob shares in its first bytes.
	floor int
	// label is the label of the secret it is a form of (for Find).
	label string
}

// schemePart is the auth scheme of an authorization value and the space
// after it ("Bearer " of "Bearer tok_1"), as AddHeader reads a scheme, or
// "" when x has none. Only an Authorization header's value is read so
// (secret.auth): the first word of any other secret is part of it.
func schemePart(x string) string {
	scheme, cred, ok := strings.Cut(x, " ")
	if !ok || strings.TrimSpace(cred) == "" || !httpguts.ValidHeaderFieldName(scheme) {
		return ""
	}
	return scheme + " "
}

// anchorIn is the longest run of ASCII letters and digits of x, or ""
// when it is shorter than MinLen.
func anchorIn(x string) string {
	best, start := "", -1
	for i := 0; i <= len(x); i++ {
		alnum := i < len(x) && (x[i] >= 'a' && x[i] <= 'z' || x[i] >= 'A' && x[i] <= 'Z' || x[i] >= '0' && x[i] <= '9')
		switch {
		case alnum && start < 0:
			start = i
		case !alnum && start >= 0:
			if i-start > len(best) {
				best = x[start:i]
			}
			start = -1
		}
	}
	if len(best) < MinLen {
		return ""
	}
	return best
}

func newForm(t string) form {
	f := make([]int, len(t))
	for i, k := 1, 0; i < len(t); i++ {
		for k > 0 && t[i] != t[k] {
			k = f[k-1]
		}
		if t[i] == t[k] {
			k++
		}
		f[i] = k
	}
	return form{text: t, fail: f}
}

// longestPrefixBefore returns the length of the longest proper prefix of
// the form that window ends with.
func (f form) longestPrefixBefore(window string) int {
	k := 0
	for i := 0; i < len(window); i++ {
		k = f.step(k, window[i])
	}
	if k == len(f.text) {
		return 0 // a whole form was replaced already
	}
	return k
}

// step is the KMP matcher's move: the longest prefix of the form that
// text ends with, from k for the text before c.
func (f form) step(k int, c byte) int {
	for k > 0 && (k == len(f.text) || c != f.text[k]) {
		k = f.fail[k-1]
	}
	if k < len(f.text) && c == f.text[k] {
		k++
	}
	return k
}

// clipped replaces a secret's prefix that ends right before an ellipsis
// (what safetext.Clip leaves of a secret it cut), when it holds at least
// the form's floor (MinLen bytes past the secret's auth scheme, MinRun of
// an encoding). The ellipsis is found in
// each spelling a document carries it in: as it is, JSON-escaped
// (\u2026: a snapshot holds a server's bytes as sent) and percent-encoded.
//
// long says the text may hold a shortest prefix that counts of MinRun
// bytes or more (the index looked for them): without it, only the forms
// whose floor is shorter are looked for.
func clipped(text string, forms []form, long bool) string {
	type cut struct{ at, n int }
	var cuts []cut
	for _, e := range ellipses {
		for i := 0; ; {
			j := strings.Index(text[i:], e)
			if j < 0 {
				break
			}
			cuts = append(cuts, cut{i + j, len(e)})
			i += j + len(e)
		}
	}
	if len(cuts) == 0 {
		return text
	}
	// Only the forms whose shortest prefix that counts is in text can be
	// cut in it: one scan each, so that a text of many ellipses and no
	// secret (a hostile one) costs no more than its length.
	var live []form
	for _, f := range forms {
		if n := f.floor; n < len(f.text) && (long || n < MinRun) && strings.Contains(text, f.text[:n]) {
			live = append(live, f)
		}
	}
	if len(live) == 0 {
		return text
	}
	forms = live
	slices.SortFunc(cuts, func(a, b cut) int { return a.at - b.at })
	var b strings.Builder
	last := 0
	for _, c := range cuts {
		p := c.at
		if p < last {
			continue
		}
		best := 0
		for _, f := range forms {
			// A proper prefix of the form is shorter than the form.
			lo := max(last, p-len(f.text)+1)
			if k := f.longestPrefixBefore(text[lo:p]); k > best && k >= f.floor {
				best = k
			}
		}
		if best >= MinLen {
			b.WriteString(text[last : p-best])
			b.WriteString(Placeholder)
			last = p
		}
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// ellipses are the spellings of "…" the clipped-prefix pass looks for.
var ellipses = []string{ellipsis, `\u2026`, "%E2%80%A6", "%e2%80%a6"}

func (s *Set) redact(text string) string {
	c := s.compiled()
	if c == nil {
		return text
	}
	// Most outputs hold no secret: one pass of the index (a form of
	// MinRun bytes or more, a secret's part) and a scan per short form
	// are much cheaper than the replacer's byte-by-byte walk, which runs
	// only when some form is there.
	f := c.ix.present(text)
	if f.form || shortIn(text, c.short) != nil {
		text = c.rep.Replace(text)
		f.prefix, f.part = true, true // what the index found before is no longer where it was
	}
	text = clipped(text, c.forms, f.prefix)
	if f.part {
		// Placeholder holds no run of MinRun letters and digits, so what
		// was replaced before holds no part that was not there.
		text = c.ix.parts(text)
	}
	return text
}

// String returns text with every secret replaced by Placeholder.
func (s *Set) String(text string) string {
	if s == nil {
		return text
	}
	return s.redact(text)
}

// Bytes returns b with every secret replaced by Placeholder (b itself when
// there is nothing to redact).
func (s *Set) Bytes(b []byte) []byte {
	if s == nil {
		return b
	}
	if s.Empty() {
		return b
	}
	text := unsafe.String(unsafe.SliceData(b), len(b)) // read-only view: redact never writes to it
	out := s.redact(text)
	if len(out) == len(b) && out == text {
		return b
	}
	return []byte(out)
}

// Find reports the label of a secret that text contains, decoded text
// (a JSON string's value, say), or "" when it holds none: as it is, in
// any form the redaction writes over (escaped, base64, hexadecimal), or a
// part of it (runs.go: "a part of" the secret's label).
func (s *Set) Find(text string) string {
	if s == nil {
		return ""
	}
	c := s.compiled()
	s.mu.RLock()
	secrets := s.secrets // appended to, never changed: this view stays whole
	s.mu.RUnlock()
	return c.labelIn(secrets, text, false)
}

// labelIn is the label of what of the secrets text holds — a secret as
// it is, a prefix of it clipped (when clip), another form of it (an
// encoding included: runs.go), a part of it — or "".
func (c *compiled) labelIn(secrets []secret, text string, clip bool) string {
	if l := labelIn(secrets, text); l != "" || c == nil {
		return l
	}
	if clip {
		if l := clippedLabelIn(secrets, text); l != "" {
			return l
		}
		if l := clippedLabelIn(c.encoded, text); l != "" {
			return l
		}
	}
	if l := c.ix.label(text); l != "" {
		return l
	}
	if f := shortIn(text, c.short); f != nil {
		return f.label
	}
	return ""
}

// clippedLabelIn is "a clipped prefix of" the label of the first of
// secrets a proper prefix of which ends right before an ellipsis in text
// and holds at least MinLen bytes (past the scheme of an authorization
// value), or "". One pass over text per secret (a KMP matcher), so an
// adversarial text of many ellipses costs no more than its length.
func clippedLabelIn(secrets []secret, text string) string {
	if !strings.Contains(text, ellipsis) {
		return ""
	}
	for _, sec := range secrets {
		if len(sec.value) <= sec.floor {
			continue // no proper prefix long enough
		}
		k := 0 // the longest prefix of the secret that text[:i] ends with
		for i := 0; i < len(text); i++ {
			if k >= sec.floor && text[i] == ellipsis[0] && strings.HasPrefix(text[i:], ellipsis) {
				return "a clipped prefix of " + sec.label
			}
			k = sec.clip.step(k, text[i])
		}
	}
	return ""
}

// labelIn is the label of the first of secrets that text contains, or "".
func labelIn(secrets []secret, text string) string {
	for _, sec := range secrets {
		if strings.Contains(text, sec.value) {
			return sec.label
		}
	}
	return ""
}

// FindInValue reports the label of a secret found in any string or member
// name of a parsed JSON value (decoded, so an escaped spelling is found
// too, and percent-decoded as well: %74 for a "t"), whole or as a clipped
// prefix right before "…" (MinLen bytes or more past an auth scheme, as
// the redaction reads one: "a clipped prefix of" the secret's label), in
// the other forms and parts Find reads, and the JSON pointer where, or ""
// when there is none. It reads
// the document's decoded strings in place and builds the pointer only for
// what it finds: a live pin with a header checks every string of every
// tool, and copies and pointers for all of them would cost memory in
// proportion to the whole list.
func (s *Set) FindInValue(v jcs.Value) (label, pointer string) {
	if s.Empty() || !v.Valid() {
		return "", ""
	}
	c := s.compiled()
	s.mu.RLock()
	secrets := s.secrets // appended to, never changed: this view stays whole
	s.mu.RUnlock()
	find := func(b []byte) string {
		text := unsafe.String(unsafe.SliceData(b), len(b)) // read-only view of the document's bytes
		if l := c.labelIn(secrets, text, true); l != "" {
			return l
		}
		if strings.IndexByte(text, '%') >= 0 {
			// Percent-encoded as Go would not write it (%74 for a "t"): a
			// URL's reader decodes it to the secret all the same.
			if u := percentDecoded(text); u != text {
				return c.labelIn(secrets, u, true)
			}
		}
		return ""
	}
	// The path to the value being read: an array's index, or an object's
	// member name.
	type step struct {
		key   jcs.Value
		index int
	}
	path := make([]step, 0, 16)
	at := func() string {
		var b strings.Builder
		for _, st := range path {
			b.WriteByte('/')
			if st.key.Valid() {
				b.WriteString(jcs.PointerToken(st.key.Str()))
			} else {
				b.WriteString(strconv.Itoa(st.index))
			}
		}
		return b.String()
	}
	var walk func(v jcs.Value) bool
	walk = func(v jcs.Value) bool {
		switch v.Kind() {
		case jcs.String:
			if l := find(v.StrBytes()); l != "" {
				label, pointer = l, at()
				return true
			}
		case jcs.Array:
			for i := range v.Len() {
				path = append(path, step{index: i})
				if walk(v.Index(i)) {
					return true
				}
				path = path[:len(path)-1]
			}
		case jcs.Object:
			for i := range v.Len() {
				k, m := v.Member(i)
				path = append(path, step{key: k})
				if l := find(k.StrBytes()); l != "" {
					label, pointer = l, at()
					return true
				}
				if walk(m) {
					return true
				}
				path = path[:len(path)-1]
			}
		}
		return false
	}
	walk(v)
	return label, pointer
}

// percentDecoded is text with every well-formed %XX escape decoded, and
// every other byte (a malformed escape, a '+') as it is: what a URL's
// reader makes of a query value or a path segment, with no escape
// refused.
func percentDecoded(text string) string {
	var b []byte
	for i := 0; i < len(text); i++ {
		if text[i] == '%' && i+2 < len(text) {
			if v, err := strconv.ParseUint(text[i+1:i+3], 16, 8); err == nil {
				if b == nil {
					b = append(make([]byte, 0, len(text)), text[:i]...)
				}
				b = append(b, byte(v))
				i += 2
				continue
			}
		}
		if b != nil {
			b = append(b, text[i])
		}
	}
	if b == nil {
		return text
	}
	return string(b)
}

// Labels returns where the recorded secrets came from, sorted, without
// values.
func (s *Set) Labels() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, sec := range s.secrets {
		out = append(out, sec.label)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Writer returns a writer that redacts each Write before passing it on.
// Each Write must carry whole texts (a message, a document): a secret
// split across two writes is not found. mcpdrift writes whole texts.
func (s *Set) Writer(w io.Writer) io.Writer { return &writer{s: s, w: w} }

type writer struct {
	s *Set
	w io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	out := w.s.Bytes(p)
	if _, err := w.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// SanitizeURL returns raw with the user info removed, every query value
// emptied (names kept) and every path segment that looks like a credential
// replaced by Placeholder, for recording and display. A URL that does
// not parse is returned as a placeholder.
func SanitizeURL(raw string) string {
	if _, err := url.Parse(raw); err != nil {
		return "(an unparsable URL)"
	}
	// The credential segments replaced in the path as written (url.URL
	// would cut a path that is not a valid encoding elsewhere), and their
	// values wherever else the URL repeats them.
	forms := credentialForms(raw)
	raw, _ = MapPathSegments(raw, func(written, decoded string) (string, error) {
		if credentialLike(decoded) {
			return Placeholder, nil
		}
		return written, nil
	})
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		_, keys := queryKeyCredentials(raw)
		parts := strings.Split(u.RawQuery, "&")
		for i, kv := range parts {
			k, _, _ := strings.Cut(kv, "=")
			if slices.Contains(keys, i) {
				k = Placeholder
			}
			parts[i] = printableKey(k) + "="
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	u.Fragment, u.RawFragment = "", ""
	out := u.String()
	for _, f := range forms {
		if len(f) >= minCredential {
			out = strings.ReplaceAll(out, f, Placeholder)
		}
	}
	return out
}

// printableKey is a query key as a URL may carry it, with every byte a
// query may not hold as it is (RFC 3986: unreserved, sub-delims, ":", "@",
// "/", "?", and "%" of an escape) percent-encoded — a control or non-ASCII
// byte, a backslash, a quote: url.Parse keeps a query's raw bytes as they
// came, and a sanitized URL is printed.
func printableKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		// A '%' that begins no escape is written %25: as it is, the
		// sanitized URL read again would hold another key ("% 0" written
		// "%%200" reads as a malformed key, then taken for a credential).
		if c := k[i]; queryByte(c) && (c != '%' || i+2 < len(k) && isHexDigit(k[i+1]) && isHexDigit(k[i+2])) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// queryByte reports whether c may stand in a URL's query as it is.
func queryByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@/?%", c) >= 0
}

// spaced is x, and x with each run of white space made one space when
// that differs: a description's word diff splits text at white space and
// joins its words with spaces, so a secret with a tab or U+00A0 in it is
// written with a space there.
func spaced(x string) []string {
	if c := strings.Join(strings.FieldsFunc(x, unicode.IsSpace), " "); c != x {
		return []string{x, c}
	}
	return []string{x}
}

// quoteInside is what safetext.Quote writes between its quotes.
func quoteInside(x string) string {
	q := safetext.Quote(x)
	return q[1 : len(q)-1]
}

func jsonEscape(x string) string {
	b, _ := json.Marshal(x)
	return string(b[1 : len(b)-1])
}

func jsonEscapeNoHTML(x string) string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	enc.Encode(x)
	out := strings.TrimSuffix(sb.String(), "\n")
	return out[1 : len(out)-1]
}
