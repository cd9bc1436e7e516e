package schemadiff

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// Matching the branches of two compositions as sets (matchAlts): by equal
// normal forms, as sets of values (valueMatch), then by the best trial
// diff or a cheap similarity, bounded; what is left unmatched is added or
// removed (unmatched).

type schTrial struct {
	cost int
	out  []Change
}

type schTrialKey struct {
	schPairKey
	outerO, outerN int // offset of the innermost outer layer, -1 none
}

func schOuterKey(x schNode) int {
	if len(x.outer) == 0 {
		return -1
	}
	return schOff(x.outer[len(x.outer)-1].v)
}

// Bounds of branch matching. Branches are first matched by equal normal
// forms (validation only), in linear time. Of the rest, pairs whose types
// can meet are candidates; with at most schMaxTrialPairs candidate pairs,
// each is diffed (a trial, memoised, charged to the work budget) and pairs
// are chosen greedily by the trial that finds the least (records near the
// branches' roots weigh more than deep ones); with at most
// schMaxScoredPairs, they are chosen by a cheap similarity (shared
// keywords and property names) instead; beyond that none are paired. A
// branch left unpaired is reported added or removed, so past the caps an
// edited branch shows as one removed and one added: more records, never
// fewer.
const (
	schMaxTrialPairs  = 64
	schMaxScoredPairs = 4096
)

// matchAlts compares two sets of alternatives (anyOf/oneOf branches, allOf
// members, or one schema standing for itself): matched pairs are diffed,
// unmatched new ones are added and unmatched old ones removed. ko and kn
// are the keywords ("" for a schema standing for itself); layerO and layerN,
// when not nil, are the outer layers of the alternatives of that side when
// they are diffed. It returns, for each old and each new alternative, the
// index of its match (-1 none).
func (d *schDiffer) matchAlts(ao, an, layerO, layerN []schNode, ko, kn string, pol int8, rd int) (matchedO, matchedN []int) {
	matchedO = make([]int, len(ao))
	matchedN = make([]int, len(an))
	for i := range matchedO {
		matchedO[i] = -1
	}
	for j := range matchedN {
		matchedN[j] = -1
	}
	pair := func(i, j int) { matchedO[i], matchedN[j] = j, i }
	// Every branch looked at is charged to the work budget.
	if !d.charge(len(ao)+len(an), func() string { return schNodePtr(schFirst(ao), schFirst(an)) }) {
		return matchedO, matchedN
	}
	// Equal validation, by normal form (else by canonical bytes).
	key := func(s *schSide, x schNode) string {
		if z := s.nz.norm(x.v); z != nil {
			return "n" + string(z.vsum[:])
		}
		if !x.v.Valid() {
			return "absent"
		}
		return s.key(x.v)
	}
	queue := make(map[string][]int, len(ao))
	for i, x := range ao {
		k := key(d.old, x)
		queue[k] = append(queue[k], i)
	}
	for j, x := range an {
		k := key(d.new, x)
		if q := queue[k]; len(q) > 0 {
			queue[k] = q[1:]
			pair(q[0], j)
		}
	}
	// Alternatives limited to values (enum, const) compare as sets of
	// values (see valueMatch); the others go on.
	if ko != "allOf" && kn != "allOf" {
		d.valueMatch(ao, an, matchedO, matchedN, layerO, layerN, pol, rd)
	}
	// The rest: candidates whose types meet.
	cands, note := d.candidates(ao, an, matchedO, matchedN, layerO, layerN, ko == "allOf", pol, rd)
	for _, c := range cands {
		if matchedO[c.i] == -1 && matchedN[c.j] == -1 {
			pair(c.i, c.j)
		}
	}
	for j, i := range matchedN {
		if i < 0 {
			continue
		}
		o, n := schWithLayers(ao[i], layerO), schWithLayers(an[j], layerN)
		if t, ok := d.trials[schTrialKey{schPairKey{schOff(o.v), schOff(n.v), pol}, schOuterKey(o), schOuterKey(n)}]; ok {
			// Diffed already, in full (duplicates of records found
			// elsewhere are removed by finish).
			d.out = append(d.out, t.out...)
			continue
		}
		d.diff(o, n, pol, rd)
	}
	d.unmatched(ao, an, matchedO, matchedN, ko, kn, pol, rd, note)
	return matchedO, matchedN
}

