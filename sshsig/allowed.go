package sshsig

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Bounds of an allowed-signers file. A line holding a 16384-bit RSA key
// is under 3 KiB.
const (
	MaxAllowedSignersBytes = 1 << 20
	MaxAllowedSignersLine  = 16 << 10
	MaxAllowedSigners      = 10000 // lines that list a key
)

// AllowedSigners is a parsed allowed_signers file. It is immutable and safe
// for concurrent use.
type AllowedSigners struct {
	byKey map[string][]*signerLine // by the key's wire encoding
	n     int
}

// Len is the number of lines that list a key.
func (a *AllowedSigners) Len() int { return a.n }

type signerLine struct {
	line        int
	principals  string
	namespaces  string // pattern list; "" when the line has no namespaces option
	validAfter  int64  // Unix seconds; 0 when absent
	validBefore int64
	key         ssh.PublicKey
}

// ParseAllowedSigners reads an allowed_signers file (see the package
// documentation for the format). It refuses the whole file, with a
// *SyntaxError naming the line, on any bad line, on a file larger than
// MaxAllowedSignersBytes, a line longer than MaxAllowedSignersLine, more
// than MaxAllowedSigners keys, and a file that lists no key at all.
func ParseAllowedSigners(r io.Reader) (*AllowedSigners, error) {
	lr := &io.LimitedReader{R: r, N: MaxAllowedSignersBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4096), MaxAllowedSignersLine+2) // + CR LF
	a := &AllowedSigners{byKey: map[string][]*signerLine{}}
	n := 0
	for sc.Scan() {
		n++
		if lr.N <= 0 {
			break
		}
		text := sc.Text() // the scanner drops a CR before the LF
		if len(text) > MaxAllowedSignersLine {
			return nil, &SyntaxError{Line: n, Msg: fmt.Sprintf("longer than %d bytes", MaxAllowedSignersLine)}
		}
		s, err := parseSignerLine(text)
		if err != nil {
			return nil, &SyntaxError{Line: n, Msg: err.Error()}
		}
		if s == nil {
			continue
		}
		if a.n == MaxAllowedSigners {
			return nil, &SyntaxError{Line: n, Msg: fmt.Sprintf("more than %d keys", MaxAllowedSigners)}
		}
		s.line = n
		k := string(s.key.Marshal())
		a.byKey[k] = append(a.byKey[k], s)
		a.n++
	}
	if lr.N <= 0 {
		return nil, &SyntaxError{Msg: fmt.Sprintf("larger than %d bytes", MaxAllowedSignersBytes)}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &SyntaxError{Line: n + 1, Msg: fmt.Sprintf("longer than %d bytes", MaxAllowedSignersLine)}
		}
		return nil, fmt.Errorf("sshsig: reading allowed signers: %w", err)
	}
	if a.n == 0 {
		return nil, &SyntaxError{Msg: "no signer is listed (every signature would be refused)"}
	}
	return a, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	return s
}

// parseSignerLine parses one line; nil, nil for a blank or comment line.
func parseSignerLine(line string) (*signerLine, error) {
	for i := 0; i < len(line); i++ {
		if c := line[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return nil, fmt.Errorf("control character %s at byte %d", quote(line[i:i+1]), i+1)
		}
	}
	s := trimSpace(line)
	if s == "" || s[0] == '#' {
		return nil, nil
	}
	principals, s, err := cutPrincipals(s)
	if err != nil {
		return nil, err
	}
	s = trimSpace(s)
	tok, after, err := cutField(s)
	if err != nil {
		return nil, err
	}
	var opts string
	if !keyTypeName(tok) {
		next, _, _ := cutField(trimSpace(after))
		if !keyTypeName(next) && !strings.ContainsAny(tok, "=,") && !strings.EqualFold(tok, "cert-authority") {
			if next == "" {
				return nil, fmt.Errorf("unknown key type %s", quote(tok))
			}
			return nil, fmt.Errorf("unknown key type %s (or unknown option)", quote(tok))
		}
		opts = tok
		tok, after, err = cutField(trimSpace(after))
		if err != nil {
			return nil, err
		}
		if tok == "" {
			return nil, errors.New("missing key after the options")
		}
		if !keyTypeName(tok) {
			return nil, fmt.Errorf("unknown key type %s", quote(tok))
		}
	}
	keyType := tok
	b64, _ := cutWord(trimSpace(after)) // what follows is a comment
	if b64 == "" {
		return nil, fmt.Errorf("missing base64 key after %s", quote(keyType))
	}
	sl := &signerLine{principals: principals}
	if opts != "" {
		if err := parseOptions(opts, sl); err != nil {
			return nil, err
		}
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("key is not base64: %v", err)
	}
	pub, err := ssh.ParsePublicKey(raw)
	if err != nil {
		return nil, fmt.Errorf("bad %s key: %s", quote(keyType), quote(err.Error()))
	}
	if pub.Type() != keyType {
		return nil, fmt.Errorf("key type %s but the key is %s", quote(keyType), quote(pub.Type()))
	}
	if err := supportedKey(pub); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, errors.New(e.Detail)
		}
		return nil, err
	}
	sl.key = pub
	return sl, nil
}

