package schemadiff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// DiffIdentity compares the server half of the identity tuple. A field
// that one side does not know is not compared (and Unverified lists it),
// so a missing pin never reads as "unchanged". A stdio endpoint that only
// moved the install of the same package's same binary (installMovedParts)
// is ServerInstallMoved, not a rebinding; an endpoint of the same text
// that resolves into another package (a bin link pointed elsewhere) is a
// rebinding. The stdio server's environment is compared by names and
// value digests.
func DiffIdentity(old, new manifest.Identity) (changes []Change, unverified []string) {
	type field struct {
		name, kind, sev string
		o, n            string
	}
	for _, f := range []field{
		{"endpoint", ServerEndpointRebound, "high", old.Endpoint, new.Endpoint},
		{"publisher_key", PublisherKeyChanged, "high", old.PublisherKey, new.PublisherKey},
		{"server_name", ServerNameChanged, "medium", old.ServerName, new.ServerName},
		{"server_version", ServerVersionChanged, "low", old.ServerVersion, new.ServerVersion},
	} {
		switch {
		case f.o == "" && f.n == "":
		case f.o == "" || f.n == "":
			unverified = append(unverified, f.name)
		case f.name == "endpoint":
			if c, ok := endpointChange(old, new); ok {
				changes = append(changes, c)
			}
		case f.o != f.n:
			d, parts := composed(f.name+" ", f.o, " → ", f.n)
			if f.name == "publisher_key" {
				d, parts = "the publisher key changed", nil
			}
			changes = append(changes, Change{Kind: f.kind, Pointer: "/identity/" + f.name, Direction: Neutral, Severity: f.sev, Detail: d, parts: parts})
		}
	}
	changes = append(changes, diffEnv(old.Env, new.Env)...)
	return changes, unverified
}

// endpointChange is the change of two known endpoints, if any: none when
// they are the same (manifest.SameEndpoint) and resolve to the same files
// (or either side recorded no resolution), ServerInstallMoved when only
// the install moved, else ServerEndpointRebound.
func endpointChange(old, new manifest.Identity) (Change, bool) {
	same := manifest.SameEndpoint(old.Endpoint, new.Endpoint)
	if same && (old.ResolvedEndpoint == "" || new.ResolvedEndpoint == "" || old.ResolvedEndpoint == new.ResolvedEndpoint) {
		return Change{}, false
	}
	outcome, parts := installMovedParts(old, new)
	switch {
	case outcome == endpointMoved:
		d, parts := composed(parts...)
		return Change{Kind: ServerInstallMoved, Pointer: "/identity/endpoint", Direction: Neutral, Severity: "medium", Detail: d, parts: parts}, true
	case same && outcome == endpointSame:
		return Change{}, false
	}
	d, ps := composed("endpoint ", old.Endpoint, " → ", new.Endpoint)
	if same {
		d, ps = composed("endpoint ", new.Endpoint, " resolved to ", new.ResolvedEndpoint, ", pinned resolving to ", old.ResolvedEndpoint, "")
	}
	c := Change{Kind: ServerEndpointRebound, Pointer: "/identity/endpoint", Direction: Neutral, Severity: "high", Detail: d, parts: ps}
	if len(parts) == 1 {
		c.Note = parts[0] // why it could not be told a moved install
	}
	return c, true
}

// IdentityVerdict is the one decision on the server half of the identity
// tuple, which diff, drift, lock check and the gateway each make from it.
type IdentityVerdict struct {
	// Changes are DiffIdentity's records; those the profile takes as
	// information carry Info.
	Changes []Change
	// Unverified names the fields one side does not know (not compared).
	Unverified []string
	// Decision is Allow when nothing changed or every change is
	// information under the profile, else Review or Deny.
	Decision string
	// Reason names the first change that decides and what it is now and
	// was pinned (escaped; "" when Allow): why the gateway withholds the
	// server.
	Reason string
	// Notes are the sentences of the information changes (escaped).
	Notes []string
}

// JudgeIdentity compares the pinned identity with the one now (both
// halves as recorded) and decides under p (nil: ReviewProfile).
func JudgeIdentity(pinned, now manifest.Identity, p *DecisionProfile) IdentityVerdict {
	if p == nil {
		p = ReviewProfile
	}
	v := IdentityVerdict{Decision: Allow}
	v.Changes, v.Unverified = DiffIdentity(pinned, now)
	for i := range v.Changes {
		c := &v.Changes[i]
		if why, ok := p.Info[c.Kind]; ok {
			c.Info = why
			v.Notes = append(v.Notes, identityNote(*c))
		}
	}
	v.Decision, _, _ = p.DecideWithReason(v.Changes)
	if v.Decision == Allow {
		return v
	}
	for _, c := range p.Decisive(v.Changes) {
		v.Reason = identityReason(c, pinned, now, p)
		break
	}
	return v
}