// schWithLayers is x with the outer layers l (when not nil).
func schWithLayers(x schNode, l []schNode) schNode {
	if l != nil {
		x.outer = l
	}
	return x
}

// schCand is a candidate pair of alternatives and its cost.
type schCand struct{ i, j, cost int }

// candidates lists the pairs of the alternatives still unmatched that may
// be paired, cheapest first: for anyOf and oneOf, branches whose types can
// meet (a string branch replaced by an object branch is one alternative
// removed and another added); allOf members (all) are conjuncts, any pair.
// Their cost is what a trial diff finds, or minus their similarity, as the
// bounds of branch matching say; note says why none were listed past them.
func (d *schDiffer) candidates(ao, an []schNode, matchedO, matchedN []int, layerO, layerN []schNode, all bool, pol int8, rd int) (cands []schCand, note string) {
	meet := func(i, j int) bool {
		return all || d.effMask(d.old, ao[i].v, rd)&d.effMask(d.new, an[j].v, rd) != 0
	}
	var remO, remN []int
	for i := range ao {
		if matchedO[i] == -1 {
			remO = append(remO, i)
		}
	}
	for j := range an {
		if matchedN[j] == -1 {
			remN = append(remN, j)
		}
	}
	if n := len(remO) * len(remN); n > 0 {
		switch {
		case n == 1:
			// One of each left: no choice to make.
			if meet(remO[0], remN[0]) {
				cands = append(cands, schCand{remO[0], remN[0], 0})
			}
		case n <= schMaxTrialPairs:
			for _, i := range remO {
				for _, j := range remN {
					if !meet(i, j) {
						continue
					}
					cands = append(cands, schCand{i, j, d.trial(schWithLayers(ao[i], layerO), schWithLayers(an[j], layerN), pol, rd)})
				}
			}
		case n <= schMaxScoredPairs:
			for _, i := range remO {
				for _, j := range remN {
					if !meet(i, j) {
						continue
					}
					cands = append(cands, schCand{i, j, -schSimilarity(ao[i].v, an[j].v)})
				}
			}
		default:
			note = "more than " + strconv.Itoa(schMaxScoredPairs) + " pairs of differing branches: not matched, reported as removed and added"
		}
	}
	slices.SortFunc(cands, func(a, b schCand) int {
		if a.cost != b.cost {
			return a.cost - b.cost
		}
		if da, db := abs(a.i-a.j), abs(b.i-b.j); da != db {
			return da - db
		}
		if a.i+a.j != b.i+b.j {
			return a.i + a.j - b.i - b.j
		}
		if a.i != b.i {
			return a.i - b.i
		}
		return a.j - b.j
	})
	return cands, note
}

