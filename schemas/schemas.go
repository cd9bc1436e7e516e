// Package schemas holds the JSON Schemas of every artifact mcpdrift reads
// and writes, and validates documents against them. External references
// are never loaded: the compiler has no loader, so a schema can only refer
// to itself or to another shipped schema.
package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

//go:embed *.schema.json
var files embed.FS

// Schema file names by artifact kind.
const (
	Observed = "observed.v0.schema.json"
	Declared = "declared.v0.schema.json"
	Policy   = "policy.v1.schema.json"
	Snapshot = "snapshot.v1.schema.json"
	// Suppressions is the per-rule suppression file (mcpdrift.yaml).
	Suppressions = "suppressions.v1.schema.json"
	// Config is mcpdrift.yaml as a whole: the command line's defaults
	// and the suppressions (inlined from Suppressions). Generated from
	// the command tree by scripts/clidocs.
	Config = "config.v1.schema.json"
	// Lock is the lock of many servers (mcpdrift.lock).
	Lock = "lock.v1.schema.json"
	// WatchEvent is one NDJSON event of mcpdrift watch.
	WatchEvent = "watch_event.v1.schema.json"
	// Inventory is what mcpdrift discover writes.
	Inventory = "inventory.v1.schema.json"
	// Scan is the summary mcpdrift scan writes with --format json.
	Scan = "scan.v1.schema.json"
	// Surface is the pinned model-facing surface, a member of the
	// snapshot and of each server of the lock (docs/surface.md).
	Surface = "surface.v1.schema.json"
	// SurfaceObserved is the record of the surface an observation found,
	// beside its observed record.
	SurfaceObserved = "surface_observed.v1.schema.json"
)

// names are the shipped schemas.
var names = []string{Observed, Declared, Policy, Snapshot, Suppressions, Config, Lock, WatchEvent, Inventory, Scan, Surface, SurfaceObserved}

// compiled is each schema, compiled the first time it is needed: a run
// compiles the one or two it validates, not all of them, whose
// compilation was a fixed cost of every run.
var compiled = func() map[string]func() (*jsonschema.Schema, error) {
	m := map[string]func() (*jsonschema.Schema, error){}
	for _, n := range names {
		m[n] = sync.OnceValues(func() (*jsonschema.Schema, error) { return load(n) })
	}
	return m
}()

// compiler reads shipped schemas only (embedded, by their mem:/// URL:
// a schema may refer to another, as the lock's entries are declared
// baselines'), each when a compilation first needs it, with the artifact
// patterns' engine. It compiles one schema at a time, and keeps what it
// compiled for the next. Reading every schema up front made the largest
// (the settings file's) a fixed cost of every run that validates any.
var compiler = sync.OnceValue(func() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.UseLoader(shipped{})
	c.UseRegexpEngine(artifactRegexp)
	return c
})

// shipped loads the embedded schemas, and nothing else.
type shipped struct{}

func (shipped) Load(url string) (any, error) {
	n, ok := strings.CutPrefix(url, "mem:///")
	if !ok || !slices.Contains(names, n) {
		return nil, fmt.Errorf("no shipped schema at %q", url)
	}
	b, err := files.ReadFile(n)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", n, err)
	}
	return doc, nil
}

var compiling sync.Mutex // a jsonschema.Compiler is not safe for concurrent use

// load compiles the named schema.
func load(name string) (*jsonschema.Schema, error) {
	c := compiler()
	compiling.Lock()
	defer compiling.Unlock()
	s, err := c.Compile("mem:///" + name)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return s, nil
}

// digestPattern is the pattern of every digest in the artifact schemas.
const digestPattern = "^sha256:[0-9a-f]{64}$"

// artifactRegexp compiles the artifact schemas' patterns: digestPattern,
// which a baseline of 10,000 tools checks 50,000 times, as the equivalent
// byte test (Go's $ without the m flag matches only at the end of the
// text), anything else with package regexp as the default engine does.
func artifactRegexp(pattern string) (jsonschema.Regexp, error) {
	if pattern == digestPattern {
		return digestRegexp{}, nil
	}
	return regexp.Compile(pattern)
}

// digestRegexp matches digestPattern.
type digestRegexp struct{}

func (digestRegexp) String() string { return digestPattern }

func (digestRegexp) MatchString(s string) bool { return isDigest(s) }

