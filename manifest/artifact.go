package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// Declared is an assay.declared_mcp_manifest.v0 baseline.
type Declared struct {
	Schema           string      `json:"schema"`
	Note             string      `json:"note,omitempty"`
	Server           Server      `json:"server"`
	Canonicalization string      `json:"canonicalization"`
	ManifestDigest   string      `json:"manifest_digest"`
	Tools            []ToolEntry `json:"tools"`
}

// NameDigests returns the (name, tool_digest) pairs of the baseline.
func (d *Declared) NameDigests() []NameDigest {
	out := make([]NameDigest, len(d.Tools))
	for i, t := range d.Tools {
		out[i] = NameDigest{t.Name, t.ToolDigest}
	}
	return out
}

// Policy is the YAML policy file: the coarse baseline map of the
// specification and per-server coverage choices.
type Policy struct {
	Version              int                       `yaml:"version,omitempty" json:"version,omitempty"`
	DeclaredMCPManifests map[string]PolicyManifest `yaml:"declared_mcp_manifests" json:"declared_mcp_manifests"`
}

// PolicyManifest is one server's coarse baseline.
type PolicyManifest struct {
	ManifestDigest     string `yaml:"manifest_digest" json:"manifest_digest"`
	PartialObservation string `yaml:"partial_observation,omitempty" json:"partial_observation,omitempty"`
}

// ArtifactError is a problem with an artifact: which file and what.
type ArtifactError struct {
	File string
	Err  error
}

func (e *ArtifactError) Error() string {
	return safetext.Escape(e.File) + ": " + e.Err.Error()
}

func (e *ArtifactError) Unwrap() error { return e.Err }

