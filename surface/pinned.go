package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// Member is the member of a pinned surface (and of Evidence) that holds
// the kind.
func (k Kind) Member() string {
	switch k {
	case Prompt:
		return "prompts"
	case Template:
		return "resource_templates"
	case Resource:
		return "resources"
	}
	return string(k)
}

// projections is the "projections" member every pinned surface and
// evidence record carries: a reader refuses digests made under
// projections it does not know.
const projections = `{"instructions":"` + InstructionsProjection + `","list":"` + ListProjection + `","prompt":"` + PromptProjection +
	`","resource":"` + ResourceProjection + `","resource_template":"` + TemplateProjection + `"}`

// Pinnable says why s cannot be pinned (nil when it can): a list that is
// partial, names an item twice or holds an entry that is not an item,
// and instructions too large to keep, cannot be approved as they are.
// A kind that was not observed can: its state is pinned, and what a
// later observation finds there is new.
func Pinnable(s *Surface) error {
	if s.Instructions.State == Observed && s.Instructions.Oversize {
		return fmt.Errorf("the instructions are %d bytes, more than the %d an observation keeps: they are reported, never cut, and cannot be pinned", s.Instructions.Size, DefaultMaxInstructionsBytes)
	}
	if s.Instructions.State == Observed && s.Instructions.Ambiguous {
		return errors.New(instrAmbiguous)
	}
	for _, k := range ListKinds {
		l := s.List(k)
		if l.State != Observed {
			continue
		}
		switch {
		case l.Completeness != Complete:
			return fmt.Errorf("the %s were listed partially (%s)", k.Plural(), safetext.Inert(l.Reason))
		case len(l.Invalid) > 0:
			return fmt.Errorf("the %s list holds an entry that is not a %s: %s", k.Plural(), k.Noun(), safetext.Inert(l.Invalid[0]))
		}
		if d := l.Duplicates(); len(d) > 0 {
			return fmt.Errorf("the %s list names %s twice: which one a client gets is undefined", k.Plural(), Label(k, d[0]))
		}
	}
	return nil
}

// Marshal writes the pinned form of s (docs/surface.md): the projection
// ids, then each kind's state and digest, and the items of an observed
// list one per line, each the bytes the server sent with the whitespace
// between tokens removed (every string, escape and number kept, so the
// digests recompute). indent is put before every line but the first.
func Marshal(s *Surface, indent string) ([]byte, error) {
	if err := Pinnable(s); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	nl := "\n" + indent + "  "
	b.WriteString("{" + nl + `"projections": ` + projections)
	b.WriteString("," + nl + `"instructions": `)
	if err := marshalInstr(&b, &s.Instructions); err != nil {
		return nil, err
	}
	for _, k := range ListKinds {
		l := s.List(k)
		b.WriteString("," + nl)
		b.Write(jcs.AppendString(nil, k.Member()))
		b.WriteString(": ")
		b.Write(stateHead(l.State, l.Reason))
		if l.State == Observed {
			d, _ := l.Digest()
			b.WriteString(`,"digest":"` + d + `","items":[`)
			for i, it := range l.Items {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(nl + "  ")
				if err := json.Compact(&b, it.Value.Raw()); err != nil {
					return nil, err
				}
			}
			if len(l.Items) > 0 {
				b.WriteString(nl)
			}
			b.WriteByte(']')
		}
		b.WriteByte('}')
	}
	b.WriteString("\n" + indent + "}")
	return b.Bytes(), nil
}

// stateHead is {"state":S[,"reason":R] without its closing brace.
func stateHead(st State, reason string) []byte {
	b := append([]byte(`{"state":`), jcs.AppendString(nil, string(st))...)
	if st == NotObserved {
		b = append(b, `,"reason":`...)
		b = jcs.AppendString(b, reason)
	}
	return b
}

func marshalInstr(b *bytes.Buffer, in *Instr) error {
	b.Write(stateHead(in.State, in.Reason))
	if in.State == Observed {
		if !in.Present {
			b.WriteString(`,"present":false`)
		} else {
			b.WriteString(`,"digest":"` + in.Digest + `","value":`)
			if err := json.Compact(b, in.Value.Raw()); err != nil {
				return err
			}
		}
	}
	b.WriteByte('}')
	return nil
}

// ParseError is a pinned surface that cannot be used: where (a JSON
// pointer below the surface member) and why.
type ParseError struct {
	Pointer string
	Msg     string
}

func (e *ParseError) Error() string {
	if e.Pointer == "" {
		return "the pinned surface: " + e.Msg
	}
	return "the pinned surface, at JSON pointer " + safetext.Quote(e.Pointer) + ": " + e.Msg
}

func perr(ptr, format string, args ...any) error {
	return &ParseError{Pointer: ptr, Msg: fmt.Sprintf(format, args...)}
}

// ParseBytes is Parse of a document.
func ParseBytes(src []byte) (*Surface, error) {
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, &ParseError{Msg: safetext.Inert(err.Error())}
	}
	return Parse(doc.Root())
}

