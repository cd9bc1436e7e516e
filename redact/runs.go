package redact

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"unsafe"
)

// A server may echo a secret other than as text: encoded (base64 of it
// inside a longer blob, hexadecimal), or in part (a tool named with a
// token's last 20 characters, a token split across two strings). Both are
// found here, in one pass over the text at any number of secrets:
//
//   - Encodings: the bytes of each secret in base64, standard and URL-safe
//     alphabets, at each of the three alignments of a 3-byte group (the
//     secret starting a blob, or 1 or 2 bytes into a group), each as the
//     stable core that does not depend on the bytes around the secret, and
//     whole as it is encoded alone, padded or not; in hexadecimal,
//     lowercase and uppercase; and in base32 (standard alphabet,
//     uppercase) the same way, at each of the five alignments of a 5-byte
//     group, of MinRun characters or more. They are forms like the escaped ones, written
//     over by the replacer, and clipped from MinRun characters (a hex dump or
//     a blob shares its first few with others).
//   - Parts: each run of MinRun or more ASCII letters and digits of a
//     secret whose 12-character windows look random (distinctRun). Any
//     MinRun consecutive characters of such a run that hold a window that
//     counts, found anywhere in the text, are redacted with whatever of the
//     run goes on around them (as far as the text goes on being the run).
//     A part shorter than MinRun is text like any other: 11 characters of a
//     token, a piece of a token split in three, a secret whose runs are all
//     shorter (a value in short words), are not found.
//
// Why windows must look random: a secret's part counts as the secret only
// where it cannot be ordinary text. A secret that is a common word, an
// identifier of words (XMLHttpRequest, productionEnvironment), a run of
// one repeated character or a counting sequence has parts that ordinary
// text holds, and a false alarm (a redacted word, a list refused as
// reflecting a credential it never saw) costs as much as a miss. So a
// window counts only when it is randomLooking — the judgement the package
// already makes of a URL's path segment, at its own floor of 12: two
// classes of letters and digits, and class changes as often as random keys
// have them and words do not. A window of a random key of letters and
// digits counts 94% of the time (a hexadecimal one 93%, base36 83%,
// base32 68%, mostly for lack of two digits), so a random key's last 20
// characters hold one 99.5% of the time (hexadecimal 99.2%, base36 96%,
// base32 88%). And a run that begins "eyJ" (base64 of `{"`: a JWT's header
// and claims, which other JWTs of the same issuer share in their first
// dozens of characters) has no parts that count: a JWT's part is its
// signature's.
//
// The pass: any MinRun bytes of a form or a run hold, at one of every
// stride positions of the text, the gramLen bytes there, which the index
// holds (a form's first stride grams; a run's grams that lie in a window
// that counts). So the text is read 4 bytes at every ninth position, a bit
// of a filter tested, and only a gram the filter lets through is looked up
// and checked against what it belongs to: a form compared whole, a run's
// part stride-1 bytes either side at most, unless it counts, when it is
// followed as far as the text goes on being the run, replaced and passed
// over. So the text is read once, whatever it holds; the work at a gram is
// bounded by how many forms and runs hold it.

// MinRun is the fewest consecutive characters of a secret's run (its
// letters and digits) that are redacted and found as the secret.
const MinRun = 12

const (
	gramLen   = 4
	stride    = MinRun - gramLen + 1 // any MinRun bytes hold a gram at a multiple of stride
	bloomBits = 16
)

