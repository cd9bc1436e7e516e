package mockserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Surface is what the mock serves beside its tools: the instructions of
// its initialize and server/discover results, and its prompts, resource
// templates and resources, each with the exact bytes given.
type Surface struct {
	// Instructions is the instructions member's value as served (raw
	// JSON, normally a string); nil: none (then Config.Instructions, if
	// set).
	Instructions json.RawMessage
	// Prompts, Templates and Resources are served by prompts/list,
	// resources/templates/list and resources/list. nil: not served, and
	// the capability not advertised (prompts for Prompts; resources for
	// Templates or Resources); an empty list is advertised and empty.
	Prompts, Templates, Resources []json.RawMessage
}

// surfaceSet is an immutable Surface, with each item's key.
type surfaceSet struct {
	instructions []byte
	prompts      *itemSet
	templates    *itemSet
	resources    *itemSet
}

// itemSet is one list of the surface.
type itemSet struct {
	raws [][]byte
	keys []string // "" when an item has no string key
}

func newItemSet(items []json.RawMessage, key string) (*itemSet, error) {
	if items == nil {
		return nil, nil
	}
	is := &itemSet{raws: make([][]byte, 0, len(items)), keys: make([]string, 0, len(items))}
	for i, it := range items {
		doc, err := jcs.Parse(it)
		if err != nil {
			return nil, fmt.Errorf("item %d is not valid JSON: %w", i, err)
		}
		k := ""
		if v, ok := doc.Root().Get(key); ok && doc.Root().Kind() == jcs.Object && v.Kind() == jcs.String {
			k = v.Str()
		}
		is.raws = append(is.raws, bytes.Clone(it))
		is.keys = append(is.keys, k)
	}
	return is, nil
}

func (is *itemSet) find(key string) ([]byte, bool) {
	if is == nil {
		return nil, false
	}
	for i, k := range is.keys {
		if k == key {
			return is.raws[i], true
		}
	}
	return nil, false
}

func newSurfaceSet(s *Surface) (*surfaceSet, error) {
	ss := &surfaceSet{}
	if s == nil {
		return ss, nil
	}
	if s.Instructions != nil {
		if !json.Valid(s.Instructions) {
			return nil, fmt.Errorf("instructions are not valid JSON")
		}
		ss.instructions = bytes.Clone(s.Instructions)
	}
	var err error
	if ss.prompts, err = newItemSet(s.Prompts, "name"); err != nil {
		return nil, fmt.Errorf("prompts: %w", err)
	}
	if ss.templates, err = newItemSet(s.Templates, "uriTemplate"); err != nil {
		return nil, fmt.Errorf("resource templates: %w", err)
	}
	if ss.resources, err = newItemSet(s.Resources, "uri"); err != nil {
		return nil, fmt.Errorf("resources: %w", err)
	}
	return ss, nil
}

