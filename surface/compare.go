package surface

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Reason codes of the comparison (catalogued in catalog/).
const (
	CodeInstructionsChanged  = "MCP-SURFACE-INSTRUCTIONS-CHANGED"
	CodeInstructionsOversize = "MCP-SURFACE-INSTRUCTIONS-OVERSIZE"
	CodePromptAdded          = "MCP-SURFACE-PROMPT-ADDED"
	CodePromptRemoved        = "MCP-SURFACE-PROMPT-REMOVED"
	CodePromptDescription    = "MCP-SURFACE-PROMPT-DESCRIPTION"
	CodePromptArguments      = "MCP-SURFACE-PROMPT-ARGUMENTS"
	CodeTemplateAdded        = "MCP-SURFACE-TEMPLATE-ADDED"
	CodeTemplateRemoved      = "MCP-SURFACE-TEMPLATE-REMOVED"
	CodeTemplateChanged      = "MCP-SURFACE-TEMPLATE-CHANGED"
	CodeResourceAdded        = "MCP-SURFACE-RESOURCE-ADDED"
	CodeResourceRemoved      = "MCP-SURFACE-RESOURCE-REMOVED"
	CodeResourceChanged      = "MCP-SURFACE-RESOURCE-CHANGED"
	CodeAmbiguous            = "MCP-SURFACE-AMBIGUOUS"
	CodeUnreadable           = "MCP-SURFACE-ENTRY-UNREADABLE"
	CodeNotObserved          = "MCP-SURFACE-NOT-OBSERVED"
)

// Codes are every code Compare can give.
var Codes = []string{CodeInstructionsChanged, CodeInstructionsOversize, CodePromptAdded, CodePromptRemoved, CodePromptDescription,
	CodePromptArguments, CodeTemplateAdded, CodeTemplateRemoved, CodeTemplateChanged, CodeResourceAdded, CodeResourceRemoved,
	CodeResourceChanged, CodeAmbiguous, CodeUnreadable, CodeNotObserved}

// Change is one difference between a pinned surface and an observed one.
type Change struct {
	Code string `json:"rule_id"`
	Kind Kind   `json:"kind"`
	// Key names the item (a prompt's name, a template's uriTemplate, a
	// resource's uri); "" for instructions and for a whole list.
	Key string `json:"key,omitempty"`
	// From and To are the pinned and observed digests ("" when absent).
	From string `json:"pinned_digest,omitempty"`
	To   string `json:"digest,omitempty"`
	// Members are the projected members whose values differ.
	Members []string `json:"members,omitempty"`
	// Message is escaped text, ready to print.
	Message string `json:"message"`
	// Texts are the word diffs of the texts that changed (the
	// instructions, a description or title): server text, escaped by the
	// renderers.
	Texts []TextChange `json:"texts,omitempty"`
}

// TextChange is the word diff of one text member.
type TextChange struct {
	Member string           `json:"member"`
	Words  schemadiff.Words `json:"words"`
}

// wordBounds bound the word diffs (as the readable delta bounds its own).
var wordBounds = schemadiff.WordOptions{Context: 6, MaxRun: 4096}

// messageWords bounds the word diff a message carries.
const messageWords = 600

// Result is a comparison: the changes, and notes on what was not compared.
type Result struct {
	Changes []Change `json:"changes"`
	// Notes say what was not compared and why (escaped): never a claim
	// that what was not seen is clean.
	Notes []string `json:"notes"`
}

// Compare compares an observed surface with the pinned one. A nil pinned
// surface (a baseline pinned before surfaces were) compares nothing and
// says so.
func Compare(pinned, now *Surface) Result {
	r := Result{Changes: []Change{}, Notes: []string{}}
	if pinned == nil {
		r.Notes = append(r.Notes, ErrNotPinned.Error()+": they were not compared")
		return r
	}
	if now == nil {
		r.Notes = append(r.Notes, "the surface (instructions, prompts, resource templates) was not observed, so it was not compared")
		return r
	}
	compareInstr(&r, &pinned.Instructions, &now.Instructions)
	for _, k := range ListKinds {
		compareList(&r, pinned.List(k), now.List(k))
	}
	return r
}

func (r *Result) add(c Change) { r.Changes = append(r.Changes, c) }

