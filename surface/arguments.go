package surface

import (
	"bytes"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// maxArgumentNotes bounds what argumentsDelta says.
const maxArgumentNotes = 16

// argument is one prompt argument: its name (when it has a string one)
// and its projection.
type argument struct {
	name string
	ok   bool
	proj []byte
	v    jcs.Value
}

// argumentsOf reads a prompt's arguments (nil when it has none, or they
// are not an array).
func argumentsOf(it *Item) []argument {
	a, ok := it.Value.Get("arguments")
	if !ok || a.Kind() != jcs.Array {
		return nil
	}
	out := make([]argument, 0, a.Len())
	for i := range a.Len() {
		x := a.Index(i)
		arg := argument{v: x}
		if x.Kind() == jcs.Object {
			arg.proj = appendObject(nil, x, argMembers)
			if n, ok := x.Get("name"); ok && n.Kind() == jcs.String {
				arg.name, arg.ok = n.Str(), true
			}
		} else {
			arg.proj = x.Canonical()
		}
		out = append(out, arg)
	}
	return out
}

func (a *argument) required() bool {
	r, ok := a.v.Get("required")
	return ok && r.Kind() == jcs.True
}

func (a *argument) label() string {
	if !a.ok {
		return "an argument without a string name"
	}
	return "argument " + safetext.Quote(a.name)
}

// argumentsDelta says how a prompt's arguments changed (escaped): which
// were added (and whether required), removed, or changed in which
// members, by name; a change of their order alone is said as such.
func argumentsDelta(old, now *Item) string {
	oa, na := argumentsOf(old), argumentsOf(now)
	byName := func(as []argument) map[string]*argument {
		m := map[string]*argument{}
		for i := range as {
			if as[i].ok {
				if _, dup := m[as[i].name]; !dup {
					m[as[i].name] = &as[i]
				}
			}
		}
		return m
	}
	om, nm := byName(oa), byName(na)
	var notes []string
	note := func(s string) {
		if len(notes) < maxArgumentNotes {
			notes = append(notes, s)
		}
	}
	for i := range na {
		a := &na[i]
		o := om[a.name]
		switch {
		case !a.ok:
			note(a.label() + " is served")
		case o == nil:
			s := "added " + a.label()
			if a.required() {
				s += " (required)"
			}
			if d, ok := a.v.Get("description"); ok && d.Kind() == jcs.String {
				s += ": " + safetext.Quote(safetext.Clip(d.Str(), 200))
			}
			note(s)
		case !bytes.Equal(o.proj, a.proj):
			var ms []string
			for _, m := range argMembers {
				x, _ := o.v.Get(m)
				y, _ := a.v.Get(m)
				if !bytes.Equal(appendOrNull(nil, x, x.Valid()), appendOrNull(nil, y, y.Valid())) {
					ms = append(ms, m)
				}
			}
			s := a.label() + " changed its " + strings.Join(ms, ", ")
			if o.required() != a.required() {
				if a.required() {
					s += " (now required)"
				} else {
					s += " (now optional)"
				}
			}
			note(s)
		}
	}
	for i := range oa {
		if a := &oa[i]; a.ok && nm[a.name] == nil {
			note("removed " + a.label())
		}
	}
	if len(notes) == 0 {
		return "the same arguments in another order, or arguments without a string name changed"
	}
	return strings.Join(notes, "; ")
}