// encodings are the spellings of the bytes of v as a server may encode
// them, of MinLen bytes or more, each once: base64 (the standard and
// URL-safe alphabets: whole, padded or not, and the core of each
// alignment), hexadecimal (lowercase and uppercase), and base32 (the
// standard alphabet, uppercase: whole, padded or not, and the core of
// each of the five alignments of a 5-byte group), of MinRun characters or
// more.
func encodings(v string) (b64, hx, b32 []string) {
	seen := map[string]bool{}
	add := func(to *[]string, x string, least int) {
		if len(x) >= least && !seen[x] {
			seen[x] = true
			*to = append(*to, x)
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		add(&b64, enc.EncodeToString([]byte(v)), MinLen)
		raw := enc.WithPadding(base64.NoPadding)
		add(&b64, raw.EncodeToString([]byte(v)), MinLen)
		for a := range 3 {
			// v after a bytes of a 3-byte group: the characters that
			// hold only bits of v, from the first whole one (bit 8a) to
			// the last whole one (bit 8(a+len(v))).
			e := raw.EncodeToString(append(make([]byte, a, a+len(v)), v...))
			add(&b64, e[(8*a+5)/6:8*(a+len(v))/6], MinLen)
		}
	}
	h := hex.EncodeToString([]byte(v))
	add(&hx, h, MinLen)
	add(&hx, strings.ToUpper(h), MinLen)
	// Base32's characters are uppercase letters and digits a word in
	// capitals could hold: only a spelling of MinRun or more counts.
	add(&b32, base32.StdEncoding.EncodeToString([]byte(v)), MinRun)
	raw := base32.StdEncoding.WithPadding(base32.NoPadding)
	for a := range 5 {
		// As base64's, in 5-bit characters of 5-byte groups.
		e := raw.EncodeToString(append(make([]byte, a, a+len(v)), v...))
		add(&b32, e[(8*a+4)/5:8*(a+len(v))/5], MinRun)
	}
	add(&b32, raw.EncodeToString([]byte(v)), MinRun)
	return b64, hx, b32
}

// entry is where a gram lies: in a form (forms[what], what ≥ 0) or a run
// (runs[^what]), at off.
type entry struct {
	what int32
	off  int32
}

// run is a secret's run of letters and digits with the windows that count.
type run struct {
	text  string
	label string
	// counts[i] is how many windows that count start before i.
	counts []int32
}

// index finds, in one pass, the forms of MinRun bytes or more, the
// shortest clipped prefixes that count of MinRun bytes or more, and the
// runs' parts.
type index struct {
	bloom   *[1 << bloomBits / 64]uint64
	grams   map[uint32][]entry
	needles []needle
	runs    []run
}

// needle is a form, or the shortest prefix of one that counts clipped.
type needle struct {
	text, label string
	prefix      bool
}

// found is what present found: a form, a prefix of one that counts
// clipped, a part of a run.
type found struct{ form, prefix, part bool }

func gramHash(x uint32) uint32 { return x * 0x9E3779B1 >> (32 - bloomBits) }

// gramAt is the gramLen bytes of text at i (i+gramLen ≤ len(text)).
func gramAt(text string, i int) uint32 {
	return binary.LittleEndian.Uint32(unsafe.Slice(unsafe.StringData(text[i:]), gramLen))
}

func (ix *index) put(x uint32, e entry) {
	h := gramHash(x)
	ix.bloom[h/64] |= 1 << (h % 64)
	ix.grams[x] = append(ix.grams[x], e)
}

// next is the first stride point from q on whose gram the filter lets
// through (it may be in no form or run: look it up with at), or -1.
func (ix *index) next(text string, q int) int {
	b := unsafe.Slice(unsafe.StringData(text), len(text))
	bloom := ix.bloom
	for ; q+gramLen <= len(b); q += stride {
		h := gramHash(binary.LittleEndian.Uint32(b[q : q+gramLen]))
		if bloom[h/64]&(1<<(h%64)) != 0 {
			return q
		}
	}
	return -1
}

// at is what the gram of text at q belongs to, or nil.
func (ix *index) at(text string, q int) []entry {
	return ix.grams[gramAt(text, q)]
}

// newIndex indexes the forms of MinRun bytes or more and the runs of
// letters and digits of the values (labelled as they are), or is nil
// when there are none.
func newIndex(forms []form, values, labels []string) *index {
	ix := &index{bloom: new([1 << bloomBits / 64]uint64), grams: map[uint32][]entry{}}
	add := func(n needle) {
		w := int32(len(ix.needles))
		ix.needles = append(ix.needles, n)
		for off := range stride {
			ix.put(gramAt(n.text, off), entry{w, int32(off)})
		}
	}
	for _, f := range forms {
		if len(f.text) >= MinRun {
			add(needle{text: f.text, label: f.label})
		}
		if f.floor >= MinRun && f.floor < len(f.text) {
			add(needle{text: f.text[:f.floor], prefix: true})
		}
	}
	seen := map[string]bool{}
	for i, v := range values {
		for _, r := range distinctRuns(v) {
			if seen[r.text] {
				continue
			}
			seen[r.text] = true
			r.label = "a part of " + labels[i]
			w := ^int32(len(ix.runs))
			ix.runs = append(ix.runs, r)
			for j := 0; j+gramLen <= len(r.text); j++ {
				// The windows that hold this gram start at j-stride+1 to j.
				lo, hi := max(0, j-stride+1), min(j, len(r.text)-MinRun)
				if hi >= lo && r.counts[hi+1] > r.counts[lo] {
					ix.put(gramAt(r.text, j), entry{w, int32(j)})
				}
			}
		}
	}
	if len(ix.grams) == 0 {
		return nil
	}
	return ix
}

// distinctRuns are the runs of MinRun or more ASCII letters and digits
// of v, but one that begins "eyJ", with a window that counts.
func distinctRuns(v string) []run {
	var out []run
	for i := 0; i < len(v); {
		j := i
		for j < len(v) && alnum(v[j]) {
			j++
		}
		if t := v[i:j]; len(t) >= MinRun && !strings.HasPrefix(t, "eyJ") {
			counts := make([]int32, len(t)-MinRun+2)
			for w := 0; w+MinRun <= len(t); w++ {
				counts[w+1] = counts[w]
				if randomLooking(t[w : w+MinRun]) {
					counts[w+1]++
				}
			}
			if counts[len(counts)-1] > 0 {
				out = append(out, run{text: t, counts: counts})
			}
		}
		i = j + 1
	}
	return out
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// part reports whether text holds, around q and after lo, the run's gram
// at j with stride-1 characters more either side at most, as much as
// holds a window that counts: every window that holds the gram is in that
// span, so it answers for them all in a bounded number of steps.
func (r *run) part(text string, q, j, lo int) bool {
	l := 0
	for l < stride-1 && j-l > 0 && q-l > lo && text[q-l-1] == r.text[j-l-1] {
		l++
	}
	n := 0
	for n < stride-1 && j+gramLen+n < len(r.text) && q+gramLen+n < len(text) && text[q+gramLen+n] == r.text[j+gramLen+n] {
		n++
	}
	first, last := j-l, j+gramLen+n-MinRun // the windows the span holds start there
	return last >= first && r.counts[last+1] > r.counts[first]
}

// extent is the span of text, from lo on, that is the run around its
// gram at j, which text holds at q.
func (r *run) extent(text string, q, j, lo int) (start, end int) {
	l := 0
	for j-l > 0 && q-l > lo && text[q-l-1] == r.text[j-l-1] {
		l++
	}
	n := 0
	for j+gramLen+n < len(r.text) && q+gramLen+n < len(text) && text[q+gramLen+n] == r.text[j+gramLen+n] {
		n++
	}
	return q - l, q + gramLen + n
}

// present reports what of the index text holds.
func (ix *index) present(text string) (f found) {
	if ix == nil {
		return f
	}
	for q := ix.next(text, 0); q >= 0; q = ix.next(text, q+stride) {
		for _, e := range ix.at(text, q) {
			if e.what < 0 {
				f.part = f.part || ix.runs[^e.what].part(text, q, int(e.off), 0)
				continue
			}
			n := &ix.needles[e.what]
			if at := q - int(e.off); (n.prefix && !f.prefix || !n.prefix && !f.form) && at >= 0 && strings.HasPrefix(text[at:], n.text) {
				f.form, f.prefix = f.form || !n.prefix, f.prefix || n.prefix
			}
		}
		if f.form {
			return f // the replacer and every pass run
		}
	}
	return f
}

// label is the label of the first form or part of a run that text holds
// (in text order), or "".
func (ix *index) label(text string) string {
	if ix == nil {
		return ""
	}
	for q := ix.next(text, 0); q >= 0; q = ix.next(text, q+stride) {
		for _, e := range ix.at(text, q) {
			if e.what >= 0 {
				n := &ix.needles[e.what]
				if at := q - int(e.off); !n.prefix && at >= 0 && strings.HasPrefix(text[at:], n.text) {
					return n.label
				}
			} else if r := &ix.runs[^e.what]; r.part(text, q, int(e.off), 0) {
				return r.label
			}
		}
	}
	return ""
}

// parts is text with each part of a run that holds a window that counts
// replaced by Placeholder, with as much of the run as goes on around it.
// Once a part is replaced the pass goes on after it, so no byte is read
// as part of a match more than once per gram that matched it.
func (ix *index) parts(text string) string {
	if ix == nil || len(ix.runs) == 0 {
		return text
	}
	var b strings.Builder
	last := 0 // text before last is written or replaced
	for q := ix.next(text, 0); q >= 0; {
		start, end := -1, -1
		for _, e := range ix.at(text, q) {
			if e.what >= 0 {
				continue
			}
			r := &ix.runs[^e.what]
			if !r.part(text, q, int(e.off), last) {
				continue
			}
			s, t := r.extent(text, q, int(e.off), last)
			if start < 0 || s < start {
				start = s
			}
			end = max(end, t)
		}
		if start < 0 {
			q = ix.next(text, q+stride)
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[last:start])
		b.WriteString(Placeholder)
		last, q = end, ix.next(text, end)
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}
