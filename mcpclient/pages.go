package mcpclient

import (
	"context"
	"fmt"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// A listing is one paginated list method of a run: tools/list, and the
// surface's prompts/list, resources/templates/list and resources/list
// (surface.go). They share one paging loop (paginate): the request of each
// page (the modern _meta, the cursor), the byte and entry bounds, the
// cursor cycle, the legacy empty cursor and the page bound. Its counters
// point at where the listing's consumer keeps them (the Observation's own
// fields for tools/list).
type listing struct {
	method string
	// what prefixes the listing's warnings ("" for tools/list, whose
	// warnings are the run's).
	what string

	maxBytes int64
	maxItems int
	maxPages int // 0: no page bound

	pages        *int
	bytes        *int64
	completeness *string
	cycle        *bool
	capped       *bool
	items        int

	// limit is the LimitError kinds of the byte and entry bounds.
	bytesKind, itemsKind LimitKind

	// first, when set, sees the reply to the first page before anything
	// is read of it.
	first func(rep *reply)
	// read checks a page and says where the list goes on: the cursor of
	// the next page (hasNext), and how many entries the page has.
	read func(req *rpcRequest, rep *reply, res jcs.Value) (next string, hasNext bool, entries int, err error)
	// take keeps a page that is within the bounds; the page is counted.
	take func(req *rpcRequest, rep *reply, res jcs.Value) error
}

// paginate follows nextCursor from the first page to the last, within the
// listing's bounds.
func (r *run) paginate(ctx context.Context, l *listing) error {
	seen := map[string]bool{}
	var cursor *string
	for {
		var params any
		switch {
		case r.rev != "":
			p := map[string]any{"_meta": r.meta(r.rev)}
			if cursor != nil {
				p["cursor"] = *cursor
			}
			params = p
		case cursor != nil:
			params = map[string]string{"cursor": *cursor}
		}
		req := r.request(l.method, params)
		rep, err := r.roundTrip(ctx, req)
		if err != nil {
			return err
		}
		if *l.pages == 0 && l.first != nil {
			l.first(rep)
		}
		res, err := r.expect(req, rep)
		if err != nil {
			return err
		}
		next, hasNext, n, err := l.read(req, rep, res)
		if err != nil {
			return err
		}
		*l.bytes += int64(len(rep.msg.raw))
		if *l.bytes > l.maxBytes {
			return &LimitError{Method: req.Method, Kind: l.bytesKind, Max: l.maxBytes}
		}
		if l.items += n; l.items > l.maxItems {
			return &LimitError{Method: req.Method, Kind: l.itemsKind, Max: int64(l.maxItems)}
		}
		*l.pages++
		if err := l.take(req, rep, res); err != nil {
			return err
		}
		if !hasNext {
			*l.completeness = string(manifest.Complete)
			return nil
		}
		*l.completeness = string(manifest.Partial)
		if r.rev == "" && next == "" {
			r.obs.warn(l.what + "the legacy server sent an empty nextCursor: legacy SDKs read it as the end of the list, 2026-07-28 as a cursor; it was not followed, so the list is partial")
			return nil
		}
		if seen[next] {
			*l.cycle = true
			r.obs.warn(l.what + "the server repeated nextCursor " + quote(next) + "; the list was not followed further")
			return nil
		}
		if l.maxPages > 0 && *l.pages >= l.maxPages {
			*l.capped = true
			return nil
		}
		seen[next] = true
		cursor = &next
	}
}

// checkPage checks what steering needs of a list page: an array under key
// and a string (or absent, or null) nextCursor. Entries are not judged
// here.
func checkPage(res jcs.Value, key string) (next string, has bool, err error) {
	if err := pageVariant(res, key); err != nil {
		return "", false, err
	}
	arr, ok := res.Get(key)
	if !ok {
		return "", false, fmt.Errorf(`the result has no %q`, key)
	}
	if arr.Kind() != jcs.Array {
		return "", false, fmt.Errorf(`%q is a JSON %s, not an array`, key, arr.Kind())
	}
	c, ok := res.Get("nextCursor")
	if !ok || c.Kind() == jcs.Null {
		return "", false, nil
	}
	if c.Kind() != jcs.String {
		return "", false, fmt.Errorf(`"nextCursor" is a JSON %s, not a string`, c.Kind())
	}
	return c.Str(), true, nil
}

// pageVariant refuses a page whose result holds a case variant of the
// list's member or of "nextCursor" ("Tools" beside or instead of "tools",
// "NextCursor"): decoders that match member names regardless of case (Go's
// encoding/json, and the SDKs built on it) read the variant, the last one
// they meet, so what such a client lists is not what was observed here.
func pageVariant(res jcs.Value, key string) error {
	for _, exact := range []string{key, "nextCursor"} {
		if name, ok := res.VariantOf(exact); ok {
			return fmt.Errorf("the result holds %s, which decoders that ignore case read as %q: the list a client reads is not the one observed", safetext.Quote(name), exact)
		}
	}
	return nil
}
