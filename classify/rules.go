package classify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// RulesVersion is the only rules-file version this package understands.
const RulesVersion = 1

// maxRulesFileSize bounds what New and Load accept.
const maxRulesFileSize = 1 << 20

// Families are the fixed set of privilege families a rule can belong to.
const (
	FamilyCredentials    = "credentials"    // secrets, tokens, keys, passwords
	FamilyIAM            = "iam"            // roles, permissions, membership, workspace administration
	FamilyNetwork        = "network"        // DNS, firewalls, routes
	FamilyPayments       = "payments"       // money movement, refunds, invoices, billing
	FamilyRepository     = "repository"     // repository administration, branch protection, merges, pushes
	FamilyDatabase       = "database"       // database writes, schema changes, drops
	FamilyExecution      = "execution"      // shell, code and CI execution
	FamilyFilesystem     = "filesystem"     // file writes and deletes
	FamilyMessaging      = "messaging"      // email and chat messages sent on the user's behalf
	FamilyInfrastructure = "infrastructure" // deploys, changes and destruction of cloud/cluster resources
	FamilyAdmin          = "admin"          // broad management tools (manage_X, X_management)
	FamilyData           = "data"           // deletion of stored content of any kind
)

var families = []string{
	FamilyCredentials, FamilyIAM, FamilyNetwork, FamilyPayments, FamilyRepository,
	FamilyDatabase, FamilyExecution, FamilyFilesystem, FamilyMessaging, FamilyInfrastructure,
	FamilyAdmin, FamilyData,
}

// Families returns the fixed set of families, in documentation order.
func Families() []string {
	return append([]string(nil), families...)
}

func isFamily(s string) bool {
	for _, f := range families {
		if f == s {
			return true
		}
	}
	return false
}

// Rule is one entry of a rules table, as written in the YAML file.
type Rule struct {
	ActionClass string   // snake_case name of the privileged action, e.g. "github_deploy_key"
	Family      string   // one of Families()
	Description string   // free text, for documentation
	Match       []string // patterns; the rule applies when any of them matches
	Exclude     []string // patterns; the rule does not apply when any of them matches
	Privileged  bool     // false only for user rules that declare names not privileged
	Source      string   // "builtin" or the user rules file name
	Line        int      // line of the rule in Source
}

func (r Rule) clone() Rule {
	r.Match = append([]string(nil), r.Match...)
	r.Exclude = append([]string(nil), r.Exclude...)
	return r
}

// RuleError is a load error in a rules file. Line is 0 when unknown.
type RuleError struct {
	Source string
	Line   int
	Msg    string
}

func (e *RuleError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Source, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Source, e.Msg)
}

type ruleFileYAML struct {
	Version *int       `yaml:"version"`
	Rules   []ruleYAML `yaml:"rules"`
	Disable []string   `yaml:"disable"`
}

type ruleYAML struct {
	ActionClass string   `yaml:"action_class"`
	Family      string   `yaml:"family"`
	Description string   `yaml:"description"`
	Match       []string `yaml:"match"`
	Exclude     []string `yaml:"exclude"`
	Privileged  *bool    `yaml:"privileged"`
}

// ruleSpec is a validated rule with its parsed patterns.
type ruleSpec struct {
	Rule
	match   []pattern
	exclude []pattern
}

type disableEntry struct {
	name string
	line int
}

type ruleFile struct {
	rules   []ruleSpec
	disable []disableEntry
}

