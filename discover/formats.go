package discover

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// format is how a file is parsed into a node tree.
type format struct {
	name string
	read func([]byte) (*node, error)
}

var (
	fJSON  = &format{"JSON", readJSON}
	fJSONC = &format{"JSONC", readJSONC}
	fTOML  = &format{"TOML", readTOML}
	fYAML  = &format{"YAML", readYAML}
)

// readTOML reads TOML (pelletier/go-toml/v2: TOML 1.0, a key or table
// defined twice is an error, arrays and inline tables nested past 10,000
// levels are refused in linear time). The error names the line and
// column; the source text around it (which may hold a secret) is never
// quoted.
func readTOML(src []byte) (*node, error) {
	var m map[string]any
	if err := toml.Unmarshal(src, &m); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("line %d, column %d: %s", row, col, safetext.Inert(trimTOML(de.Error())))
		}
		var se *toml.StrictMissingError
		if errors.As(err, &se) {
			return nil, errors.New("unknown key")
		}
		return nil, errors.New(safetext.Inert(trimTOML(err.Error())))
	}
	return fromGo(m, 0)
}

func trimTOML(s string) string {
	if len(s) > 6 && s[:6] == "toml: " {
		return s[6:]
	}
	return s
}

// readYAML reads one YAML document strictly: a duplicate key, an anchor,
// an alias, a merge key (<<), a key that is not a scalar, more than one
// document and nesting past MaxDepth are errors.
func readYAML(src []byte) (*node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, errors.New(yamlErr(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, errors.New("more than one YAML document")
	}
	n := &doc
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return &node{kind: kNull}, nil
		}
		n = n.Content[0]
	}
	return fromYAML(n, 0)
}

func yamlErr(err error) string {
	s := err.Error()
	if len(s) > 6 && s[:6] == "yaml: " {
		s = s[6:]
	}
	return safetext.Escape(s)
}

func fromYAML(n *yaml.Node, depth int) (*node, error) {
	if depth > MaxDepth {
		return nil, errTooDeep
	}
	if n.Anchor != "" {
		return nil, fmt.Errorf("line %d: an anchor (&%s): anchors and aliases are refused", n.Line, n.Anchor)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return nil, fmt.Errorf("line %d: an alias: anchors and aliases are refused", n.Line)
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return &node{kind: kString, str: n.Value}, nil
		case "!!null":
			return &node{kind: kNull}, nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, fmt.Errorf("line %d: not a boolean", n.Line)
			}
			return &node{kind: kBool, b: b}, nil
		case "!!int", "!!float":
			return &node{kind: kNumber, str: n.Value}, nil
		}
		return &node{kind: kOther}, nil
	case yaml.SequenceNode:
		out := &node{kind: kArray, items: make([]*node, len(n.Content))}
		for i, c := range n.Content {
			v, err := fromYAML(c, depth+1)
			if err != nil {
				return nil, err
			}
			out.items[i] = v
		}
		return out, nil
	case yaml.MappingNode:
		out := &node{kind: kObject}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.AliasNode || k.Anchor != "" {
				return nil, fmt.Errorf("line %d: an anchor or alias as a key: anchors and aliases are refused", k.Line)
			}
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key that is not a scalar", k.Line)
			}
			if k.Value == "<<" && k.ShortTag() == "!!merge" {
				return nil, fmt.Errorf("line %d: a merge key (<<) is refused", k.Line)
			}
			if seen[k.Value] {
				return nil, fmt.Errorf("line %d: key %s is defined twice", k.Line, safetext.Quote(k.Value))
			}
			seen[k.Value] = true
			c, err := fromYAML(v, depth+1)
			if err != nil {
				return nil, err
			}
			out.keys = append(out.keys, k.Value)
			out.vals = append(out.vals, c)
		}
		return out, nil
	}
	return &node{kind: kOther}, nil
}
