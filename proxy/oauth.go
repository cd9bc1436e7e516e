package proxy

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcpdrift/mcpdrift/oauth"
)

// ResourceMetadata is the protected resource metadata (RFC 9728) the
// gateway serves for itself when it fronts a protected upstream and
// forwards the downstream's Authorization: a client that reaches the
// gateway discovers from it where to authorize, and the upstream's
// challenges name it in place of the upstream's own. The resource is the
// gateway's /mcp URL as the request reached it (its Host), so that a
// client's check that the metadata is for the server it talks to holds.
type ResourceMetadata struct {
	// AuthorizationServers and ScopesSupported are the upstream's (its
	// own protected resource metadata).
	AuthorizationServers []string
	ScopesSupported      []string
}

const resourceMetadataPath = "/.well-known/oauth-protected-resource"

// serveResourceMetadata adds the metadata's well-known URLs (the root and
// the path-specific one of /mcp) to mux.
func (g *Gateway) serveResourceMetadata(mux *http.ServeMux, rm *ResourceMetadata) {
	if rm == nil {
		return
	}
	h := func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		doc := map[string]any{"resource": gatewayURL(r) + "/mcp", "authorization_servers": rm.AuthorizationServers, "bearer_methods_supported": []string{"header"}}
		if len(rm.ScopesSupported) > 0 {
			doc["scopes_supported"] = rm.ScopesSupported
		}
		b, _ := json.Marshal(doc)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
	}
	mux.HandleFunc(resourceMetadataPath, h)
	mux.HandleFunc(resourceMetadataPath+"/mcp", h)
}

// gatewayURL is the gateway's origin as the request reached it.
func gatewayURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// challengeWriter names the gateway's own resource metadata in the
// upstream's 401 and 403 challenges it relays: the upstream's metadata
// names the upstream as the resource, which a client that talks to the
// gateway must refuse.
type challengeWriter struct {
	http.ResponseWriter
	prm string
}

func (c *challengeWriter) WriteHeader(status int) {
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		if v := c.Header().Values("WWW-Authenticate"); len(v) > 0 {
			c.Header().Set("WWW-Authenticate", rewriteChallenge(v, c.prm))
		}
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *challengeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// rewriteChallenge is the Bearer challenge of values with its
// resource_metadata replaced by prm; its scope and error are kept (a
// malformed header gives a challenge naming prm alone).
func rewriteChallenge(values []string, prm string) string {
	var b oauth.Bearer
	if cs, err := oauth.ParseWWWAuthenticate(values); err == nil {
		b, _ = oauth.BearerOf(cs)
	}
	out := `Bearer resource_metadata=` + quoteParam(prm)
	if b.Scope != "" {
		out += `, scope=` + quoteParam(b.Scope)
	}
	if b.Error != "" {
		out += `, error=` + quoteParam(b.Error)
	}
	return out
}

// quoteParam is an RFC 9110 quoted-string of s (control characters
// dropped).
func quoteParam(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c < 0x20 || c == 0x7f:
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// withChallenge wraps w when the gateway serves its own resource metadata.
func withChallenge(w http.ResponseWriter, r *http.Request, rm *ResourceMetadata) http.ResponseWriter {
	if rm == nil {
		return w
	}
	return &challengeWriter{ResponseWriter: w, prm: gatewayURL(r) + resourceMetadataPath + "/mcp"}
}