// unmatched reports the alternatives left without a match: added ones
// widen (a type no old alternative took is type_widened), removed ones
// narrow; an added or removed oneOf branch that may overlap another is
// neutral; allOf members the other way round.
func (d *schDiffer) unmatched(ao, an []schNode, matchedO, matchedN []int, ko, kn string, pol int8, rd int, note string) {
	all := ko == "allOf"
	var unionO, unionN uint8
	for _, x := range ao {
		unionO |= d.effMask(d.old, x.v, rd)
	}
	for _, x := range an {
		unionN |= d.effMask(d.new, x.v, rd)
	}
	for j, x := range an {
		if matchedN[j] != -1 {
			continue
		}
		m := d.effMask(d.new, x.v, rd)
		if all {
			d.emit(CompositionNarrowed, x.path.str(), Narrowing, pol, false, "allOf member added ("+schTypeString(m)+")", note)
			continue
		}
		kind, dir := CompositionWidened, Widening
		what := kn + " branch added"
		if kn == "" {
			what = "the new schema matches no branch of the old " + ko
		}
		detail := what + " (" + schTypeString(m) + ")"
		if m&^unionO != 0 {
			kind, detail = TypeWidened, what+": type "+schTypeString(unionO)+" → "+schTypeString(unionO|m)
		}
		if kn == "oneOf" && len(an) > 1 && !d.disjointFrom(d.new, an, j) {
			dir = Neutral
			detail += "; it may overlap another oneOf branch, whose instances it then rejects"
		}
		d.emit(kind, x.path.str(), dir, pol, false, detail, note)
	}
	for i, x := range ao {
		if matchedO[i] != -1 {
			continue
		}
		m := d.effMask(d.old, x.v, rd)
		if all {
			d.emit(CompositionWidened, x.path.str(), Widening, pol, false, "allOf member removed ("+schTypeString(m)+")", note)
			continue
		}
		kind, dir := CompositionNarrowed, Narrowing
		what := ko + " branch removed"
		if ko == "" {
			what = "the old schema matches no branch of the new " + kn
		}
		detail := what + " (" + schTypeString(m) + ")"
		if m&^unionN != 0 {
			kind, detail = TypeNarrowed, what+": type "+schTypeString(unionO)+" → "+schTypeString(unionN&unionO)
		}
		if ko == "oneOf" && len(ao) > 1 && !d.disjointFrom(d.old, ao, i) {
			dir = Neutral
			detail += "; it may have overlapped another oneOf branch, whose instances are then accepted now"
		}
		d.emit(kind, x.path.str(), dir, pol, false, detail, note)
	}
}

// valueMatch compares the unmatched alternatives limited to values (enum,
// const) of both sides as sets of values: two that share values are
// diffed, each restricted to the values they share (so four const
// branches that became one enum branch change nothing); a value only the
// new ones take is enum_widened at its new branch, one only the old ones
// took enum_narrowed at its old branch. Those alternatives are marked
// matched (-2: diffed here); one that shares no value goes on to the
// general matching. Bounded by the caps of matchAlts (pairs of value
// alternatives beyond schMaxScoredPairs are left to it).
func (d *schDiffer) valueMatch(ao, an []schNode, matchedO, matchedN []int, layerO, layerN []schNode, pol int8, rd int) {
	type alt struct {
		i    int
		vals schValues
		set  map[string]bool
	}
	collect := func(s *schSide, xs []schNode, matched []int) []alt {
		var out []alt
		for i, x := range xs {
			if matched[i] != -1 {
				continue
			}
			z := s.nz.norm(x.v)
			if z == nil || len(z.set) == 0 {
				continue
			}
			v, ok := d.values(s, x)
			if !ok {
				continue
			}
			set := make(map[string]bool, len(z.set))
			for _, k := range z.set {
				set[k] = true
			}
			out = append(out, alt{i, v, set})
		}
		return out
	}
	vo, vn := collect(d.old, ao, matchedO), collect(d.new, an, matchedN)
	if len(vo) == 0 || len(vn) == 0 || len(vo)*len(vn) > schMaxScoredPairs {
		return
	}
	inO, inN := map[string]bool{}, map[string]bool{}
	for _, a := range vo {
		for k := range a.set {
			inO[k] = true
		}
	}
	for _, a := range vn {
		for k := range a.set {
			inN[k] = true
		}
	}
	restrict := func(x schNode, shared map[string]bool, vals schValues, layers []schNode) schNode {
		if layers != nil {
			x.outer = layers
		}
		x.vset = shared
		x.tmask = 0
		for k := range shared {
			if v, ok := vals.vals[k]; ok {
				x.tmask |= schValueType(v)
			}
		}
		return x
	}
	sharedO := make([]bool, len(vo))
	sharedN := make([]bool, len(vn))
	for a, x := range vo {
		for b, y := range vn {
			shared := map[string]bool{}
			for k := range x.set {
				if y.set[k] {
					shared[k] = true
				}
			}
			if len(shared) == 0 {
				continue
			}
			sharedO[a], sharedN[b] = true, true
			d.diff(restrict(ao[x.i], shared, x.vals, layerO), restrict(an[y.i], shared, y.vals, layerN), pol, rd)
		}
	}
	kwPtr := func(x schNode) string {
		if x.has("enum") {
			return x.path.str() + "/enum"
		}
		return x.path.str() + "/const"
	}
	for a, x := range vo {
		if !sharedO[a] {
			continue
		}
		matchedO[x.i] = -2
		var lost []string
		for _, k := range x.vals.keys {
			if x.set[k] && !inN[k] {
				lost = append(lost, k)
			}
		}
		if len(lost) > 0 {
			d.emit(EnumNarrowed, kwPtr(ao[x.i]), Narrowing, pol, false, "enum values removed: "+schPreviewValues(x.vals, lost)+" (no branch takes them now)", "")
		}
	}
	for b, y := range vn {
		if !sharedN[b] {
			continue
		}
		matchedN[y.i] = -2
		var gained []string
		for _, k := range y.vals.keys {
			if y.set[k] && !inO[k] {
				gained = append(gained, k)
			}
		}
		if len(gained) > 0 {
			d.emit(EnumWidened, kwPtr(an[y.i]), Widening, pol, false, "enum values added: "+schPreviewValues(y.vals, gained)+" (no branch took them before)", "")
		}
	}
}

