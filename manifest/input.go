package manifest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Completeness of an observed tools/list.
type Completeness string

// The completeness states of the specification.
const (
	Complete Completeness = "complete"
	Partial  Completeness = "partial"
	Unknown  Completeness = "unknown"
)

// ParseCompleteness accepts "complete", "partial" or "unknown".
func ParseCompleteness(s string) (Completeness, error) {
	switch c := Completeness(s); c {
	case Complete, Partial, Unknown:
		return c, nil
	}
	return "", fmt.Errorf("completeness must be complete, partial or unknown, not %s", safetext.Quote(s))
}

// InputError is a problem with an input document: where it is (JSON pointer
// and byte offset) and what is wrong. It wraps *jcs.Error for syntax errors.
type InputError struct {
	Pointer string
	Offset  int
	Msg     string
	Err     error
}

func (e *InputError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("byte %d, at JSON pointer %s: %s", e.Offset, safetext.Quote(e.Pointer), e.Msg)
}

func (e *InputError) Unwrap() error { return e.Err }

func inputErr(v jcs.Value, ptr, format string, args ...any) *InputError {
	off := 0
	if v.Valid() {
		off = v.Offset()
	}
	return &InputError{Pointer: ptr, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Tool is one tool definition as the server sent it: its bytes, its
// digests, and what was learnt of it when it was parsed. A Tool keeps no
// parse tree (a tree is about the size of the bytes again, and a list is
// mostly tools nobody looks into): Value and Proj parse the bytes anew,
// for the few tools a comparison or a decision looks into.
type Tool struct {
	Name    string // decoded name
	Pointer string // JSON pointer of the tool object in the input

	raw    []byte // the tool object, as it came (a part of what was read)
	digest string // tool_digest
	// fieldSums are the sums of the four field digests (FieldNames
	// order), computed with the tool digest.
	fieldSums [4][32]byte
	// What the parse said of the tool (see the methods of those names).
	shape, paramHeader, ambiguity string
	inexact                       int  // numbers beyond float64 precision in the digested members
	refersOut                     bool // a schema may hold an external reference
	// rest is the sum of the members outside the projection, and
	// inexactAt that of the numbers beyond float64 precision anywhere in
	// the tool, each with its pointer and spelling (zero: none; see
	// Equivalent).
	rest, inexactAt [32]byte
}

// Equivalent reports whether nothing a comparison of t and o looks at can
// differ: the same projection (tool digest), the same members outside it
// (names and canonical values), and the same numbers beyond float64
// precision at the same pointers, spelled alike (the canonical form cannot
// tell them apart). Two equivalent tools need not be parsed again to be
// compared: they have no change.
func (t *Tool) Equivalent(o *Tool) bool {
	return t.digest == o.digest && t.rest == o.rest && t.inexactAt == o.inexactAt
}

// ShapeProblem says how the tool breaks the specification's tool shape (an
// inputSchema that is an object with "type": "object"), or "" when it does
// not.
func (t *Tool) ShapeProblem() string { return t.shape }

func shapeProblem(s jcs.Value) string {
	switch {
	case !s.Valid() || s.Kind() == jcs.Null:
		return "the tool has no inputSchema, which the specification requires"
	case s.Kind() != jcs.Object:
		return "inputSchema is not a JSON object"
	}
	if ty, ok := s.Get("type"); !ok || !ty.StrEqual("object") {
		return `inputSchema does not have "type": "object"`
	}
	return ""
}

// ParamHeaderProblem says how the tool's inputSchema breaks the rules of
// the x-mcp-header annotation (frame.ParamAnnotationProblem), or "" when
// it does not: clients of the 2026-07-28 Streamable HTTP transport must
// exclude such a tool from tools/list.
func (t *Tool) ParamHeaderProblem() string { return t.paramHeader }

// Ambiguity says why the tool object means one thing to mcpdrift and
// another to a client's decoder, or "" when it does not (AmbiguousObject
// with the members clients read of a tool).
func (t *Tool) Ambiguity() string { return t.ambiguity }

// MayReferOut reports whether the tool's input or output schema may hold
// an external reference (SchemaMayReferOut): false means it holds none.
func (t *Tool) MayReferOut() bool { return t.refersOut }

// Raw is the tool object's bytes as the server sent them.
func (t *Tool) Raw() []byte { return t.raw }

// Value parses the tool object's bytes again (they were parsed strictly
// when the tool was read): the zero Value for a zero Tool. Each call is a
// new parse; a caller that looks at a tool more than once keeps it.
func (t *Tool) Value() jcs.Value {
	if len(t.raw) == 0 {
		return jcs.Value{}
	}
	doc, err := jcs.Parse(t.raw)
	if err != nil {
		return jcs.Value{} // not reached: the bytes were parsed when read
	}
	return doc.Root()
}

// Proj is the tool's projection, from a new parse of its bytes (Value).
func (t *Tool) Proj() Projection { return Project(t.Value()) }

// OwnBytes makes each of tools hold bytes that are no part of what it was
// read from: those of the tool of its name in others when they are the
// same bytes, else a copy of its own. What tools were read from (a
// snapshot file) is then held by none of them. Raw is unchanged.
func OwnBytes(tools, others []Tool) {
	by := FirstByName(others)
	for i := range tools {
		t := &tools[i]
		if o := by[t.Name]; o != nil && bytes.Equal(t.raw, o.raw) {
			t.raw = o.raw
		} else {
			t.raw = bytes.Clone(t.raw)
		}
	}
}

// FirstByName maps each tool name of tools to the first tool of that name
// (a list with repeated names is ambiguous; what compares by name takes
// the first).
func FirstByName(tools []Tool) map[string]*Tool {
	m := make(map[string]*Tool, len(tools))
	for i := range tools {
		if _, dup := m[tools[i].Name]; !dup {
			m[tools[i].Name] = &tools[i]
		}
	}
	return m
}

// FieldDigests are the tool's four field digests, computed with its tool
// digest when it was read.
func (t *Tool) FieldDigests() FieldDigests {
	s := digestSums{fieldSum: t.fieldSums}
	return s.fields()
}

// ToolDigest is the tool's tool_digest: the SHA-256 of the JCS bytes of its
// projection, computed once, when the tool is read, so that the record,
// the manifest digest and every comparison use that one computation.
func (t *Tool) ToolDigest() string { return t.digest }

// preimages are scratch buffers for tool and field preimages.
var preimages = sync.Pool{New: func() any { return new([2][]byte) }}

// setDigest computes the tool digest and the four field digests of p.
func (t *Tool) setDigest(p Projection) {
	bp := preimages.Get().(*[2][]byte)
	var s digestSums
	s, bp[0], bp[1] = p.sums(bp[0], bp[1])
	t.digest = s.tool()
	t.fieldSums = s.fieldSum
	if cap(bp[0]) <= 1<<20 && cap(bp[1]) <= 1<<20 {
		preimages.Put(bp)
	}
}

// Input forms recognised by ParseToolList.
const (
	FormJSONRPC   = "jsonrpc-response"
	FormResult    = "result"
	FormPages     = "pages"
	FormToolArray = "tool-array"
	// FormSnapshot is the form of a snapshot's tools (Snapshot.ToolList).
	FormSnapshot = "snapshot"
)

// ToolList is a parsed tools/list observation.
type ToolList struct {
	Form         string
	Tools        []Tool
	Pages        int
	Completeness Completeness
	// Reason explains how Completeness was derived, for people.
	Reason string
	// Invalid lists the tools entries that could not be read (only with
	// ParseOptions.SkipInvalidTools; otherwise they are errors).
	Invalid []InvalidTool
	skip    bool
}

// InvalidTool is a tools entry that is not a readable tool: not an
// object, or without a string name.
type InvalidTool struct {
	Pointer string
	Msg     string
}

// ParseOptions control ParseToolListWith.
type ParseOptions struct {
	// SkipInvalidTools records unreadable tools entries in
	// ToolList.Invalid instead of failing. A live check uses it to report
	// them as conformance findings; artifacts never do.
	SkipInvalidTools bool
}

// ParseToolList reads any of the accepted input forms:
//
//   - a JSON-RPC 2.0 response to tools/list: {"jsonrpc":"2.0","id":..,"result":{"tools":[..]}};
//   - a bare result: {"tools":[..], "nextCursor"?: ".."};
//   - a JSON array of pages (responses or results) in order, optionally
//     interleaved with the tools/list requests that asked for them, which
//     lets the cursor chain be verified from the start;
//   - a bare JSON array of tool objects.
//
// For responses and pages, completeness is derived: complete only when the
// chain starts without a cursor (a file of pages without requests is taken
// to begin at the list's first page, and Reason says so), every page but
// the last has a nextCursor, no cursor repeats, and the last page has none.
// A bare tool array is Unknown: nothing proves it was whole.
func ParseToolList(src []byte) (*ToolList, error) {
	return ParseToolListWith(src, ParseOptions{})
}

// ParseToolListWith is ParseToolList with options.
func ParseToolListWith(src []byte, opt ParseOptions) (*ToolList, error) {
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, err
	}
	return parseToolList(doc, opt)
}

func parseToolList(doc *jcs.Doc, opt ParseOptions) (*ToolList, error) {
	root := doc.Root()
	tl := &ToolList{skip: opt.SkipInvalidTools}
	switch root.Kind() {
	case jcs.Object:
		if id, ok := root.Get("schema"); ok {
			// An artifact (a baseline, an observed record, a snapshot) is
			// never read as a tool list: its "tools" hold digests or need
			// their own checks. ReadTools reads the artifacts.
			what := "an artifact"
			if id.Kind() == jcs.String {
				what = "an artifact with schema " + safetext.Quote(safetext.Clip(id.Str(), 120))
			}
			return nil, inputErr(id, "/schema", "%s, not a tools/list: pass the saved tools/list, or a snapshot or declared baseline where one is accepted", what)
		}
		res, form, _, err := resultOf(root, "")
		if err != nil {
			return nil, err
		}
		tl.Form = form
		ptr := ""
		if form == FormJSONRPC {
			ptr = "/result"
		}
		if err := tl.page(res, ptr); err != nil {
			return nil, err
		}
		tl.Pages = 1
		if c, ok := res.Get("nextCursor"); ok && c.Kind() != jcs.Null {
			tl.Completeness = Partial
			tl.Reason = "the response has a nextCursor: later pages were not observed"
		} else {
			tl.Completeness = Complete
			tl.Reason = "one page without nextCursor; the file is taken to answer a tools/list request without a cursor"
		}
		return tl, nil
	case jcs.Array:
		if root.Len() == 0 {
			tl.Form = FormToolArray
			tl.Completeness = Unknown
			tl.Reason = "an empty tool array: nothing proves the list was whole"
			return tl, nil
		}
		first := root.Index(0)
		if first.Kind() == jcs.Object && isPageLike(first) {
			return tl, tl.pages(root)
		}
		tl.Form = FormToolArray
		tl.Completeness = Unknown
		tl.Reason = "a bare tool array: nothing proves the list was whole"
		if err := tl.addTools(root, "/", true); err != nil {
			return nil, err
		}
		return tl, nil
	}
	return nil, inputErr(root, "", "expected a JSON-RPC response, a tools/list result or an array, found %s", root.Kind())
}

func isPageLike(v jcs.Value) bool {
	if _, ok := v.Get("jsonrpc"); ok {
		return true
	}
	_, hasTools := v.Get("tools")
	_, hasName := v.Get("name")
	return hasTools && !hasName
}

// resultOf returns the tools/list result inside a response or a bare
// result, and the response's id (the zero Value for a bare result). A
// JSON-RPC response must carry an id that is a string or a number: without
// one, or with "id": null (which JSON-RPC 2.0 reserves for an error about a
// request whose id could not be read), it answers no tools/list request.
func resultOf(obj jcs.Value, ptr string) (jcs.Value, string, jcs.Value, error) {
	if v, ok := obj.Get("jsonrpc"); ok {
		if !v.StrEqual("2.0") {
			return jcs.Value{}, "", jcs.Value{}, inputErr(v, ptr+"/jsonrpc", `"jsonrpc" must be "2.0"`)
		}
		if e, ok := obj.Get("error"); ok {
			msg := "a JSON-RPC error response, not a tools/list result"
			if e.Kind() == jcs.Object {
				if c, ok := e.Get("code"); ok && c.Kind() == jcs.Number {
					msg += " (code " + safetext.Clip(string(c.Raw()), 40) + ")"
				}
				if m, ok := e.Get("message"); ok && m.Kind() == jcs.String {
					msg += ": " + safetext.Quote(safetext.Clip(m.Str(), 200))
				}
			}
			return jcs.Value{}, "", jcs.Value{}, inputErr(e, ptr+"/error", "%s", msg)
		}
		if _, ok := obj.Get("method"); ok {
			return jcs.Value{}, "", jcs.Value{}, inputErr(obj, ptr, "a JSON-RPC request or notification, not a response")
		}
		id, err := messageID(obj, ptr, false)
		if err != nil {
			return jcs.Value{}, "", jcs.Value{}, err
		}
		res, ok := obj.Get("result")
		if !ok {
			return jcs.Value{}, "", jcs.Value{}, inputErr(obj, ptr, "JSON-RPC response without a result")
		}
		if res.Kind() != jcs.Object {
			return jcs.Value{}, "", jcs.Value{}, inputErr(res, ptr+"/result", "result must be an object, found %s", res.Kind())
		}
		return res, FormJSONRPC, id, nil
	}
	if _, ok := obj.Get("tools"); ok {
		return obj, FormResult, jcs.Value{}, nil
	}
	return jcs.Value{}, "", jcs.Value{}, inputErr(obj, ptr, `an object that is neither a JSON-RPC response nor a result with "tools"`)
}

// messageID returns the id of the JSON-RPC request or response msg at ptr,
// which must be a string or a number.
func messageID(msg jcs.Value, ptr string, request bool) (jcs.Value, error) {
	id, ok := msg.Get("id")
	switch {
	case !ok && request:
		return jcs.Value{}, inputErr(msg, ptr, "a tools/list request without an id is a notification: no response can answer it")
	case !ok:
		return jcs.Value{}, inputErr(msg, ptr, "a JSON-RPC response without an id answers no request")
	case id.Kind() == jcs.Null && request:
		return jcs.Value{}, inputErr(id, ptr+"/id", `the request's "id" is null: a request id must be a string or a number`)
	case id.Kind() == jcs.Null:
		return jcs.Value{}, inputErr(id, ptr+"/id", `the response's "id" is null, which JSON-RPC 2.0 sends only when the request's id could not be read: it answers no tools/list request`)
	case id.Kind() != jcs.String && id.Kind() != jcs.Number:
		return jcs.Value{}, inputErr(id, ptr+"/id", `"id" must be a string or a number, found %s`, id.Kind())
	}
	return id, nil
}

// idKey identifies a JSON-RPC id by value, as JSON-RPC 2.0 compares them
// ("the same value as the request"): a string by its decoded text, a
// number by its exact mathematical value (1, 1.0 and 1e0 are one id;
// 9007199254740993 and 9007199254740992 are two, although float64 cannot
// tell them apart); a string and a number are never the same id.
func idKey(id jcs.Value) string {
	if id.Kind() == jcs.String {
		return "s" + id.Str()
	}
	return "n" + id.NumberKey()
}

// idText shows an id in a message (IDText).
func idText(id jcs.Value) string { return IDText(id, 60) }

// IDText shows a JSON-RPC id in a message, clipped to about n bytes: a
// number as it is written (its digits, sign, point and exponent), a
// string quoted (safetext.Quote, so that "1" is told from 1 and the id's
// own quotes from the message's), and anything else, which is no valid
// id, as its JSON text quoted. A server's id never stands outside a
// quote: a report that shows quoted spans as code shows it there.
func IDText(id jcs.Value, n int) string {
	switch id.Kind() {
	case jcs.Number:
		return safetext.Escape(safetext.Clip(string(id.Raw()), n))
	case jcs.String:
		return safetext.Quote(safetext.Clip(id.Str(), n))
	}
	return safetext.Quote(safetext.Clip(string(id.Raw()), n))
}

func cursorOf(res jcs.Value, ptr string) (string, bool, error) {
	c, ok := res.Get("nextCursor")
	if !ok || c.Kind() == jcs.Null {
		return "", false, nil
	}
	if c.Kind() != jcs.String {
		return "", false, inputErr(c, ptr+"/nextCursor", "nextCursor must be a string, found %s", c.Kind())
	}
	return c.Str(), true, nil
}

func (tl *ToolList) pages(root jcs.Value) error {
	tl.Form = FormPages
	// A transcript is an array with requests in it: then every response
	// must follow its request and carry its id, from the first page on.
	sawRequests := false
	for i := range root.Len() {
		if _, ok := root.Index(i).Get("method"); ok {
			sawRequests = true
			break
		}
	}
	ch := &pageChain{seen: map[string]bool{}, reqIDs: map[string]string{}, startsClean: true}
	for i := range root.Len() {
		el := root.Index(i)
		ptr := "/" + strconv.Itoa(i)
		if el.Kind() != jcs.Object || !isPageLike(el) {
			return inputErr(el, ptr, "expected a page (a JSON-RPC response or a result with \"tools\"): mixed forms in one array")
		}
		if m, ok := el.Get("method"); ok {
			if err := ch.request(el, m, ptr); err != nil {
				return err
			}
			continue
		}
		res, form, id, err := resultOf(el, ptr)
		if err != nil {
			return err
		}
		if tl.Pages > 0 && !ch.prevHas {
			return inputErr(el, ptr, "page %d follows a page without nextCursor: the list had already ended", tl.Pages+1)
		}
		if sawRequests && !ch.pendingReq {
			return inputErr(el, ptr, "a response without its request in a transcript that has requests")
		}
		if ch.pendingReq {
			if form != FormJSONRPC {
				return inputErr(el, ptr, "a bare result in a transcript answers no request id: every page of a transcript must be a JSON-RPC response")
			}
			if idKey(id) != idKey(ch.reqID) {
				return inputErr(id, ptr+"/id", "the response id %s does not answer the request at %s (id %s)", idText(id), safetext.Quote(ch.reqPtr), idText(ch.reqID))
			}
			if tl.Pages == 0 && ch.reqHas {
				ch.startsClean = false
			}
			if tl.Pages > 0 && (!ch.reqHas || ch.reqCursor != ch.prevCursor) {
				return inputErr(el, ptr, "the request for page %d did not send the previous page's nextCursor", tl.Pages+1)
			}
			ch.pendingReq = false
		}
		resPtr := ptr
		if res != el {
			resPtr = ptr + "/result"
		}
		if err := tl.page(res, resPtr); err != nil {
			return err
		}
		tl.Pages++
		c, has, err := cursorOf(res, resPtr)
		if err != nil {
			return err
		}
		if has {
			if ch.seen[c] {
				ch.cycle = true
			}
			ch.seen[c] = true
		}
		ch.prevCursor, ch.prevHas = c, has
	}
	return ch.end(tl, root, sawRequests)
}

// pageChain is what pages has read of a list's pages: the cursors seen,
// the last page's, and in a transcript the request awaiting its response.
type pageChain struct {
	seen        map[string]bool
	prevCursor  string
	prevHas     bool
	pendingReq  bool
	reqCursor   string
	reqHas      bool
	reqID       jcs.Value
	reqPtr      string
	reqIDs      map[string]string // id key → pointer of the request
	startsClean bool
	cycle       bool
}

// request reads a tools/list request el (its method m) of a transcript.
func (ch *pageChain) request(el, m jcs.Value, ptr string) error {
	if v, ok := el.Get("jsonrpc"); !ok || !v.StrEqual("2.0") {
		return inputErr(el, ptr+"/jsonrpc", `a request's "jsonrpc" must be "2.0"`)
	}
	if !m.StrEqual("tools/list") {
		return inputErr(m, ptr+"/method", "only tools/list requests may appear in a page transcript")
	}
	if ch.pendingReq {
		return inputErr(el, ptr, "two requests without a response between them")
	}
	id, err := messageID(el, ptr, true)
	if err != nil {
		return err
	}
	k := idKey(id)
	if first, dup := ch.reqIDs[k]; dup {
		return inputErr(id, ptr+"/id", "the request repeats the id of the request at %s: its responses cannot be told apart", safetext.Quote(first))
	}
	ch.reqIDs[k] = ptr
	ch.pendingReq = true
	ch.reqCursor, ch.reqHas, ch.reqID, ch.reqPtr = "", false, id, ptr
	if params, ok := el.Get("params"); ok {
		if params.Kind() != jcs.Object {
			return inputErr(params, ptr+"/params", "a tools/list request's params must be an object, found %s", params.Kind())
		}
		if c, ok := params.Get("cursor"); ok && c.Kind() != jcs.Null {
			if c.Kind() != jcs.String {
				return inputErr(c, ptr+"/params/cursor", "cursor must be a string")
			}
			ch.reqCursor, ch.reqHas = c.Str(), true
		}
	}
	return nil
}

// end says how complete the list of pages is, and why.
func (ch *pageChain) end(tl *ToolList, root jcs.Value, sawRequests bool) error {
	switch {
	case tl.Pages == 0:
		return inputErr(root, "", "a transcript with requests but no response")
	case ch.pendingReq:
		tl.Completeness = Partial
		tl.Reason = "the last request has no response"
	case ch.cycle:
		tl.Completeness = Partial
		tl.Reason = "a nextCursor repeated: the server's cursor chain cycles"
	case ch.prevHas:
		tl.Completeness = Partial
		tl.Reason = "the last page has a nextCursor: later pages were not observed"
	case !ch.startsClean:
		tl.Completeness = Partial
		tl.Reason = "the first request carried a cursor: the chain did not start at the first page"
	case sawRequests:
		tl.Completeness = Complete
		tl.Reason = fmt.Sprintf("%d pages; the transcript starts without a cursor and ends without nextCursor", tl.Pages)
	default:
		tl.Completeness = Complete
		tl.Reason = fmt.Sprintf("%d pages ending without nextCursor; the file is taken to begin at the list's first page", tl.Pages)
	}
	return nil
}

func (tl *ToolList) page(res jcs.Value, ptr string) error {
	tools, ok := res.Get("tools")
	if !ok {
		return inputErr(res, ptr, `result has no "tools" array`)
	}
	if tools.Kind() != jcs.Array {
		return inputErr(tools, ptr+"/tools", `"tools" must be an array, found %s`, tools.Kind())
	}
	if _, _, err := cursorOf(res, ptr); err != nil {
		return err
	}
	return tl.addTools(tools, ptr+"/tools/", false)
}

// addTools reads the tool entries of arr (pointers prefix + index), each
// projected and digested on its own, spread over the CPUs when there are
// many; the entries are then taken in order, so the first unreadable one
// is the error (or the first Invalid) it is one at a time. In a bare tool
// array (bare), a page or message among the tools is always an error.
func (tl *ToolList) addTools(arr jcs.Value, prefix string, bare bool) error {
	n := arr.Len()
	from := len(tl.Tools)
	if from == 0 {
		tl.Tools = make([]Tool, n) // one page, or the first: exactly its tools
	} else if n > cap(tl.Tools)-from {
		// By doubling, not by slices.Grow's 1.25x past 256 tools: a
		// listing of many pages copies its tools about twice, not about
		// four times over.
		g := make([]Tool, from, max(from+n, 2*cap(tl.Tools)))
		copy(g, tl.Tools)
		tl.Tools = g
	}
	tl.Tools = tl.Tools[:from+n]
	read := tl.Tools[from:] // compacted below
	errs := make([]error, n)
	mixed := make([]bool, n)
	par.Range(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v, p := arr.Index(i), prefix+strconv.Itoa(i)
			switch {
			case bare && v.Kind() == jcs.Object && isPageLike(v):
				errs[i], mixed[i] = inputErr(v, p, "a page or JSON-RPC message inside a bare tool array (mixed forms)"), true
			case v.Kind() != jcs.Object:
				errs[i] = inputErr(v, p, "a tools entry must be an object, found %s", v.Kind())
			default:
				read[i], errs[i] = ToolFromValue(v, p)
			}
		}
	})
	j := from
	for i := range read {
		if err := errs[i]; err != nil {
			var ie *InputError
			if tl.skip && !mixed[i] && errors.As(err, &ie) {
				tl.Invalid = append(tl.Invalid, InvalidTool{Pointer: ie.Pointer, Msg: ie.Msg})
				continue
			}
			tl.Tools = tl.Tools[:from]
			return err
		}
		tl.Tools[j] = read[i] // j <= from+i: never ahead of what is read
		j++
	}
	clear(tl.Tools[j:])
	tl.Tools = tl.Tools[:j]
	return nil
}

