package decide

import (
	"errors"
	"fmt"
	"regexp"

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
	// What the walk of a call's arguments reads of the schema
	// (schemaFacts): the names it declares anywhere by
	// safetext.MemberKey, its patterns compiled, its internal $refs'
	// targets.
	variants map[string][]string
	patterns map[string]*regexp.Regexp
	refs     map[jcs.Value]jcs.Value
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
	variant, undeclared := cs.checkArgs(args, opt.Strict)
	if variant.ptr != "" {
		return Call{Reason: ReasonAmbiguousArg, Pointer: variant.ptr, Constraint: "differs only in case from the declared property " + safetext.Quote(variant.want),
			Message: fmt.Sprintf("the argument at %s is not a declared property, but a server that ignores case reads it as the declared %s", safetext.Quote(variant.ptr), safetext.Quote(variant.want))}
	}
	if cs.c != nil {
		if c, bad := cs.validate(args); bad {
			return c
		}
	}
	if undeclared.ptr != "" {
		c := Call{Reason: ReasonUndeclaredArg, Pointer: undeclared.ptr, Constraint: "not declared by the approved inputSchema",
			Message: fmt.Sprintf("the argument at %s is not declared by the approved inputSchema (strict arguments)", safetext.Quote(undeclared.ptr))}
		if undeclared.deep {
			c.Constraint = fmt.Sprintf("deeper than the %d levels strict arguments read", maxStrictDepth)
			c.Message = fmt.Sprintf("the argument at %s is deeper than the %d levels strict arguments read against the approved inputSchema", safetext.Quote(undeclared.ptr), maxStrictDepth)
		}
		return c
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

// compiledFor compiles a pinned tool's inputSchema once.
func (b *Baseline) compiledFor(t *manifest.Tool) *compiledSchema {
	if v, ok := b.compiled.Load(t.Name); ok {
		return v.(*compiledSchema)
	}
	is := t.Proj().InputSchema
	cs := &compiledSchema{schema: is}
	switch s := is; {
	case !s.Valid() || s.Kind() == jcs.Null:
		cs.err = errors.New("the tool has no inputSchema")
	case s.Kind() != jcs.Object && s.Kind() != jcs.True:
		cs.err = errors.New("the inputSchema is not a JSON object")
	default:
		cs.c, cs.err = schemas.Compile(s.Canonical())
		cs.variants, cs.patterns, cs.refs = schemaFacts(s)
	}
	v, _ := b.compiled.LoadOrStore(t.Name, cs)
	return v.(*compiledSchema)
}
