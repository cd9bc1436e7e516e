package decide

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// The decision on a tools/call: the exact name among the served tools,
// and the arguments as the pinned inputSchema, and the servers that will
// read them, take them.

type compiledSchema struct {
	c      *schemas.Compiled
	schema jcs.Value
	err    error
	// declared is every property name the schema declares, anywhere in
	// it; folds maps each one's safetext.MemberKey to it.
	declared map[string]bool
	folds    map[string]string
}

// Call is the decision on one tools/call.
type Call struct {
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Pointer and Constraint locate an argument the pinned schema refuses
	// (never its value).
	Pointer    string `json:"pointer,omitempty"`
	Constraint string `json:"constraint,omitempty"`
}

// CallOptions tune a call decision.
type CallOptions struct {
	// Strict refuses properties the pinned inputSchema does not declare
	// (the default under fail-closed).
	Strict bool
	// InDoubt is set between a list_changed and the end of the
	// re-observation it starts: calls to tools whose approval is in doubt
	// are refused until the new list is gated.
	InDoubt bool
}

// DecideCall decides a tools/call of name with arguments (the raw
// "arguments" value; an invalid jcs.Value for absent). Names match
// exactly: a name that differs by case or Unicode normalization is
// unknown.
func (l *List) DecideCall(name string, args jcs.Value, opt CallOptions) Call {
	refuse := func(reason, msg string) Call { return Call{Reason: reason, Message: msg} }
	if l.Withheld {
		return refuse(ReasonWithheld, "the server is withheld: "+l.Detail)
	}
	if opt.InDoubt {
		return refuse(ReasonInDoubt, "the server announced that its tool list changed; calls wait until the new list is gated")
	}
	d, ok := l.Decision(name)
	if !ok {
		return refuse(ReasonUnknownTool, fmt.Sprintf("no served tool is named %s", safetext.Quote(name)))
	}
	if !d.Serve {
		return refuse(ReasonHiddenTool, fmt.Sprintf("tool %s is not approved (%s)", safetext.Quote(name), d.Reason))
	}
	pt := l.baseline.byName[name]
	if pt == nil {
		return refuse(ReasonHiddenTool, fmt.Sprintf("tool %s is not in the baseline", safetext.Quote(name)))
	}
	cs := l.baseline.compiledFor(pt)
	if cs.err != nil {
		return refuse(ReasonSchemaUnusable, fmt.Sprintf("the pinned inputSchema of %s cannot be used to check arguments: %s", safetext.Quote(name), cs.err))
	}
	if ptr, want := cs.caseVariant(args, ""); args.Valid() && ptr != "" {
		return Call{Reason: ReasonAmbiguousArg, Pointer: ptr, Constraint: "differs only in case from the declared property " + safetext.Quote(want),
			Message: fmt.Sprintf("the argument at %s is not a declared property, but a server that ignores case reads it as the declared %s", safetext.Quote(ptr), safetext.Quote(want))}
	}
	if cs.c != nil {
		if c, bad := cs.validate(args); bad {
			return c
		}
	}
	if opt.Strict && args.Valid() {
		if ptr := undeclared(cs.schema, cs.schema, args, "", 0); ptr != "" {
			return Call{Reason: ReasonUndeclaredArg, Pointer: ptr, Constraint: "not declared by the approved inputSchema",
				Message: fmt.Sprintf("the argument at %s is not declared by the approved inputSchema (strict arguments)", safetext.Quote(ptr))}
		}
	}
	return Call{Allowed: true}
}

// validate checks args (absent: {}) against the compiled schema. A number
// a double cannot hold exactly (9007199254740993, 1e-400) is read as
// written by the schema check and rounded by most servers' decoders
// (JavaScript's, Go's into float64): the arguments are checked as both
// read them, and refused when either reading breaks the schema.
func (cs *compiledSchema) validate(args jcs.Value) (Call, bool) {
	var problems []schemas.Problem
	var err error
	if args.Valid() {
		problems, err = cs.c.ValidateValue(args) // parsed once, by the envelope
		if err == nil && len(problems) == 0 && args.HasInexact() {
			problems, err = cs.c.Validate(args.Canonical()) // numbers as the nearest doubles
		}
	} else {
		problems, err = cs.c.Validate([]byte("{}"))
	}
	if err != nil {
		return Call{Reason: ReasonBadArguments, Message: "the arguments are not JSON"}, true
	}
	if len(problems) > 0 {
		p := problems[0]
		return Call{Reason: ReasonBadArguments, Pointer: p.Pointer, Constraint: p.Constraint,
			Message: fmt.Sprintf("the arguments break the approved inputSchema at %s: %s", safetext.Quote(p.Pointer), p.Constraint)}, true
	}
	return Call{}, false
}