// ToolFromValue reads one tool object: its name, its projection and
// digests, and what its parse says (ShapeProblem, ParamHeaderProblem,
// Ambiguity, whether it holds inexact numbers). The MCP wire spellings
// inputSchema/outputSchema are used; when a tool lacks them, the
// snake_case spellings input_schema/output_schema are read instead (as the
// reference implementation does, so projection-form fixtures digest
// identically). An absent field projects to null. title, icons, _meta,
// execution and unknown fields stay out of the projection.
func ToolFromValue(v jcs.Value, ptr string) (Tool, error) {
	n, err := toolName(v, ptr)
	if err != nil {
		return Tool{}, err
	}
	p := Project(v)
	t := Tool{Name: n, Pointer: ptr, raw: v.Raw(),
		shape: shapeProblem(p.InputSchema), paramHeader: frame.ParamAnnotationProblem(p.InputSchema),
		ambiguity: AmbiguousObject(v, toolMembers),
		refersOut: SchemaMayReferOut(p.InputSchema) || SchemaMayReferOut(p.OutputSchema),
		rest:      restSum(v)}
	t.inexact, t.inexactAt = inexactFacts(v, p)
	t.setDigest(p)
	return t, nil
}

// ProjectedMembers are the members of a tool object the projection reads
// (of a pair of spellings, the one it does not read is in neither the
// projection nor restSum, as schemadiff's member comparison skips both).
var ProjectedMembers = map[string]bool{
	"name": true, "description": true, "inputSchema": true, "input_schema": true,
	"outputSchema": true, "output_schema": true, "annotations": true,
}

