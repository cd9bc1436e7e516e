package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/internal/par"
)

// Observation status values.
const (
	StatusObserved    = "observed"
	StatusNotObserved = "not_observed"
	StatusAmbiguous   = "ambiguous"
)

// Server identifies the server an artifact is about.
type Server struct {
	ID string `json:"id"`
}

// ToolEntry is one per-tool entry of an observed record or a declared
// baseline. It carries digests and classifier output, never a raw value
// (the name is the tool's identity and is kept exactly).
//
// When an artifact is read, PrivilegeClassification, ActionClass and
// FieldDigests may be absent (older producers); Has* fields say so.
type ToolEntry struct {
	Name                    string        `json:"name"`
	ToolDigest              string        `json:"tool_digest"`
	Privileged              bool          `json:"privileged"`
	PrivilegeClassification string        `json:"privilege_classification"`
	ActionClass             *string       `json:"action_class"`
	FieldDigests            *FieldDigests `json:"field_digests,omitempty"`
}

// ObservedBody is the "observed" block of an observed record.
type ObservedBody struct {
	ManifestDigest      *string      `json:"manifest_digest"`
	Canonicalization    string       `json:"canonicalization"`
	ToolCount           int          `json:"tool_count"`
	PrivilegedToolCount int          `json:"privileged_tool_count"`
	ToolsListObserved   bool         `json:"tools_list_observed"`
	ToolsListComplete   Completeness `json:"tools_list_complete"`
	ToolDigests         []ToolEntry  `json:"tool_digests"`
}

// Observed is an assay.mcp_manifest_observed.v0 record.
type Observed struct {
	Schema    string       `json:"schema"`
	Status    string       `json:"status"`
	Server    Server       `json:"server"`
	Observed  ObservedBody `json:"observed"`
	NonClaims []string     `json:"non_claims"`

	// built is what BuildObserved computed the manifest digest from, in
	// this process: Pin need not sort and hash the entries again while
	// they are the ones it was computed from (their fingerprint says so).
	// A record read from a file never has it.
	built *builtDigest
}

// builtDigest is a manifest digest and the fingerprint of the entries it
// was computed from.
type builtDigest struct {
	digest      string
	fingerprint [sha256.Size]byte
}

// entriesFingerprint is the SHA-256 of the entries' (name, tool digest)
// pairs in order, each length-prefixed: the same fingerprint, the same
// pairs, so the same manifest digest.
func entriesFingerprint(es []ToolEntry) [sha256.Size]byte {
	h := sha256.New()
	var b []byte
	for i := range es {
		b = binary.AppendUvarint(b[:0], uint64(len(es[i].Name)))
		b = append(b, es[i].Name...)
		b = binary.AppendUvarint(b, uint64(len(es[i].ToolDigest)))
		b = append(b, es[i].ToolDigest...)
		h.Write(b)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// NameDigests returns the (name, tool_digest) pairs of the record.
func (o *Observed) NameDigests() []NameDigest {
	out := make([]NameDigest, len(o.Observed.ToolDigests))
	for i, t := range o.Observed.ToolDigests {
		out[i] = NameDigest{t.Name, t.ToolDigest}
	}
	return out
}

// BuildObserved builds the observed record for a parsed tool list. c is the
// classifier (nil means the built-in table); completeness is the one to
// record (normally tl.Completeness).
func BuildObserved(serverID string, tl *ToolList, completeness Completeness, c *classify.Classifier) *Observed {
	if c == nil {
		c = classify.Default()
	}
	o := &Observed{
		Schema:    ObservedSchemaID,
		Status:    StatusObserved,
		Server:    Server{ID: serverID},
		NonClaims: append([]string(nil), NonClaims...),
		Observed: ObservedBody{
			Canonicalization:  ProjectionID,
			ToolCount:         len(tl.Tools),
			ToolsListObserved: true,
			ToolsListComplete: completeness,
		},
	}
	// Each tool's field digests and classification are its own work,
	// spread over the CPUs when there are many tools.
	entries := make([]ToolEntry, len(tl.Tools))
	fds := make([]FieldDigests, len(tl.Tools))
	par.Range(len(tl.Tools), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			t := &tl.Tools[i]
			fds[i] = t.FieldDigests()
			r := c.Classify(t.Name)
			e := ToolEntry{
				Name:                    t.Name,
				ToolDigest:              t.ToolDigest(),
				Privileged:              r.Privileged,
				PrivilegeClassification: r.Classification,
				FieldDigests:            &fds[i],
			}
			if r.ActionClass != "" {
				ac := r.ActionClass
				e.ActionClass = &ac
			}
			entries[i] = e
		}
	})
	seen := make(map[string]struct{}, len(tl.Tools))
	ambiguous := false
	for i := range entries {
		if entries[i].Privileged {
			o.Observed.PrivilegedToolCount++
		}
		if _, dup := seen[entries[i].Name]; dup {
			ambiguous = true
		}
		seen[entries[i].Name] = struct{}{}
	}
	o.Observed.ToolDigests = entries
	if ambiguous {
		o.Status = StatusAmbiguous
	} else {
		d := ManifestDigest(o.NameDigests())
		o.Observed.ManifestDigest = &d
		o.built = &builtDigest{digest: d, fingerprint: entriesFingerprint(entries)}
	}
	return o
}

// NotObserved builds the record for a server whose tools/list was not
// observed: an artifact state that a consumer reads as inconclusive, never
// as "no drift".
func NotObserved(serverID string) *Observed {
	return &Observed{
		Schema:    ObservedSchemaID,
		Status:    StatusNotObserved,
		Server:    Server{ID: serverID},
		NonClaims: append([]string(nil), NonClaims...),
		Observed: ObservedBody{
			Canonicalization:  ProjectionID,
			ToolsListObserved: false,
			ToolsListComplete: Unknown,
			ToolDigests:       []ToolEntry{},
		},
	}
}

// MarshalArtifact renders an artifact as indented JSON with a trailing
// newline. Go's encoder escapes <, > and & in strings; the output is still
// the same JSON value.
func MarshalArtifact(v any) ([]byte, error) {
	if b, ok := marshalFast(v); ok {
		return b, nil
	}
	return marshalIndented(v)
}

// marshalIndented is MarshalArtifact by encoding/json.
func marshalIndented(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
