package catalog

// The OWASP MCP Top 10 (2025, beta: owasp.org/www-project-mcp-top-10):
// which risk a reason code is evidence of, where one applies. SARIF
// carries it as a taxonomy (report: each rule's relationship to its
// risk), and docs/reason-codes.md names it beside each code. A code
// without a risk here (coverage, baseline validity, removals, most
// conformance checks) is about evidence or hygiene, not one of the ten.

// Risk is one entry of the OWASP MCP Top 10.
type Risk struct {
	ID   string // MCP01 … MCP10
	Name string
}

// OWASP MCP Top 10 facts for a taxonomy.
const (
	OWASPMCPName    = "OWASP MCP Top 10"
	OWASPMCPVersion = "2025"
	OWASPMCPURI     = "https://owasp.org/www-project-mcp-top-10/"
)

// OWASPMCPTop10 is the list, in order.
var OWASPMCPTop10 = []Risk{
	{"MCP01", "Token Mismanagement and Secret Exposure"},
	{"MCP02", "Privilege Escalation via Scope Creep"},
	{"MCP03", "Tool Poisoning"},
	{"MCP04", "Software Supply Chain Attacks and Dependency Tampering"},
	{"MCP05", "Command Injection and Execution"},
	{"MCP06", "Prompt Injection via Contextual Payloads"},
	{"MCP07", "Insufficient Authentication and Authorization"},
	{"MCP08", "Lack of Audit and Telemetry"},
	{"MCP09", "Shadow MCP Servers"},
	{"MCP10", "Context Injection and Over-Sharing"},
}

// owaspMCP maps a reason code to the risk it is evidence of. A tool
// definition that changes after approval (a rug pull), a tool that
// appears, or a name built to pass for another is tool poisoning (MCP03);
// a tool that can now do more than it was approved for, or a new
// privileged tool, is scope creep (MCP02); a server that moved, changed
// its publisher key or its install, or a schema that now loads a
// document from elsewhere, is the supply chain (MCP04); a server that
// lists its tools to anyone is insufficient authentication (MCP07), and
// one that echoes the credential it was sent exposes it (MCP01).
var owaspMCP = map[string]string{
	// Digest findings.
	"mcp_tool_manifest_drift":        "MCP03",
	"mcp_tool_added":                 "MCP03",
	"mcp_new_privileged_tool":        "MCP02",
	"mcp_tool_changed":               "MCP03",
	"mcp_privileged_tool_changed":    "MCP03",
	"mcp_tool_description_changed":   "MCP03",
	"mcp_tool_input_schema_changed":  "MCP03",
	"mcp_tool_output_schema_changed": "MCP03",
	"mcp_tool_annotations_changed":   "MCP03",
	"mcp_tool_name_unsafe":           "MCP03",
	"mcp_tool_names_ambiguous":       "MCP03",
	// Structural changes: what a tool now accepts (scope creep), what
	// it says and how it is named (poisoning), where its schema comes
	// from (supply chain).
	"param_added_optional":            "MCP02",
	"type_widened":                    "MCP02",
	"enum_widened":                    "MCP02",
	"additional_properties_loosened":  "MCP02",
	"constraint_loosened":             "MCP02",
	"composition_widened":             "MCP02",
	"annotation_hint_weakened":        "MCP03",
	"description_changed":             "MCP03",
	"schema_drift_stable_description": "MCP03",
	"tool_rename_suspected":           "MCP03",
	"tool_added":                      "MCP03",
	"tool_name_unsafe":                "MCP03",
	"tool_names_ambiguous":            "MCP03",
	"external_ref_introduced":         "MCP04",
	"external_ref_document_changed":   "MCP04",
	"external_ref_unverified":         "MCP04",
	// Identity.
	"server_endpoint_rebound": "MCP04",
	"server_install_moved":    "MCP04",
	"server_env_changed":      "MCP04",
	"publisher_key_changed":   "MCP04",
	// Live drift and conformance.
	"MCP-DRIFT-TOOL-UNDECLARED":         "MCP03",
	"MCP-DRIFT-SCHEMA":                  "MCP03",
	"MCP-DRIFT-SCHEMA-COMPATIBLE":       "MCP03",
	"MCP-DRIFT-ANNOTATION":              "MCP03",
	"MCP-DRIFT-DESCRIPTION":             "MCP03",
	"MCP-DRIFT-ESCALATION":              "MCP02",
	"MCP-CONF-TOOLSET-VARIES":           "MCP03",
	"MCP-CONF-TOOLSET-VARIES-BY-CLIENT": "MCP03",
	"MCP-CONF-DUPLICATE-TOOL-NAME":      "MCP03",
	"MCP-CONF-TOOL-NAME-UNSAFE":         "MCP03",
	"MCP-CONF-TOOL-NAMES-AMBIGUOUS":     "MCP03",
	// Auth posture.
	"MCP-AUTH-ANONYMOUS-LIST":       "MCP07",
	"MCP-AUTH-NO-CHALLENGE":         "MCP07",
	"MCP-AUTH-PLAINTEXT-TRANSPORT":  "MCP07",
	"MCP-AUTH-CREDENTIAL-REFLECTED": "MCP01",
}

// OWASPMCP returns the OWASP MCP Top 10 risk a code is evidence of, and
// whether one applies.
func OWASPMCP(code string) (Risk, bool) {
	id, ok := owaspMCP[code]
	if !ok {
		return Risk{}, false
	}
	for _, r := range OWASPMCPTop10 {
		if r.ID == id {
			return r, true
		}
	}
	return Risk{}, false
}
