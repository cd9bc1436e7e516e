package manifest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// SuppressionsFile is the file name mcpdrift looks for in the current
// directory when no --suppressions is given.
const SuppressionsFile = "mcpdrift.yaml"

// Suppression accepts one finding: a rule (a catalogue code of kind
// finding), optionally only for one server and one tool, for a stated
// reason, optionally until a day. A suppressed finding no longer holds the
// run, but every report lists it with its reason: never silent.
type Suppression struct {
	Rule    string `yaml:"rule" json:"rule"`
	Server  string `yaml:"server,omitempty" json:"server,omitempty"`
	Tool    string `yaml:"tool,omitempty" json:"tool,omitempty"`
	Reason  string `yaml:"reason" json:"reason"`
	Expires string `yaml:"expires,omitempty" json:"expires,omitempty"`
	// Source says where it was written ("mcpdrift.yaml, suppression 2").
	Source string `yaml:"-" json:"source"`
}

// Suppressions is a parsed suppression file.
type Suppressions struct {
	Version int           `yaml:"version"`
	Items   []Suppression `yaml:"suppressions"`
	// Defaults and Commands are the command line's settings, which the
	// same file (mcpdrift.yaml) holds beside the suppressions: Config
	// reads them; the suppressions pass them by.
	Defaults map[string]any            `yaml:"defaults,omitempty"`
	Commands map[string]map[string]any `yaml:"commands,omitempty"`
}

// ParseSuppressions reads and validates a suppression file: strict YAML
// (duplicate and unknown keys are errors), the shipped schema of
// mcpdrift.yaml (schemas.Config, whose suppressions are
// schemas.Suppressions'), every rule a
// catalogued finding code (an inconclusive state, a note or a typo cannot
// be suppressed), a real reason and a valid expiry day.
func ParseSuppressions(src []byte, file string) (*Suppressions, error) {
	var s Suppressions
	if err := decodeYAML(src, "suppression file", schemas.Config, &s); err != nil {
		return nil, &ArtifactError{file, err}
	}
	for i := range s.Items {
		it := &s.Items[i]
		it.Source = fmt.Sprintf("%s, suppression %d", file, i+1)
		fail := func(format string, a ...any) (*Suppressions, error) {
			return nil, &ArtifactError{file, fmt.Errorf("suppression %d (%s): %s", i+1, safetext.Quote(it.Rule), fmt.Sprintf(format, a...))}
		}
		e, ok := catalog.Lookup(it.Rule)
		switch {
		case !ok:
			return fail("no such rule in the catalogue (mcpdrift codes lists them)")
		case e.Kind != catalog.Finding:
			return fail("a %s cannot be suppressed: only findings can (an inconclusive run stays inconclusive)", e.Kind)
		case len(strings.Fields(it.Reason)) < 2:
			return fail("give a reason of a few words: it is shown in every report")
		}
		if it.Expires != "" {
			if _, err := time.Parse("2006-01-02", it.Expires); err != nil {
				return fail("expires %s is not a day (YYYY-MM-DD)", safetext.Quote(it.Expires))
			}
		}
	}
	return &s, nil
}

// NameCollisionRule is the rule under which an operator acknowledges a
// tool name that collides with another after NFC, case folding or the
// confusable fold: pin, lock add and approve vouch for it then, and gate,
// drift and the gateway no longer hold on it.
const NameCollisionRule = "mcp_tool_names_ambiguous"

// ruleAliases are rules that one suppression accepts under either name:
// drift's finding of a name collision is the gate's, so one
// acknowledgement serves every command.
var ruleAliases = map[string]string{"MCP-CONF-TOOL-NAMES-AMBIGUOUS": NameCollisionRule}

func sameRule(r string) string {
	if a, ok := ruleAliases[r]; ok {
		return a
	}
	return r
}

// AcknowledgesName returns the suppression that acknowledges a colliding
// tool name (NameCollisionRule, or its alias) on a server known by any of
// servers, unexpired on today; and an expired one that would have.
func (s *Suppressions) AcknowledgesName(name string, servers []string, today string) (match, expired *Suppression) {
	return s.Match(NameCollisionRule, name, servers, today)
}

// Match returns the suppression that accepts a finding of rule for tool
// on a server known by any of servers, and whether an otherwise matching
// suppression had expired before today (YYYY-MM-DD, UTC). A nil set
// matches nothing.
func (s *Suppressions) Match(rule, tool string, servers []string, today string) (match *Suppression, expired *Suppression) {
	if s == nil {
		return nil, nil
	}
	for i := range s.Items {
		it := &s.Items[i]
		if sameRule(it.Rule) != sameRule(rule) || (it.Tool != "" && it.Tool != tool) {
			continue
		}
		if it.Server != "" && !slices.Contains(servers, it.Server) {
			continue
		}
		if it.Expires != "" && today > it.Expires {
			expired = it
			continue
		}
		return it, nil
	}
	return nil, expired
}
