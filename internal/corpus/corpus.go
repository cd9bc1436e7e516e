// Package corpus generates deterministic, realistic MCP tools/list data for
// benchmarks and tests.
//
// The output imitates what MCP servers put on the wire: tool objects with a
// name, title, description, JSON Schema inputSchema (2020-12 or draft-07,
// with nested objects, arrays, $defs and internal $ref, anyOf/oneOf, enums,
// defaults, formats, patterns and numeric bounds), and optionally an
// outputSchema, annotations, _meta and icons. Each tool is written in the
// style of one server runtime:
//
//   - node: raw UTF-8, only the mandatory escapes (JSON.stringify);
//   - go: encoding/json's HTML-safe escapes (\u003c \u003e \u0026) and
//     \u2028 \u2029;
//   - python: ensure_ascii (every non-ASCII character as \uXXXX, surrogate
//     pairs for emoji), pydantic-style titles and anyOf-with-null optionals;
//   - php: json_encode defaults (\/ and \uXXXX for non-ASCII).
//
// Member order inside every tool object is shuffled pseudo-randomly (the
// JSON-RPC envelopes keep the jsonrpc, id, result order), and some
// numbers are written in non-canonical forms (1E3, 4.50, 2e-3, 0.0,
// 9223372036854775807, 1.7976931348623157e308), so a canonicalizer has
// real sorting, unescaping and number formatting to do. Descriptions carry
// markdown, <IMPORTANT> blocks, quotes, newlines, tabs, U+2028, and
// non-ASCII text (é, 日本語, emoji, zero-width spaces, NBSP).
//
// Output depends only on the arguments: the generator is math/rand/v2's
// PCG seeded from seed, and no maps are iterated. Tool i is the same for
// every n > i, so Tools(10, s) is a prefix of Tools(1000, s).
//
// Tool sizes vary widely, from a 0.5 KB one-parameter tool to 15 KB tools
// with $defs and grouped options (median 5.6 KB, 90th percentile 9.3 KB,
// mean 5.8 KB): heavier than most real servers' tools, so that 172 tools
// make the 1 MB benchmark document. For seed 1:
//
//	Tools(100, 1)    =    608,821 bytes (0.61 MB)
//	Tools(172, 1)    =  1,003,375 bytes (1.00 MB, the standard benchmark document)
//	Tools(1000, 1)   =  5,793,324 bytes (5.79 MB)
//	Tools(1720, 1)   =  9,938,060 bytes (9.94 MB)
//	Tools(10000, 1)  = 58,563,557 bytes (58.6 MB)
//
// TestSizes checks these figures exactly, so a change to the generator
// (which changes every benchmark input) is a deliberate one.
package corpus

import (
	"encoding/base64"
	"math/rand/v2"
	"strconv"
)

// Tools returns a compact JSON array of n MCP tool objects generated from
// seed. Tool names are unique within the array.
func Tools(n int, seed uint64) []byte {
	g := newGen(seed)
	buf := make([]byte, 0, n*6200+2)
	buf = append(buf, '[')
	for i := range n {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = g.appendTool(buf)
	}
	return append(buf, ']')
}

// ToolsListResponse returns the JSON-RPC 2.0 response to tools/list carrying
// Tools(n, seed): {"jsonrpc":"2.0","id":1,"result":{"tools":[...]}}.
func ToolsListResponse(n int, seed uint64) []byte {
	buf := make([]byte, 0, n*6200+64)
	buf = append(buf, `{"jsonrpc":"2.0","id":1,"result":{"tools":`...)
	buf = append(buf, Tools(n, seed)...)
	return append(buf, "}}"...)
}

