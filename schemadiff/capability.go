package schemadiff

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Capability kinds: what a parameter lets a caller steer beyond what the
// tool's name says.
const (
	CapCommand  = "command"   // a shell or CLI command, or its argv
	CapCode     = "code"      // source code the tool runs or evaluates
	CapScript   = "script"    // a script
	CapSQL      = "sql"       // a query in SQL or another database language
	CapURL      = "url"       // a URL, URI, endpoint or webhook the tool talks to
	CapPath     = "path"      // a file or directory path
	CapEnv      = "env"       // environment variables
	CapHeaders  = "headers"   // HTTP headers
	CapFreeForm = "free_form" // an object (or value) with no declared shape
)

// capKindOrder ranks the kinds: the first one a tool has is the one a raised
// change names when the change itself is not inside a capability parameter.
var capKindOrder = []string{CapCommand, CapCode, CapScript, CapSQL, CapEnv, CapHeaders, CapURL, CapPath, CapFreeForm}

// capNoun is how a reason names each kind.
var capNoun = map[string]string{
	CapCommand: "a command", CapCode: "a code", CapScript: "a script", CapSQL: "an SQL",
	CapURL: "a URL", CapPath: "a path", CapEnv: "an environment", CapHeaders: "a headers",
	CapFreeForm: "a free-form object",
}

// Capability is a parameter of a tool's input schema that widens what the
// tool can be made to do: it takes a command, code, a script, SQL, a URL, a
// path, environment variables, HTTP headers, or an object with no declared
// shape. Changes to a tool with one are graded one step higher (see
// RaiseForCapabilities). It never changes whether a tool is privileged,
// which is decided from the name alone.
type Capability struct {
	Kind    string `json:"capability"`
	Param   string `json:"parameter"` // dotted path ("cmd", "options.headers", "files[].path")
	Pointer string `json:"pointer"`   // RFC 6901 pointer to the parameter's schema, prefixed with base
	Type    string `json:"type"`      // the parameter's declared type(s), "any" when it declares none
	Via     string `json:"via"`       // "name", "description" or "shape" (free-form)
}

// SeverityRaise says why a change's severity is one step above the grade of
// its kind: the tool takes a capability parameter. From is the grade before
// the raise.
type SeverityRaise struct {
	From string `json:"from"`
	Capability
	Reason string `json:"reason"`
}

// reason is the raise said in one line; quote is applied to the parameter
// name (server-controlled).
func (r *SeverityRaise) reason(quote func(string) string) string {
	typ := r.Type
	for _, t := range strings.Split(typ, "|") {
		if !capJSONTypes[t] {
			typ = quote(typ) // a type the schema spelled oddly: server-controlled text
			break
		}
	}
	switch r.Via {
	case "description":
		return fmt.Sprintf("the tool takes parameter %s (%s), described as %s", quote(r.Param), typ, strings.TrimPrefix(strings.TrimPrefix(capNoun[r.Kind], "an "), "a "))
	case "shape":
		return fmt.Sprintf("the tool takes %s parameter %s (any keys)", capNoun[r.Kind], quote(r.Param))
	}
	return fmt.Sprintf("the tool takes %s parameter %s (%s)", capNoun[r.Kind], quote(r.Param), typ)
}

var capJSONTypes = map[string]bool{"string": true, "object": true, "array": true, "number": true, "integer": true, "boolean": true, "null": true, "any": true}

// Sentence is the raise as a report shows it beside the change.
func (r *SeverityRaise) Sentence(quote func(string) string) string {
	return "severity raised from " + r.From + ": " + r.reason(quote)
}

