package corpus

import (
	"math/rand/v2"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// style is the JSON encoder a tool is written with.
type style uint8

const (
	styleNode   style = iota // JSON.stringify: raw UTF-8, minimal escapes
	styleGo                  // encoding/json: HTML-safe, \u2028 \u2029
	stylePython              // json.dumps(ensure_ascii=True) + pydantic
	stylePHP                 // json_encode: \/ and \uXXXX for non-ASCII
)

// writer serialises a generated tree compactly, shuffling the members of
// every object.
type writer struct {
	r     *rand.Rand
	style style
	buf   []byte
}

func (w *writer) value(v any) {
	switch v := v.(type) {
	case nil:
		w.buf = append(w.buf, "null"...)
	case bool:
		w.buf = strconv.AppendBool(w.buf, v)
	case number:
		w.buf = append(w.buf, v...)
	case int:
		w.buf = strconv.AppendInt(w.buf, int64(v), 10)
	case string:
		w.str(v)
	case array:
		w.buf = append(w.buf, '[')
		for i, e := range v {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.value(e)
		}
		w.buf = append(w.buf, ']')
	case object:
		ms := make(object, len(v))
		copy(ms, v)
		w.r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		w.buf = append(w.buf, '{')
		for i, m := range ms {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.str(m.k)
			w.buf = append(w.buf, ':')
			w.value(m.v)
		}
		w.buf = append(w.buf, '}')
	default:
		panic("corpus: cannot write value")
	}
}

const hexDigits = "0123456789abcdef"

func (w *writer) u4(r rune) {
	w.buf = append(w.buf, '\\', 'u',
		hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}

// str writes s as a JSON string the way the current style's encoder would.
func (w *writer) str(s string) {
	b := append(w.buf, '"')
	start := 0
	flush := func(i int) { b = append(b, s[start:i]...) }
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			var esc string
			switch {
			case c == '"':
				esc = `\"`
			case c == '\\':
				esc = `\\`
			case c == '\n':
				esc = `\n`
			case c == '\r':
				esc = `\r`
			case c == '\t':
				esc = `\t`
			case c == '\b' && w.style != styleGo:
				esc = `\b`
			case c == '\f' && w.style != styleGo:
				esc = `\f`
			case c < 0x20:
				flush(i)
				w.buf = b
				w.u4(rune(c))
				b = w.buf
				i++
				start = i
				continue
			case w.style == styleGo && (c == '<' || c == '>' || c == '&'):
				flush(i)
				w.buf = b
				w.u4(rune(c))
				b = w.buf
				i++
				start = i
				continue
			case w.style == stylePHP && c == '/':
				esc = `\/`
			default:
				i++
				continue
			}
			flush(i)
			b = append(b, esc...)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case w.style == styleGo && (r == '\u2028' || r == '\u2029'),
			w.style == stylePython || w.style == stylePHP:
			flush(i)
			w.buf = b
			if r >= 0x10000 {
				hi, lo := utf16.EncodeRune(r)
				w.u4(hi)
				w.u4(lo)
			} else {
				w.u4(r)
			}
			b = w.buf
			i += size
			start = i
		default:
			i += size
		}
	}
	flush(len(s))
	w.buf = append(b, '"')
}

// Number literals. Most are written canonically; some in the other forms
// real encoders produce (Python floats "30.0", Rust schemars "0.0",
// hand-written "1E3", "4.50", "2e-3").

// num returns an integer literal, sometimes in a non-canonical form.
func (g *gen) num(i int64) number {
	s := strconv.FormatInt(i, 10)
	if !g.chance(0.18) {
		return number(s)
	}
	switch g.intn(3) {
	case 0:
		if i != 0 && i%1000 == 0 {
			m, e := i, 0
			for m%10 == 0 {
				m /= 10
				e++
			}
			return number(strconv.FormatInt(m, 10) + pick(g, []string{"e", "E", "E+", "e+"}) + strconv.Itoa(e))
		}
		return number(s + ".0")
	case 1:
		return number(s + ".0")
	default:
		return number(s + ".00")
	}
}

// flt returns a float literal for f, sometimes in a non-canonical form.
func (g *gen) flt(f float64) number {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !g.chance(0.35) {
		return number(s)
	}
	switch g.intn(3) {
	case 0: // trailing zero: 4.5 -> 4.50
		if f == float64(int64(f)) && f < 1e15 && f > -1e15 {
			return number(strconv.FormatInt(int64(f), 10) + ".0")
		}
		if !containsAny(s, "eE") {
			return number(s + "0")
		}
		return number(s)
	case 1: // exponent form: 0.002 -> 2e-3 or 2E-03
		e := strconv.FormatFloat(f, 'e', -1, 64) // 2e-03
		if g.chance(0.5) {
			e = trimExpZeros(e)
		}
		if g.chance(0.5) {
			e = upperE(e)
		}
		return number(e)
	default:
		return number(strconv.FormatFloat(f, 'f', -1, 64))
	}
}

func containsAny(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		for j := 0; j < len(chars); j++ {
			if s[i] == chars[j] {
				return true
			}
		}
	}
	return false
}

// trimExpZeros turns 2e-03 into 2e-3 and 1e+21 into 1e21.
func trimExpZeros(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] != 'e' {
			continue
		}
		mant, exp := s[:i+1], s[i+1:]
		sign := ""
		if exp[0] == '-' {
			sign = "-"
		}
		exp = exp[1:]
		for len(exp) > 1 && exp[0] == '0' {
			exp = exp[1:]
		}
		return mant + sign + exp
	}
	return s
}

func upperE(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == 'e' {
			b[i] = 'E'
		}
	}
	return string(b)
}
