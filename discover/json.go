package discover

import (
	"bytes"
	"errors"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// readJSON reads a JSON configuration strictly (package jcs: duplicate
// member names, invalid UTF-8, nesting past MaxDepth and trailing data are
// errors naming the line, column and JSON pointer).
func readJSON(src []byte) (*node, error) {
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, err
	}
	return fromJCS(doc.Root()), nil
}

// readJSONC reads JSON with comments and trailing commas, as VS Code, Zed
// and Gemini CLI write their settings: StripJSONC blanks the comments and
// the trailing commas (offsets, lines and columns unchanged) and the
// result is read as strictly as readJSON reads JSON.
func readJSONC(src []byte) (*node, error) {
	std, err := StripJSONC(src)
	if err != nil {
		return nil, err
	}
	return readJSON(std)
}

var (
	errUnterminatedComment = errors.New("a /* comment is not closed")
	errCommentUTF8         = errors.New("invalid UTF-8 in a comment")
)

// StripJSONC returns a copy of src with what JSONC adds to JSON replaced
// by spaces: // and /* */ comments outside strings (a block comment's line
// breaks are kept, so lines and columns stay those of src), a trailing
// comma before a closing bracket or brace, and a leading byte order mark.
// Everything else is left for the JSON parser to judge: a comma after an
// opening bracket or after another comma stays, and is refused there. It
// runs in one pass with no recursion, so its cost is linear in any input;
// an unterminated block comment and invalid UTF-8 in a comment are its
// only errors. (tailscale/hujson's
// Standardize, which parses recursively without a depth bound, is its
// differential oracle in the tests.)
func StripJSONC(src []byte) ([]byte, error) {
	out := make([]byte, len(src))
	copy(out, src)
	i := 0
	if len(out) >= 3 && out[0] == 0xEF && out[1] == 0xBB && out[2] == 0xBF {
		out[0], out[1], out[2] = ' ', ' ', ' '
		i = 3
	}
	last, prev := -1, -1 // the last two significant bytes outside strings and comments
	sig := func(j int) { prev, last = last, j }
	for i < len(out) {
		c := out[i]
		switch {
		case c == '"':
			sig(i)
			i++
			for i < len(out) && out[i] != '"' {
				if out[i] == '\\' {
					i++
				}
				i++
			}
			if i < len(out) {
				sig(i)
			}
			i++
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			j := i
			for j < len(out) && out[j] != '\n' && out[j] != '\r' {
				j++
			}
			if !utf8.Valid(out[i:j]) {
				return nil, errCommentUTF8
			}
			for ; i < j; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				return nil, errUnterminatedComment
			}
			if !utf8.Valid(out[i+2 : i+2+end]) {
				return nil, errCommentUTF8
			}
			out[i], out[i+1] = ' ', ' '
			i += 2
			for {
				if out[i] == '*' && out[i+1] == '/' {
					out[i], out[i+1] = ' ', ' '
					i += 2
					break
				}
				if out[i] != '\n' && out[i] != '\r' {
					out[i] = ' '
				}
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == ']' || c == '}':
			if last >= 0 && out[last] == ',' && prev >= 0 && out[prev] != ',' && out[prev] != '[' && out[prev] != '{' && out[prev] != ':' {
				out[last] = ' '
			}
			sig(i)
			i++
		default:
			sig(i)
			i++
		}
	}
	return out, nil
}