// isDigest reports whether s matches digestPattern: "sha256:" and 64
// lowercase hexadecimal digits.
func isDigest[T string | []byte](s T) bool {
	if len(s) != 71 || string(s[:7]) != "sha256:" {
		return false
	}
	all := byte(1)
	for i := 7; i < len(s); i++ {
		all &= lowerHex[s[i]] // no branch per digit
	}
	return all == 1
}

// lowerHex is 1 at the lowercase hexadecimal digits, 0 elsewhere.
var lowerHex = func() (t [256]byte) {
	for _, c := range "0123456789abcdef" {
		t[c] = 1
	}
	return t
}()

// Files returns the embedded schema files (for documentation and tests).
func Files() embed.FS { return files }

// ValidateValue checks a document jcs has parsed against the named schema,
// without reading its text again; it agrees with Validate of the same text
// decoded by encoding/json with UseNumber (see Compiled.ValidateValue).
func ValidateValue(name string, v jcs.Value) error {
	if ok, err := validateFast(name, v); ok {
		return err
	}
	return Validate(name, instanceOf(v))
}

// Instance is v in the form Validate takes: map[string]any, []any,
// string, json.Number, bool, nil.
func Instance(v jcs.Value) any { return instanceOf(v) }

// Validate checks doc (a value as produced by encoding/json with UseNumber,
// or jsonschema.UnmarshalJSON, or Instance) against the named schema. The
// error lists each failing location as a JSON pointer.
func Validate(name string, doc any) error {
	get, ok := compiled[name]
	if !ok {
		return fmt.Errorf("no schema %q", name)
	}
	s, err := get()
	if err != nil {
		return err
	}
	err = s.Validate(doc)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err
	}
	return &Error{Schema: name, Problems: flatten(ve)}
}

// Problem is one schema violation.
type Problem struct {
	Pointer string
	// Segments are the pointer's unescaped segments.
	Segments []string
	// Keyword is the failing keyword's path in the schema ("/properties/a/type").
	Keyword string
	Msg     string
	// Constraint is the violated constraint as the schema states it,
	// without the instance's value (the instance's JSON type at most):
	// what a gateway may say about arguments it refused.
	Constraint string
}

