package proxy

import (
	"sync"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// schemaIndex finds the inputSchema of a list's tool by name, for the
// Mcp-Param-* headers of a 2026-07-28 tools/call. A tool is parsed again
// the first time a call names it (manifest.Tool keeps bytes, not a tree,
// and a list is mostly tools no call names); of tools sharing a name, the
// last that has an inputSchema answers.
type schemaIndex struct {
	mu     sync.Mutex
	byName map[string][]*manifest.Tool
	found  map[string]jcs.Value
}

func newSchemaIndex(tools []*manifest.Tool) *schemaIndex {
	x := &schemaIndex{byName: make(map[string][]*manifest.Tool, len(tools)), found: map[string]jcs.Value{}}
	for _, t := range tools {
		x.byName[t.Name] = append(x.byName[t.Name], t)
	}
	return x
}

// schemasOf is the schemaIndex of a list's tools.
func schemasOf(tl *manifest.ToolList) *schemaIndex {
	tools := make([]*manifest.Tool, len(tl.Tools))
	for i := range tl.Tools {
		tools[i] = &tl.Tools[i]
	}
	return newSchemaIndex(tools)
}

// get is the inputSchema of the tool name (false: no such tool, or none
// of that name has one). A nil index has none.
func (x *schemaIndex) get(name string) (jcs.Value, bool) {
	if x == nil {
		return jcs.Value{}, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if v, ok := x.found[name]; ok {
		return v, v.Valid()
	}
	var v jcs.Value
	ts := x.byName[name]
	for i := len(ts) - 1; i >= 0; i-- {
		if is, ok := ts[i].Value().Get("inputSchema"); ok {
			v = is
			break
		}
	}
	x.found[name] = v
	return v, v.Valid()
}
