package lockrun

import (
	"context"
	"time"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// AddOptions pin one server in the lock.
type AddOptions struct {
	// Lock is the lock the server is added to (in memory: the caller
	// writes it).
	Lock *lock.Lock
	// Name is the server's name in the lock (lock.ValidName).
	Name string
	// Source is how the lock reaches it: what is stored, checked before
	// anything is sent (lock.CheckSource: never a credential).
	Source lock.Source
	// Server is what this observation sends: the source with its
	// placeholders expanded (and a literal header value, sent this once).
	Server mcpclient.Config
	// PinResources pins what resources/list lists too (the instructions,
	// prompts and resource templates are always pinned; many servers list
	// data that changes all the time).
	PinResources bool
	// Profile is the decision profile ("": review); AutoApprove the kinds
	// of change it approves by itself (lock.AutoNotation).
	Profile     string
	AutoApprove []string
	// PublisherKey is the publisher key configured for the server.
	PublisherKey string
	Classifier   *classify.Classifier
	Secrets      *redact.Set
	Timeout      time.Duration
	// Approval is who approves every tool as served, and when.
	Approval lock.Approval
	// Vouch refuses colliding tool names unless acknowledged (its What
	// and Servers are Add's).
	Vouch manifest.Vouch
	// SourceAuth, when set, is the source's Auth once the server is
	// listed (lock.AuthOAuthClientCredentials when the run held such a
	// token for its URL).
	SourceAuth func(url string) string
}

// AddResult is the server pinned.
type AddResult struct {
	Server  *lock.Server
	Listing *observe.Result
	// Acknowledged say which colliding names the suppression file
	// acknowledged, and why.
	Acknowledged []string
	// Warnings say which kinds of the surface were not observed (pinned
	// as not observed).
	Warnings []string
}

// Add observes the server once (read-only) and pins it in the lock: how to
// reach it, its identity, the Assay declared baseline, the raw tool
// definitions, the profile and an approval of every tool. A listing that
// is not complete is refused (runerr.Inconclusive), as is a server already
// in the lock, a list that carries a secret the run sent, or names that
// collide (runerr.Usage).
func Add(ctx context.Context, opt AddOptions) (*AddResult, error) {
	if err := checkAdd(opt); err != nil {
		return nil, err
	}
	cfg := opt.Server
	cfg.Surface = &mcpclient.SurfaceOptions{Resources: opt.PinResources}
	o, err := observe.Server(ctx, observe.ServerOptions{Server: cfg, ServerID: opt.Name, PublisherKey: opt.PublisherKey,
		Classifier: opt.Classifier, Secrets: opt.Secrets, Timeout: opt.Timeout})
	if err != nil {
		return nil, err
	}
	if len(o.Reflections) > 0 {
		return nil, runerr.Usagef("refusing to pin %s: the server reflects credentials into its tool list (%d place(s)). Rotate the credential and fix the server", safetext.Quote(o.Target), len(o.Reflections))
	}
	if err := o.Complete(); err != nil {
		return nil, err
	}
	src := opt.Source
	if opt.SourceAuth != nil {
		src.Auth = opt.SourceAuth(opt.Server.BaseURL)
	}
	v := opt.Vouch
	v.What, v.Servers = "add "+safetext.Quote(opt.Name)+" to the lock", []string{opt.Name, o.Target}
	said, err := v.Check(toolNames(o.Tools.Tools))
	if err != nil {
		return nil, err
	}
	s, err := lock.NewServer(opt.Name, src, profileOr(opt.Profile), o.Identity, o.Observation.ClientCapabilities, o.Tools.Tools, opt.Classifier, opt.Approval)
	if err != nil {
		return nil, runerr.Usagef("%s", safetext.Inert(err.Error()))
	}
	if len(opt.AutoApprove) > 0 {
		if err := s.SetProfile(profileOr(opt.Profile), opt.AutoApprove, opt.Approval); err != nil {
			return nil, runerr.Usagef("%s", safetext.Inert(err.Error()))
		}
	}
	// What the server puts before the model beside its tools, every item
	// approved, after the checks pin makes.
	var warnings []string
	if sf := o.Observation.Surface; sf != nil {
		if _, warnings, err = observe.PinnableSurface(o.Target, sf, opt.Secrets); err != nil {
			return nil, err
		}
		if err := s.PinSurface(sf, opt.Approval); err != nil {
			return nil, runerr.Usagef("%s", safetext.Inert(err.Error()))
		}
	}
	if err := opt.Lock.Add(s); err != nil {
		return nil, runerr.Usagef("%s", safetext.Inert(err.Error()))
	}
	return &AddResult{Server: s, Listing: o, Acknowledged: said, Warnings: warnings}, nil
}

// checkAdd refuses, before anything is sent, what Add could not pin.
func checkAdd(opt AddOptions) error {
	switch {
	case !lock.ValidName(opt.Name):
		return runerr.Usagef("server name %s: use letters, digits, '.', '_' and '-' (at most 128), starting with a letter or digit", safetext.Quote(opt.Name))
	case !lock.ValidProfile(profileOr(opt.Profile)):
		return runerr.Usagef("the profile must be review or fail-closed")
	case opt.Lock == nil:
		return runerr.Usagef("no lock to add %s to", safetext.Quote(opt.Name))
	}
	for _, k := range opt.AutoApprove {
		if k != lock.AutoNotation {
			return runerr.Usagef("--auto-approve: the only kind is notation")
		}
	}
	// What the lock could not store.
	if err := lock.CheckSource(opt.Source); err != nil {
		return runerr.Usagef("%s", safetext.Inert(err.Error()))
	}
	if opt.Lock.Server(opt.Name) != nil {
		return runerr.Usagef("server %s is already in the lock: approve its changes with mcpdrift review or approve, or remove it first", safetext.Quote(opt.Name))
	}
	return nil
}

func profileOr(p string) string {
	if p == "" {
		return lock.ProfileReview
	}
	return p
}

// toolNames are the names of tools, in order.
func toolNames(tools []manifest.Tool) []string {
	names := make([]string, len(tools))
	for i := range tools {
		names[i] = tools[i].Name
	}
	return names
}
