package cli

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/oauth"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// proxyOAuth sets the gateway's OAuth toward its HTTP upstream. With
// --upstream-oauth the gateway holds its own client_credentials token for
// the upstream (--oauth-client-id and its secret) and the downstream's
// Authorization is stripped, never forwarded. Otherwise, when the
// downstream's Authorization is forwarded and the upstream publishes
// protected resource metadata, the gateway serves its own (the upstream's
// authorization servers, the gateway as the resource) so that a client
// can discover where to authorize.
func proxyOAuth(e *env, live *liveFlags, upstreamOAuth bool, pc *proxy.Config, hopts *proxy.HTTPOptions) error {
	if pc.Upstream.URL == "" {
		if upstreamOAuth {
			return usageErr("--upstream-oauth applies to an HTTP upstream (--upstream-url)")
		}
		return nil
	}
	if upstreamOAuth {
		if pc.Upstream.Headers.Get("Authorization") != "" {
			return usageErr("--upstream-oauth and an Authorization --header: give one")
		}
		opt, err := live.oauth.options(e, oauth.ModeClientCredentials)
		if err != nil {
			return err
		}
		opt.Store = nil // the gateway's token lives in its memory only
		s, err := oauth.NewSession(opt)
		if err != nil {
			return usageErr("--upstream-oauth: %s", safetext.Inert(err.Error()))
		}
		base := http.RoundTripper(nil)
		if pc.Upstream.HTTPClient != nil {
			base = pc.Upstream.HTTPClient.Transport
		}
		pc.Upstream.HTTPClient = &http.Client{Transport: mcpclient.NewAuthTransport(base, s)}
		pc.Upstream.ForwardAuthorization = false
		return nil
	}
	if !pc.Upstream.ForwardAuthorization {
		return nil
	}
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	d, err := oauth.Discover(ctx, oauth.DiscoverOptions{ServerURL: pc.Upstream.URL})
	if err != nil || d.Legacy || d.Metadata == nil {
		return nil // not a protected upstream, or not one that says where to authorize
	}
	hopts.ResourceMetadata = &proxy.ResourceMetadata{AuthorizationServers: d.Metadata.AuthorizationServers, ScopesSupported: d.Metadata.ScopesSupported}
	fmt.Fprintf(e.stderr, "mcpdrift: the upstream is protected (authorization server %s): serving /.well-known/oauth-protected-resource for the gateway\n", safetext.Quote(d.Issuer))
	return nil
}
