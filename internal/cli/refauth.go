package cli

import (
	"net/http"
	"strings"

	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/oauth"
	"github.com/mcpdrift/mcpdrift/reffetch"
)

// A pinned document that answers 401 is fetched with a token only as
// oauth.DocumentAuth allows: its own protected resource metadata names
// the authorization server the MCP server that refers to it is authorized
// by, and the token is one for the document's own resource, got with the
// run's OAuth session (the --oauth flags: cached tokens, client
// credentials, the browser only with --oauth login). Every token is a
// secret of the run (e.secrets) before anything could write it.

// serverSession is the run's OAuth session for the HTTP server of s and
// the server's URL (nil: a stdio server, --oauth off, an Authorization
// header of its own, --oauth auto and no token cached for it, or a source
// that cannot be expanded, which the check itself reports).
func serverSession(e *env, base *liveFlags, s *lock.Server) (*oauth.Session, string) {
	if base == nil || s.Source.URL == "" {
		return nil, ""
	}
	l, _, err := liveFor(e, base, s.Source)
	if err != nil {
		return nil, ""
	}
	hdr := http.Header{}
	for _, h := range l.headers {
		if name, value, ok := strings.Cut(h, "="); ok {
			hdr.Add(strings.TrimSpace(name), value)
		}
	}
	sess, err := l.oauth.auth(e, l.baseURL, hdr)
	if err != nil || sess == nil {
		return nil, ""
	}
	return sess, l.baseURL
}

// refAuthorizers are the Authorizers of the documents servers pin, by
// URL: each authorized against the servers that pin it.
func refAuthorizers(e *env, base *liveFlags, servers []*lock.Server) map[string]reffetch.Authorizer {
	out := map[string]reffetch.Authorizer{}
	if base == nil {
		return out
	}
	type pinners struct {
		sess *oauth.Session
		urls []string
	}
	byDoc := map[string]*pinners{}
	for _, s := range servers {
		if len(s.Refs) == 0 {
			continue
		}
		sess, u := serverSession(e, base, s)
		if sess == nil {
			continue
		}
		for _, r := range s.Refs {
			p := byDoc[r.URL]
			if p == nil {
				p = &pinners{sess: sess}
				byDoc[r.URL] = p
			}
			if p.sess == sess {
				p.urls = append(p.urls, u)
			}
		}
	}
	for doc, p := range byDoc {
		out[doc] = p.sess.Documents(p.urls...)
	}
	return out
}
