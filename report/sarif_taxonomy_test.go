package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/catalog"
)

// TestSARIFOWASPTaxonomy: each run carries the OWASP MCP Top 10 taxonomy
// (ten taxa), the driver names it as supported, and every rule whose code
// the catalogue maps relates to its taxon by id and index, and no other
// rule relates to anything; each run's automation id names its server.
func TestSARIFOWASPTaxonomy(t *testing.T) {
	out := render(t, granularFindings(), "sarif", goldenOpts)
	var l struct {
		Runs []struct {
			AutomationDetails struct{ ID string } `json:"automationDetails"`
			Taxonomies        []struct {
				Name string
				Taxa []struct{ ID, Name string }
			}
			Tool struct {
				Driver struct {
					SupportedTaxonomies []struct {
						Name  string
						Index int
					}
					Rules []struct {
						ID            string
						Relationships []struct {
							Target struct {
								ID            string
								Index         int
								ToolComponent struct {
									Name  string
									Index int
								}
							}
							Kinds []string
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	run := l.Runs[0]
	if run.AutomationDetails.ID != "mcpdrift/gate/github-tools/" {
		t.Errorf("automationDetails.id = %q", run.AutomationDetails.ID)
	}
	if len(run.Taxonomies) != 1 || run.Taxonomies[0].Name != catalog.OWASPMCPName || len(run.Taxonomies[0].Taxa) != 10 {
		t.Fatalf("taxonomies = %+v", run.Taxonomies)
	}
	taxa := run.Taxonomies[0].Taxa
	if st := run.Tool.Driver.SupportedTaxonomies; len(st) != 1 || st[0].Name != catalog.OWASPMCPName || st[0].Index != 0 {
		t.Errorf("supportedTaxonomies = %+v", st)
	}
	related := 0
	for _, r := range run.Tool.Driver.Rules {
		risk, ok := catalog.OWASPMCP(r.ID)
		if !ok {
			if len(r.Relationships) != 0 {
				t.Errorf("%s relates to %+v, but the catalogue maps it to no risk", r.ID, r.Relationships)
			}
			continue
		}
		related++
		if len(r.Relationships) != 1 {
			t.Errorf("%s: %d relationships, want 1 (%s)", r.ID, len(r.Relationships), risk.ID)
			continue
		}
		rel := r.Relationships[0]
		if rel.Target.ID != risk.ID || taxa[rel.Target.Index].ID != risk.ID || rel.Target.ToolComponent.Name != catalog.OWASPMCPName ||
			strings.Join(rel.Kinds, ",") != "superset" {
			t.Errorf("%s: relationship %+v, want %s", r.ID, rel, risk.ID)
		}
	}
	if related < 30 {
		t.Errorf("only %d rules relate to a risk", related)
	}
}

// TestSARIFAutomationIDPerServer: a lock check's runs have one automation
// id per server, so code scanning accepts them as one upload; an id with a
// slash cannot split the category.
func TestSARIFAutomationIDPerServer(t *testing.T) {
	a, b := automationID("gate", "alpha"), automationID("gate", "team/beta")
	if a.ID != "mcpdrift/gate/alpha/" || b.ID != "mcpdrift/gate/team%2Fbeta/" {
		t.Errorf("ids %q %q", a.ID, b.ID)
	}
	if automationID("drift", "alpha").ID == a.ID {
		t.Error("gate and drift runs of one server share a category")
	}
}