// identityNote is the note of an identity change taken as information.
func identityNote(c Change) string {
	if c.Kind == ServerInstallMoved {
		return c.Detail + " (information under the review profile: the version change is logged, and each tool is judged by its digest)"
	}
	what, now, was := "server name", "", ""
	if c.parts != nil && len(*c.parts) == 4 {
		was, now = (*c.parts)[1], (*c.parts)[3]
	}
	if c.Kind == ServerVersionChanged {
		what = "server version"
	}
	return fmt.Sprintf("the %s is %s, the baseline pinned %s; each tool is judged by its digest", what, safetext.Quote(now), safetext.Quote(was))
}

// identityReason is the sentence of an identity change that decides: the
// component, and what it is now and was pinned.
func identityReason(c Change, pinned, now manifest.Identity, p *DecisionProfile) string {
	_, denied := p.Deny[c.Kind]
	suffix := ""
	if denied && p.Name == FailClosedProfile.Name {
		suffix = " (fail-closed: " + p.Deny[c.Kind] + ")"
	}
	switch c.Kind {
	case ServerEndpointRebound, ServerInstallMoved:
		why := ""
		if c.Kind == ServerInstallMoved || pinned.Endpoint == now.Endpoint {
			why = "; " + c.Detail
		}
		return fmt.Sprintf("the endpoint is %s, the baseline pinned %s%s%s", safetext.Quote(now.Endpoint), safetext.Quote(pinned.Endpoint), why, suffix)
	case PublisherKeyChanged:
		return "the publisher key is not the pinned one" + suffix
	case ServerNameChanged:
		return saidOrNot("server name", now.ServerName, pinned.ServerName, suffix)
	case ServerVersionChanged:
		return saidOrNot("server version", now.ServerVersion, pinned.ServerVersion, suffix)
	}
	return c.Detail + suffix
}

// saidOrNot says what a server said of itself against what was pinned,
// or that it said nothing (an upstream that never answered who it is is
// not one that gave "" as its name).
func saidOrNot(what, now, pinned, suffix string) string {
	if now == "" {
		return fmt.Sprintf("the upstream did not say its %s (the baseline pinned %s)%s", what, safetext.Quote(pinned), suffix)
	}
	return fmt.Sprintf("the %s is %s, the baseline pinned %s%s", what, safetext.Quote(now), safetext.Quote(pinned), suffix)
}

// diffEnv compares the environments of a stdio server by name and value
// digest. A side without any recorded env is not compared.
func diffEnv(old, new *[]manifest.EnvEntry) []Change {
	if old == nil || new == nil {
		return nil
	}
	o, n := map[string]string{}, map[string]string{}
	for _, e := range *old {
		o[e.Name] = e.Digest
	}
	for _, e := range *new {
		n[e.Name] = e.Digest
	}
	var added, removed, changed []string
	for k, d := range n {
		switch od, ok := o[k]; {
		case !ok:
			added = append(added, k)
		case od != d:
			changed = append(changed, k)
		}
	}
	for k := range o {
		if _, ok := n[k]; !ok {
			removed = append(removed, k)
		}
	}
	if len(added)+len(removed)+len(changed) == 0 {
		return nil
	}
	slices.Sort(added)
	slices.Sort(removed)
	slices.Sort(changed)
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"added", added}, {"removed", removed}, {"value changed", changed}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	return []Change{{Kind: ServerEnvChanged, Pointer: "/identity/env", Direction: Neutral, Severity: "medium",
		Detail: "the stdio server's environment changed: " + strings.Join(parts, "; ") + " (names and value digests compared; values are never recorded)"}}
}

// shellSplit reads back a command line written by the CLI's shellJoin:
// plain words and single-quoted words ('\” for a quote). ok is false for
// anything else.
func shellSplit(s string) ([]string, bool) {
	var out []string
	for i := 0; i < len(s); {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			break
		}
		var w strings.Builder
		for i < len(s) && s[i] != ' ' {
			if s[i] == '\'' {
				j := strings.IndexByte(s[i+1:], '\'')
				if j < 0 {
					return nil, false
				}
				w.WriteString(s[i+1 : i+1+j])
				i += j + 2
				continue
			}
			if s[i] == '\\' && i+1 < len(s) {
				w.WriteByte(s[i+1])
				i += 2
				continue
			}
			w.WriteByte(s[i])
			i++
		}
		out = append(out, w.String())
	}
	return out, true
}
