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

// decodeArtifact parses strictly (duplicate keys, bad UTF-8, 1e400 ... are
// errors), checks the schema id, validates against the shipped JSON Schema
// and decodes into out with unknown fields refused.
func decodeArtifact(src []byte, wantID, schemaFile string, out any) (*jcs.Doc, error) {
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, err
	}
	root := doc.Root()
	if root.Kind() != jcs.Object {
		return nil, fmt.Errorf("expected a JSON object, found %s", root.Kind())
	}
	id, ok := root.Get("schema")
	if !ok {
		return nil, fmt.Errorf(`no "schema" member: expected %q`, wantID)
	}
	if !id.StrEqual(wantID) {
		if id.Kind() == jcs.String {
			return nil, fmt.Errorf(`unknown or unexpected schema id %s: expected %q`, safetext.Quote(id.Str()), wantID)
		}
		return nil, fmt.Errorf(`"schema" must be the string %q`, wantID)
	}
	var generic any
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	if err := schemas.Validate(schemaFile, generic); err != nil {
		return nil, err
	}
	dec = json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	return doc, dec.Decode(out)
}

// ParseObserved reads and validates an observed record. file names the
// source in errors.
func ParseObserved(src []byte, file string) (*Observed, error) {
	var o struct {
		Observed
		Note string `json:"note,omitempty"`
	}
	doc, err := decodeArtifact(src, ObservedSchemaID, schemas.Observed, &o)
	if err != nil {
		return nil, &ArtifactError{file, err}
	}
	obs := o.Observed
	// Presence of optional members, needed for consistency checks.
	body, _ := doc.Root().Get("observed")
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
			return fmt.Errorf("status %q contradicts tools_list_observed false", o.Status)
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
	var d Declared
	if _, err := decodeArtifact(src, DeclaredSchemaID, schemas.Declared, &d); err != nil {
		return nil, &ArtifactError{file, err}
	}
	for i, t := range d.Tools {
		if err := checkEntry(t, fmt.Sprintf("/tools/%d", i)); err != nil {
			return nil, &ArtifactError{file, err}
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
			c, err := toJSONValue(e, pointerJoin(ptr, k))
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
	seen := map[string]bool{}
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
		} else if got := ManifestDigest(o.NameDigests()); got != *o.Observed.ManifestDigest {
			why = append(why, "its manifest_digest does not recompute from its tool_digests (recomputed "+got+")")
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