// Pages returns a JSON array of JSON-RPC 2.0 tools/list responses that
// together carry the same n tools as Tools(n, seed), pageSize per page. Every
// page but the last has result.nextCursor; request ids count from 1. A
// pageSize below 1 puts everything on one page; n == 0 gives one empty page.
func Pages(n, pageSize int, seed uint64) []byte {
	if pageSize < 1 {
		pageSize = max(n, 1)
	}
	g := newGen(seed)
	buf := make([]byte, 0, n*6200+64)
	buf = append(buf, '[')
	for page, done := 0, 0; page == 0 || done < n; page++ {
		if page > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"jsonrpc":"2.0","id":`...)
		buf = strconv.AppendInt(buf, int64(page+1), 10)
		buf = append(buf, `,"result":{"tools":[`...)
		end := min(done+pageSize, n)
		for i := done; i < end; i++ {
			if i > done {
				buf = append(buf, ',')
			}
			buf = g.appendTool(buf)
		}
		buf = append(buf, ']')
		done = end
		if done < n {
			cursor := "v1:offset=" + strconv.Itoa(done) + ";seed=" + strconv.FormatUint(seed, 16)
			buf = append(buf, `,"nextCursor":"`...)
			buf = base64.StdEncoding.AppendEncode(buf, []byte(cursor))
			buf = append(buf, '"')
		}
		buf = append(buf, "}}"...)
	}
	return append(buf, ']')
}

// LeanTools returns a compact JSON array of n tools the size of a typical
// real server's (about 1.7 KB each, so 10,000 tools make 17 MB): the same
// generator, styles, escapes and nested schemas as Tools, with fewer
// parameters (2 to 7, and at most one nested group of 3 to 6), shorter
// descriptions, output schemas on 30% of the tools, and no icons or _meta.
// It is the listing of the large-server benchmarks. Tool names are unique
// within the array. For seed 1:
//
//	LeanTools(100, 1)     =     181,820 bytes
//	LeanTools(1000, 1)    =   1,700,010 bytes
//	LeanTools(10000, 1)   =  17,070,788 bytes (17.1 MB)
//	LeanTools(100000, 1)  = 172,094,506 bytes (172 MB)
func LeanTools(n int, seed uint64) []byte {
	g := newGen(seed)
	g.lean = true
	buf := make([]byte, 0, n*1700+2)
	buf = append(buf, '[')
	for i := range n {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = g.appendTool(buf)
	}
	return append(buf, ']')
}

// gen holds the state carried from one tool to the next.
type gen struct {
	lean  bool // LeanTools: smaller tools
	r     *rand.Rand
	used  map[string]bool // tool names handed out (lookups only)
	style style           // of the tool being generated
	w     writer
}

func newGen(seed uint64) *gen {
	r := rand.New(rand.NewPCG(seed, seed^0x6d63706472696674)) // "mcpdrift"
	return &gen{r: r, used: make(map[string]bool), w: writer{r: r}}
}

// appendTool generates the next tool and appends its JSON to buf.
func (g *gen) appendTool(buf []byte) []byte {
	t := g.tool()
	g.w.style = g.style
	g.w.buf = buf
	g.w.value(t)
	buf = g.w.buf
	g.w.buf = nil
	return buf
}

// Values of the tree the generator builds before writing it out.
type (
	member struct {
		k string
		v any
	}
	object []member
	array  []any
	// number is a JSON number literal, written exactly as given.
	number string
	// skipT marks an optional member left out (see obj).
	skipT struct{}
)

var skip = skipT{}

// obj builds an object from alternating names and values, leaving out
// members whose value is skip.
func obj(kv ...any) object {
	o := make(object, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		if _, ok := kv[i+1].(skipT); ok {
			continue
		}
		o = append(o, member{kv[i].(string), kv[i+1]})
	}
	return o
}

// set replaces the member named k, or adds it.
func (o *object) set(k string, v any) {
	for i := range *o {
		if (*o)[i].k == k {
			(*o)[i].v = v
			return
		}
	}
	*o = append(*o, member{k, v})
}

// get returns the value of the member named k, or nil.
func (o object) get(k string) any {
	for _, m := range o {
		if m.k == k {
			return m.v
		}
	}
	return nil
}

// del removes the member named k.
func (o *object) del(k string) {
	for i := range *o {
		if (*o)[i].k == k {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

func strs(ss ...string) array {
	a := make(array, len(ss))
	for i, s := range ss {
		a[i] = s
	}
	return a
}

// Random helpers.

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }
func (g *gen) intn(n int) int        { return g.r.IntN(n) }
func (g *gen) between(lo, hi int) int {
	return lo + g.r.IntN(hi-lo+1)
}
func pick[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

// maybe returns v with probability p, else skip.
func (g *gen) maybe(p float64, v any) any {
	if g.chance(p) {
		return v
	}
	return skip
}

// sample returns k distinct elements of xs in random order.
func sample[T any](g *gen, xs []T, k int) []T {
	k = min(k, len(xs))
	idx := g.r.Perm(len(xs))[:k]
	out := make([]T, k)
	for i, j := range idx {
		out[i] = xs[j]
	}
	return out
}
