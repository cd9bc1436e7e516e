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
	// encoded are the encodings of the secrets, as secrets of their own
	// whose clipped prefixes count from MinRun bytes (clippedLabelIn).
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
	// The encoded spellings (runs.go), after every written one: a form
	// that is both is written.
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

// encoded adds the encodings of a secret (runs.go), whose clipped
// prefixes count from MinRun characters, and returns them as secrets of
// their own for clippedLabelIn (none for a downstream's credential, of
// which no clipped prefix counts).
func (k *collector) encoded(sec secret) []secret {
	var out []secret
	b64, hx := encodings(sec.value)
	for i, e := range slices.Concat(b64, hx) {
		what := "the base64 encoding of "
		if i >= len(b64) {
			what = "the hexadecimal encoding of "
		}
		if k.add(e, anchorIn(e), "", MinRun, sec, what+sec.label) && sec.forwarded == 0 {
			out = append(out, secret{value: e, label: what + sec.label, floor: MinRun, clip: newForm(e)})
		}
	}
	return out
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
