package gate

import (
	"fmt"
	"sort"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Profile is a severity policy: data, not conditionals. A code absent from
// Overrides keeps the catalogue's default severity (PrivilegedSeverity for
// privileged tools where the catalogue gives one).
type Profile struct {
	Name        string
	Description string
	Overrides   map[string]SeverityPair
}

// SeverityPair is a severity for non-privileged and for privileged tools.
type SeverityPair struct {
	Normal     catalog.Severity
	Privileged catalog.Severity
}

// Default is the specification's severity table.
var Default = &Profile{
	Name:        "default",
	Description: "the severities of the specification: description and input_schema medium (high when privileged), annotations and output_schema low (medium when privileged)",
}

// Strict raises description changes to high, the stricter review profile
// the specification names as an operator's choice. An unattributed change
// (mcp_tool_changed) may be a description change, so it is raised too.
var Strict = &Profile{
	Name:        "strict",
	Description: "default, with every description change high; unattributed tool changes are high too, since they may be description changes",
	// Written down once, in the catalogue (Entry.StrictSeverity).
	Overrides: strictOverrides(),
}

func strictOverrides() map[string]SeverityPair {
	out := map[string]SeverityPair{}
	for _, e := range catalog.All() {
		if e.StrictSeverity != "" {
			out[e.Code] = SeverityPair{e.StrictSeverity, e.StrictSeverity}
		}
	}
	return out
}

var profiles = map[string]*Profile{Default.Name: Default, Strict.Name: Strict}

// ProfileByName returns a built-in profile.
func ProfileByName(name string) (*Profile, error) {
	p, ok := profiles[name]
	if !ok {
		return nil, fmt.Errorf("unknown profile %s (known: %v)", safetext.Quote(name), ProfileNames())
	}
	return p, nil
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string {
	var out []string
	for n := range profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (p *Profile) severity(code string, privileged bool) catalog.Severity {
	if o, ok := p.Overrides[code]; ok {
		if privileged {
			return o.Privileged
		}
		return o.Normal
	}
	e := catalog.Get(code)
	if privileged && e.PrivilegedSeverity != "" {
		return e.PrivilegedSeverity
	}
	return e.Severity
}
