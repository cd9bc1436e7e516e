package report

import (
	"strings"

	"github.com/mcpdrift/mcpdrift/catalog"
)

// The OWASP MCP Top 10 as a SARIF taxonomy (SARIF 2.1.0 §3.19.3): each
// rule whose reason code is evidence of one of the ten risks
// (catalog.OWASPMCP) relates to it, and each run carries the taxonomy
// and the automation id that keeps one server's results apart from
// another's in code scanning.
type (
	sarifAutomation struct {
		ID string `json:"id"`
	}
	sarifTaxonomy struct {
		Name             string       `json:"name"`
		Version          string       `json:"version"`
		Organization     string       `json:"organization"`
		InformationURI   string       `json:"informationUri"`
		ShortDescription sarifMessage `json:"shortDescription"`
		IsComprehensive  bool         `json:"isComprehensive"`
		Taxa             []sarifTaxon `json:"taxa"`
	}
	sarifTaxon struct {
		ID               string       `json:"id"`
		Name             string       `json:"name"`
		ShortDescription sarifMessage `json:"shortDescription"`
		HelpURI          string       `json:"helpUri"`
	}
	sarifComponentRef struct {
		Name  string `json:"name"`
		Index int    `json:"index"`
	}
	sarifRelationship struct {
		Target sarifTaxonRef `json:"target"`
		Kinds  []string      `json:"kinds"`
	}
	sarifTaxonRef struct {
		ID            string            `json:"id"`
		Index         int               `json:"index"`
		ToolComponent sarifComponentRef `json:"toolComponent"`
	}
)

// owaspTaxonomy is the OWASP MCP Top 10, every risk in its order.
func owaspTaxonomy() sarifTaxonomy {
	t := sarifTaxonomy{
		Name: catalog.OWASPMCPName, Version: catalog.OWASPMCPVersion, Organization: "OWASP",
		InformationURI:   catalog.OWASPMCPURI,
		ShortDescription: sarifMessage{Text: "The most critical security risks of Model Context Protocol integrations."},
	}
	for _, r := range catalog.OWASPMCPTop10 {
		t.Taxa = append(t.Taxa, sarifTaxon{
			ID: r.ID, Name: camelCase(strings.ReplaceAll(r.Name, " ", "-")),
			ShortDescription: sarifMessage{Text: r.Name}, HelpURI: catalog.OWASPMCPURI,
		})
	}
	return t
}

// owaspRelationship relates a rule to the risk its code is evidence of:
// the risk is a superset of what the rule finds.
func owaspRelationship(code string) []sarifRelationship {
	r, ok := catalog.OWASPMCP(code)
	if !ok {
		return nil
	}
	for i, x := range catalog.OWASPMCPTop10 {
		if x.ID == r.ID {
			return []sarifRelationship{{
				Target: sarifTaxonRef{ID: r.ID, Index: i, ToolComponent: sarifComponentRef{Name: catalog.OWASPMCPName, Index: 0}},
				Kinds:  []string{"superset"},
			}}
		}
	}
	return nil
}

// owaspTag is the tag a rule carries for its risk ("owasp-mcp-top-10/MCP03"),
// which code scanning lets a reader filter on.
func owaspTag(code string) []string {
	if r, ok := catalog.OWASPMCP(code); ok {
		return []string{"owasp-mcp-top-10/" + r.ID}
	}
	return nil
}

// automationID names a run's results for one server and one kind of run
// ("mcpdrift/gate/acme-github/"): code scanning reads what is before the
// last slash as the run's category, so each server's alerts are kept and
// closed apart from the others', and a file of several servers' runs is
// accepted (code scanning refuses two runs of one tool and category in
// one upload).
func automationID(kind, serverID string) *sarifAutomation {
	id := strings.ReplaceAll(sarifEscape(serverID), "/", "%2F")
	if id == "" {
		id = "(no server id)"
	}
	return &sarifAutomation{ID: "mcpdrift/" + kind + "/" + id + "/"}
}