// decodeArtifactDoc checks a document parsed strictly by jcs (duplicate
// keys, bad UTF-8, 1e400 ... are errors there): its schema id, the shipped
// JSON Schema, and decodes it into out with unknown fields refused. The
// schema validates the tree jcs built (schemas.ValidateValue), not a second
// decoding of the text. out is decoded by encoding/json; its large arrays
// of tool entries are skipped there (skipEntries) and read from the tree by
// the caller (entriesOf), after the schema has vouched for their shape:
// skip, when valid, is that array, left out of the text encoding/json
// reads.
func decodeArtifactDoc(doc *jcs.Doc, wantID, schemaFile string, skip jcs.Value, out any) error {
	root := doc.Root()
	if root.Kind() != jcs.Object {
		return fmt.Errorf("expected a JSON object, found %s", root.Kind())
	}
	id, ok := root.Get("schema")
	if !ok {
		return fmt.Errorf(`no "schema" member: expected %q`, wantID)
	}
	if !id.StrEqual(wantID) {
		if id.Kind() == jcs.String {
			return fmt.Errorf(`unknown or unexpected schema id %s: expected %q`, safetext.Quote(id.Str()), wantID)
		}
		return fmt.Errorf(`"schema" must be the string %q`, wantID)
	}
	if err := schemas.ValidateValue(schemaFile, root); err != nil {
		return err
	}
	src := doc.Source()
	if skip.Valid() && skip.Kind() == jcs.Array {
		// The text without the entries (an empty array in their place).
		head := make([]byte, 0, len(src)-len(skip.Raw())+2)
		head = append(append(append(head, src[:skip.Offset()]...), "[]"...), src[skip.Offset()+len(skip.Raw()):]...)
		src = head
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// skipEntries stands in, for encoding/json, for the array of tool entries
// that entriesOf reads from the parsed tree instead.
type skipEntries struct{}

func (*skipEntries) UnmarshalJSON([]byte) error { return nil }

// entriesOf reads an array of tool entries that the artifact's schema has
// validated (objects with exactly the members of ToolEntry, of its types:
// strings, booleans, a string or null action_class, an object of digest
// strings) from the parsed tree, as encoding/json would decode them.
func entriesOf(v jcs.Value) []ToolEntry {
	if !v.Valid() {
		return nil
	}
	out := make([]ToolEntry, v.Len())
	for i := range out {
		out[i] = entryOf(v.Index(i))
	}
	return out
}

// entryOf reads one tool entry (see entriesOf).
func entryOf(e jcs.Value) ToolEntry {
	var t ToolEntry
	if x, ok := e.Get("name"); ok {
		t.Name = x.Str()
	}
	if x, ok := e.Get("tool_digest"); ok {
		t.ToolDigest = x.Str()
	}
	if x, ok := e.Get("privileged"); ok {
		t.Privileged = x.Bool()
	}
	if x, ok := e.Get("privilege_classification"); ok {
		t.PrivilegeClassification = x.Str()
	}
	if x, ok := e.Get("action_class"); ok && x.Kind() == jcs.String {
		s := x.Str()
		t.ActionClass = &s
	}
	if x, ok := e.Get("field_digests"); ok && x.Kind() == jcs.Object {
		fd := &FieldDigests{}
		for j, f := range FieldNames {
			if d, ok := x.Get(f); ok {
				fd.set(j, d.Str())
			}
		}
		t.FieldDigests = fd
	}
	return t
}

// ParseObserved reads and validates an observed record. file names the
// source in errors.
func ParseObserved(src []byte, file string) (*Observed, error) {
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, &ArtifactError{file, err}
	}
	return parseObservedDoc(doc, file)
}

func parseObservedDoc(doc *jcs.Doc, file string) (*Observed, error) {
	var o struct {
		Observed
		Note string `json:"note,omitempty"`
		Body struct {
			ObservedBody
			ToolDigests skipEntries `json:"tool_digests"`
		} `json:"observed"`
	}
	var td jcs.Value
	body, ok := doc.Root().Get("observed")
	if ok {
		td, _ = body.Get("tool_digests")
	}
	if err := decodeArtifactDoc(doc, ObservedSchemaID, schemas.Observed, td, &o); err != nil {
		return nil, &ArtifactError{file, err}
	}
	obs := o.Observed
	obs.Observed = o.Body.ObservedBody
	obs.Observed.ToolDigests = entriesOf(td)
	// Presence of optional members, needed for consistency checks.
	_, hasCount := body.Get("tool_count")
	_, hasPriv := body.Get("privileged_tool_count")
	if err := checkObserved(&obs, hasCount, hasPriv); err != nil {
		return nil, &ArtifactError{file, err}
	}
	if !hasCount {
		obs.Observed.ToolCount = len(obs.Observed.ToolDigests)
	}
	if !hasPriv {
		n := 0
		for _, t := range obs.Observed.ToolDigests {
			if t.Privileged {
				n++
			}
		}
		obs.Observed.PrivilegedToolCount = n
	}
	return &obs, nil
}

func checkObserved(o *Observed, hasCount, hasPriv bool) error {
	b := &o.Observed
	switch o.Status {
	case StatusNotObserved:
		if b.ToolsListObserved || len(b.ToolDigests) != 0 || b.ManifestDigest != nil {
			return errors.New(`status "not_observed" must have tools_list_observed false, no tool_digests and a null manifest_digest`)
		}
	case StatusObserved, StatusAmbiguous:
		if !b.ToolsListObserved {
			return fmt.Errorf("status %s contradicts tools_list_observed false", safetext.Quote(o.Status))
		}
		if o.Status == StatusAmbiguous && b.ManifestDigest != nil {
			return errors.New(`status "ambiguous" must have a null manifest_digest: an ambiguous identity is never claimed clean`)
		}
	}
	if hasCount && b.ToolCount != len(b.ToolDigests) {
		return fmt.Errorf("tool_count %d does not match the %d tool_digests entries", b.ToolCount, len(b.ToolDigests))
	}
	n := 0
	for i, t := range b.ToolDigests {
		if t.Privileged {
			n++
		}
		if err := checkEntry(t, fmt.Sprintf("/observed/tool_digests/%d", i)); err != nil {
			return err
		}
	}
	if hasPriv && n != b.PrivilegedToolCount {
		return fmt.Errorf("privileged_tool_count %d does not match the %d privileged entries", b.PrivilegedToolCount, n)
	}
	if o.Status == StatusObserved && b.ManifestDigest != nil {
		if got := ManifestDigest(o.NameDigests()); got != *b.ManifestDigest {
			return fmt.Errorf("manifest_digest %s does not recompute from tool_digests (recomputed %s): the record is damaged or was edited", *b.ManifestDigest, got)
		}
	}
	return nil
}

func checkEntry(t ToolEntry, ptr string) error {
	switch t.PrivilegeClassification {
	case "":
	case "classified":
		if !t.Privileged || t.ActionClass == nil || *t.ActionClass == "" {
			return fmt.Errorf("at %s: privilege_classification \"classified\" needs privileged true and an action_class", ptr)
		}
	case "unclassified":
		if t.Privileged || t.ActionClass != nil {
			return fmt.Errorf("at %s: privilege_classification \"unclassified\" needs privileged false and a null action_class", ptr)
		}
	}
	return nil
}

// ParseDeclared reads and validates a declared baseline. Whether its
// manifest_digest recomputes is not checked here: that is the gate's
// declared_manifest_digest_mismatch (inconclusive), so callers can report
// it as the specification says.
func ParseDeclared(src []byte, file string) (*Declared, error) {
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, &ArtifactError{file, err}
	}
	return parseDeclaredDoc(doc, file)
}