// restSum is the SHA-256 of the tool object's members outside
// ProjectedMembers: each name and canonical value, in name order.
func restSum(v jcs.Value) [32]byte {
	type member struct {
		name string
		v    jcs.Value
	}
	var rest []member
	for i := range v.Len() {
		if k, x := v.Member(i); !ProjectedMembers[k.Str()] {
			rest = append(rest, member{k.Str(), x})
		}
	}
	slices.SortFunc(rest, func(a, b member) int { return strings.Compare(a.name, b.name) })
	var b []byte
	for _, m := range rest {
		b = jcs.AppendString(b, m.name)
		b = m.v.AppendCanonical(append(b, ':'))
		b = append(b, ',')
	}
	return sha256.Sum256(b)
}

// toolName is the name of the tool object v, or why it has none.
func toolName(v jcs.Value, ptr string) (string, error) {
	name, ok := v.Get("name")
	if !ok {
		return "", inputErr(v, ptr, "a tool without a name")
	}
	if name.Kind() != jcs.String {
		return "", inputErr(name, ptr+"/name", "a tool name must be a string, found %s", name.Kind())
	}
	n := name.Str()
	if n == "" {
		return "", inputErr(name, ptr+"/name", "a tool name must not be empty")
	}
	return n, nil
}

// NameDigestOf is the name and tool digest of the tool object v, as
// ToolFromValue reads them, without the rest of what it learns (nor the
// field digests): for a listing compared by name and digest alone.
func NameDigestOf(v jcs.Value, ptr string) (NameDigest, error) {
	n, err := toolName(v, ptr)
	if err != nil {
		return NameDigest{}, err
	}
	bp := preimages.Get().(*[2][]byte)
	defer preimages.Put(bp)
	bp[0], _ = Project(v).toolPreimage(bp[0])
	d := formatDigest(sha256.Sum256(bp[0]))
	if cap(bp[0]) > 1<<20 {
		bp[0] = nil
	}
	return NameDigest{Name: n, ToolDigest: d}, nil
}

// Project is the projection of a tool object.
func Project(v jcs.Value) Projection {
	var p Projection
	var ok bool
	p.Name, _ = v.Get("name")
	p.Description, _ = v.Get("description")
	p.Annotations, _ = v.Get("annotations")
	if p.InputSchema, ok = v.Get("inputSchema"); !ok {
		p.InputSchema, _ = v.Get("input_schema")
	}
	if p.OutputSchema, ok = v.Get("outputSchema"); !ok {
		p.OutputSchema, _ = v.Get("output_schema")
	}
	return p
}

// IsInputError reports whether err is a problem with the input document
// (as opposed to an I/O failure).
func IsInputError(err error) bool {
	var ie *InputError
	var je *jcs.Error
	return errors.As(err, &ie) || errors.As(err, &je)
}