func compareInstr(r *Result, p, n *Instr) {
	if n.State != Observed {
		if p.State == Observed {
			r.add(Change{Code: CodeNotObserved, Kind: Instructions, From: p.Digest,
				Message: "the instructions were pinned, and could not be observed now: " + safetext.Inert(n.Reason)})
		} else {
			r.Notes = append(r.Notes, "instructions: not observed ("+safetext.Inert(n.Reason)+")")
		}
		return
	}
	if n.Ambiguous {
		r.add(Change{Code: CodeAmbiguous, Kind: Instructions, To: n.Digest, Members: []string{"instructions"}, Message: instrAmbiguous})
	}
	if n.Oversize {
		r.add(Change{Code: CodeInstructionsOversize, Kind: Instructions, To: n.Digest,
			Message: fmt.Sprintf("the server's instructions are %d bytes, more than the %d an observation keeps: digested whole, not kept, never cut", n.Size, DefaultMaxInstructionsBytes)})
	}
	pinnedAs := p.State == Observed
	switch {
	case pinnedAs && p.Present == n.Present && p.Digest == n.Digest:
		return
	case !n.Present:
		r.add(Change{Code: CodeInstructionsChanged, Kind: Instructions, From: p.Digest, Members: []string{"instructions"},
			Message: "the server no longer sends the instructions that were pinned"})
	case !pinnedAs || !p.Present:
		c := Change{Code: CodeInstructionsChanged, Kind: Instructions, To: n.Digest, Members: []string{"instructions"}}
		c.Message = "the server now sends instructions, and none were pinned" + notPinnedState(p.State, p.Reason)
		if !n.Oversize {
			w := schemadiff.DiffWords("", n.Text(), wordBounds)
			c.Texts = []TextChange{{Member: "instructions", Words: w}}
			c.Message += ": " + inline(w)
		}
		r.add(c)
	default:
		c := Change{Code: CodeInstructionsChanged, Kind: Instructions, From: p.Digest, To: n.Digest, Members: []string{"instructions"}}
		c.Message = "the instructions changed"
		if !n.Oversize {
			w := schemadiff.DiffWords(p.Text(), n.Text(), wordBounds)
			c.Texts = []TextChange{{Member: "instructions", Words: w}}
			c.Message += ": " + inline(w)
		}
		r.add(c)
	}
}

// instrAmbiguous says why ambiguous instructions are never clean.
const instrAmbiguous = "the server's result holds a member that decoders which ignore case take for \"instructions\" (\"Instructions\"): " +
	"a client may read other instructions than the ones compared, so they are never clean and cannot be pinned"

// notPinnedState says why a kind holds nothing pinned ("" when it was
// observed).
func notPinnedState(st State, reason string) string {
	switch st {
	case NotAdvertised:
		return " (at pin time the server did not advertise them)"
	case NotRequested:
		return " (they were not pinned)"
	case NotObserved:
		return " (at pin time they could not be observed: " + safetext.Inert(reason) + ")"
	}
	return ""
}

// codes are a list kind's added, removed and changed codes.
func codes(k Kind) (added, removed, changed string) {
	switch k {
	case Prompt:
		return CodePromptAdded, CodePromptRemoved, CodePromptDescription
	case Template:
		return CodeTemplateAdded, CodeTemplateRemoved, CodeTemplateChanged
	}
	return CodeResourceAdded, CodeResourceRemoved, CodeResourceChanged
}

