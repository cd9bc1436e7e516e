package surface

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Kind is one kind of surface.
type Kind string

// The kinds, in the order every artifact lists them.
const (
	Instructions Kind = "instructions"
	Prompt       Kind = "prompt"
	Template     Kind = "resource_template"
	Resource     Kind = "resource"
)

// ListKinds are the kinds that are lists, in order.
var ListKinds = [3]Kind{Prompt, Template, Resource}

// The projection ids: each is inside the preimage it names, so a digest of
// one kind can never be taken for a digest of another, nor of an Assay
// projection, and a later version of a projection gives other digests.
const (
	InstructionsProjection = "mcpdrift.instructions_projection.v1"
	PromptProjection       = "mcpdrift.prompt_projection.v1"
	TemplateProjection     = "mcpdrift.resource_template_projection.v1"
	ResourceProjection     = "mcpdrift.resource_projection.v1"
	ListProjection         = "mcpdrift.surface_list_projection.v1"
)

// Projection is the projection id of k.
func (k Kind) Projection() string {
	switch k {
	case Instructions:
		return InstructionsProjection
	case Prompt:
		return PromptProjection
	case Template:
		return TemplateProjection
	case Resource:
		return ResourceProjection
	}
	panic("surface: unknown kind " + string(k))
}

// Method is the listing method of a list kind.
func (k Kind) Method() string {
	switch k {
	case Prompt:
		return "prompts/list"
	case Template:
		return "resources/templates/list"
	case Resource:
		return "resources/list"
	}
	return ""
}

// ResultKey is the member of the listing's result that holds the items.
func (k Kind) ResultKey() string {
	switch k {
	case Prompt:
		return "prompts"
	case Template:
		return "resourceTemplates"
	case Resource:
		return "resources"
	}
	return ""
}

// KeyMember is the member that names an item of k: what a client asks
// for it by (prompts/get's name, resources/read's uri).
func (k Kind) KeyMember() string {
	switch k {
	case Prompt:
		return "name"
	case Template:
		return "uriTemplate"
	case Resource:
		return "uri"
	}
	return ""
}

// Capability is the server capability that advertises k.
func (k Kind) Capability() string {
	switch k {
	case Prompt:
		return "prompts"
	case Template, Resource:
		return "resources"
	}
	return ""
}

// Noun is how messages name one item of k.
func (k Kind) Noun() string {
	switch k {
	case Instructions:
		return "instructions"
	case Prompt:
		return "prompt"
	case Template:
		return "resource template"
	case Resource:
		return "resource"
	}
	return string(k)
}

// Plural is how messages name the list of k.
func (k Kind) Plural() string {
	switch k {
	case Prompt:
		return "prompts"
	case Template:
		return "resource templates"
	case Resource:
		return "resources"
	}
	return string(k)
}

// members are the projected members of each list kind, in RFC 8785 order
// (the order of their UTF-16 code units, which for these ASCII names is
// byte order). A prompt's arguments are projected element by element
// (argMembers).
var members = map[Kind][]string{
	Prompt:   {"arguments", "description", "name", "title"},
	Template: {"description", "mimeType", "name", "title", "uriTemplate"},
	Resource: {"description", "mimeType", "name", "title", "uri"},
}

// argMembers are the projected members of a prompt argument, in order.
var argMembers = []string{"description", "name", "required", "title"}

// Members are the projected members of k, in the preimage's order.
func Members(k Kind) []string { return members[k] }

func appendOrNull(dst []byte, v jcs.Value, ok bool) []byte {
	if !ok {
		return append(dst, "null"...)
	}
	return v.AppendCanonical(dst)
}

// appendObject appends {m: v.m ...} for the members ms (absent: null).
func appendObject(dst []byte, v jcs.Value, ms []string) []byte {
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jcs.AppendString(dst, m)
		dst = append(dst, ':')
		x, ok := v.Get(m)
		dst = appendOrNull(dst, x, ok)
	}
	return append(dst, '}')
}

