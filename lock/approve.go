package lock

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Approve writes the served version of exactly the named tools into the
// server: a served tool is approved as served (its definition, its
// baseline entry classified with c, its approval a); a named tool the
// server no longer serves is removed from the lock. A tool already
// approved as served is left alone (no event). A name neither served nor
// in the lock is an error, and nothing changes. auto is "" for a
// reviewer's approval, or AutoNotation for the profile's. It returns the
// events it appended to the history.
func (s *Server) Approve(served []manifest.Tool, names []string, a Approval, c *classify.Classifier, auto string) ([]Event, error) {
	byName := make(map[string]*manifest.Tool, len(served))
	for i := range served {
		if _, dup := byName[served[i].Name]; dup {
			return nil, fmt.Errorf("the server lists tool %s twice: an ambiguous list cannot be approved", safetext.Quote(served[i].Name))
		}
		byName[served[i].Name] = &served[i]
	}
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	for _, n := range names {
		if byName[n] == nil && s.Tool(n) == nil {
			return nil, fmt.Errorf("tool %s is neither served by %s nor in the lock", safetext.Quote(n), safetext.Quote(s.Name))
		}
	}
	a.Auto = auto
	action := ActionApproved
	if auto != "" {
		action = ActionAutoApproved
	}
	var events []Event
	for _, n := range names {
		old := s.Tool(n)
		mt := byName[n]
		if mt == nil { // removed upstream: approving the removal
			s.removeTool(n)
			events = append(events, Event{At: a.At, Action: ActionRemoved, Tool: n, From: old.Approval.Digest, By: a.By, Note: a.Note, Reason: auto})
			continue
		}
		if old != nil && old.Approval.Digest == mt.ToolDigest() {
			continue
		}
		t, err := newTool(mt, a)
		if err != nil {
			return nil, err
		}
		o := manifest.BuildObserved(s.Name, &manifest.ToolList{Tools: []manifest.Tool{t.tool}, Completeness: manifest.Complete}, manifest.Complete, c)
		entry := o.Observed.ToolDigests[0]
		ev := Event{At: a.At, Action: action, Tool: n, To: t.Approval.Digest, By: a.By, Note: a.Note, Reason: auto}
		if old != nil {
			ev.From = old.Approval.Digest
		}
		s.putTool(t, entry)
		events = append(events, ev)
	}
	s.redigest()
	s.History = append(s.History, events...)
	return events, nil
}

// ApproveIdentity accepts the identity tuple the server has now.
func (s *Server) ApproveIdentity(id manifest.Identity, a Approval) Event {
	s.Identity = id
	ev := Event{At: a.At, Action: ActionIdentityApproved, By: a.By, Note: a.Note}
	s.History = append(s.History, ev)
	return ev
}

// SetProfile changes the decision profile (and the auto-approvals).
func (s *Server) SetProfile(profile string, autoApprove []string, a Approval) error {
	if !ValidProfile(profile) {
		return fmt.Errorf("profile %s: must be review or fail-closed", safetext.Quote(profile))
	}
	for _, k := range autoApprove {
		if k != AutoNotation {
			return fmt.Errorf("auto-approve %s: the only kind is notation", safetext.Quote(k))
		}
	}
	aa := slices.Clone(autoApprove)
	slices.Sort(aa)
	aa = slices.Compact(aa)
	reason := profile
	if len(aa) > 0 {
		reason += ", auto-approve " + strings.Join(aa, ",")
	}
	s.Profile, s.AutoApprove = profile, aa
	s.History = append(s.History, Event{At: a.At, Action: ActionProfileChanged, By: a.By, Note: a.Note, Reason: reason})
	return nil
}

// PinRef records an external document pinned by hash (replacing the
// pin of the same URL).
func (s *Server) PinRef(r Ref, a Approval) Event {
	i := slices.IndexFunc(s.Refs, func(x Ref) bool { return x.URL == r.URL })
	ev := Event{At: a.At, Action: ActionRefPinned, By: a.By, Note: a.Note, To: r.SHA256, Reason: r.URL}
	if i >= 0 {
		ev.From = s.Refs[i].SHA256
		s.Refs[i] = r
	} else {
		s.Refs = append(s.Refs, r)
		slices.SortFunc(s.Refs, func(a, b Ref) int { return strings.Compare(a.URL, b.URL) })
	}
	s.History = append(s.History, ev)
	return ev
}

// Ref returns the pin of url, or nil.
func (s *Server) Ref(url string) *Ref {
	for i := range s.Refs {
		if s.Refs[i].URL == url {
			return &s.Refs[i]
		}
	}
	return nil
}

func (s *Server) removeTool(name string) {
	s.Tools = slices.DeleteFunc(s.Tools, func(t *Tool) bool { return t.Name == name })
	s.Declared.Tools = slices.DeleteFunc(s.Declared.Tools, func(e manifest.ToolEntry) bool { return e.Name == name })
}

func (s *Server) putTool(t *Tool, e manifest.ToolEntry) {
	i, ok := slices.BinarySearchFunc(s.Tools, t.Name, func(x *Tool, n string) int { return strings.Compare(x.Name, n) })
	if ok {
		s.Tools[i] = t
	} else {
		s.Tools = slices.Insert(s.Tools, i, t)
	}
	j, ok := slices.BinarySearchFunc(s.Declared.Tools, e.Name, func(x manifest.ToolEntry, n string) int { return strings.Compare(x.Name, n) })
	if ok {
		s.Declared.Tools[j] = e
	} else {
		s.Declared.Tools = slices.Insert(s.Declared.Tools, j, e)
	}
}

func (s *Server) redigest() {
	s.Declared.ManifestDigest = manifest.ManifestDigest(s.Declared.NameDigests())
}
