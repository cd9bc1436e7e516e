package cli

import (
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/probe"
)

// targetOf is the target as it is recorded and shown, the run's secrets
// redacted (observe.Target).
func (e *env) targetOf(cfg mcpclient.Config) (probe.Target, string) {
	return observe.Target(cfg, e.secrets)
}

// resolvedEndpoint is the stdio endpoint as it ran (observe.ResolvedEndpoint).
func (e *env) resolvedEndpoint(cfg mcpclient.Config) string {
	return observe.ResolvedEndpoint(cfg, e.secrets)
}

// driftIdentities are the identities drift compares (probe.Input.Pinned
// and Now): the one the declared side's snapshot pinned, and the one the
// run established; both nil when the declared side recorded none or the
// server was not listed.
func (e *env) driftIdentities(cfg mcpclient.Config, obs *mcpclient.Observation, pinned *manifest.Identity) (*manifest.Identity, *manifest.Identity) {
	if pinned == nil || obs == nil {
		return nil, nil
	}
	now := observe.Identity(cfg, e.secrets)
	if obs.ServerInfo != nil {
		now.ServerName, now.ServerVersion = obs.ServerInfo.Name, obs.ServerInfo.Version
	}
	return pinned, &now
}
