package oauth

import (
	"errors"
	"strings"
)

// Bounds of a WWW-Authenticate header: what is parsed at all, how many
// challenges and parameters are kept. A header beyond them is refused
// whole: a challenge is never read from a part of one.
const (
	maxChallengeBytes  = 8 << 10
	maxChallenges      = 16
	maxChallengeParams = 32
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): its scheme (lower case) and either a token68 or its
// parameters (names lower case, values unquoted). Server-controlled:
// quote before printing.
type Challenge struct {
	Scheme  string
	Token68 string
	Params  map[string]string
}

// Bearer is what a Bearer challenge says (RFC 6750 §3, RFC 9728 §5.1).
type Bearer struct {
	ResourceMetadata string // resource_metadata: where the protected resource metadata is
	Scope            string // scope: what the request needs, space separated
	Error            string // error: invalid_token, insufficient_scope, ...
	ErrorDescription string
}

// ErrChallenge is the error of a header that is not a well-formed list of
// challenges.
var ErrChallenge = errors.New("oauth: malformed WWW-Authenticate header")

// ParseWWWAuthenticate parses the values of the WWW-Authenticate header
// fields of one response. It is strict: an unterminated quoted string, a
// control character, a parameter named twice in one challenge, a value
// that is neither a token nor a quoted string, or a header beyond the
// bounds is an error, and nothing of the header is used.
func ParseWWWAuthenticate(values []string) ([]Challenge, error) {
	total := 0
	var out []Challenge
	for _, v := range values {
		total += len(v)
		if total > maxChallengeBytes {
			return nil, ErrChallenge
		}
		p := &chParser{s: v}
		cs, err := p.parse()
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
		if len(out) > maxChallenges {
			return nil, ErrChallenge
		}
	}
	return out, nil
}

// BearerOf returns the first Bearer challenge of cs (the scheme is
// case-insensitive), and whether there is one.
func BearerOf(cs []Challenge) (Bearer, bool) {
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return Bearer{
				ResourceMetadata: c.Params["resource_metadata"],
				Scope:            c.Params["scope"],
				Error:            c.Params["error"],
				ErrorDescription: c.Params["error_description"],
			}, true
		}
	}
	return Bearer{}, false
}

type chParser struct {
	s string
	i int
}

func isTchar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/", c) >= 0
}

func (p *chParser) ows() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *chParser) token() string {
	j := p.i
	for p.i < len(p.s) && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[j:p.i]
}

// quoted reads a quoted-string at p.i (the opening quote), unescaping
// quoted-pairs. Only visible ASCII, space, tab and obs-text bytes are
// allowed inside; anything else is an error.
func (p *chParser) quoted() (string, error) {
	p.i++ // the opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.s) || !qdtext(p.s[p.i+1]) && p.s[p.i+1] != '"' && p.s[p.i+1] != '\\' {
				return "", ErrChallenge
			}
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case qdtext(c):
			b.WriteByte(c)
			p.i++
		default:
			return "", ErrChallenge
		}
	}
	return "", ErrChallenge // unterminated
}

func qdtext(c byte) bool {
	return c == '\t' || c == ' ' || c >= 0x21 && c != '"' && c != '\\' && c != 0x7f
}

// parse reads a comma-separated list of challenges.
func (p *chParser) parse() ([]Challenge, error) {
	var out []Challenge
	for {
		p.skipSeparators()
		if p.i >= len(p.s) {
			return out, nil
		}
		scheme := p.token()
		if scheme == "" {
			return nil, ErrChallenge
		}
		c := Challenge{Scheme: strings.ToLower(scheme)}
		if p.i < len(p.s) && p.s[p.i] != ' ' && p.s[p.i] != '\t' && p.s[p.i] != ',' {
			return nil, ErrChallenge
		}
		p.ows()
		if err := p.challengeBody(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
}

func (p *chParser) skipSeparators() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

// challengeBody reads a token68 or the auth-params of c, up to the comma
// that begins the next challenge (or the end).
func (p *chParser) challengeBody(c *Challenge) error {
	if p.i >= len(p.s) || p.s[p.i] == ',' {
		return nil
	}
	if t68, ok := p.token68(); ok {
		c.Token68 = t68
		p.ows()
		if p.i < len(p.s) && p.s[p.i] != ',' {
			return ErrChallenge
		}
		return nil
	}
	c.Params = map[string]string{}
	for {
		name := strings.ToLower(p.token())
		if name == "" {
			return ErrChallenge
		}
		p.ows()
		if p.i >= len(p.s) || p.s[p.i] != '=' {
			return ErrChallenge
		}
		p.i++
		p.ows()
		var val string
		switch {
		case p.i < len(p.s) && p.s[p.i] == '"':
			v, err := p.quoted()
			if err != nil {
				return err
			}
			val = v
		default:
			val = p.token()
			if val == "" {
				return ErrChallenge
			}
		}
		if _, dup := c.Params[name]; dup || len(c.Params) >= maxChallengeParams {
			return ErrChallenge
		}
		c.Params[name] = val
		p.ows()
		if p.i >= len(p.s) {
			return nil
		}
		if p.s[p.i] != ',' {
			return ErrChallenge
		}
		// A comma: another parameter of this challenge, or the next
		// challenge (a token not followed by "=").
		save := p.i
		p.skipSeparators()
		if p.i >= len(p.s) {
			return nil
		}
		j := p.i
		p.token()
		p.ows()
		isParam := p.i > j && p.i < len(p.s) && p.s[p.i] == '='
		p.i = j
		if !isParam {
			p.i = save
			return nil
		}
	}
}

// token68 reads a token68 when that is what stands at p.i (a run of
// token68 characters and trailing "=", not followed by a parameter's "=").
func (p *chParser) token68() (string, bool) {
	j := p.i
	k := j
	for k < len(p.s) && isToken68(p.s[k]) {
		k++
	}
	if k == j {
		return "", false
	}
	e := k
	for e < len(p.s) && p.s[e] == '=' {
		e++
	}
	// name=value is a parameter: a token, "=" and a value follow.
	r := e
	for r < len(p.s) && (p.s[r] == ' ' || p.s[r] == '\t') {
		r++
	}
	if e == k+1 && r < len(p.s) && (p.s[r] == '"' || isTchar(p.s[r])) {
		return "", false
	}
	if e == k {
		// no "=": a token68 only when nothing but the end or a comma follows
		if r < len(p.s) && p.s[r] != ',' {
			return "", false
		}
	}
	p.i = e
	return p.s[j:e], true
}