// capWords maps the words of a parameter name (lower-case, a plural s
// dropped) to kinds. A name counts when such a word is its last word
// ("callback_url", "working_directory", "extraHTTPHeaders"), or its first
// word followed only by words that say "the content of it" ("script_body",
// "env_vars", "code_snippet").
var capWords = map[string]string{
	"command": CapCommand, "cmd": CapCommand, "commandline": CapCommand, "cmdline": CapCommand, "shell": CapCommand, "argv": CapCommand,
	"code": CapCode, "snippet": CapCode, "javascript": CapCode, "typescript": CapCode, "python": CapCode, "js": CapCode,
	"script": CapScript,
	"sql":    CapSQL, "cypher": CapSQL, "ddl": CapSQL, "dml": CapSQL, "sparql": CapSQL, "plsql": CapSQL, "tsql": CapSQL,
	"url": CapURL, "uri": CapURL, "endpoint": CapURL, "webhook": CapURL, "href": CapURL, "baseurl": CapURL,
	"path": CapPath, "file": CapPath, "filename": CapPath, "filepath": CapPath, "pathname": CapPath,
	"dir": CapPath, "directory": CapPath, "folder": CapPath, "cwd": CapPath, "workdir": CapPath,
	"env": CapEnv, "environ": CapEnv, "envvar": CapEnv, "environment": CapEnv,
	"header": CapHeaders,
}

// capContentWords may follow a capability word that starts a name.
var capContentWords = map[string]bool{
	"content": true, "text": true, "string": true, "body": true, "source": true, "value": true, "line": true,
	"input": true, "list": true, "arg": true, "args": true, "argument": true, "var": true, "variable": true,
	"map": true, "array": true, "data": true, "template": true,
}

// capPhrases are the phrases of a parameter description that name a
// capability (all), among them those that say a plain string named env or
// header is one (env, headers). URLs and paths are left to names:
// descriptions mention them in passing far too often ("the number of URLs
// to return"). Compiled when first searched (their regexps and tries are
// work and allocations that a run that diffs no schema, most of them,
// would pay as it starts).
var capPhrases = sync.OnceValue(func() *capPhraseSet {
	env := newPhrase(`(?i)\benvironment variables?\b|\benv vars?\b`, "env")
	headers := newPhrase(`(?i)\bhttp headers?\b|\brequest headers?\b`, "header")
	return &capPhraseSet{env: env, headers: headers, all: []capPhrase{
		{CapCommand, newPhrase(`(?i)\b(shell|bash|terminal|kubectl|cli|system) commands?\b|\bcommands? (line|to (run|execute))\b|\bcommand-line\b`, "command")},
		{CapCode, newPhrase(`(?i)\b(javascript|typescript|python|node\.?js|js|ruby|lua|php) (code|function|snippet|expression|source)\b|\bcode to (run|execute|evaluate)\b|\b(run|execute|evaluate|eval)s? (arbitrary |the |this )?(javascript|typescript|python|code)\b`, "code", "function", "nippet", "expre", "ource", "java", "type", "python")},
		{CapScript, newPhrase(`(?i)\bscripts? to (run|execute)\b|\b(shell|bash|python|javascript|powershell) scripts?\b`, "cript")},
		{CapSQL, newPhrase(`(?i)\bsql\b|\bcypher\b`, "ql", "cypher")},
		{CapEnv, env},
		{CapHeaders, headers},
	}}
})

type capPhraseSet struct {
	all          []capPhrase
	env, headers phrase
}

type capPhrase struct {
	kind string
	p    phrase
}

// description is a parameter's description, searched for phrases.
type description struct {
	text, low string
	lowered   bool
}

func (d *description) has(p phrase) bool {
	if len(d.text) > phraseWhole && !d.lowered {
		d.low, d.lowered = lowerASCII(d.text), true
	}
	return p.match(d.text, d.low)
}

// Bounds of the walk.
const (
	capMaxDepth = 32
	capMax      = 64
)