// AppendMember appends the projection of one member of an item of k: its
// canonical value (null when absent), a prompt's arguments each reduced
// to their own projected members.
func AppendMember(dst []byte, k Kind, v jcs.Value, member string) []byte {
	x, ok := v.Get(member)
	if k == Prompt && member == "arguments" && ok && x.Kind() == jcs.Array {
		dst = append(dst, '[')
		for i := range x.Len() {
			if i > 0 {
				dst = append(dst, ',')
			}
			a := x.Index(i)
			if a.Kind() == jcs.Object {
				dst = appendObject(dst, a, argMembers)
			} else {
				dst = a.AppendCanonical(dst) // not an argument object: as it is
			}
		}
		return append(dst, ']')
	}
	return appendOrNull(dst, x, ok)
}

// AppendProjection appends the JCS bytes of the projection of an item of
// k: an object of its projected members (Members), each AppendMember's.
func AppendProjection(dst []byte, k Kind, v jcs.Value) []byte {
	dst = append(dst, '{')
	for i, m := range members[k] {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jcs.AppendString(dst, m)
		dst = append(dst, ':')
		dst = AppendMember(dst, k, v, m)
	}
	return append(dst, '}')
}

// AppendPreimage appends the domain-separated preimage of an item of k:
// {"projection": k.Projection(), "value": projection}. For instructions
// the value is the instructions value as sent (canonical).
func AppendPreimage(dst []byte, k Kind, v jcs.Value) []byte {
	dst = append(dst, `{"projection":`...)
	dst = jcs.AppendString(dst, k.Projection())
	dst = append(dst, `,"value":`...)
	if k == Instructions {
		dst = v.AppendCanonical(dst)
	} else {
		dst = AppendProjection(dst, k, v)
	}
	return append(dst, '}')
}

// Digest is the digest of an item of k (or of the instructions value):
// "sha256:" and the lowercase hex SHA-256 of AppendPreimage.
func Digest(k Kind, v jcs.Value) string {
	return digestBytes(AppendPreimage(nil, k, v))
}

// digestBytes formats the SHA-256 of b as "sha256:<64 lowercase hex>".
func digestBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// An Item is one entry of a list as the server sent it.
type Item struct {
	Kind Kind
	// Key is the value of Kind.KeyMember (a string: an entry without one
	// is not an Item).
	Key string
	// Value is the entry, parsed: Value.Raw() are its bytes as sent.
	Value  jcs.Value
	Digest string
}

// NewItem reads one entry of a list of k: an object whose key member is a
// string. Its digest is computed from the parse of the bytes as sent.
func NewItem(k Kind, v jcs.Value) (Item, error) {
	if v.Kind() != jcs.Object {
		return Item{}, fmt.Errorf("a %s entry is a JSON %s, not an object", k.Noun(), v.Kind())
	}
	key, ok := v.Get(k.KeyMember())
	if !ok {
		return Item{}, fmt.Errorf("a %s entry has no %q", k.Noun(), k.KeyMember())
	}
	if key.Kind() != jcs.String {
		return Item{}, fmt.Errorf("a %s entry's %q is a JSON %s, not a string", k.Noun(), k.KeyMember(), key.Kind())
	}
	return Item{Kind: k, Key: key.Str(), Value: v, Digest: Digest(k, v)}, nil
}

// Text is a string member of the item ("" when absent or not a string).
func (it *Item) Text(member string) string {
	if x, ok := it.Value.Get(member); ok && x.Kind() == jcs.String {
		return x.Str()
	}
	return ""
}

// Label is how messages name the item: its noun and its key, quoted.
func (it *Item) Label() string { return Label(it.Kind, it.Key) }

// Label is how messages name an item of k by its key: the noun and the
// key, escaped and quoted.
func Label(k Kind, key string) string { return k.Noun() + " " + safetext.Quote(key) }
