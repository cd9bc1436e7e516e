package surface

import "encoding/json"

// EvidenceSchemaID identifies the record that extends an observed record
// (assay.mcp_manifest_observed.v0, whose schema admits no member of ours)
// with the surface: written beside it, digests and states only, never a
// value (no instructions text, no description).
const EvidenceSchemaID = "mcpdrift.surface_observed.v1"

// Evidence is that record. Keys are server-controlled: a writer escapes
// them as it escapes tool names (report.WriteJSON).
type Evidence struct {
	Schema       string          `json:"schema"`
	Server       EvidenceServer  `json:"server"`
	Projections  json.RawMessage `json:"projections"`
	Instructions InstrEvidence   `json:"instructions"`
	Prompts      ListEvidence    `json:"prompts"`
	Templates    ListEvidence    `json:"resource_templates"`
	Resources    ListEvidence    `json:"resources"`
	// NonClaims say what the record does not say.
	NonClaims []string `json:"non_claims"`
}

// EvidenceServer names the server, as the observed record does.
type EvidenceServer struct {
	ID string `json:"id"`
}

// InstrEvidence is the instructions' state and digest.
type InstrEvidence struct {
	State    State  `json:"state"`
	Reason   string `json:"reason,omitempty"`
	Present  bool   `json:"present"`
	Digest   string `json:"digest,omitempty"`
	Bytes    int    `json:"bytes,omitempty"`
	Oversize bool   `json:"oversize,omitempty"`
}

// ListEvidence is a list's state, digest and items' digests.
type ListEvidence struct {
	State        State          `json:"state"`
	Reason       string         `json:"reason,omitempty"`
	Completeness string         `json:"complete,omitempty"`
	Digest       *string        `json:"digest,omitempty"` // null: ambiguous
	Count        int            `json:"count"`
	Ambiguous    []string       `json:"ambiguous,omitempty"`
	Unreadable   int            `json:"unreadable,omitempty"`
	Items        []ItemEvidence `json:"items"`
}

// ItemEvidence is one item: its key and digest.
type ItemEvidence struct {
	Key    string `json:"key"`
	Digest string `json:"digest"`
}

// evidenceNonClaims is the fixed non_claims list of the record.
var evidenceNonClaims = []string{
	"holds digests, never the instructions, descriptions or arguments themselves",
	"a kind in a state other than observed was not seen: nothing is claimed about it",
	"does not judge whether a change is malicious",
}

// NewEvidence is the record of s about serverID.
func NewEvidence(serverID string, s *Surface) *Evidence {
	e := &Evidence{Schema: EvidenceSchemaID, Server: EvidenceServer{ID: serverID}, Projections: json.RawMessage(projections), NonClaims: evidenceNonClaims}
	in := &s.Instructions
	e.Instructions = InstrEvidence{State: in.State, Reason: in.Reason, Present: in.Present, Digest: in.Digest, Bytes: in.Size, Oversize: in.Oversize}
	for _, k := range ListKinds {
		l := s.List(k)
		le := ListEvidence{State: l.State, Reason: l.Reason, Items: []ItemEvidence{}}
		if l.State == Observed {
			le.Completeness, le.Count, le.Unreadable = l.Completeness, len(l.Items), len(l.Invalid)
			if d, ok := l.Digest(); ok {
				le.Digest = &d
			}
			le.Ambiguous = l.Duplicates()
			for _, it := range l.Items {
				le.Items = append(le.Items, ItemEvidence{Key: it.Key, Digest: it.Digest})
			}
		}
		switch k {
		case Prompt:
			e.Prompts = le
		case Template:
			e.Templates = le
		default:
			e.Resources = le
		}
	}
	return e
}
