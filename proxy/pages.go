package proxy

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// pageListing is one list method the gateway lists itself (tools/list,
// and the surface's prompts/list, resources/templates/list,
// resources/list), through the one page loop (upstreamPages).
type pageListing struct {
	method  string // the list method
	key     string // the result member that holds the entries
	entries string // what the bound counts, for its message ("tools")
	// page receives each page's entries array (page numbers from 1).
	page func(page int, entries jcs.Value)

	// incomplete says why the listing stopped before its end (a page
	// bound, a cursor cycle); "" when it ended.
	incomplete string
	// errResp is the upstream's error answer to a page, when it gave one
	// (the listing stops there).
	errResp *frame.Message
}

// upstreamPages lists one method of the upstream, every page, within one
// deadline (ListTimeout) and the gateway's bounds (MaxListPages pages,
// MaxListBytes in all, MaxListTools entries in all), cursors checked for
// cycles, in the downstream's session and with its client identity. It
// returns the first page's result.
func (s *session) upstreamPages(ctx context.Context, fwd http.Header, l *pageListing) (jcs.Value, error) {
	ctx, cancel := context.WithTimeout(ctx, s.g.cfg.ListTimeout)
	defer cancel()
	s.mu.Lock()
	legacy, meta := s.legacy, s.meta
	s.mu.Unlock()
	if !legacy && len(meta) == 0 {
		meta = defaultMeta(s.g.cfg.Upstream.ClientName, s.g.cfg.Upstream.ClientVersion)
	}
	var first jcs.Value
	seen := map[string]bool{}
	cursor, hasCursor := "", false
	total := int64(0)
	entries := 0
	for page := 1; ; page++ {
		if page > s.g.cfg.MaxListPages {
			l.incomplete = fmt.Sprintf("more than %d pages", s.g.cfg.MaxListPages)
			return first, nil
		}
		req := listRequest(l.method, page, cursor, hasCursor, legacy, meta)
		rm, err := frame.Parse(req)
		if err != nil {
			return jcs.Value{}, err
		}
		resp, err := s.up.request(ctx, req, rm, fwd, func(x *frame.Message) { s.fromServer(x, s.emitOrDrop) })
		if err != nil {
			return jcs.Value{}, err
		}
		if resp.Kind != frame.Response {
			l.errResp = resp.Message
			return first, nil
		}
		total += int64(len(resp.Raw))
		if total > s.g.cfg.MaxListBytes {
			return jcs.Value{}, fmt.Errorf("the listing exceeded %d bytes", s.g.cfg.MaxListBytes)
		}
		if page == 1 {
			first = resp.Result
		}
		arr, ok := resp.Result.Get(l.key)
		if resp.Result.Kind() != jcs.Object || !ok || arr.Kind() != jcs.Array {
			return jcs.Value{}, fmt.Errorf("the listing could not be read: page %d has no %q array", page, l.key)
		}
		entries += arr.Len()
		if entries > s.g.cfg.MaxListTools {
			return jcs.Value{}, fmt.Errorf("the listing exceeded %d %s", s.g.cfg.MaxListTools, l.entries)
		}
		l.page(page, arr)
		nc, ok := resp.Result.Get("nextCursor")
		if !ok || nc.Kind() == jcs.Null {
			return first, nil
		}
		if nc.Kind() != jcs.String {
			return jcs.Value{}, fmt.Errorf("nextCursor is not a string")
		}
		if seen[nc.Str()] {
			l.incomplete = "the cursors cycle"
			return first, nil
		}
		seen[nc.Str()] = true
		cursor, hasCursor = nc.Str(), true
	}
}
