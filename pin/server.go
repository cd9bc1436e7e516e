package pin

import (
	"context"
	"time"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// ServerOptions pin a live server.
type ServerOptions struct {
	// Server reaches the server and bounds the listing.
	Server   mcpclient.Config
	ServerID string
	// Identity is what is pinned over what the listing establishes: a
	// field given wins (the endpoint, publisher key, server name and
	// version); the stdio environment is always the run's.
	Identity manifest.Identity
	// PinResources pins what resources/list lists too (the instructions,
	// prompts and resource templates are always pinned).
	PinResources bool
	Classifier   *classify.Classifier // nil: the built-in table
	// Secrets are the values the run sends (nil: a set of Server's); a
	// list or surface that carries one is refused.
	Secrets    *redact.Set
	Timeout    time.Duration // 0: the context's deadline alone
	AllowEmpty bool
	Vouch      manifest.Vouch
}

// Server lists a running server and pins what it serves: its tools, the
// endpoint and what the server reports of itself, the client capabilities
// declared, and what it puts before the model beside its tools. A listing
// that fails is a runerr error (observe.Failed); a partial one, one that
// carries a secret the run sent, or a surface that cannot be pinned is
// refused (runerr.Usage).
func Server(ctx context.Context, opt ServerOptions) (*Result, error) {
	classifier := func() *classify.Classifier { return opt.Classifier }
	if opt.Classifier == nil {
		// Compiled beside the listing's first requests.
		classifier = par.Go(classify.Default)
	}
	secrets := opt.Secrets
	if secrets == nil {
		secrets = &redact.Set{}
	}
	cfg := opt.Server
	cfg.Surface = &mcpclient.SurfaceOptions{Resources: opt.PinResources}
	observe.RecordSecrets(cfg, secrets)
	_, target := observe.Target(cfg, secrets)
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	obs, tl, err := observe.List(ctx, cfg)
	if err != nil {
		return nil, observe.Failed(target, err)
	}
	c := &checks{secrets: secrets}
	c.check(tl.Tools)
	if obs.Era == mcpclient.EraModern && len(cfg.Command) == 0 {
		c.paramHeaders(tl.Tools)
	}
	r := &Result{Tools: tl, Completeness: manifest.Completeness(obs.Completeness), Target: target}
	// Part of what was pinned: the tools a server lists can depend on the
	// client capabilities declared.
	r.SnapshotOptions.ClientCapabilities = obs.ClientCapabilities
	if r.SnapshotOptions.Surface, r.Warnings, err = observe.PinnableSurface(target, obs.Surface, secrets); err != nil {
		return nil, err
	}
	if err := refuseListing(target, obs, cfg, c, secrets); err != nil {
		return nil, err
	}
	r.Identity = serverIdentity(opt.Identity, cfg, obs, target, secrets)
	r.Observed = manifest.BuildObserved(opt.ServerID, tl, r.Completeness, classifier())
	if r.Observed.Observed.ManifestDigest != nil {
		r.SnapshotOptions.ManifestDigest = *r.Observed.Observed.ManifestDigest
	}
	r.Warnings = append(r.Warnings, c.precisionWarnings()...)
	return r, r.pin(target, opt.AllowEmpty, opt.Vouch, c)
}

// refuseListing refuses a listing that was capped or cycled (partial),
// and one whose tools or reported identity carry a secret the run sent:
// a snapshot stores the bytes it pinned.
func refuseListing(target string, obs *mcpclient.Observation, cfg mcpclient.Config, c *checks, secrets *redact.Set) error {
	if obs.CapReached {
		return refused(target, "the listing was capped at %d pages, so it is partial (raise --max-list-pages)", cfg.MaxListPages)
	}
	if obs.CursorCycle {
		return refused(target, "the server's cursors cycle, so the listing is partial")
	}
	if refl := append(c.reflected, observe.IdentityReflections(secrets, obs)...); len(refl) > 0 {
		where := "its reported identity (serverInfo)"
		if refl[0].Tool != "" {
			where = "tool " + safetext.Quote(refl[0].Tool) + " at JSON pointer " + safetext.Quote(refl[0].Pointer)
		}
		return refused(target, "the server reflects credentials into its tool list: %s carries %s (%d place(s) in all). Rotate the credential and fix the server", where, refl[0].Source, len(refl))
	}
	return nil
}

// serverIdentity is the identity pinned: given's fields where given, else
// the endpoint as recorded (and what it resolved to) and the server's
// reported name and version; the stdio environment is the run's.
func serverIdentity(given manifest.Identity, cfg mcpclient.Config, obs *mcpclient.Observation, target string, secrets *redact.Set) manifest.Identity {
	id := given
	if id.Endpoint == "" {
		id.Endpoint, id.ResolvedEndpoint = target, observe.ResolvedEndpoint(cfg, secrets)
	}
	id.Env = observe.EnvIdentity(cfg)
	if obs.ServerInfo != nil {
		if id.ServerName == "" {
			id.ServerName = obs.ServerInfo.Name
		}
		if id.ServerVersion == "" {
			id.ServerVersion = obs.ServerInfo.Version
		}
	}
	return id
}
