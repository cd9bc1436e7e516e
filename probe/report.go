package probe

import (
	"encoding/json"

	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Target describes what was probed.
type Target struct {
	// URL of a Streamable HTTP server, or Command of a stdio server (the
	// argv, as typed).
	URL     string   `json:"url,omitempty"`
	Command []string `json:"command,omitempty"`
	Class   string   `json:"class"`
}

// Protocol is what the run established about the protocol.
type Protocol struct {
	Era string `json:"era"`
	// Transport is streamable-http, sse (the deprecated HTTP+SSE of
	// 2024-11-05) or stdio; "" when the run did not get that far.
	Transport     string `json:"transport,omitempty"`
	Revision      string `json:"protocol_revision"` // "unknown" when not claimed (see Reason)
	Reason        string `json:"revision_reason,omitempty"`
	LegacyVersion string `json:"legacy_session_version,omitempty"`
	ServerName    string `json:"server_name,omitempty"`
	ServerVersion string `json:"server_version,omitempty"`
}

// Served summarises the primary observation.
type Served struct {
	ManifestDigest string `json:"manifest_digest,omitempty"`
	ToolCount      int    `json:"tool_count"`
	Pages          int    `json:"pages"`
	Completeness   string `json:"tools_list_complete"`
	SecondCompared bool   `json:"second_connection_compared"`
}

// Declared summarises the manifest compared against.
type Declared struct {
	Source         string `json:"source"`
	ManifestDigest string `json:"manifest_digest,omitempty"`
	ToolCount      int    `json:"tool_count"`
}

// PlannedCall is one opt-in tools/call: the generated arguments (made by
// mcpdrift from the declared schema, not server data) and whether it was
// sent.
type PlannedCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Sent      bool            `json:"sent"`
	// InputSchema is the declared inputSchema the arguments were made
	// from (its x-mcp-header annotations give the call's Mcp-Param
	// headers); not reported.
	InputSchema json.RawMessage `json:"-"`
}

// Report is the JSON drift report (ReportSchemaID).
type Report struct {
	Schema string `json:"schema"`
	Target Target `json:"target"`
	// Client is the identity this run presented (clientInfo, User-Agent).
	Client ClientIdentity `json:"client"`
	// NotObserved says why the server could not be observed ("" when it
	// was): the report still says what it could, and the exit code is 3.
	NotObserved string        `json:"not_observed,omitempty"`
	Protocol    Protocol      `json:"protocol"`
	Declared    Declared      `json:"declared"`
	Served      *Served       `json:"served"`
	AuthPosture AuthPosture   `json:"auth_posture"`
	Compared    bool          `json:"compared"`
	CallPlan    []PlannedCall `json:"call_plan,omitempty"`
	Seed        *int64        `json:"seed,omitempty"`
	Findings    []Finding     `json:"findings"`
	Notes       []string      `json:"notes"`
	// Suppressed are findings the suppression file accepted, with why.
	Suppressed []SuppressedFinding `json:"suppressed"`
	// Profile is the decision profile; Tools the decision on every
	// declared or served tool (the same entries diff and the gateway give).
	Profile string                   `json:"profile"`
	Tools   []schemadiff.ToolVerdict `json:"tools"`
	// Surface is what the server puts before the model beside its tools,
	// compared with what the declared side pins (nil: not observed).
	Surface  *SurfaceReport `json:"surface,omitempty"`
	Warnings []string       `json:"warnings"`
	ExitCode int            `json:"exit_code"`
}

// ClientIdentity is who the run said it was.
type ClientIdentity struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	UserAgent string `json:"user_agent,omitempty"` // "" means Go's default
	// CloakCheckedAs is the other client identity the list was fetched as
	// (--cloak-check), "" when not checked.
	CloakCheckedAs string `json:"cloak_checked_as,omitempty"`
	// Capabilities is the ClientCapabilities object the run declared
	// (canonical; {} for none): servers may list some tools only to
	// clients that declare sampling, elicitation or roots.
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
}
