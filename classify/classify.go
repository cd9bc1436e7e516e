package classify

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Classification values of Result.
const (
	Classified   = "classified"
	Unclassified = "unclassified"
)

// BuiltinSource is the Rule.Source of built-in rules.
const BuiltinSource = "builtin"

// Result of classifying one tool name.
type Result struct {
	Privileged     bool
	Classification string // Classified or Unclassified
	ActionClass    string // "" when unclassified
	Family         string // "" when unclassified
}

// Classifier maps tool names to privilege classes. It is immutable once
// built and safe for concurrent use.
type Classifier struct {
	rules  []compiledRule
	vocab  map[string]int32
	nwords int // length of every pattern bitset
	// index maps a vocabulary id to the rules that have a pattern whose
	// most selective required word set contains it. A rule that is not
	// reached from any token of a name cannot match it.
	index [][]int32
}

type compiledRule struct {
	rule    Rule
	match   []cpattern
	exclude []cpattern
}

//go:embed builtin.yaml
var builtinYAML []byte

var builtinSpecs = sync.OnceValue(func() []ruleSpec {
	rf, err := parseRuleFile(builtinYAML, BuiltinSource)
	if err != nil {
		panic(fmt.Sprintf("classify: invalid built-in rules: %v", err))
	}
	if len(rf.disable) > 0 {
		panic("classify: built-in rules must not use disable")
	}
	return rf.rules
})

var defaultClassifier = sync.OnceValue(func() *Classifier {
	return compile(builtinSpecs())
})

// Default returns the classifier for the built-in table only. The table is
// embedded in the binary, parsed on first use and shared.
func Default() *Classifier {
	return defaultClassifier()
}

// Load returns a classifier for the built-in table extended and overridden
// by the user rules file at path. See New.
func Load(path string) (*Classifier, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("classify: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRulesFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("classify: reading %s: %w", path, err)
	}
	return New(data, path)
}

// New returns a classifier for the built-in table extended and overridden by
// userRules, a rules file in the format described in the package
// documentation. source names the file in errors (and in Rule.Source).
//
// User rules are tried before every built-in rule, in file order; then the
// built-in rules that are not disabled, in table order. The first rule that
// matches decides. Errors are *RuleError values naming source and line.
// An empty userRules is an error (the file must at least say "version: 1");
// use Default for the built-in table alone.
func New(userRules []byte, source string) (*Classifier, error) {
	if source == "" {
		source = "rules"
	}
	rf, err := parseRuleFile(userRules, source)
	if err != nil {
		return nil, err
	}
	builtin := builtinSpecs()
	known := map[string]bool{}
	for _, f := range families {
		known[f] = true
	}
	for _, s := range builtin {
		known[s.ActionClass] = true
	}
	disabled := map[string]bool{}
	for _, d := range rf.disable {
		if !known[d.name] {
			return nil, &RuleError{Source: source, Line: d.line,
				Msg: fmt.Sprintf("disable: %s is neither a built-in action class nor a family", safetext.Quote(d.name))}
		}
		disabled[d.name] = true
	}
	specs := append([]ruleSpec(nil), rf.rules...)
	for _, s := range builtin {
		if !disabled[s.ActionClass] && !disabled[s.Family] {
			specs = append(specs, s)
		}
	}
	return compile(specs), nil
}

// compile assigns vocabulary ids to every word used by the rules and turns
// the patterns into bitset NFAs, so that Classify does no parsing.
func compile(specs []ruleSpec) *Classifier {
	words := map[string]bool{}
	for _, s := range specs {
		for _, list := range [][]pattern{s.match, s.exclude} {
			for _, p := range list {
				for _, e := range p.elems {
					for _, w := range e.words {
						words[w] = true
					}
				}
			}
		}
	}
	sorted := make([]string, 0, len(words))
	for w := range words {
		sorted = append(sorted, w)
	}
	sort.Strings(sorted)
	c := &Classifier{vocab: make(map[string]int32, len(sorted))}
	for i, w := range sorted {
		c.vocab[w] = int32(i)
	}
	c.nwords = (len(sorted) + 63) / 64
	if c.nwords == 0 {
		c.nwords = 1
	}
	c.rules = make([]compiledRule, len(specs))
	c.index = make([][]int32, len(sorted))
	for i, s := range specs {
		cr := compiledRule{rule: s.Rule.clone()}
		for _, p := range s.match {
			cp := compilePattern(p, c.vocab, c.nwords)
			cr.match = append(cr.match, cp)
			for _, w := range p.elems[cp.selective].words {
				id := c.vocab[w]
				if l := c.index[id]; len(l) == 0 || l[len(l)-1] != int32(i) {
					c.index[id] = append(l, int32(i))
				}
			}
		}
		for _, p := range s.exclude {
			cr.exclude = append(cr.exclude, compilePattern(p, c.vocab, c.nwords))
		}
		c.rules[i] = cr
	}
	return c
}