// cutPrincipals takes the principals field: a word, or a double-quoted
// string, followed by white space.
func cutPrincipals(s string) (principals, rest string, err error) {
	if s[0] == '"' {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return "", "", errors.New("principals: no closing quote")
		}
		principals, rest = s[1:1+end], s[2+end:]
		if rest != "" && !isSpace(rest[0]) {
			return "", "", errors.New("principals: text right after the closing quote")
		}
	} else {
		principals, rest = cutWord(s)
		if strings.IndexByte(principals, '"') >= 0 {
			return "", "", fmt.Errorf("principals %s: a quote inside", quote(principals))
		}
	}
	if principals == "" {
		return "", "", errors.New("empty principals")
	}
	if trimSpace(rest) == "" {
		return "", "", fmt.Errorf("only principals (%s), no key", quote(principals))
	}
	return principals, rest, nil
}

// cutWord takes the text up to the first space or tab.
func cutWord(s string) (word, rest string) {
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			return s[:i], s[i:]
		}
	}
	return s, ""
}

// cutField takes the text up to the first space or tab outside double
// quotes (in which \" is a quote), as sshd reads an options field.
func cutField(s string) (field, rest string, err error) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted && i+1 < len(s) && s[i+1] == '"':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && isSpace(c):
			return s[:i], s[i:], nil
		}
	}
	if quoted {
		return "", "", errors.New("options: no closing quote")
	}
	return s, "", nil
}

// parseOptions parses a comma-separated options field into sl.
func parseOptions(opts string, sl *signerLine) error {
	seen := map[string]bool{}
	for {
		if len(opts) >= len("cert-authority") && strings.EqualFold(opts[:len("cert-authority")], "cert-authority") &&
			(len(opts) == len("cert-authority") || opts[len("cert-authority")] == ',') {
			return errors.New("cert-authority is not supported: certificates are not implemented; list the signer's own key instead")
		}
		name := ""
		for _, n := range []string{"namespaces", "valid-after", "valid-before"} {
			if len(opts) > len(n) && strings.EqualFold(opts[:len(n)], n) && opts[len(n)] == '=' {
				name = n
				break
			}
		}
		if name == "" {
			word := opts
			if i := strings.IndexAny(word, "=,"); i >= 0 {
				word = word[:i]
			}
			return fmt.Errorf("unknown option %s (namespaces, valid-after and valid-before are supported)", quote(word))
		}
		if seen[name] {
			return fmt.Errorf("option %s given twice", name)
		}
		seen[name] = true
		val, rest, err := dequote(opts[len(name)+1:])
		if err != nil {
			return fmt.Errorf("option %s: %v", name, err)
		}
		switch name {
		case "namespaces":
			if val == "" {
				return errors.New(`option namespaces="" allows no namespace`)
			}
			sl.namespaces = val
		case "valid-after", "valid-before":
			t, err := parseTime(val)
			if err != nil {
				return fmt.Errorf("option %s=%s: %v", name, quote(val), err)
			}
			if name == "valid-after" {
				sl.validAfter = t
			} else {
				sl.validBefore = t
			}
		}
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return fmt.Errorf("option %s: text after its closing quote", name)
		}
		opts = rest[1:]
		if opts == "" {
			return errors.New("options end with a comma")
		}
	}
	if sl.validAfter != 0 && sl.validBefore != 0 && sl.validBefore <= sl.validAfter {
		return errors.New("valid-before is not after valid-after")
	}
	return nil
}

// dequote reads a double-quoted value (\" is a quote inside it).
func dequote(s string) (val, rest string, err error) {
	if s == "" || s[0] != '"' {
		return "", "", errors.New(`the value must be in double quotes`)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '"':
			b.WriteByte('"')
			i++
		case s[i] == '"':
			return b.String(), s[i+1:], nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", errors.New("no closing quote")
}

// parseTime reads an ssh-keygen timestamp: YYYYMMDD, YYYYMMDDHHMM or
// YYYYMMDDHHMMSS, UTC with a Z or UTC suffix (any case), local time
// without one. It returns Unix seconds, which must be positive.
func parseTime(s string) (int64, error) {
	loc := time.Local
	if l := len(s); l > 1 && (s[l-1] == 'Z' || s[l-1] == 'z') {
		loc, s = time.UTC, s[:l-1]
	} else if l > 3 && strings.EqualFold(s[l-3:], "UTC") {
		loc, s = time.UTC, s[:l-3]
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("not a time (YYYYMMDD[Z], YYYYMMDDHHMM[SS][Z])")
		}
	}
	var layout string
	switch len(s) {
	case 8:
		layout = "20060102"
	case 12:
		layout = "200601021504"
	case 14:
		layout = "20060102150405"
	default:
		return 0, errors.New("not a time (YYYYMMDD[Z], YYYYMMDDHHMM[SS][Z])")
	}
	t, err := time.ParseInLocation(layout, s, loc)
	if err != nil {
		return 0, errors.New("not a valid date or time")
	}
	if t.Unix() <= 0 {
		return 0, errors.New("not after 1970-01-01T00:00:00Z")
	}
	return t.Unix(), nil
}

// matchList reports whether s matches the comma-separated pattern list:
// some pattern matches and no negated one (!pattern) does, as OpenSSH's
// match_pattern_list does (case-sensitively).
func matchList(s, list string) bool {
	matched := false
	for list != "" {
		p := list
		if i := strings.IndexByte(list, ','); i >= 0 {
			p, list = list[:i], list[i+1:]
		} else {
			list = ""
		}
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		if matchPattern(s, p) {
			if neg {
				return false
			}
			matched = true
		}
	}
	return matched
}

// matchPattern matches s against p, where '*' is any run of bytes and '?'
// any one byte. It backtracks only to the last '*', so it takes at most
// len(s)*len(p) steps.
func matchPattern(s, p string) bool {
	si, pi := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			si++
			pi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