func parseDeclaredDoc(doc *jcs.Doc, file string) (*Declared, error) {
	var dd struct {
		Declared
		Tools skipEntries `json:"tools"`
	}
	tools, _ := doc.Root().Get("tools")
	if err := decodeArtifactDoc(doc, DeclaredSchemaID, schemas.Declared, tools, &dd); err != nil {
		return nil, &ArtifactError{file, err}
	}
	d := dd.Declared
	d.Tools = entriesOf(tools)
	for i, t := range d.Tools {
		if err := checkEntry(t, fmt.Sprintf("/tools/%d", i)); err != nil {
			return nil, &ArtifactError{file, err}
		}
	}
	return &d, nil
}

// DeclaredFromValidated reads a declared baseline from a tree the caller
// has already validated against schemas/declared.v0.schema.json — the
// lock's schema does, by reference, for each server's baseline — without
// parsing or validating it a second time. Anything else must use
// ParseDeclared.
func DeclaredFromValidated(v jcs.Value) (*Declared, error) {
	var dd struct {
		Declared
		Tools skipEntries `json:"tools"`
	}
	if v.Kind() != jcs.Object {
		return nil, fmt.Errorf("expected a JSON object, found %s", v.Kind())
	}
	if id, ok := v.Get("schema"); !ok || !id.StrEqual(DeclaredSchemaID) {
		return nil, fmt.Errorf(`"schema" must be the string %q`, DeclaredSchemaID)
	}
	tools, _ := v.Get("tools")
	src := v.Raw()
	if tools.Valid() && tools.Kind() == jcs.Array {
		at := tools.Offset() - v.Offset()
		head := make([]byte, 0, len(src)-len(tools.Raw())+2)
		head = append(append(append(head, src[:at]...), "[]"...), src[at+len(tools.Raw()):]...)
		src = head
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&dd); err != nil {
		return nil, err
	}
	d := dd.Declared
	d.Tools = entriesOf(tools)
	for i, t := range d.Tools {
		if err := checkEntry(t, fmt.Sprintf("/tools/%d", i)); err != nil {
			return nil, err
		}
	}
	return &d, nil
}

// ParsePolicy reads and validates a YAML (or JSON) policy file. Duplicate
// keys, unknown keys, an empty document and anything the schema refuses are
// errors.
func ParsePolicy(src []byte, file string) (*Policy, error) {
	var p Policy
	if err := decodeYAML(src, "policy", schemas.Policy, &p); err != nil {
		return nil, &ArtifactError{file, err}
	}
	return &p, nil
}

// decodeYAML reads one YAML (or JSON) document strictly — duplicate keys,
// unknown keys, an empty document, more than one document and anything the
// schema refuses are errors — into out.
func decodeYAML(src []byte, what, schemaFile string, out any) error {
	if len(bytes.TrimSpace(src)) == 0 {
		return fmt.Errorf("the %s is empty", what)
	}
	var generic any
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&generic); err != nil {
		return fmt.Errorf("YAML: %s", YAMLError(err))
	}
	var extra any
	if err := dec.Decode(&extra); err == nil {
		return fmt.Errorf("the %s holds more than one YAML document", what)
	}
	if generic == nil {
		return fmt.Errorf("the %s is empty", what)
	}
	jsonish, err := toJSONValue(generic, "")
	if err != nil {
		return err
	}
	if err := schemas.Validate(schemaFile, jsonish); err != nil {
		return err
	}
	dec = yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("YAML: %s", YAMLError(err))
	}
	return nil
}