func validActionClass(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// parseRuleFile decodes and validates one rules file.
func parseRuleFile(data []byte, source string) (*ruleFile, error) {
	errAt := func(line int, format string, args ...any) error {
		return &RuleError{Source: source, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if len(data) > maxRulesFileSize {
		return nil, errAt(0, "rules file is larger than %d bytes", maxRulesFileSize)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errAt(0, "rules file is empty (it needs at least \"version: %d\")", RulesVersion)
	}

	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var doc ruleFileYAML
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errAt(0, "rules file has no YAML document (it needs at least \"version: %d\")", RulesVersion)
		}
		return nil, yamlError(source, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, errAt(extra.Line, "rules file must contain a single YAML document")
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(source, err)
	}

	// The typed decode above is the strict one (unknown and duplicate
	// keys). The node tree is only used to report line numbers.
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root)
	top := docMapping(&root)

	if doc.Version == nil {
		return nil, errAt(lineOf(top, 1), "missing required key \"version\" (want version: %d)", RulesVersion)
	}
	if *doc.Version != RulesVersion {
		return nil, errAt(lineOf(mappingValue(top, "version"), 1), "unsupported rules version %d (this build understands version %d)", *doc.Version, RulesVersion)
	}

	rf := &ruleFile{}
	rulesNode := mappingValue(top, "rules")
	firstLine := map[string]int{}
	for i, ry := range doc.Rules {
		rn := seqItem(rulesNode, i)
		line := lineOf(rn, lineOf(rulesNode, 1))
		keyLine := func(key string, fallback int) int { return lineOf(mappingValue(rn, key), fallback) }

		if ry.ActionClass == "" {
			return nil, errAt(line, "rule %d: missing required key \"action_class\"", i+1)
		}
		if !validActionClass(ry.ActionClass) {
			return nil, errAt(keyLine("action_class", line), "rule %d: action_class %s must be snake_case ([a-z][a-z0-9_]*, at most 64 characters)", i+1, safetext.Quote(ry.ActionClass))
		}
		if prev, dup := firstLine[ry.ActionClass]; dup {
			return nil, errAt(keyLine("action_class", line), "action_class %s is already defined at line %d", safetext.Quote(ry.ActionClass), prev)
		}
		firstLine[ry.ActionClass] = line
		if ry.Family == "" {
			return nil, errAt(line, "rule %s: missing required key \"family\" (one of %s)", safetext.Quote(ry.ActionClass), strings.Join(families, ", "))
		}
		if !isFamily(ry.Family) {
			return nil, errAt(keyLine("family", line), "rule %s: unknown family %s (one of %s)", safetext.Quote(ry.ActionClass), safetext.Quote(ry.Family), strings.Join(families, ", "))
		}
		if len(ry.Match) == 0 {
			return nil, errAt(line, "rule %s: \"match\" needs at least one pattern", safetext.Quote(ry.ActionClass))
		}
		spec := ruleSpec{Rule: Rule{
			ActionClass: ry.ActionClass,
			Family:      ry.Family,
			Description: ry.Description,
			Match:       ry.Match,
			Exclude:     ry.Exclude,
			Privileged:  ry.Privileged == nil || *ry.Privileged,
			Source:      source,
			Line:        line,
		}}
		for _, list := range []struct {
			key  string
			srcs []string
			dst  *[]pattern
		}{{"match", ry.Match, &spec.match}, {"exclude", ry.Exclude, &spec.exclude}} {
			listNode := mappingValue(rn, list.key)
			for j, src := range list.srcs {
				p, err := parsePattern(src)
				if err != nil {
					return nil, errAt(lineOf(seqItem(listNode, j), keyLine(list.key, line)), "rule %s: %s %d: %v", safetext.Quote(ry.ActionClass), list.key, j+1, err)
				}
				*list.dst = append(*list.dst, p)
			}
		}
		rf.rules = append(rf.rules, spec)
	}

	disableNode := mappingValue(top, "disable")
	for i, name := range doc.Disable {
		rf.disable = append(rf.disable, disableEntry{name: name, line: lineOf(seqItem(disableNode, i), lineOf(disableNode, 1))})
	}
	return rf, nil
}

// yamlError turns a yaml.v3 error into a RuleError naming the source and,
// when yaml reports one, the line.
func yamlError(source string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		re := &RuleError{Source: source}
		var msgs []string
		for i, e := range te.Errors {
			line, msg := splitYAMLLine(e)
			msg = friendlyYAML(msg)
			if i == 0 {
				re.Line = line
				msgs = append(msgs, msg)
			} else if line > 0 {
				msgs = append(msgs, fmt.Sprintf("line %d: %s", line, msg))
			} else {
				msgs = append(msgs, msg)
			}
		}
		re.Msg = strings.Join(msgs, "; ")
		return re
	}
	line, msg := splitYAMLLine(strings.TrimPrefix(err.Error(), "yaml: "))
	return &RuleError{Source: source, Line: line, Msg: "invalid YAML: " + msg}
}

// splitYAMLLine splits "line 12: message" into 12 and "message".
func splitYAMLLine(s string) (int, string) {
	rest, ok := strings.CutPrefix(s, "line ")
	if !ok {
		return 0, s
	}
	num, msg, ok := strings.Cut(rest, ": ")
	if !ok {
		return 0, s
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return 0, s
	}
	return n, msg
}

func friendlyYAML(msg string) string {
	// "field foo not found in type classify.ruleYAML"
	if rest, ok := strings.CutPrefix(msg, "field "); ok {
		if name, _, ok := strings.Cut(rest, " not found in type "); ok {
			return fmt.Sprintf("unknown key %s", safetext.Quote(name))
		}
	}
	// "mapping key "match" already defined at line 4"
	// yaml.v3 quotes a key with Go's %#v: requoted, it reads as every
	// other message of mcpdrift's does ("m\u001b", not "m\x1b").
	if strings.HasPrefix(msg, "mapping key ") && strings.Contains(msg, "already defined") {
		return "duplicate key: " + safetext.RequoteGo(strings.TrimPrefix(msg, "mapping "), '"')
	}
	return safetext.RequoteGo(msg, '"')
}

// Helpers to find line numbers in a yaml.Node tree. They tolerate any shape
// and return nil when the path does not exist.

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func docMapping(root *yaml.Node) *yaml.Node {
	n := resolve(root)
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = resolve(n.Content[0])
	}
	return n
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	m = resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return resolve(m.Content[i+1])
		}
	}
	return nil
}

func seqItem(s *yaml.Node, i int) *yaml.Node {
	s = resolve(s)
	if s == nil || s.Kind != yaml.SequenceNode || i >= len(s.Content) {
		return nil
	}
	return resolve(s.Content[i])
}

func lineOf(n *yaml.Node, fallback int) int {
	if n == nil || n.Line == 0 {
		return fallback
	}
	return n.Line
}
