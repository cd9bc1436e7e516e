package surface

import (
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// State says whether a kind was observed, and if not, why not.
type State string

// The states.
const (
	// Observed: listed (or, for instructions, the initialize or
	// server/discover result was read).
	Observed State = "observed"
	// NotAdvertised: the server's capabilities do not advertise the kind
	// (no "prompts", no "resources"), so it was not asked for: nothing is
	// claimed about it.
	NotAdvertised State = "not_advertised"
	// NotRequested: the caller did not ask for it (resources/list without
	// --pin-resources).
	NotRequested State = "not_requested"
	// NotObserved: it was asked for, or should have been, and could not be
	// read (the listing failed, or the server's capabilities are unknown);
	// Reason says why.
	NotObserved State = "not_observed"
)

// Completeness of an observed list.
const (
	Complete = "complete"
	Partial  = "partial"
)

// DefaultMaxInstructionsBytes bounds the instructions an observation
// keeps (the bytes of the JSON value as sent): a longer value is
// digested whole and reported oversize, never cut.
const DefaultMaxInstructionsBytes = 256 << 10

// Instr is the instructions of an initialize or server/discover result.
type Instr struct {
	State  State
	Reason string // escaped: why not observed
	// Present: the result had an "instructions" member.
	Present bool
	// Value is that member's value as sent (parsed; Value.Raw() its
	// bytes). Not valid when absent or oversize.
	Value jcs.Value
	// Digest is Digest(Instructions, value) over the whole value, oversize
	// or not ("" when absent or not observed).
	Digest string
	// Size is the length of the value as sent, in bytes.
	Size int
	// Oversize: Size is beyond the bound the observer was given; Value is
	// not kept (no text to show or pin), Digest covers every byte.
	Oversize bool
	// Ambiguous: the result holds, beside or instead of "instructions", a
	// member a case-insensitive decoder takes for it ("Instructions": Go's
	// encoding/json reads the last match), so what a client reads may not
	// be Value. Never clean, never pinned.
	Ambiguous bool
}

// ReadInstr reads the instructions of an initialize or server/discover
// result (an object): NewInstr of its "instructions" member, Ambiguous
// when another member has its safetext.MemberKey.
func ReadInstr(result jcs.Value, max int) Instr {
	iv, present := result.Get("instructions")
	in := NewInstr(iv, present, max)
	_, in.Ambiguous = result.VariantOf("instructions")
	return in
}

// NewInstr reads the instructions member of a result (present false:
// there was none), keeping its value when it is at most max bytes (0:
// DefaultMaxInstructionsBytes).
func NewInstr(v jcs.Value, present bool, max int) Instr {
	in := Instr{State: Observed, Present: present}
	if !present {
		return in
	}
	if max <= 0 {
		max = DefaultMaxInstructionsBytes
	}
	in.Size = len(v.Raw())
	in.Digest = Digest(Instructions, v)
	if in.Size > max {
		in.Oversize = true
		return in
	}
	in.Value = v
	return in
}

// Text is the instructions string ("" when absent, oversize or not a
// string).
func (in *Instr) Text() string {
	if in.Value.Valid() && in.Value.Kind() == jcs.String {
		return in.Value.Str()
	}
	return ""
}

// List is one list kind as observed or pinned.
type List struct {
	Kind         Kind
	State        State
	Completeness string // Complete or Partial when Observed
	Reason       string // escaped: why not observed, or why partial
	Items        []Item // in served order
	// Invalid describes entries that are not items (escaped), in order.
	Invalid []string
	// Pages is the number of pages read.
	Pages int
}

// Add reads one entry of the list: an item, or an invalid entry.
func (l *List) Add(v jcs.Value) {
	it, err := NewItem(l.Kind, v)
	if err != nil {
		if len(l.Invalid) < 64 {
			l.Invalid = append(l.Invalid, safetext.Escape(err.Error()))
		}
		return
	}
	l.Items = append(l.Items, it)
}

// Duplicates are the keys listed more than once, sorted: such a list is
// ambiguous (which one a client gets is undefined) and has no digest.
func (l *List) Duplicates() []string {
	seen := make(map[string]int, len(l.Items))
	for _, it := range l.Items {
		seen[it.Key]++
	}
	var out []string
	for k, n := range seen {
		if n > 1 {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Find is the first item whose key is key (nil when none).
func (l *List) Find(key string) *Item {
	for i := range l.Items {
		if l.Items[i].Key == key {
			return &l.Items[i]
		}
	}
	return nil
}

// Digest is the list digest: the SHA-256 of
// {"items":[{"digest","key"}...],"kind":K,"projection":ListProjection}
// with the entries sorted by key then digest (UTF-8 byte order). ok is
// false when there is none: the list was not observed, or is ambiguous.
func (l *List) Digest() (string, bool) {
	if l.State != Observed || len(l.Duplicates()) > 0 {
		return "", false
	}
	return ListDigest(l.Kind, l.Items), true
}

// ListDigest is the list digest of items (see List.Digest).
func ListDigest(k Kind, items []Item) string {
	type kd struct{ key, digest string }
	es := make([]kd, len(items))
	for i, it := range items {
		es[i] = kd{it.Key, it.Digest}
	}
	slices.SortFunc(es, func(a, b kd) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.digest, b.digest)
	})
	b := []byte(`{"items":[`)
	for i, e := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"digest":`...)
		b = jcs.AppendString(b, e.digest)
		b = append(b, `,"key":`...)
		b = jcs.AppendString(b, e.key)
		b = append(b, '}')
	}
	b = append(b, `],"kind":`...)
	b = jcs.AppendString(b, string(k))
	b = append(b, `,"projection":"`+ListProjection+`"}`...)
	return digestBytes(b)
}

// Surface is everything of the model-facing surface an observation read,
// or a pin holds.
type Surface struct {
	Instructions Instr
	Prompts      List
	Templates    List
	Resources    List
}

// New is a surface with every kind in state st (the lists' kinds set).
func New(st State, reason string) *Surface {
	s := &Surface{Instructions: Instr{State: st, Reason: reason}}
	for _, k := range ListKinds {
		l := s.List(k)
		l.Kind, l.State, l.Reason = k, st, reason
	}
	return s
}

// List is the list of kind k.
func (s *Surface) List(k Kind) *List {
	switch k {
	case Prompt:
		return &s.Prompts
	case Template:
		return &s.Templates
	case Resource:
		return &s.Resources
	}
	panic("surface: not a list kind: " + string(k))
}