// toJSONValue converts a decoded YAML value into the shapes a JSON decoder
// produces, refusing what JSON cannot express (non-string keys).
func toJSONValue(v any, ptr string) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := toJSONValue(e, jcs.PointerJoin(ptr, k))
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		return nil, fmt.Errorf("at %s: mapping keys must be strings", safetext.Quote(ptr))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := toJSONValue(e, fmt.Sprintf("%s/%d", ptr, i))
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case int:
		return json.Number(fmt.Sprint(x)), nil
	case int64, uint64, float64:
		return json.Number(fmt.Sprint(x)), nil
	case string, bool, nil:
		return x, nil
	case time.Time:
		// YAML reads an unquoted 2027-01-31 as a timestamp; JSON has
		// only its text.
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02"), nil
		}
		return x.Format(time.RFC3339Nano), nil
	}
	return nil, fmt.Errorf("at %s: unsupported YAML value of type %T", safetext.Quote(ptr), v)
}

// PinOptions control Pin.
type PinOptions struct {
	// AllowEmpty pins a server that served zero tools. The reference
	// implementation refuses an empty list; mcpdrift does too unless asked.
	AllowEmpty bool
}

// Pin promotes a clean observed record to a declared baseline. It refuses,
// saying why, an observation that was not observed, is ambiguous, is not
// complete, has no or a non-recomputing manifest_digest, has duplicate or
// empty names, or has inconsistent counts.
func Pin(o *Observed, opt PinOptions) (*Declared, error) {
	var why []string
	switch o.Status {
	case StatusNotObserved:
		why = append(why, "the tools/list was not observed (status not_observed)")
	case StatusAmbiguous:
		why = append(why, "the observation is ambiguous: duplicate tool names")
	}
	if o.Status != StatusNotObserved && !o.Observed.ToolsListObserved {
		why = append(why, "tools_list_observed is false")
	}
	if o.Observed.ToolsListComplete != Complete && o.Status != StatusNotObserved {
		why = append(why, fmt.Sprintf("the observation is %s, not complete: a tool missing from it could be on an unobserved page", o.Observed.ToolsListComplete))
	}
	if o.Observed.Canonicalization != ProjectionID {
		why = append(why, fmt.Sprintf("canonicalization %s is not %s", safetext.Quote(o.Observed.Canonicalization), ProjectionID))
	}
	if len(o.Observed.ToolDigests) == 0 && !opt.AllowEmpty && o.Status == StatusObserved {
		why = append(why, "the server served no tools (pin an empty list only with --allow-empty)")
	}
	seen := make(map[string]bool, len(o.Observed.ToolDigests))
	for _, t := range o.Observed.ToolDigests {
		if seen[t.Name] && o.Status == StatusObserved {
			why = append(why, "duplicate tool name "+safetext.Quote(t.Name))
		}
		seen[t.Name] = true
		if t.PrivilegeClassification == "" {
			why = append(why, "tool "+safetext.Quote(t.Name)+" has no privilege_classification")
		}
	}
	if o.Status == StatusObserved {
		if o.Observed.ManifestDigest == nil {
			why = append(why, "the record has no manifest_digest")
		} else if b := o.built; b == nil || b.digest != *o.Observed.ManifestDigest || b.fingerprint != entriesFingerprint(o.Observed.ToolDigests) {
			// Recomputed, unless BuildObserved computed it, in this
			// process, from exactly these entries.
			if got := ManifestDigest(o.NameDigests()); got != *o.Observed.ManifestDigest {
				why = append(why, "its manifest_digest does not recompute from its tool_digests (recomputed "+got+")")
			}
		}
	}
	if len(why) > 0 {
		return nil, &PinRefused{Reasons: why}
	}
	d := &Declared{
		Schema:           DeclaredSchemaID,
		Server:           o.Server,
		Canonicalization: o.Observed.Canonicalization,
		ManifestDigest:   *o.Observed.ManifestDigest,
		Tools:            append([]ToolEntry{}, o.Observed.ToolDigests...),
	}
	return d, nil
}

// PinRefused lists why an observation cannot become a baseline.
type PinRefused struct{ Reasons []string }

func (e *PinRefused) Error() string {
	return "refusing to pin: " + strings.Join(e.Reasons, "; ")
}

// YAMLError is a YAML library error for one line of a message: its lines
// (the library lists one problem a line) joined with "; ", escaped.
func YAMLError(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	for i, l := range lines {
		lines[i] = safetext.Escape(strings.TrimSpace(l))
	}
	return strings.Join(lines, "; ")
}
