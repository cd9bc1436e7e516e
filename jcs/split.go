package jcs

import (
	"bytes"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Parallel parsing of large texts.
//
// Parse reads a large text (parallelMin bytes, 4 MiB, or more) on
// several CPUs without giving up any of the serial parse's results: the main parser
// still reads the whole text in order and stays the only judge of it, and
// helpers only offer it trees it may take instead of reading a stretch
// itself.
//
// Helper i (of K-1, K = GOMAXPROCS up to maxGroups) guesses a point
// about i/K of the way through the text where an array's element begins:
// it counts the unescaped quotes before the guess (which says whether the
// guess is inside a string, if the text is valid), then looks forward at
// most splitWindow bytes for the comma, outside strings, of the outermost
// array it can see (a comma followed by anything but a member name). From
// the element after that comma it parses the rest of that array, element
// by element with the serial parser's own code, until the array's ']' or
// the next helper's guess, into trees of its own: its own stretch of the
// node, kind and kid arrays presized for the whole text (its share of the
// text), so that the trees are moved, not copied to new memory, and the
// parse needs no memory beyond the serial parse's.
//
// When the main parser, at the top of an array's loop (after a ',' and
// whitespace), stands exactly on a helper's guess, everything the serial
// parse would do from there up to the helper's stop is what the helper
// did: the same code from the same position of the same bytes, which
// depends on nothing parsed before but the depth. It waits for the
// helper, and if the helper succeeded and its deepest nesting plus the
// array's depth stays within MaxDepth, appends the helper's trees with
// their indices moved (splice) and goes on from where the helper stopped.
// Otherwise (the helper failed, was too deep, or the main parser never
// stands on the guess: a wrong guess, an invalid text) it reads that
// stretch itself. So the tree is identical to the serial parse's, array
// for array, and every error is the serial parse's own: a helper's error is
// never reported.

// parallelMin is the smallest text Parse reads on several CPUs; tests
// lower it. BenchmarkParseParallel on 2 CPUs shared with other jobs: 1 MB
// no faster (the quote count and the splice cost what the second CPU
// saves), 4.4 MB 1.2x, 8.5 MB 1.3x, 34 MB 1.5-1.6x.
var parallelMin = 4 << 20

// parallelGroups, when positive, overrides GOMAXPROCS as the number of
// parts (tests use it to exercise more helpers than the machine has CPUs).
var parallelGroups = 0

// splitWait makes the main parser wait for a helper's guess rather than
// go on without it, each helper wait for the next one's guess (its stop),
// and no helper be cancelled: tests of small texts then use the helpers,
// and a fuzzed input covers the same code every time it runs.
var splitWait = false

// splitSync makes the helpers do their work one after the other before
// the main parser starts, with no goroutine: what the fuzz target runs,
// so that an input covers the same code every time (the fuzzer's
// minimizer needs that) while the tests above cover the concurrency.
var splitSync = false

// splices counts the helpers' results taken, passes the helpers passed
// over (tests check that the parallel path ran).
var splices, passes atomic.Int64

// maxGroups bounds the helpers of one parse.
const maxGroups = 8

// splitWindow is how far past its point a helper looks for an array's
// comma. Elements of the arrays worth splitting (the tools of a listing)
// are a few kilobytes; the window bounds the serial look-ahead on a text
// with none. Tests shrink it.
var splitWindow = 1 << 20

// Values of group.q before and without a guess.
const (
	qUnknown = -2 // not yet guessed
	qNone    = -1 // no guess: no array comma found
)

// splitter is the main parser's view of its helpers.
type splitter struct {
	groups []*group
	next   int // the first group the main parser has not passed or used
	wg     sync.WaitGroup

	// The arrays presized for the whole text. The main parser appends to
	// the front of each, group i to its own stretch (from its base up to
	// the next group's), each slice's capacity ending where the next one's
	// stretch begins, so that none writes into another's: one that needs
	// more moves to an array of its own. Taking a group's trees is then a
	// move within the array, pages already touched, and the helpers need
	// no memory beyond the serial parse's.
	nodes []node
	kinds []uint8
	kids  []int32
}

// group is one helper: its guess and, once done is closed, its result.
type group struct {
	q       atomic.Int64  // where its elements start, or qUnknown, qNone
	cancel  atomic.Bool   // the main parser no longer needs it
	guessed chan struct{} // closed once q is known
	done    chan struct{}

	from, to int // the stretch of the text it is meant for
	nodeBase int // its stretch of the nodes and kinds arrays starts here,
	kidsBase int // of the kids array here
	nodeEnd  int // and ends here, and
	kidsEnd  int // here

	ok     bool   // it parsed elements from q up to end
	closed bool   // end is just past the array's ']' (else it is the next group's q)
	end    int    // where it stopped
	p      parser // its trees; p.stack holds the elements' node indices
}

// startSplit starts the helpers of a parse of p.src and makes room for
// the trees, or reports that there are none to start (a single CPU).
func (p *parser) startSplit() bool {
	k := parallelGroups
	if k <= 0 {
		k = runtime.GOMAXPROCS(0)
	}
	k = min(k, maxGroups)
	if k < 2 || len(p.src) == 0 {
		return false
	}
	sp := &splitter{groups: make([]*group, k-1)}
	n := len(p.src)
	// Room for the whole text, as presize gives, but as many kids as
	// nodes, so that a stretch of the kids fits its part of the text too.
	cn := n/12 + 4
	sp.nodes = make([]node, cn)
	sp.kinds = make([]uint8, cn)
	sp.kids = make([]int32, cn)
	for i := range sp.groups {
		// Helpers start late (the quote count): each guesses 4% of a
		// part further on than an equal split, so that the main parser,
		// which also splices, does not wait for them.
		g := &group{done: make(chan struct{}), guessed: make(chan struct{}), from: (i+1)*n/k + n/(25*k), to: (i+2)*n/k + n/(25*k)}
		// Its stretch of the arrays is its share of the text.
		g.nodeBase, g.nodeEnd = int(int64(cn)*int64(g.from)/int64(n)), min(int(int64(cn)*int64(g.to)/int64(n)), cn)
		if i == k-2 {
			g.nodeEnd = cn
		}
		g.kidsBase, g.kidsEnd = g.nodeBase, g.nodeEnd
		g.q.Store(qUnknown)
		sp.groups[i] = g
	}
	first := sp.groups[0].nodeBase
	p.nodes, p.kinds, p.kids = sp.nodes[:0:first], sp.kinds[:0:first], sp.kids[:0:first]
	p.sp = sp
	p.splitAt = 0
	if splitSync {
		sp.runInOrder(p.src)
		return true
	}
	sp.wg.Add(1)
	go sp.run(p.src, 0, 0, false, false)
	return true
}

// stopSplit cancels the helpers and waits for them: Parse returns only
// when nothing reads src any more.
func (p *parser) stopSplit() {
	sp := p.sp
	if sp == nil {
		return
	}
	for _, g := range sp.groups {
		g.cancel.Store(!splitWait)
	}
	sp.wg.Wait()
	p.sp = nil
}

// run is helper i: it carries the quote count from pos (with the string
// state in, esc) to its guess, starts helper i+1 from there, then guesses
// and parses.
func (sp *splitter) run(src []byte, i, pos int, in, esc bool) {
	defer sp.wg.Done()
	g := sp.groups[i]
	defer close(g.done)
	in, esc, ok := quoteState(src, pos, g.from, in, esc, &g.cancel)
	if ok && i+1 < len(sp.groups) {
		sp.wg.Add(1)
		go sp.run(src, i+1, g.from, in, esc)
	}
	if q := sp.guess(src, i, in, esc, ok); q >= 0 {
		if splitWait && i+1 < len(sp.groups) {
			<-sp.groups[i+1].guessed
		}
		sp.parse(src, i, q)
	}
}

// runInOrder does the helpers' work one after the other, before the main
// parser starts (splitSync).
func (sp *splitter) runInOrder(src []byte) {
	in, esc, pos := false, false, 0
	qs := make([]int, len(sp.groups))
	for i, g := range sp.groups {
		var ok bool
		in, esc, ok = quoteState(src, pos, g.from, in, esc, &g.cancel)
		qs[i], pos = sp.guess(src, i, in, esc, ok), g.from
	}
	for i, g := range sp.groups {
		if qs[i] >= 0 {
			sp.parse(src, i, qs[i])
		}
		close(g.done)
	}
}

// guess publishes group i's guess from its from with the string state
// there, and returns it (-1 for none, or when !ok: cancelled).
func (sp *splitter) guess(src []byte, i int, in, esc, ok bool) int {
	g := sp.groups[i]
	q := qNone
	if ok {
		q = guess(src, g.from, in, esc)
	}
	g.q.Store(int64(q))
	close(g.guessed)
	return q
}

// parse is group i's parse from q into its stretch of the arrays.
func (sp *splitter) parse(src []byte, i, q int) {
	g := sp.groups[i]
	var stop *group
	if i+1 < len(sp.groups) {
		stop = sp.groups[i+1]
	}
	p := &g.p
	p.nodes = sp.nodes[g.nodeBase:g.nodeBase:g.nodeEnd]
	p.kinds = sp.kinds[g.nodeBase:g.nodeBase:g.nodeEnd]
	p.kids = sp.kids[g.kidsBase:g.kidsBase:g.kidsEnd]
	g.parse(src, q, stop)
}

// guess returns where an element of the outermost array seen within
// splitWindow bytes after pos begins (just after its comma and
// whitespace), or -1. in and esc are the string state at pos.
func guess(src []byte, pos int, in, esc bool) int {
	i := pos
	if esc {
		i++
	}
	if in {
		i = stringEnd(src, i)
	}
	limit := min(len(src), pos+splitWindow)
	depth, best, q := 0, math.MaxInt, -1
	for i < limit {
		switch src[i] {
		case '"':
			i = stringEnd(src, i+1)
			continue
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth < best {
				j := skipSpace(src, i+1)
				if j < len(src) && !isMemberName(src, j) {
					best, q = depth, j
				}
			}
		}
		i++
	}
	return q
}

// stringEnd returns the index just past the quote that closes the string
// whose body starts at i, or len(src).
func stringEnd(src []byte, i int) int {
	for {
		i = plainRun(src, i)
		if i >= len(src) {
			return i
		}
		switch src[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
		default:
			i++
		}
	}
}

func skipSpace(src []byte, i int) int {
	for i < len(src) {
		switch src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// isMemberName reports whether src[j:] starts with a string followed by
// ':' (a comma before it separates object members).
func isMemberName(src []byte, j int) bool {
	if src[j] != '"' {
		return false
	}
	k := skipSpace(src, stringEnd(src, j+1))
	return k < len(src) && src[k] == ':'
}

// parse is the helper's part of an array's loop: elements from q, each
// followed by ',' and whitespace (stopping where the next group's guess
// is) or by the array's ']'. Element values are read at depth 0, so
// p.deep is the nesting below the array.
func (g *group) parse(src []byte, q int, stop *group) {
	p := &g.p
	p.src = src
	p.pos = q
	for !g.cancel.Load() {
		c, err := p.value(0)
		if err != nil {
			return
		}
		p.stack = append(p.stack, c)
		p.skipWS()
		if p.pos >= len(src) {
			return
		}
		switch src[p.pos] {
		case ',':
			p.pos++
			p.skipWS()
			if stop != nil && int64(p.pos) == stop.q.Load() {
				g.ok, g.end = true, p.pos
				return
			}
		case ']':
			p.pos++
			g.ok, g.closed, g.end = true, true, p.pos
			return
		default:
			return
		}
	}
}

// splice is called at the top of the loop of an array at depth (after
// whitespace) when p.pos has reached p.splitAt. It takes the trees of
// every helper whose guess is p.pos, one after the other, and returns how
// many elements they added and whether the last one read the array's
// ']'; p.pos is then where they stopped.
func (p *parser) splice(depth int) (added int, closed bool) {
	sp := p.sp
	for sp.next < len(sp.groups) {
		g := sp.groups[sp.next]
		q := int(g.q.Load())
		switch {
		case q == qUnknown:
			if splitWait {
				<-g.guessed
				continue
			}
			p.splitAt = p.pos + 1 // look again further on
			return added, false
		case q < p.pos:
			passes.Add(1)
			// Passed (or none): not needed. It is waited for, cancelled,
			// because taking a later group's trees may move them over
			// its stretch of the arrays.
			g.cancel.Store(!splitWait)
			<-g.done
			sp.next++
			continue
		case q > p.pos:
			p.splitAt = q
			return added, false
		}
		<-g.done
		sp.next++
		gp := &g.p
		if !g.ok || depth+gp.deep > MaxDepth {
			g.p = parser{}
			continue // read it here, and so meet the error
		}
		added += len(gp.stack)
		p.appendTrees(g)
		splices.Add(1)
		p.pos = g.end
		g.p = parser{}
		if g.closed {
			p.splitAt = 0 // the next groups are looked at afresh
			return added, true
		}
	}
	p.splitAt = math.MaxInt
	return added, false
}

// appendTrees appends the nodes group g parsed, and its elements to
// p.stack, moving every index into p's slices: kids' child entries by the
// nodes before, a container's x by the kids before, an escaped string's by
// the escs before (and its sbuf offset by the sbuf before), a float's by
// the floats before. The result is what p would hold had it parsed them.
// Where both still use the shared arrays, the group's stretch is moved
// down to p's end; the indices of a large group are moved half by another
// goroutine.
func (p *parser) appendTrees(g *group) {
	sp, gp := p.sp, &g.p
	nodeOff, kidsOff := len(p.nodes), len(p.kids)
	escOff := int32(len(p.escs))
	fltOff := int32(len(p.floats))
	sbufOff := int32(len(p.sbuf))
	// p may go on up to the next group's stretch.
	nodeCap, kidsCap := len(sp.nodes), len(sp.kids)
	if i := slices.Index(sp.groups, g); i+1 < len(sp.groups) {
		nodeCap, kidsCap = sp.groups[i+1].nodeBase, sp.groups[i+1].kidsBase
	}
	nn := len(gp.nodes)
	var wg sync.WaitGroup
	big := nn >= 1<<16
	if big {
		wg.Go(func() { p.nodes = join(p.nodes, gp.nodes, sp.nodes, nodeCap) })
	} else {
		p.nodes = join(p.nodes, gp.nodes, sp.nodes, nodeCap)
	}
	p.kinds = join(p.kinds, gp.kinds, sp.kinds, nodeCap)
	p.kids = join(p.kids, gp.kids, sp.kids, kidsCap)
	wg.Wait()

	fix := func(lo, hi int) {
		ns, ks := p.nodes[nodeOff+lo:nodeOff+hi], p.kinds[nodeOff+lo:nodeOff+hi]
		for i, k := range ks {
			switch Kind(k & kindMask) {
			case Array, Object:
				x := int(ns[i].x) + kidsOff
				ch := p.kids[x+2 : x+2+int(p.kids[x])]
				for j := range ch {
					ch[j] += int32(nodeOff)
				}
				ns[i].x = int32(x)
			case String:
				if k&flagEscaped != 0 {
					ns[i].x += escOff
				}
			case Number:
				if k&flagNumFloat != 0 {
					ns[i].x += fltOff
				}
			}
		}
	}
	half := 0
	if big {
		half = nn / 2
		wg.Go(func() { fix(0, half) })
	}
	fix(half, nn)
	p.escs = growDoubling(p.escs, len(gp.escs))
	for _, e := range gp.escs {
		e.off += sbufOff
		p.escs = append(p.escs, e)
	}
	p.floats = append(growDoubling(p.floats, len(gp.floats)), gp.floats...)
	p.sbuf = append(growDoubling(p.sbuf, len(gp.sbuf)), gp.sbuf...)
	p.stack = growDoubling(p.stack, len(gp.stack))
	for _, c := range gp.stack {
		p.stack = append(p.stack, c+int32(nodeOff))
	}
	wg.Wait()
}

// join returns dst followed by src. When dst is still the front of the
// shared array whole (its own slice stopping short of src's stretch), src
// is moved down within whole and the result's capacity ends at capTo;
// otherwise src is appended.
func join[T any](dst, src, whole []T, capTo int) []T {
	if len(whole) > 0 && unsafe.SliceData(dst) == unsafe.SliceData(whole) && len(dst)+len(src) <= capTo {
		out := whole[: len(dst)+len(src) : capTo]
		copy(out[len(dst):], src)
		return out
	}
	return append(dst, src...)
}

// quoteState scans src[pos:to] from the string state (in: inside a string,
// esc: the byte at pos is escaped) and returns the state at to: between
// backslashes (each escapes the byte after it) it counts quotes with
// bytes.Count. ok is false when cancelled.
func quoteState(src []byte, pos, to int, in, esc bool, cancel *atomic.Bool) (bool, bool, bool) {
	i := pos
	if esc {
		if i >= to {
			return in, esc, true
		}
		i++
	}
	for i < to {
		if cancel.Load() {
			return in, false, false
		}
		chunk := min(to, i+1<<20)
		for i < chunk {
			j := bytes.IndexByte(src[i:chunk], '\\')
			if j < 0 {
				if bytes.Count(src[i:chunk], quote)&1 != 0 {
					in = !in
				}
				i = chunk
				break
			}
			if bytes.Count(src[i:i+j], quote)&1 != 0 {
				in = !in
			}
			i += j + 2
		}
	}
	// i is to, or to+1 when the byte at to is escaped.
	return in, i > to, true
}

var quote = []byte{'"'}
