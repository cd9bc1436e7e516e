package mcpclient

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// MaxClientCapabilities bounds the ClientCapabilities object (bytes).
const MaxClientCapabilities = 16 << 10

// ClientCapabilityNames are the members of ClientCapabilities in the
// revisions this client speaks (roots, sampling: all; elicitation:
// 2025-06-18+; tasks: 2025-11-25; extensions: 2026-07-28; experimental:
// all). Anything else is refused as a likely typo: a capability nobody
// reads would make a run look like it declared something it did not.
var ClientCapabilityNames = []string{"elicitation", "experimental", "extensions", "roots", "sampling", "tasks"}

// ParseClientCapabilities reads the ClientCapabilities a run declares, in
// one of two spellings:
//
//   - a JSON object, parsed strictly (duplicate names, invalid UTF-8 and
//     trailing data are errors), whose members are ClientCapabilityNames
//     and whose values are objects: {"sampling":{},"roots":{"listChanged":true}};
//   - a comma-separated list of those names, each declared as {}:
//     "sampling,roots".
//
// It returns the object in its RFC 8785 canonical form, which is what is
// sent (initialize capabilities, and 2026-07-28 _meta clientCapabilities)
// and what a snapshot records, so two spellings of the same capabilities
// compare equal. An empty input is {} (no capabilities). Errors are
// messages for people, with the input escaped.
func ParseClientCapabilities(s string) ([]byte, error) {
	t := strings.TrimSpace(s)
	if len(t) > MaxClientCapabilities {
		return nil, errors.New("client capabilities: longer than 16 KiB")
	}
	if t == "" {
		return []byte("{}"), nil
	}
	if t[0] != '{' {
		return namedCapabilities(t)
	}
	doc, err := jcs.Parse([]byte(t))
	if err != nil {
		return nil, errors.New("client capabilities: not strict JSON: " + safetext.Inert(safetext.ClipEscaped(err.Error(), 300)))
	}
	root := doc.Root()
	if root.Kind() != jcs.Object {
		return nil, errors.New("client capabilities: a JSON " + root.Kind().String() + ", not an object")
	}
	for i := range root.Len() {
		k, v := root.Member(i)
		if !slices.Contains(ClientCapabilityNames, k.Str()) {
			return nil, errors.New("client capabilities: " + quote(k.Str()) + " is not a client capability (" + strings.Join(ClientCapabilityNames, ", ") + ")")
		}
		if v.Kind() != jcs.Object {
			return nil, errors.New("client capabilities: the value of " + quote(k.Str()) + " is a JSON " + v.Kind().String() + ", not an object")
		}
	}
	return root.Canonical(), nil
}

func namedCapabilities(t string) ([]byte, error) {
	var names []string
	for _, n := range strings.Split(t, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(ClientCapabilityNames, n) {
			return nil, errors.New("client capabilities: " + quote(n) + " is not a client capability (" + strings.Join(ClientCapabilityNames, ", ") + "); give names separated by commas, or a JSON object")
		}
		names = append(names, n)
	}
	slices.Sort(names) // the canonical member order (ASCII names)
	names = slices.Compact(names)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jcs.AppendString(nil, n))
		b.WriteString(":{}")
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// CapabilityNames lists the top-level members of a canonical
// ClientCapabilities object, for messages ("sampling, roots"); "none" for {}.
func CapabilityNames(caps []byte) string {
	doc, err := jcs.Parse(caps)
	if err != nil || doc.Root().Kind() != jcs.Object || doc.Root().Len() == 0 {
		return "none"
	}
	return strings.Join(doc.Root().Keys(), ", ")
}
