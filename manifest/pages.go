package manifest

import (
	"strconv"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// PageList builds a ToolList from the pages of a live listing as they
// arrive (mcpclient.Config.OnToolsPage), each already parsed strictly:
// the tools of each page are projected from that parse, so no byte is
// parsed twice and no transcript is assembled and read again. Pointers are
// those of the transcript the pages would make — the request of page k at
// /2(k-1), its response at /2k-1 — so a message names a tool the same way
// whichever way the list was read.
//
// The pages' Docs are kept by the tools that point into them (a page whose
// every entry was unreadable is kept by nothing). The cursor chain, the
// ids and the bounds are the client's to check, as they are checked
// before a page is handed over.
type PageList struct {
	tl ToolList
}

// NewPageList starts a list; opt.SkipInvalidTools records unreadable
// entries as ToolList.Invalid instead of failing.
func NewPageList(opt ParseOptions) *PageList {
	return &PageList{tl: ToolList{Form: FormPages, skip: opt.SkipInvalidTools}}
}

// Add reads the next page's result: a "tools" array (each entry projected
// as ParseToolList would) and a string, null or absent nextCursor.
func (p *PageList) Add(result jcs.Value) error {
	if result.Kind() != jcs.Object {
		return inputErr(result, p.ptr(), "result must be an object, found %s", result.Kind())
	}
	if err := p.tl.page(result, p.ptr()); err != nil {
		return err
	}
	p.tl.Pages++
	return nil
}

func (p *PageList) ptr() string { return "/" + strconv.Itoa(2*p.tl.Pages+1) + "/result" }

// Tools are the tools read so far, in order (the last page's are the
// last).
func (p *PageList) Tools() []Tool { return p.tl.Tools }

// List returns the tools read so far, with the completeness the client
// established (it saw every cursor) and reason saying why, for people.
func (p *PageList) List(c Completeness, reason string) *ToolList {
	tl := p.tl
	tl.Completeness, tl.Reason = c, reason
	return &tl
}