// The list_changed notifications SetSurface sends.
var (
	promptsChangedNotification   = []byte(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
	resourcesChangedNotification = []byte(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`)
)

// SetSurface atomically replaces the surface. With ListChanged, every
// subscriber gets notifications/prompts/list_changed and
// notifications/resources/list_changed for the lists the server serves
// (before or after).
func (s *Server) SetSurface(sf *Surface) error {
	ss, err := newSurfaceSet(sf)
	if err != nil {
		return err
	}
	old := s.surf.Swap(ss)
	if old == nil {
		old = &surfaceSet{}
	}
	if old.prompts != nil || ss.prompts != nil {
		s.notify(promptsChangedNotification)
	}
	if old.templates != nil || ss.templates != nil || old.resources != nil || ss.resources != nil {
		s.notify(resourcesChangedNotification)
	}
	return nil
}

// surfaceNow is the surface being served.
func (s *Server) surfaceNow() *surfaceSet {
	if ss := s.surf.Load(); ss != nil {
		return ss
	}
	return &surfaceSet{}
}

// instructionsJSON is the instructions value served (nil: none).
func (s *Server) instructionsJSON() []byte {
	if ss := s.surfaceNow(); ss.instructions != nil {
		return ss.instructions
	}
	if s.cfg.Instructions != "" {
		return appendJSONString(nil, s.cfg.Instructions)
	}
	return nil
}

// surfaceCapabilities are the members the surface adds to capabilities
// (each with a leading comma).
func (s *Server) surfaceCapabilities(lc string) string {
	ss := s.surfaceNow()
	out := ""
	if ss.prompts != nil {
		out += `,"prompts":{"listChanged":` + lc + `}`
	}
	if ss.templates != nil || ss.resources != nil {
		out += `,"resources":{"listChanged":` + lc + `}`
	}
	return out
}

// LoadManifest reads a manifest: a tool list in any form LoadTools
// accepts, and, when it is an object (a tools/list result), the surface
// in its members "instructions", "prompts", "resourceTemplates" and
// "resources" (sf nil when it has none of them).
func LoadManifest(src []byte) (tools []json.RawMessage, sf *Surface, err error) {
	if tools, err = LoadTools(src); err != nil {
		return nil, nil, err
	}
	doc, err := jcs.Parse(src)
	if err != nil || doc.Root().Kind() != jcs.Object {
		return tools, nil, nil
	}
	root := doc.Root()
	if res, ok := root.Get("result"); ok && res.Kind() == jcs.Object {
		root = res // a JSON-RPC response: its result
	}
	list := func(member string) ([]json.RawMessage, bool, error) {
		v, ok := root.Get(member)
		if !ok {
			return nil, false, nil
		}
		if v.Kind() != jcs.Array {
			return nil, false, fmt.Errorf("%q is a JSON %s, not an array", member, v.Kind())
		}
		out := make([]json.RawMessage, 0, v.Len())
		for i := range v.Len() {
			out = append(out, bytes.Clone(v.Index(i).Raw()))
		}
		return out, true, nil
	}
	s := &Surface{}
	found := false
	if v, ok := root.Get("instructions"); ok {
		s.Instructions, found = bytes.Clone(v.Raw()), true
	}
	for member, dst := range map[string]*[]json.RawMessage{"prompts": &s.Prompts, "resourceTemplates": &s.Templates, "resources": &s.Resources} {
		items, ok, err := list(member)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			*dst, found = items, true
		}
	}
	if !found {
		return tools, nil, nil
	}
	return tools, s, nil
}

// LoadManifestFile is LoadManifest on a file, refusing files over 64 MiB.
func LoadManifestFile(path string) ([]json.RawMessage, *Surface, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	const max = 64 << 20
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, nil, err
	}
	if len(b) > max {
		return nil, nil, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	tools, sf, err := LoadManifest(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return tools, sf, nil
}

// surfaceList answers prompts/list, resources/templates/list and
// resources/list: SurfacePageSize items a page (0: one page), or, for a
// method in EndlessLists, pages that never end (each with a fresh cursor
// and no items past the last).
func (s *Server) surfaceList(x *exchange, m *message, is *itemSet, key string) ([]byte, *frame.Error) {
	if is == nil {
		return nil, frame.Errorf(0, mcpwire.CodeMethodNotFound, "Method not found: %s", m.Method)
	}
	endless := false
	for _, e := range s.cfg.EndlessLists {
		endless = endless || e == m.Method
	}
	n, size := len(is.raws), s.cfg.SurfacePageSize
	off := 0
	if c, ok := m.Param("cursor"); ok {
		d, err := decodeSurfaceCursor(c)
		if err != nil || (!endless && (d >= n || size == 0 || d%size != 0)) {
			return nil, frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid cursor")
		}
		off = d
	}
	end := n
	if size > 0 && off+size < n {
		end = off + size
	}
	b := jcs.AppendString(nil, key)
	b = append(b, ":["...)
	for i := off; i < end; i++ {
		if i > off {
			b = append(b, ',')
		}
		b = append(b, is.raws[i]...)
	}
	b = append(b, ']')
	switch {
	case endless:
		b = append(b, `,"nextCursor":`...)
		b = appendJSONString(b, encodeCursor(max(end, off)+max(size, 1)))
	case end < n:
		b = append(b, `,"nextCursor":`...)
		b = appendJSONString(b, encodeCursor(end))
	}
	return s.result(x, b, true), nil
}

// decodeSurfaceCursor reads a cursor encodeCursor made.
func decodeSurfaceCursor(c jcs.Value) (int, error) {
	if c.Kind() != jcs.String {
		return 0, fmt.Errorf("not a string")
	}
	off, ok := cursorOffset(c.Str())
	if !ok {
		return 0, fmt.Errorf("not a cursor")
	}
	return off, nil
}

// promptsGet answers prompts/get of a served prompt: one user message
// naming it (-32602 for a prompt it does not serve).
func (s *Server) promptsGet(x *exchange, m *message) ([]byte, *frame.Error) {
	ps := s.surfaceNow().prompts
	if ps == nil {
		return nil, frame.Errorf(0, mcpwire.CodeMethodNotFound, "Method not found: prompts/get")
	}
	nv, ok := m.Param("name")
	if !ok || nv.Kind() != jcs.String {
		return nil, frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: params.name must be a string")
	}
	if _, ok := ps.find(nv.Str()); !ok {
		return nil, frame.Errorf(0, mcpwire.CodeInvalidParams, "Unknown prompt: %s", safetext.Clip(nv.Str(), 128))
	}
	b := []byte(`"messages":[{"role":"user","content":{"type":"text","text":`)
	b = appendJSONString(b, "prompt "+nv.Str())
	b = append(b, "}}]"...)
	return s.result(x, b, false), nil
}

// resourcesRead answers resources/read of a listed resource: its uri and
// a text (-32602 for one it does not list, as 2026-07-28 says; legacy
// revisions' -32002 is accepted by clients but not needed here).
func (s *Server) resourcesRead(x *exchange, m *message) ([]byte, *frame.Error) {
	rs := s.surfaceNow().resources
	if rs == nil {
		return nil, frame.Errorf(0, mcpwire.CodeMethodNotFound, "Method not found: resources/read")
	}
	uv, ok := m.Param("uri")
	if !ok || uv.Kind() != jcs.String {
		return nil, frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: params.uri must be a string")
	}
	if _, ok := rs.find(uv.Str()); !ok {
		return nil, frame.Errorf(0, mcpwire.CodeInvalidParams, "Resource not found: %s", safetext.Clip(uv.Str(), 128))
	}
	b := []byte(`"contents":[{"uri":`)
	b = appendJSONString(b, uv.Str())
	b = append(b, `,"text":`...)
	b = appendJSONString(b, "contents of "+uv.Str())
	return s.result(x, append(b, "}]"...), true), nil
}

// surfaceMethods are the methods dispatchSurface answers.
var surfaceMethods = map[string]bool{"prompts/list": true, "prompts/get": true, "resources/templates/list": true, "resources/list": true, "resources/read": true}

// dispatchSurface answers the surface's methods; ok false for any other.
func (s *Server) dispatchSurface(x *exchange, m *message) (res []byte, e *frame.Error, ok bool) {
	ss := s.surfaceNow()
	switch m.Method {
	case "prompts/list":
		res, e = s.surfaceList(x, m, ss.prompts, "prompts")
	case "resources/templates/list":
		res, e = s.surfaceList(x, m, ss.templates, "resourceTemplates")
	case "resources/list":
		res, e = s.surfaceList(x, m, ss.resources, "resources")
	case "prompts/get":
		res, e = s.promptsGet(x, m)
	case "resources/read":
		res, e = s.resourcesRead(x, m)
	default:
		return nil, nil, false
	}
	return res, e, true
}