// Capabilities returns the capability parameters of an input schema, in
// canonical member order, depth first, each (parameter, kind) once. base prefixes the pointers
// ("/inputSchema").
//
// What counts, for each property at any depth (nested objects, array
// items, the branches of anyOf, oneOf and allOf, and internal "#..." $refs,
// each followed once):
//
//   - its name, by word: command, cmd, shell, argv; code, snippet,
//     javascript, python; script; sql, cypher, ddl; url, uri, endpoint,
//     webhook, href; path, file, filename, dir, directory, folder, cwd,
//     workdir; env, environ, environment; header(s). The word must end the
//     name, or start it followed only by content words (body, text, value,
//     args, vars, ...), so "code_language", "file_type" and "url_count" do
//     not count;
//   - its description, for commands, code, scripts, SQL ("sql", "cypher"),
//     environment variables and HTTP headers: so a "query" counts as SQL only
//     when its description says SQL, and a search tool's query never does;
//   - its shape: an object with no properties and open additionalProperties
//     (absent, true or {}), or a schema that accepts anything ({} or true).
//
// What never counts: boolean, number and integer parameters (a flag such as
// "allowCode" takes no code), parameters with enum or const (a closed set of
// values), "header", "env" and "environment" as plain strings ("env":
// "production" names a deployment target; a header string is a column
// title) unless the description says "variables" or "HTTP headers", and the
// root schema itself (a tool without parameters is often {"type":"object"}).
func Capabilities(schema jcs.Value, base string) []Capability {
	w := capWalker{root: schema, seen: map[string]bool{}, refs: map[string]bool{}}
	w.walk(schema, base, "", 0)
	return w.out
}

type capWalker struct {
	root jcs.Value
	out  []Capability
	seen map[string]bool // kind + "\x00" + param
	refs map[string]bool // $refs being followed
}

func (w *capWalker) add(c Capability) {
	k := c.Kind + "\x00" + c.Param
	if w.seen[k] || len(w.out) >= capMax {
		return
	}
	w.seen[k] = true
	w.out = append(w.out, c)
}

func (w *capWalker) walk(v jcs.Value, ptr, param string, depth int) {
	if depth > capMaxDepth || !v.Valid() || v.Kind() != jcs.Object {
		return
	}
	if r, ok := v.Get("$ref"); ok && r.Kind() == jcs.String {
		if t, ok := w.root.ResolveFragment(r.Str()); ok && !w.refs[r.Str()] {
			w.refs[r.Str()] = true
			w.walk(t, ptr, param, depth+1)
			delete(w.refs, r.Str())
		}
	}
	if props, ok := v.Get("properties"); ok && props.Kind() == jcs.Object {
		for i := 0; i < props.Len(); i++ {
			k, sub := props.Member(i)
			name := k.Str()
			p := name
			if param != "" {
				p = param + "." + name
			}
			sp := jcs.PointerJoin(ptr, "properties", name)
			w.classify(name, sub, sp, p)
			w.walk(sub, sp, p, depth+1)
		}
	}
	if items, ok := v.Get("items"); ok {
		switch items.Kind() {
		case jcs.Object:
			w.walk(items, ptr+"/items", param+"[]", depth+1)
		case jcs.Array:
			for i := 0; i < items.Len(); i++ {
				w.walk(items.Index(i), ptr+"/items/"+strconv.Itoa(i), param+"[]", depth+1)
			}
		}
	}
	if ap, ok := v.Get("additionalProperties"); ok && ap.Kind() == jcs.Object {
		w.walk(ap, ptr+"/additionalProperties", param+".*", depth+1)
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if bs, ok := v.Get(kw); ok && bs.Kind() == jcs.Array {
			for i := 0; i < bs.Len(); i++ {
				w.walk(bs.Index(i), ptr+"/"+kw+"/"+strconv.Itoa(i), param, depth+1)
			}
		}
	}
}