// find returns the first rule that applies to name, or nil.
//
// A name holding default-ignorable code points (zero-width characters and
// the like) is read twice: first with them skipped ("del\u200bete" is
// "delete"), and, when that reading finds no privileged rule, with them as
// separators ("delete\u200bfile" is "delete file"). Invisible characters
// can therefore never make a name less privileged than either reading.
func (c *Classifier) find(name string) *compiledRule {
	r, sawInvisible := c.findReading(name, false)
	if sawInvisible && (r == nil || !r.rule.Privileged) {
		if r2, _ := c.findReading(name, true); r2 != nil && r2.rule.Privileged {
			return r2
		}
	}
	return r
}

func (c *Classifier) findReading(name string, splitOnInvisible bool) (*compiledRule, bool) {
	var idBuf [32]int32
	var tokBuf, keyBuf [64]byte
	ids := idBuf[:0]
	t := tokenizer{s: name, splitOnInvisible: splitOnInvisible}
	for {
		tok := t.next(tokBuf[:0])
		if tok == nil {
			break
		}
		id := int32(-1)
		if k, ok := appendKey(keyBuf[:0], tok); ok {
			if v, found := c.vocab[string(k)]; found {
				id = v
			}
		}
		ids = append(ids, id)
	}

	// Candidate rules, from the inverted index.
	var candBuf [8]uint64
	cand := candBuf[:]
	if n := (len(c.rules) + 63) / 64; n > len(cand) {
		cand = make([]uint64, n)
	}
	found := false
	for _, id := range ids {
		if id < 0 {
			continue
		}
		for _, ri := range c.index[id] {
			cand[ri>>6] |= 1 << (uint(ri) & 63)
			found = true
		}
	}
	if !found {
		return nil, t.sawInvisible
	}

	for i := range c.rules {
		if cand[i>>6]&(1<<(uint(i)&63)) == 0 {
			continue
		}
		r := &c.rules[i]
		if anyMatch(r.match, ids) && !anyMatch(r.exclude, ids) {
			return r, t.sawInvisible
		}
	}
	return nil, t.sawInvisible
}

func anyMatch(ps []cpattern, ids []int32) bool {
	for i := range ps {
		if ps[i].match(ids) {
			return true
		}
	}
	return false
}

// Classify classifies one tool name. Only the name is used: annotations and
// descriptions are controlled by the server and are not authority.
//
// A name is privileged when the first applicable rule (see New for the
// order) is privileged. A user rule with "privileged: false" that applies
// makes the name unclassified, whatever the built-in rules say.
func (c *Classifier) Classify(name string) Result {
	r := c.find(name)
	if r == nil || !r.rule.Privileged {
		return Result{Classification: Unclassified}
	}
	return Result{
		Privileged:     true,
		Classification: Classified,
		ActionClass:    r.rule.ActionClass,
		Family:         r.rule.Family,
	}
}

// Explain returns the rule that decides name, including user rules with
// "privileged: false", and false when no rule applies.
func (c *Classifier) Explain(name string) (Rule, bool) {
	r := c.find(name)
	if r == nil {
		return Rule{}, false
	}
	return r.rule.clone(), true
}

// Rules returns the effective rules in precedence order: user rules first,
// then the enabled built-in rules.
func (c *Classifier) Rules() []Rule {
	out := make([]Rule, len(c.rules))
	for i, r := range c.rules {
		out[i] = r.rule.clone()
	}
	return out
}