// constraint describes a failed keyword from the schema's side only.
func constraint(k jsonschema.ErrorKind) string {
	list := func(xs []string) string { return strings.Join(xs, ", ") }
	switch x := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("type: want %s, got %s", list(x.Want), x.Got)
	case *kind.Enum:
		return fmt.Sprintf("enum: one of %d allowed values", len(x.Want))
	case *kind.Const:
		return "const: one allowed value"
	case *kind.Format:
		return "format " + x.Want
	case *kind.Required:
		return "required: " + list(x.Missing)
	case *kind.DependentRequired:
		return "dependentRequired: " + list(x.Missing)
	case *kind.Dependency:
		return "dependencies: " + list(x.Missing)
	case *kind.AdditionalProperties:
		return fmt.Sprintf("additionalProperties: %d undeclared propert(ies)", len(x.Properties))
	case *kind.PropertyNames:
		return "propertyNames"
	case *kind.MinProperties:
		return fmt.Sprintf("minProperties %d", x.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("maxProperties %d", x.Want)
	case *kind.MinItems:
		return fmt.Sprintf("minItems %d", x.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("maxItems %d", x.Want)
	case *kind.UniqueItems:
		return "uniqueItems"
	case *kind.MinLength:
		return fmt.Sprintf("minLength %d", x.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("maxLength %d", x.Want)
	case *kind.Pattern:
		return "pattern " + strconvQuote(x.Want)
	case *kind.Minimum:
		return "minimum " + x.Want.RatString()
	case *kind.Maximum:
		return "maximum " + x.Want.RatString()
	case *kind.ExclusiveMinimum:
		return "exclusiveMinimum " + x.Want.RatString()
	case *kind.ExclusiveMaximum:
		return "exclusiveMaximum " + x.Want.RatString()
	case *kind.MultipleOf:
		return "multipleOf " + x.Want.RatString()
	case *kind.FalseSchema:
		return "false (nothing is allowed here)"
	}
	if k == nil {
		return ""
	}
	return strings.Join(k.KeywordPath(), "/")
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// Compiled is a schema compiled once (with no loader: nothing external
// is ever read), for validating many instances.
type Compiled struct{ s *jsonschema.Schema }

// compileError is the library's error about a schema, its message
// requoted and clipped (requote): the schema is often a server's, and its
// text is quoted in the message.
type compileError struct{ err error }

func (e *compileError) Error() string { return requote(e.err.Error(), errValues(e.err)) }

// errValues are kindValues of every error kind of a validation error
// tree err holds (a schema that fails its metaschema), at most
// maxKnownValues in all.
func errValues(err error) map[string]string {
	if se, ok := errors.AsType[*jsonschema.SchemaValidationError](err); ok {
		err = se.Err // it has no Unwrap
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	out := map[string]string{}
	var walk func(v *jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		addKindValues(out, v.ErrorKind)
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}
func (e *compileError) Unwrap() error { return e.err }

func compileErr(err error) error { return &compileError{err} }

// Compile compiles a schema given as raw JSON; its own $schema picks the
// draft (2020-12 when absent).
func Compile(schema []byte) (*Compiled, error) {
	sdoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, compileErr(err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(nil)
	if err := c.AddResource("mem:///schema.json", sdoc); err != nil {
		return nil, compileErr(err)
	}
	sch, err := c.Compile("mem:///schema.json")
	if err != nil {
		return nil, compileErr(err)
	}
	return &Compiled{sch}, nil
}

// Validate validates a raw JSON instance. A nil slice means it is valid;
// an error means the instance could not be read.
func (c *Compiled) Validate(instance []byte) ([]Problem, error) {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return nil, err
	}
	verr := c.s.Validate(inst)
	if verr == nil {
		return nil, nil
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		return nil, verr
	}
	return flatten(ve), nil
}

// ValidateValue validates an instance that jcs has already parsed, without
// reading its text again (the gateway checks every call's arguments this
// way). It agrees with Validate(v.Raw()): jcs's strict parse refuses
// everything encoding/json would have read differently (duplicate names,
// invalid UTF-8, lone surrogates), strings are their decoded values and
// numbers keep their text, as Validate's UseNumber decoding keeps it.
func (c *Compiled) ValidateValue(v jcs.Value) ([]Problem, error) {
	verr := c.s.Validate(instanceOf(v))
	if verr == nil {
		return nil, nil
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		return nil, verr
	}
	return flatten(ve), nil
}

// instanceOf is v in the form jsonschema validates: map[string]any,
// []any, string, json.Number, bool, nil.
func instanceOf(v jcs.Value) any {
	switch v.Kind() {
	case jcs.Object:
		m := make(map[string]any, v.Len())
		for i := range v.Len() {
			k, x := v.Member(i)
			m[k.Str()] = instanceOf(x)
		}
		return m
	case jcs.Array:
		a := make([]any, v.Len())
		for i := range a {
			a[i] = instanceOf(v.Index(i))
		}
		return a
	case jcs.String:
		return v.Str()
	case jcs.Number:
		return json.Number(v.Raw())
	case jcs.True:
		return true
	case jcs.False:
		return false
	}
	return nil
}

// ValidateDocument compiles a schema given as raw JSON (its own $schema
// picks the draft; nothing external is ever loaded) and validates the raw
// JSON instance against it. A nil slice means the instance is valid; an
// error means the schema or the instance could not be read.
func ValidateDocument(schema, instance []byte) ([]Problem, error) {
	c, err := Compile(schema)
	if err != nil {
		return nil, err
	}
	return c.Validate(instance)
}

// Error is a failed validation.
type Error struct {
	Schema   string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("does not match schema ")
	b.WriteString(e.Schema)
	for i, p := range e.Problems {
		if i == 8 {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-i)
			break
		}
		b.WriteString("; at ")
		b.WriteString(safetext.Quote(p.Pointer))
		b.WriteString(": ")
		b.WriteString(safetext.Inert(p.Msg))
	}
	return b.String()
}

// requote rewrites the library's quoted values ('…', Go's %q escapes
// inside, \' for a quote: kind.quote) as safetext quotes them, quotes what
// it shows between backquotes (the regexp package's expression, raw), and
// escapes the rest (safetext.InertGo), so that a message holds one escape
// dialect and no active character: a property name "x\x1b" reads
// "x\u001b" here as it does everywhere else, a pattern's ESC or a
// metaschema error's newlines are escaped, and Inert lets it through
// unchanged. The library's message can hold an instance's value whole (a
// pattern's, a format checker's error), so it is clipped (a message is
// for people, and an argument of megabytes is not read out): first, to
// bound the work, then once rewritten, so that a span cut short is not
// left in Go's dialect. known are the values the error kinds gave the
// library (kindValues, errValues), read whole: its quoting writes a\ as
// 'a\', which reads as the start of a value holding a quote.
func requote(msg string, known map[string]string) string {
	return safetext.ClipEscaped(safetext.InertGo(safetext.Clip(msg, 16*maxProblemMsg), '\'', known), maxProblemMsg)
}

// kindValues are the strings an error kind holds (in its fields of
// string, any and slice types: the names and values its message quotes), keyed by
// the library's quoting of each (libQuote), at most maxKnownValues.
func kindValues(k jsonschema.ErrorKind) map[string]string {
	out := map[string]string{}
	addKindValues(out, k)
	return out
}

// addKindValues adds kindValues of k to out, up to maxKnownValues in out.
func addKindValues(out map[string]string, k jsonschema.ErrorKind) {
	v := reflect.ValueOf(k)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	// A string the kind holds as itself, in a slice, or in a field of
	// type any (an enum's or a const's values, a format's instance).
	add := func(x reflect.Value) {
		for x.Kind() == reflect.Interface && !x.IsNil() {
			x = x.Elem()
		}
		if x.Kind() == reflect.String && len(out) < maxKnownValues {
			out[libQuote(x.String())] = x.String()
		}
	}
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		f := v.Field(i)
		add(f)
		if f.Kind() == reflect.Interface && !f.IsNil() {
			f = f.Elem()
		}
		if f.Kind() == reflect.Slice {
			for j := range min(f.Len(), maxKnownValues) {
				add(f.Index(j))
			}
		}
	}
}

// maxKnownValues bounds the values requote matches whole.
const maxKnownValues = 256

// libQuote is how the library quotes a value in its messages (its kind
// package's quote: Go's %q, its \" unescaped, ' escaped as \'). Its
// ambiguity is the library's: a value that ends in a backslash loses it
// ("a\\"'s \" is read as an escaped quote).
func libQuote(s string) string {
	s = strconv.Quote(s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

// maxProblemMsg bounds a problem's message (bytes, before requoting).
const maxProblemMsg = 2048

func flatten(ve *jsonschema.ValidationError) []Problem {
	var ps []Problem
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			causes := e.Causes
			switch e.ErrorKind.(type) {
			case *kind.AnyOf, *kind.OneOf:
				// A branch that failed only on its type ("got string,
				// want null") says nothing when another branch took the
				// value's type and failed on something that matters (a
				// digest's pattern): report those.
				var typed []*jsonschema.ValidationError
				for _, c := range causes {
					if _, onlyType := c.ErrorKind.(*kind.Type); !onlyType || len(c.Causes) > 0 {
						typed = append(typed, c)
					}
				}
				if len(typed) > 0 {
					causes = typed
				}
			}
			for _, c := range causes {
				walk(c)
			}
			return
		}
		ptr := jcs.PointerJoin("", e.InstanceLocation...)
		if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
			// The library lists them in map order: a message must say the
			// same of the same document every time.
			sort.Strings(ap.Properties)
		}
		msg := e.Error()
		// Drop the library's own "at '<location>': " prefix; the pointer
		// is reported separately.
		if strings.HasPrefix(msg, "at '") {
			if i := strings.Index(msg, "': "); i >= 0 {
				msg = msg[i+3:]
			}
		}
		msg = requote(msg, kindValues(e.ErrorKind))
		k := ptr + "\x00" + msg
		if seen[k] {
			return
		}
		seen[k] = true
		ps = append(ps, Problem{Pointer: ptr, Segments: e.InstanceLocation, Keyword: "/" + strings.Join(e.ErrorKind.KeywordPath(), "/"), Msg: msg, Constraint: constraint(e.ErrorKind)})
	}
	walk(ve)
	if len(ps) == 0 {
		ps = append(ps, Problem{Pointer: "", Msg: ve.Error()})
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Pointer < ps[j].Pointer })
	return ps
}