// classify records what the property name with schema sub takes.
func (w *capWalker) classify(name string, sub jcs.Value, ptr, param string) {
	if capFreeForm(sub) {
		w.add(Capability{Kind: CapFreeForm, Param: param, Pointer: ptr, Type: capType(sub), Via: "shape"})
	}
	if !sub.Valid() || sub.Kind() != jcs.Object {
		return
	}
	for _, kw := range []string{"enum", "const"} {
		if _, ok := sub.Get(kw); ok {
			return
		}
	}
	typ := capType(sub)
	if capScalar(sub) {
		return
	}
	desc := &description{}
	if d, ok := sub.Get("description"); ok && d.Kind() == jcs.String {
		desc.text = d.Str()
	}
	if kind := capNameKind(name); kind != "" {
		// A plain string "header" is a column title and a plain string
		// "env" or "environment" a deployment target ("production"),
		// unless the description says HTTP headers or variables.
		plainString := typ == "string"
		switch {
		case kind == CapHeaders && plainString && !desc.has(capPhrases().headers):
		case kind == CapEnv && plainString && !desc.has(capPhrases().env):
		default:
			w.add(Capability{Kind: kind, Param: param, Pointer: ptr, Type: typ, Via: "name"})
			return
		}
	}
	for _, d := range capPhrases().all {
		if desc.has(d.p) {
			w.add(Capability{Kind: d.kind, Param: param, Pointer: ptr, Type: typ, Via: "description"})
			return
		}
	}
}

