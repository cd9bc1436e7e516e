package redact

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// compiled is what the secrets are looked for with, made once per change.
type compiled struct {
	rep *strings.Replacer
	// forms are every form of every secret, longest first; short are the
	// ones shorter than MinRun, which the index does not hold.
	forms, short []form
	ix           *index
	// encoded are the other spellings of the secrets whose clipped
	// prefixes count, as secrets of their own (clippedLabelIn): a
	// hexadecimal secret's other letter case, from as many bytes as the
	// secret's own, and the encodings, from MinRun bytes.
	encoded []secret
}

// compiled builds (once per change) the replacer of every form of every
// secret, longest first so a whole secret wins over a part of it, the
// forms the clipped-prefix pass looks for, and the index of the forms of
// MinRun bytes or more and of the secrets' runs (runs.go).
func (s *Set) compiled() *compiled {
	s.mu.RLock()
	if s.built {
		c := s.c
		s.mu.RUnlock()
		return c
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.built {
		return s.c
	}
	s.built = true
	s.c = nil
	if len(s.secrets) == 0 {
		return nil
	}
	s.c = s.compile()
	return s.c
}

// compile makes the forms of every secret (compiled).
func (s *Set) compile() *compiled {
	c := &compiled{}
	k := &collector{seen: map[string]bool{}}
	var values, labels []string
	for _, sec := range s.secrets {
		values, labels = append(values, sec.value), append(labels, sec.label)
		k.written(sec, s.escapers)
	}
	// The spellings that lose nothing of a secret (the other case of a
	// hexadecimal one, every byte percent-encoded, reversed), after every
	// written form: a form that is both is written.
	for _, sec := range s.secrets {
		for _, v := range hexCases(sec.value) {
			values, labels = append(values, v), append(labels, sec.label)
		}
		c.encoded = append(c.encoded, k.spelled(sec)...)
	}
	// The encoded spellings (runs.go), after every written one.
	for _, sec := range s.secrets {
		c.encoded = append(c.encoded, k.encoded(sec)...)
	}
	needles := k.needles
	slices.SortStableFunc(needles, func(a, b form) int { return len(b.text) - len(a.text) })
	pairs := make([]string, 0, 2*len(needles))
	for _, n := range needles {
		pairs = append(pairs, n.text, Placeholder)
		f := newForm(n.text)
		f.anchor, f.label, f.floor = n.anchor, n.label, max(n.floor, MinLen)
		c.forms = append(c.forms, f)
		if len(f.text) < MinRun {
			c.short = append(c.short, f)
		}
	}
	c.rep = strings.NewReplacer(pairs...)
	c.ix = newIndex(c.forms, values, labels)
	return c
}

// collector gathers the forms of the secrets, each once (compile).
type collector struct {
	seen    map[string]bool
	needles []form
}

// add records form n of a secret, and reports whether it is new; scheme
// is the same spelling of the secret's auth scheme (schemePart), which a
// clipped prefix must go past; floor, when not 0, is the shortest clipped
// prefix that counts instead. A downstream's credential (secret.forwarded)
// has none that counts.
func (k *collector) add(n, anchor, scheme string, floor int, sec secret, label string) bool {
	if len(n) < MinLen || k.seen[n] {
		return false
	}
	k.seen[n] = true
	f := form{text: n, label: label, floor: floor}
	if anchor != "" && strings.Contains(n, anchor) {
		f.anchor = anchor
	}
	if scheme != "" && strings.HasPrefix(n, scheme) {
		f.floor = len(scheme) + MinLen
	}
	if sec.forwarded != 0 {
		f.floor = len(n)
	}
	k.needles = append(k.needles, f)
	return true
}

// written adds the forms a secret is written in. A secret reaches the
// output through up to three layers, and each composition is a form: how
// mcpdrift quoted it in a message (as it is, Escape, the inside of Quote,
// of Quote twice, EscapeASCII's, Go's quote, which a library's message may
// carry), how a renderer wrote that text (as it is, or a layer a renderer
// registered with AddEscaper: Markdown, SARIF, HTML), and how the document
// encodes a string (as it is, or JSON: a report, a SARIF log). Query and
// path escaping are the raw value's (a URL).
func (k *collector) written(sec secret, escapers []func(string) string) {
	a, vs := anchorIn(sec.value), spaced(sec.value)
	sp := ""
	if sec.auth {
		sp = schemePart(sec.value)
	}
	k.add(url.QueryEscape(sec.value), a, url.QueryEscape(sp), 0, sec, sec.label)
	k.add(url.PathEscape(sec.value), a, url.PathEscape(sp), 0, sec, sec.label)
	layers := append([]func(string) string{func(x string) string { return x }}, escapers...)
	inner := map[string]bool{}
	for _, q := range inners {
		for _, v := range vs {
			t := q(v)
			if inner[t] {
				continue // a value with nothing to escape has one form
			}
			inner[t] = true
			ts := ""
			if vsp := schemePart(v); vsp != "" && sec.auth {
				ts = q(vsp)
			}
			for _, l := range layers {
				u, us := l(t), ""
				if ts != "" {
					us = l(ts)
				}
				for _, w := range wires {
					ws := ""
					if us != "" {
						ws = w(us)
					}
					k.add(w(u), a, ws, 0, sec, sec.label)
				}
			}
		}
	}
}

// inners are how mcpdrift quotes a secret in a message (written).
var inners = []func(string) string{
	func(x string) string { return x },
	safetext.Escape,
	quoteInside,
	func(x string) string { return quoteInside(quoteInside(x)) }, // a quoted message quoted again
	safetext.EscapeASCII,
	func(x string) string { q := safetext.QuoteASCII(x); return q[1 : len(q)-1] },
	func(x string) string { q := strconv.Quote(x); return q[1 : len(q)-1] },
}

// wires are how a document encodes a string (written).
var wires = []func(string) string{func(x string) string { return x }, jsonEscape, jsonEscapeNoHTML}

// spelled adds the spellings of a secret that lose nothing of it: a
// hexadecimal secret in the other letter case (hexCases: the same token
// to a hex decoder), the secret and those with every byte
// percent-encoded, with uppercase hex digits or lowercase (what a URL's
// reader decodes whole), and the secret reversed. A clipped prefix
// counts from as many bytes of the secret as it does written (MinLen
// past an auth scheme): three characters each when percent-encoded. It
// returns the other letter case as secrets of their own for
// clippedLabelIn (FindInValue reads a percent-encoded string decoded).
func (k *collector) spelled(sec secret) []secret {
	var out []secret
	for _, v := range append([]string{sec.value}, hexCases(sec.value)...) {
		if v != sec.value && k.add(v, anchorIn(v), "", 0, sec, sec.label) && sec.forwarded == 0 {
			out = append(out, secret{value: v, label: sec.label, floor: sec.floor, clip: newForm(v)})
		}
		for _, upper := range []bool{true, false} {
			k.add(percentAll(v, upper), "", "", 3*sec.floor, sec, sec.label)
		}
	}
	// Its characters in reverse order, as it is: a secret of MinRun bytes
	// or more, whole (its clipped prefix is the secret's end).
	if r := reversed(sec.value); len(r) >= MinRun {
		k.add(r, anchorIn(r), "", len(r), sec, "the reverse of "+sec.label)
	}
	return out
}

// reversed is v's bytes in reverse order.
func reversed(v string) string {
	b := []byte(v)
	slices.Reverse(b)
	return string(b)
}

// encoded adds the encodings of a secret (runs.go), whose clipped
// prefixes count from MinRun characters, and returns them as secrets of
// their own for clippedLabelIn (none for a downstream's credential, of
// which no clipped prefix counts).
func (k *collector) encoded(sec secret) []secret {
	var out []secret
	b64, hx, b32 := encodings(sec.value)
	for i, e := range slices.Concat(b64, hx, b32) {
		what := "the base64 encoding of "
		switch {
		case i >= len(b64)+len(hx):
			what = "the base32 encoding of "
		case i >= len(b64):
			what = "the hexadecimal encoding of "
		}
		if k.add(e, anchorIn(e), "", MinRun, sec, what+sec.label) && sec.forwarded == 0 {
			out = append(out, secret{value: e, label: what + sec.label, floor: MinRun, clip: newForm(e)})
		}
	}
	return out
}

// hexCases are the spellings of v in lowercase and uppercase that differ
// from it when v is hexadecimal (digits and the letters a to f, and
// dashes as a UUID has, MinLen or more): the same token to a hex decoder
// or a UUID's reader.
func hexCases(v string) []string {
	letter := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			letter = true
		case c >= '0' && c <= '9' || c == '-':
		default:
			return nil
		}
	}
	if !letter || len(v) < MinLen {
		return nil
	}
	var out []string
	for _, x := range []string{strings.ToLower(v), strings.ToUpper(v)} {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// percentAll is v with every byte percent-encoded (%XX), with uppercase
// hex digits or lowercase.
func percentAll(v string, upper bool) string {
	digits := "0123456789abcdef"
	if upper {
		digits = "0123456789ABCDEF"
	}
	b := make([]byte, 0, 3*len(v))
	for i := 0; i < len(v); i++ {
		b = append(b, '%', digits[v[i]>>4], digits[v[i]&15])
	}
	return string(b)
}

// shortIn is the first of the forms (shorter than MinRun, which the index
// does not hold) that text holds, or nil: a scan for each anchor (a
// secret's longest run of letters and digits, which every form of it
// keeps: text that lacks it lacks the form) spares one per form.
func shortIn(text string, forms []form) *form {
	absent := ""  // the last anchor found absent
	present := "" // the last anchor found present
	for i, f := range forms {
		if a := f.anchor; a != "" && a != present {
			if a == absent {
				continue
			}
			if !strings.Contains(text, a) {
				absent = a
				continue
			}
			present = a
		}
		if strings.Contains(text, f.text) {
			return &forms[i]
		}
	}
	return nil
}