// caseVariant finds a member name in v (at any depth) that the schema
// does not declare but whose safetext.MemberKey is a declared property's:
// its pointer and that property ("" when none). A server that decodes
// arguments into a struct with a case-insensitive decoder reads it as the
// declared property, which the schema check did not see under that name.
func (cs *compiledSchema) caseVariant(v jcs.Value, ptr string) (string, string) {
	if !v.Valid() {
		return "", ""
	}
	switch v.Kind() {
	case jcs.Object:
		for i := range v.Len() {
			k, x := v.Member(i)
			name := k.Str()
			p := ptr + "/" + jcs.PointerToken(name)
			if !cs.declared[name] {
				if want, ok := cs.folds[safetext.MemberKey(name)]; ok {
					return p, want
				}
			}
			if q, want := cs.caseVariant(x, p); q != "" {
				return q, want
			}
		}
	case jcs.Array:
		for i := range v.Len() {
			if q, want := cs.caseVariant(v.Index(i), ptr+"/"+strconv.Itoa(i)); q != "" {
				return q, want
			}
		}
	}
	return "", ""
}

// declaredNames collects every property name a schema declares: the
// members of each "properties" object anywhere in it (definitions and
// branches included; a name declared anywhere counts everywhere, which
// can only refuse less).
func declaredNames(s jcs.Value, names map[string]bool) {
	switch s.Kind() {
	case jcs.Object:
		for i := range s.Len() {
			k, x := s.Member(i)
			if k.StrEqual("properties") && x.Kind() == jcs.Object {
				for j := range x.Len() {
					n, _ := x.Member(j)
					names[n.Str()] = true
				}
			}
			declaredNames(x, names)
		}
	case jcs.Array:
		for i := range s.Len() {
			declaredNames(s.Index(i), names)
		}
	}
}

// compiledFor compiles a pinned tool's inputSchema once.
func (b *Baseline) compiledFor(t *manifest.Tool) *compiledSchema {
	if v, ok := b.compiled.Load(t.Name); ok {
		return v.(*compiledSchema)
	}
	t.MustNotBeLean("decide.compiledFor")
	cs := &compiledSchema{schema: t.Proj.InputSchema}
	switch s := t.Proj.InputSchema; {
	case !s.Valid() || s.Kind() == jcs.Null:
		cs.err = errors.New("the tool has no inputSchema")
	case s.Kind() != jcs.Object && s.Kind() != jcs.True:
		cs.err = errors.New("the inputSchema is not a JSON object")
	default:
		cs.c, cs.err = schemas.Compile(s.Canonical())
		cs.declared = map[string]bool{}
		declaredNames(s, cs.declared)
		cs.folds = make(map[string]string, len(cs.declared))
		for n := range cs.declared {
			k := safetext.MemberKey(n)
			if prev, ok := cs.folds[k]; !ok || n < prev {
				cs.folds[k] = n // the same name whatever the map's order
			}
		}
	}
	v, _ := b.compiled.LoadOrStore(t.Name, cs)
	return v.(*compiledSchema)
}

// maxStrictDepth bounds the strict-arguments walk (refs can recurse).
const maxStrictDepth = 64