// Parse reads a pinned surface (what Marshal writes) and checks that every
// digest recomputes from the values it holds: one edited by hand, or
// written under projections this mcpdrift does not know, is refused.
func Parse(v jcs.Value) (*Surface, error) {
	if v.Kind() != jcs.Object {
		return nil, perr("", "a JSON %s, not an object", v.Kind())
	}
	if err := schemas.ValidateValue(schemas.Surface, v); err != nil {
		return nil, &ParseError{Msg: safetext.Inert(err.Error())}
	}
	want := map[string]bool{"projections": true, "instructions": true}
	for _, k := range ListKinds {
		want[k.Member()] = true
	}
	for i := range v.Len() {
		k, _ := v.Member(i)
		if !want[k.Str()] {
			return nil, perr("", "unknown member %s", safetext.Quote(k.Str()))
		}
	}
	p, ok := v.Get("projections")
	if !ok || !bytes.Equal(p.Canonical(), []byte(projections)) {
		return nil, perr("/projections", "written under projections this mcpdrift does not know (it knows %s)", safetext.Escape(projections))
	}
	s := &Surface{}
	iv, ok := v.Get("instructions")
	if !ok {
		return nil, perr("", `no "instructions"`)
	}
	var err error
	if s.Instructions, err = parseInstr(iv); err != nil {
		return nil, err
	}
	for _, k := range ListKinds {
		lv, ok := v.Get(k.Member())
		if !ok {
			return nil, perr("", "no %s", safetext.Quote(k.Member()))
		}
		l, err := parseList(k, lv, "/"+k.Member())
		if err != nil {
			return nil, err
		}
		*s.List(k) = *l
	}
	return s, nil
}

// parseState reads {"state", "reason"?} and checks that v has no member
// but those and allowed.
func parseState(v jcs.Value, ptr string, allowed ...string) (State, string, error) {
	if v.Kind() != jcs.Object {
		return "", "", perr(ptr, "a JSON %s, not an object", v.Kind())
	}
	sv, ok := v.Get("state")
	if !ok || sv.Kind() != jcs.String {
		return "", "", perr(ptr, `no string "state"`)
	}
	st := State(sv.Str())
	switch st {
	case Observed, NotAdvertised, NotRequested, NotObserved:
	default:
		return "", "", perr(ptr+"/state", "unknown state %s", safetext.Quote(sv.Str()))
	}
	reason := ""
	if st == NotObserved {
		r, ok := v.Get("reason")
		if !ok || r.Kind() != jcs.String {
			return "", "", perr(ptr, `a not_observed state needs a string "reason"`)
		}
		reason = safetext.Inert(r.Str())
	}
	for i := range v.Len() {
		k, _ := v.Member(i)
		n := k.Str()
		ok := n == "state" || n == "reason" && st == NotObserved
		for _, a := range allowed {
			ok = ok || n == a && st == Observed
		}
		if !ok {
			return "", "", perr(ptr, "member %s does not belong to a %s state", safetext.Quote(n), st)
		}
	}
	return st, reason, nil
}

func parseInstr(v jcs.Value) (Instr, error) {
	const ptr = "/instructions"
	st, reason, err := parseState(v, ptr, "present", "digest", "value")
	if err != nil {
		return Instr{}, err
	}
	in := Instr{State: st, Reason: reason}
	if st != Observed {
		return in, nil
	}
	pv, hasPresent := v.Get("present")
	val, hasValue := v.Get("value")
	d, hasDigest := v.Get("digest")
	switch {
	case hasPresent && (pv.Kind() != jcs.False || hasValue || hasDigest):
		return Instr{}, perr(ptr, `"present" is only ever false, alone`)
	case hasPresent:
		return in, nil
	case !hasValue || !hasDigest || d.Kind() != jcs.String:
		return Instr{}, perr(ptr, `observed instructions need "value" and "digest" (or "present": false)`)
	}
	in = NewInstr(val, true, DefaultMaxInstructionsBytes)
	in.Reason = reason
	if in.Oversize {
		return Instr{}, perr(ptr+"/value", "%d bytes, more than the %d an observation keeps", in.Size, DefaultMaxInstructionsBytes)
	}
	if !d.StrEqual(in.Digest) {
		return Instr{}, perr(ptr+"/digest", "%s does not recompute from the value: the surface was edited or damaged", safetext.Quote(d.Str()))
	}
	return in, nil
}

func parseList(k Kind, v jcs.Value, ptr string) (*List, error) {
	st, reason, err := parseState(v, ptr, "digest", "items")
	if err != nil {
		return nil, err
	}
	l := &List{Kind: k, State: st, Reason: reason}
	if st != Observed {
		return l, nil
	}
	l.Completeness = Complete
	items, ok := v.Get("items")
	if !ok || items.Kind() != jcs.Array {
		return nil, perr(ptr, `an observed list needs an "items" array`)
	}
	for i := range items.Len() {
		it, err := NewItem(k, items.Index(i))
		if err != nil {
			return nil, perr(ptr+"/items/"+strconv.Itoa(i), "%s", safetext.Escape(err.Error()))
		}
		l.Items = append(l.Items, it)
	}
	if d := l.Duplicates(); len(d) > 0 {
		return nil, perr(ptr+"/items", "%s is listed twice", Label(k, d[0]))
	}
	d, ok := v.Get("digest")
	if !ok || d.Kind() != jcs.String {
		return nil, perr(ptr, `an observed list needs a "digest"`)
	}
	if got, _ := l.Digest(); !d.StrEqual(got) {
		return nil, perr(ptr+"/digest", "%s does not recompute from the items: the surface was edited or damaged", safetext.Quote(d.Str()))
	}
	return l, nil
}

// ErrNotPinned is what a caller says when a baseline pins no surface at
// all (pinned before mcpdrift pinned surfaces).
var ErrNotPinned = errors.New("the baseline pins no surface (instructions, prompts, resource templates): it was pinned before mcpdrift pinned them; pin again to pin them")
