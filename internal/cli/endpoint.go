package cli

import (
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