func schFirst(xs []schNode) schNode {
	if len(xs) == 0 {
		return schNode{}
	}
	return xs[0]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// trial diffs two branches on the side, to choose a pairing: the cost is
// what it finds, each record weighted by how near the branches' roots it
// is. Memoised; the work is charged to the budget.
func (d *schDiffer) trial(o, n schNode, pol int8, rd int) int {
	k := schTrialKey{schPairKey{schOff(o.v), schOff(n.v), pol}, schOuterKey(o), schOuterKey(n)}
	if c, ok := d.trials[k]; ok {
		return c.cost
	}
	if d.trials == nil {
		d.trials = make(map[schTrialKey]schTrial)
	}
	out, seen, exhausted := d.out, d.seen, d.exhausted
	d.out, d.seen = nil, make(map[schPairKey]struct{})
	d.diff(o, n, pol, rd)
	// Records near the branches' roots weigh more than deep ones: two
	// branches that share their shape but differ deep inside are a better
	// pair than two of different shapes whose differences are few but at
	// the top. Severity is not counted: it depends on the direction, and a
	// pairing should not.
	op, np := d.base+o.path.str(), d.base+n.path.str()
	cost := 0
	for _, c := range d.out {
		// Depth below the root of the branch the record is in (a record
		// is where the changed thing is on the new side, else the old).
		depth := strings.Count(c.Pointer, "/")
		switch {
		case strings.HasPrefix(c.Pointer, np):
			depth -= strings.Count(np, "/")
		case strings.HasPrefix(c.Pointer, op):
			depth -= strings.Count(op, "/")
		}
		cost += 1 << (20 - min(max(depth, 0), 20))
	}
	if !exhausted && d.exhausted {
		for _, c := range d.out {
			if c.Kind == SchemaUnresolved && strings.HasPrefix(c.Note, "work budget exhausted") {
				out = append(out, c)
			}
		}
	}
	// Without duplicates: two branches that reach one shared definition
	// report it twice, and trials nest.
	d.trials[k] = schTrial{cost, schCompact(d.out)}
	d.out, d.seen = out, seen
	return cost
}

// schSimilarity is a cheap likeness of two branches: shared keywords and
// shared property names.
func schSimilarity(a, b jcs.Value) int {
	if a.Kind() != jcs.Object || b.Kind() != jcs.Object {
		return 0
	}
	n := 0
	for i := 0; i < a.Len(); i++ {
		k, va := a.Member(i)
		vb, ok := b.Get(k.Str())
		if !ok {
			continue
		}
		n += 2
		if k.StrEqual("properties") && va.Kind() == jcs.Object && vb.Kind() == jcs.Object {
			for j := 0; j < va.Len(); j++ {
				pk, _ := va.Member(j)
				if _, ok := vb.Get(pk.Str()); ok {
					n++
				}
			}
		}
	}
	return n
}
