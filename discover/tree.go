package discover

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// MaxDepth is the deepest nesting of objects and arrays a configuration
// may have, in every format (the bound of package jcs).
const MaxDepth = jcs.MaxDepth

// errTooDeep is the reason for a configuration nested deeper than MaxDepth.
var errTooDeep = fmt.Errorf("nested deeper than %d levels", MaxDepth)

// kind is the type of a node: JSON's, which every format here is read
// into.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
	// kOther is a value JSON has no type for (a TOML date).
	kOther
)

func (k kind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object", "a date"}[k]
}

// node is one value of a configuration file, read from JSON, JSONC, TOML
// or YAML: the one tree every client's entries are read from.
type node struct {
	kind  kind
	str   string   // kString
	b     bool     // kBool
	keys  []string // kObject, in file order (TOML: sorted)
	vals  []*node  // kObject
	items []*node  // kArray
	// lazy is the JSON value a container node is read from when its
	// members are first asked for (pending): a file's servers are a small
	// part of it (~/.claude.json keeps every project's history).
	lazy    jcs.Value
	pending bool
}

// force reads the members of a lazy container.
func (n *node) force() {
	if !n.pending {
		return
	}
	n.pending = false
	v := n.lazy
	n.lazy = jcs.Value{}
	switch n.kind {
	case kArray:
		n.items = make([]*node, v.Len())
		for i := range n.items {
			n.items[i] = fromJCS(v.Index(i))
		}
	case kObject:
		n.keys, n.vals = make([]string, v.Len()), make([]*node, v.Len())
		for i := range n.keys {
			k, val := v.Member(i)
			n.keys[i] = k.Str()
			n.vals[i] = fromJCS(val)
		}
	}
}

// Keys are an object's member names, in order.
func (n *node) Keys() []string { n.force(); return n.keys }

// Vals are an object's member values, in the order of Keys.
func (n *node) Vals() []*node { n.force(); return n.vals }

// Items are an array's elements.
func (n *node) Items() []*node { n.force(); return n.items }

func (n *node) get(k string) (*node, bool) {
	if n == nil || n.kind != kObject {
		return nil, false
	}
	n.force()
	for i, key := range n.keys {
		if key == k {
			return n.vals[i], true
		}
	}
	return nil, false
}

// fromJCS converts a parsed JSON value (jcs bounds its depth); the
// members of an array or object are converted when first asked for.
func fromJCS(v jcs.Value) *node {
	switch v.Kind() {
	case jcs.Null:
		return &node{kind: kNull}
	case jcs.True, jcs.False:
		return &node{kind: kBool, b: v.Bool()}
	case jcs.Number:
		return &node{kind: kNumber}
	case jcs.String:
		return &node{kind: kString, str: v.Str()}
	case jcs.Array:
		return &node{kind: kArray, lazy: v, pending: true}
	case jcs.Object:
		return &node{kind: kObject, lazy: v, pending: true}
	}
	return &node{kind: kNull}
}

// fromGo converts what a TOML decoder produces into a map[string]any
// (keys sorted: the decoder keeps no order).
func fromGo(v any, depth int) (*node, error) {
	if depth > MaxDepth {
		return nil, errTooDeep
	}
	switch x := v.(type) {
	case nil:
		return &node{kind: kNull}, nil
	case bool:
		return &node{kind: kBool, b: x}, nil
	case string:
		return &node{kind: kString, str: x}, nil
	case int64:
		return &node{kind: kNumber, str: strconv.FormatInt(x, 10)}, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return &node{kind: kOther}, nil
		}
		return &node{kind: kNumber, str: strconv.FormatFloat(x, 'g', -1, 64)}, nil
	case time.Time:
		return &node{kind: kOther}, nil
	case []any:
		n := &node{kind: kArray, items: make([]*node, len(x))}
		for i, e := range x {
			c, err := fromGo(e, depth+1)
			if err != nil {
				return nil, err
			}
			n.items[i] = c
		}
		return n, nil
	case map[string]any:
		n := &node{kind: kObject}
		for _, k := range sortedKeys(x) {
			c, err := fromGo(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, k)
			n.vals = append(n.vals, c)
		}
		return n, nil
	}
	// LocalDate, LocalTime, LocalDateTime and anything else a decoder adds.
	return &node{kind: kOther}, nil
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}