// undeclared returns the pointer of the first object member in v that
// schema s does not declare (under properties or patternProperties, or
// an explicit additionalProperties: true or schema), or "". allOf, anyOf
// and oneOf branches declare what any of them declares; internal $refs
// are followed (bounded).
func undeclared(root, s, v jcs.Value, ptr string, depth int) string {
	if depth > maxStrictDepth || !s.Valid() || s.Kind() != jcs.Object {
		return ""
	}
	s = resolveRef(root, s, depth)
	switch v.Kind() {
	case jcs.Object:
		props, patterns, extra := declared(root, s, depth)
		if extra {
			// additionalProperties true or a schema: declared by the schema
			// itself; its members are checked by validation.
			return ""
		}
		for i := range v.Len() {
			k, m := v.Member(i)
			key := k.Str()
			sub, ok := props[key]
			if !ok {
				matched := false
				for _, re := range patterns {
					if re(key) {
						matched = true
						break
					}
				}
				if !matched {
					return ptr + "/" + escapePtr(key)
				}
				continue
			}
			if p := undeclared(root, sub, m, ptr+"/"+escapePtr(key), depth+1); p != "" {
				return p
			}
		}
	case jcs.Array:
		items, ok := s.Get("items")
		if !ok || items.Kind() != jcs.Object {
			return ""
		}
		for i := range v.Len() {
			if p := undeclared(root, items, v.Index(i), fmt.Sprintf("%s/%d", ptr, i), depth+1); p != "" {
				return p
			}
		}
	}
	return ""
}

// declared collects the properties a schema (and its allOf/anyOf/oneOf
// branches) declares, its patternProperties as matchers, and whether it
// explicitly allows other members.
func declared(root, s jcs.Value, depth int) (map[string]jcs.Value, []func(string) bool, bool) {
	props := map[string]jcs.Value{}
	var patterns []func(string) bool
	extra := false
	var walk func(s jcs.Value, d int)
	walk = func(s jcs.Value, d int) {
		if d > maxStrictDepth || !s.Valid() || s.Kind() != jcs.Object {
			return
		}
		s = resolveRef(root, s, d)
		if p, ok := s.Get("properties"); ok && p.Kind() == jcs.Object {
			for i := range p.Len() {
				k, m := p.Member(i)
				if _, dup := props[k.Str()]; !dup {
					props[k.Str()] = m
				}
			}
		}
		if pp, ok := s.Get("patternProperties"); ok && pp.Kind() == jcs.Object {
			for i := range pp.Len() {
				k, _ := pp.Member(i)
				if re, err := compilePattern(k.Str()); err == nil {
					patterns = append(patterns, re)
				} else {
					extra = true // a pattern we cannot read: do not refuse on it
				}
			}
		}
		if ap, ok := s.Get("additionalProperties"); ok && (ap.Kind() == jcs.True || ap.Kind() == jcs.Object) {
			extra = true
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			if br, ok := s.Get(k); ok && br.Kind() == jcs.Array {
				for i := range br.Len() {
					walk(br.Index(i), d+1)
				}
			}
		}
	}
	walk(s, depth)
	return props, patterns, extra
}

// resolveRef follows an internal "#/..." $ref of s (bounded); anything
// else is returned as is.
func resolveRef(root, s jcs.Value, depth int) jcs.Value {
	for i := 0; i < 16 && depth+i < maxStrictDepth; i++ {
		ref, ok := s.Get("$ref")
		if !ok || ref.Kind() != jcs.String {
			return s
		}
		t, ok := resolvePointer(root, ref.Str())
		if !ok || t.Kind() != jcs.Object {
			return s
		}
		s = t
	}
	return s
}

func escapePtr(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

// resolvePointer resolves an internal reference ("#" and a JSON pointer)
// in root; anything else (an external or $id-relative ref) is not
// resolved.
func resolvePointer(root jcs.Value, ref string) (jcs.Value, bool) {
	if !strings.HasPrefix(ref, "#") {
		return jcs.Value{}, false
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return jcs.Value{}, false
	}
	if frag == "" {
		return root, true
	}
	if frag[0] != '/' {
		return jcs.Value{}, false
	}
	v := root
	for _, seg := range strings.Split(frag[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch v.Kind() {
		case jcs.Object:
			x, ok := v.Get(seg)
			if !ok {
				return jcs.Value{}, false
			}
			v = x
		case jcs.Array:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= v.Len() {
				return jcs.Value{}, false
			}
			v = v.Index(i)
		default:
			return jcs.Value{}, false
		}
	}
	return v, true
}

// compilePattern compiles a patternProperties key. JSON Schema patterns
// are ECMA-262; Go's RE2 reads the common subset, and a pattern it cannot
// read is not used to refuse anything.
func compilePattern(p string) (func(string) bool, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}