func compareList(r *Result, p, n *List) {
	k := n.Kind
	switch {
	case n.State == NotRequested:
		if p.State == Observed {
			r.add(Change{Code: CodeNotObserved, Kind: k, Message: fmt.Sprintf("the %s were pinned, and were not asked for now", k.Plural())})
		}
		return
	case n.State == NotObserved:
		switch p.State {
		case Observed:
			r.add(Change{Code: CodeNotObserved, Kind: k, Message: fmt.Sprintf("the %s were pinned, and could not be observed now: %s", k.Plural(), safetext.Inert(n.Reason))})
		case NotAdvertised:
			// Pinned as none offered; now they may be offered, and were
			// not seen.
			r.add(Change{Code: CodeNotObserved, Kind: k, Message: fmt.Sprintf("the server did not advertise %s when pinned, and now they could not be observed: %s", k.Plural(), safetext.Inert(n.Reason))})
		default:
			r.Notes = append(r.Notes, fmt.Sprintf("%s: not observed (%s)", k.Plural(), safetext.Inert(n.Reason)))
		}
		return
	case n.State == NotAdvertised && p.State != Observed:
		r.Notes = append(r.Notes, fmt.Sprintf("%s: not observed (the server does not advertise them)", k.Plural()))
		return
	}
	added, removed, changed := codes(k)
	var pinnedItems []Item
	if p.State == Observed {
		pinnedItems = p.Items
	}
	if n.State == NotAdvertised {
		for _, it := range pinnedItems {
			r.add(Change{Code: removed, Kind: k, Key: it.Key, From: it.Digest,
				Message: it.Label() + " was pinned, and the server no longer advertises " + k.Plural()})
		}
		return
	}
	partial := n.Completeness != Complete
	if partial {
		r.add(Change{Code: CodeNotObserved, Kind: k, Message: fmt.Sprintf("the %s were listed partially (%s): what is on the pages not seen was not compared", k.Plural(), safetext.Inert(n.Reason))})
	}
	for _, inv := range n.Invalid {
		r.add(Change{Code: CodeUnreadable, Kind: k, Message: fmt.Sprintf("the %s list holds an entry that is not a %s: %s", k.Plural(), k.Noun(), safetext.Inert(inv))})
	}
	dups := map[string]bool{}
	for _, d := range n.Duplicates() {
		dups[d] = true
		r.add(Change{Code: CodeAmbiguous, Kind: k, Key: d, Message: Label(k, d) + " is listed more than once: which one a client gets is undefined, so it is never taken as the pinned one"})
	}
	served := map[string]*Item{}
	for i := range n.Items {
		it := &n.Items[i]
		if dups[it.Key] || served[it.Key] != nil {
			continue
		}
		served[it.Key] = it
		old := find(pinnedItems, it.Key)
		if old == nil {
			msg := it.Label() + " is served and was not pinned" + notPinnedState(p.State, p.Reason)
			if d := it.Text("description"); d != "" {
				msg += "; its description: " + safetext.Quote(safetext.Clip(d, 300))
			}
			r.add(Change{Code: added, Kind: k, Key: it.Key, To: it.Digest, Message: msg})
			continue
		}
		if old.Digest == it.Digest {
			continue
		}
		r.Changes = append(r.Changes, itemChanges(k, old, it, changed)...)
	}
	if partial {
		return
	}
	for i := range pinnedItems {
		it := &pinnedItems[i]
		if served[it.Key] == nil && !dups[it.Key] {
			r.add(Change{Code: removed, Kind: k, Key: it.Key, From: it.Digest, Message: it.Label() + " was pinned and is no longer served"})
		}
	}
}

func find(items []Item, key string) *Item {
	for i := range items {
		if items[i].Key == key {
			return &items[i]
		}
	}
	return nil
}

// itemChanges are the changes of one item whose digest changed: which
// projected members differ, the texts among them as word diffs. A prompt
// whose arguments changed gets a change of its own for them.
func itemChanges(k Kind, old, now *Item, changed string) []Change {
	var ms []string
	for _, m := range Members(k) {
		if !bytes.Equal(AppendMember(nil, k, old.Value, m), AppendMember(nil, k, now.Value, m)) {
			ms = append(ms, m)
		}
	}
	var text, args []string
	for _, m := range ms {
		if k == Prompt && m == "arguments" {
			args = append(args, m)
		} else {
			text = append(text, m)
		}
	}
	var out []Change
	if len(text) > 0 {
		c := Change{Code: changed, Kind: k, Key: now.Key, From: old.Digest, To: now.Digest, Members: text}
		var parts []string
		for _, m := range text {
			o, n := old.Text(m), now.Text(m)
			if (m == "description" || m == "title") && (o != "" || n != "") {
				w := schemadiff.DiffWords(o, n, wordBounds)
				c.Texts = append(c.Texts, TextChange{Member: m, Words: w})
				parts = append(parts, m+" "+inline(w))
				continue
			}
			parts = append(parts, m+" "+safetext.Quote(safetext.Clip(string(AppendMember(nil, k, old.Value, m)), 120))+" → "+
				safetext.Quote(safetext.Clip(string(AppendMember(nil, k, now.Value, m)), 120)))
		}
		c.Message = now.Label() + " changed: " + strings.Join(parts, "; ")
		out = append(out, c)
	}
	if len(args) > 0 {
		out = append(out, Change{Code: CodePromptArguments, Kind: k, Key: now.Key, From: old.Digest, To: now.Digest, Members: args,
			Message: now.Label() + " changed its arguments: " + argumentsDelta(old, now)})
	}
	return out
}

// inline is a word diff on one line, escaped: schemadiff.Words.Inline
// without colour.
func inline(w schemadiff.Words) string {
	return safetext.ClipEscaped(w.Inline(nil), messageWords)
}
