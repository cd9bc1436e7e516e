package catalog

import "testing"

// TestOWASPMappingCatalogued: every mapped code is in the catalogue, is a
// finding or a change (what a report shows as a result), and names one of
// the ten; and the codes that are plainly one risk are mapped.
func TestOWASPMappingCatalogued(t *testing.T) {
	ids := map[string]bool{}
	for _, r := range OWASPMCPTop10 {
		ids[r.ID] = true
	}
	if len(ids) != 10 {
		t.Fatalf("%d risks, want 10", len(ids))
	}
	for code, id := range owaspMCP {
		e, ok := Lookup(code)
		if !ok {
			t.Errorf("%s: mapped to %s but not catalogued", code, id)
			continue
		}
		if e.Kind != Finding && e.Kind != Change {
			t.Errorf("%s: a %s is mapped to %s; only findings and changes are results", code, e.Kind, id)
		}
		if !ids[id] {
			t.Errorf("%s: %s is not an OWASP MCP Top 10 risk", code, id)
		}
	}
	for code, want := range map[string]string{
		"mcp_tool_description_changed":  "MCP03",
		"mcp_new_privileged_tool":       "MCP02",
		"publisher_key_changed":         "MCP04",
		"MCP-AUTH-ANONYMOUS-LIST":       "MCP07",
		"MCP-AUTH-CREDENTIAL-REFLECTED": "MCP01",
	} {
		if r, ok := OWASPMCP(code); !ok || r.ID != want {
			t.Errorf("OWASPMCP(%s) = %v %v, want %s", code, r, ok, want)
		}
	}
	if _, ok := OWASPMCP("inconclusive_manifest_not_observed"); ok {
		t.Error("an inconclusive code is mapped to a risk")
	}
}