// capWordsOf splits a name into lower-case words, a plural s dropped from
// words longer than three letters ("headers" → "header").
func capWordsOf(name string) []string {
	ws := schWords(name)
	out := make([]string, 0, len(ws))
	for _, x := range ws {
		x = strings.ToLower(x)
		if len(x) > 3 && strings.HasSuffix(x, "s") && !strings.HasSuffix(x, "ss") {
			x = x[:len(x)-1]
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		out = append(out, "")
	}
	return out
}

// capNameKind is the capability kind a parameter name says, or "".
func capNameKind(name string) string {
	ws := capWordsOf(name)
	if k := capWords[ws[len(ws)-1]]; k != "" {
		return k
	}
	k := capWords[ws[0]]
	if k == "" {
		return ""
	}
	for _, x := range ws[1:] {
		if !capContentWords[x] && !(k == CapPath && x == "name") {
			return ""
		}
	}
	return k
}

// capType is a schema's declared type(s): "string", "array|string", or
// "any" when it declares none.
func capType(v jcs.Value) string {
	if !v.Valid() || v.Kind() != jcs.Object {
		return "any"
	}
	t, ok := v.Get("type")
	if !ok {
		return "any"
	}
	switch t.Kind() {
	case jcs.String:
		return t.Str()
	case jcs.Array:
		var ts []string
		for i := 0; i < t.Len(); i++ {
			if x := t.Index(i); x.Kind() == jcs.String {
				ts = append(ts, x.Str())
			}
		}
		if len(ts) > 0 {
			return strings.Join(ts, "|")
		}
	}
	return "any"
}

// capScalar reports whether a schema only admits booleans, numbers and
// null: such a parameter carries no command, code, URL or path.
func capScalar(v jcs.Value) bool {
	t, ok := v.Get("type")
	if !ok {
		return false
	}
	scalar := func(s string) bool { return s == "boolean" || s == "number" || s == "integer" || s == "null" }
	switch t.Kind() {
	case jcs.String:
		return scalar(t.Str())
	case jcs.Array:
		for i := 0; i < t.Len(); i++ {
			if x := t.Index(i); x.Kind() != jcs.String || !scalar(x.Str()) {
				return false
			}
		}
		return t.Len() > 0
	}
	return false
}

// capFreeForm reports whether a parameter's schema accepts an object of any
// shape: true, {}, or an object (by type, or with no type at all) without
// properties, patternProperties, a $ref or a composition, whose
// additionalProperties is absent, true or {}.
func capFreeForm(v jcs.Value) bool {
	if !v.Valid() {
		return false
	}
	switch v.Kind() {
	case jcs.True:
		return true
	case jcs.Object:
	default:
		return false
	}
	for _, kw := range []string{"properties", "patternProperties", "$ref", "anyOf", "oneOf", "allOf", "not", "enum", "const", "propertyNames"} {
		if _, ok := v.Get(kw); ok {
			return false
		}
	}
	if _, ok := v.Get("type"); ok {
		if !strings.Contains("|"+capType(v)+"|", "|object|") {
			return false
		}
	} else {
		// No type: free-form only when nothing else constrains it either.
		for i := 0; i < v.Len(); i++ {
			k, _ := v.Member(i)
			switch k.Str() {
			case "description", "title", "default", "examples", "additionalProperties", "$comment", "deprecated":
			default:
				return false
			}
		}
	}
	if ap, ok := v.Get("additionalProperties"); ok {
		switch {
		case ap.Kind() == jcs.True:
		case ap.Kind() == jcs.Object && ap.Len() == 0:
		default:
			return false
		}
	}
	return true
}

// noRaise are the kinds a capability never raises: notation is not a
// change of what the tool accepts, and a removed tool can no longer be
// called. (schema_notation_changed is spelled out: the notation kind is
// defined beside the normal forms.)
var noRaise = map[string]bool{"schema_notation_changed": true, ToolRemoved: true,
	// Neither is a change of what the tool accepts or what the planner
	// reads (NeedsNoReview).
	SchemaDialectChanged: true, SchemaAnnotationChanged: true, ToolMemberChanged: true}

var raisedSeverity = map[string]string{"low": "medium", "medium": "high"}

// RaiseForCapabilities raises the severity of each change in cs one step
// (low → medium, medium → high; a tool whose only capabilities are paths
// and URLs, low → medium only) when caps, the capability parameters of the
// changed tool, is not empty, and records why in the change's
// SeverityRaised. A change already raised, already high, narrowing (the
// tool now accepts less: no escalation), about the output (what the tool
// returns is graded for the agent that reads it, not by what the tool
// takes), one that needs no review (notation, a neutral dialect, an
// annotation validation never reads, a member outside the digest
// projection) or a removed tool (tool_removed) is left as it is. The capability named is the one whose parameter holds the change's
// pointer (the innermost), else the tool's first by kind. Whether the tool
// is privileged is never touched.
func RaiseForCapabilities(cs []Change, caps []Capability) {
	if len(caps) == 0 {
		return
	}
	first := caps[0]
	for _, k := range capKindOrder {
		found := false
		for _, c := range caps {
			if c.Kind == k {
				first, found = c, true
				break
			}
		}
		if found {
			break
		}
	}
	// A path or a URL is taken by so many tools (every filesystem and
	// fetch tool) that raising their medium changes to high would make
	// high the common grade and train reviewers to click through: they
	// raise low → medium only. A command, code, a script, SQL, env,
	// headers or a free-form object raise a full step.
	full := false
	for _, c := range caps {
		if c.Kind != CapPath && c.Kind != CapURL {
			full = true
		}
	}
	for i := range cs {
		c := &cs[i]
		next, ok := raisedSeverity[c.Severity]
		if c.SeverityRaised != nil || noRaise[c.Kind] || c.Direction == Narrowing || IsOutput(*c) || !ok || (!full && next == "high") {
			continue
		}
		cap, depth := first, -1
		for _, x := range caps {
			if (c.Pointer == x.Pointer || strings.HasPrefix(c.Pointer, x.Pointer+"/")) && len(x.Pointer) > depth {
				cap, depth = x, len(x.Pointer)
			}
		}
		r := &SeverityRaise{From: c.Severity, Capability: cap}
		r.Reason = r.reason(safetext.Quote)
		c.SeverityRaised = r
		c.Severity = next
	}
}

// toolCapabilities is the union of the capability parameters of the old
// and new input schemas of a tool (either may be nil), the new side first.
func toolCapabilities(o, n jcs.Value, oBase, nBase string) []Capability {
	caps := Capabilities(n, nBase)
	seen := map[string]bool{}
	for _, c := range caps {
		seen[c.Kind+"\x00"+c.Param] = true
	}
	for _, c := range Capabilities(o, oBase) {
		if !seen[c.Kind+"\x00"+c.Param] {
			caps = append(caps, c)
		}
	}
	return caps
}
