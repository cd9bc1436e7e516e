// Package observe lists a live MCP server and builds what every live
// workflow reads of it: the tools as served (their bytes, parse and
// digests), the observed record, the identity the listing established,
// the target as recorded, and where the list carries a secret the run
// sent. Server is the one listing of pin, lock add, lock check, approve
// and scan; List, Target and Identity are its parts.
package observe

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// ServerOptions say which server to observe and how to record it.
type ServerOptions struct {
	// Server reaches the server and bounds the listing (mcpclient's
	// defaults for every bound left zero).
	Server mcpclient.Config
	// ServerID is the observed record's server id.
	ServerID string
	// PublisherKey is the publisher key configured for the server, pinned
	// in its identity (a listing cannot establish it).
	PublisherKey string
	// Classifier classifies the tools' names (nil: the built-in table).
	Classifier *classify.Classifier
	// Secrets are the values the run sends; Server's are recorded in it
	// (RecordSecrets). nil: a set of Server's alone.
	Secrets *redact.Set
	// Timeout bounds the listing (0: the context's deadline alone).
	Timeout time.Duration
}

// Result is one listing of a server.
type Result struct {
	// Target is the server as recorded and shown (Target).
	Target      string
	Observation *mcpclient.Observation
	Tools       *manifest.ToolList
	// Observed is the observed record under ServerID.
	Observed *manifest.Observed
	// Identity is the identity the listing established: the endpoint,
	// what it resolved to, the stdio environment, the server's reported
	// name and version, and the configured publisher key.
	Identity manifest.Identity
	// Reflections are where the list, the reported identity or the
	// surface (when Server.Surface asked for it) carry a secret the run
	// sent: the caller says what that means (a pin refuses, a check does
	// not trust the listing).
	Reflections []probe.Reflection
}

// Server lists the server once, within Timeout, and builds its observed
// record and identity. A listing that fails is a runerr error (Failed:
// Usage for a configuration the client refuses, Inconclusive otherwise),
// returned with a Result that holds the target alone.
func Server(ctx context.Context, opt ServerOptions) (*Result, error) {
	cfg := opt.Server
	secrets := opt.Secrets
	if secrets == nil {
		secrets = &redact.Set{}
	}
	RecordSecrets(cfg, secrets)
	_, target := Target(cfg, secrets)
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	obs, tl, err := List(ctx, cfg)
	if err != nil {
		return &Result{Target: target}, Failed(target, err)
	}
	id := Identity(cfg, secrets)
	id.PublisherKey = opt.PublisherKey
	if obs.ServerInfo != nil {
		id.ServerName, id.ServerVersion = obs.ServerInfo.Name, obs.ServerInfo.Version
	}
	return &Result{
		Target: target, Observation: obs, Tools: tl, Identity: id,
		Observed:    manifest.BuildObserved(opt.ServerID, tl, manifest.Completeness(obs.Completeness), opt.Classifier),
		Reflections: append(Reflections(secrets, tl.Tools, obs), SurfaceReflections(secrets, obs.Surface)...),
	}, nil
}

// Complete refuses a listing nothing can be approved from
// (runerr.Inconclusive): one that was capped, cycled, or is not complete,
// where a tool that was not seen would read as removed.
func (r *Result) Complete() error {
	switch {
	case r.Observation.CapReached, r.Observation.CursorCycle, r.Tools.Completeness != manifest.Complete:
		c := string(r.Tools.Completeness)
		if c == "" {
			c = "not complete"
		}
		return runerr.Inconclusivef("the listing of %s was %s, so nothing is approved from it: a tool that was not seen would be taken as removed", safetext.Quote(r.Target), c)
	}
	return nil
}

// Reflected is the error of a listing that carries a secret the run sent
// (nil when it carries none): nothing of it can be trusted or pinned
// (runerr.Inconclusive).
func (r *Result) Reflected() error {
	if len(r.Reflections) == 0 {
		return nil
	}
	return runerr.Inconclusivef("%s reflects a credential this run sent into its tool list (%s): it is redacted from every output, and nothing from this listing is approved or trusted. Rotate the credential and fix the server", safetext.Quote(r.Target), fmt.Sprintf("%d place(s)", len(r.Reflections)))
}
