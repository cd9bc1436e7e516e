package oauth

import (
	"strings"
	"testing"
)

func TestParseWWWAuthenticate(t *testing.T) {
	cs, err := ParseWWWAuthenticate([]string{`Bearer resource_metadata="https://x.example/.well-known/oauth-protected-resource", scope="files:read files:write", Basic realm="a, b"`, `DPoP algs="ES256"`})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || cs[0].Scheme != "bearer" || cs[1].Scheme != "basic" || cs[2].Scheme != "dpop" {
		t.Fatalf("%+v", cs)
	}
	b, ok := BearerOf(cs)
	if !ok || b.ResourceMetadata != "https://x.example/.well-known/oauth-protected-resource" || b.Scope != "files:read files:write" {
		t.Fatalf("%+v", b)
	}
	if cs[1].Params["realm"] != "a, b" {
		t.Fatalf("quoted comma: %+v", cs[1])
	}
	for in, want := range map[string]string{
		`Bearer error="insufficient_scope", scope="mcp:write", error_description="need \"write\""`: `need "write"`,
		`bearer ERROR=insufficient_scope,scope=x`:                                                  "",
		`Negotiate abc==, Bearer scope="s"`:                                                        "",
	} {
		cs, err := ParseWWWAuthenticate([]string{in})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		b, ok := BearerOf(cs)
		if !ok || b.ErrorDescription != want {
			t.Errorf("%s: %+v", in, b)
		}
	}
}

// Hostile quoting: every malformed header is refused whole, never read in
// part.
func TestParseWWWAuthenticateHostile(t *testing.T) {
	for _, in := range []string{
		`Bearer scope="unterminated`,
		`Bearer scope="a\`,
		`Bearer scope="a` + "\x00" + `b"`,
		`Bearer scope="a` + "\n" + `b"`,
		`Bearer scope="a", scope="b"`,
		`Bearer scope= , x=y`,
		`Bearer =x`,
		`Bearer resource_metadata="https://a"x`,
		`Bearer scope="a" resource_metadata="https://evil"`,
		`"Bearer" scope=x`,
		`Bearer scope=a"b"`,
		`Bearer ` + strings.Repeat(`a=b, `, 40),
		strings.Repeat(`Bearer x=y, `, 2000),
	} {
		if cs, err := ParseWWWAuthenticate([]string{in}); err == nil {
			t.Errorf("%q accepted: %+v", in, cs)
		}
	}
}

func FuzzParseWWWAuthenticate(f *testing.F) {
	for _, s := range []string{`Bearer resource_metadata="https://a/b", scope="x y"`, `Basic realm="a\"b", Bearer error=invalid_token`, `Negotiate abc==`, `Bearer scope="a`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseWWWAuthenticate([]string{s})
		if err != nil {
			return
		}
		for _, c := range cs {
			if c.Scheme == "" || strings.ToLower(c.Scheme) != c.Scheme {
				t.Fatalf("scheme %q", c.Scheme)
			}
			if len(c.Params) > maxChallengeParams {
				t.Fatal("too many params")
			}
			for k, v := range c.Params {
				if k == "" || strings.ContainsAny(v, "\x00\r\n") {
					t.Fatalf("param %q=%q", k, v)
				}
			}
		}
	})
}

func FuzzParseResourceMetadata(f *testing.F) {
	f.Add([]byte(`{"resource":"https://a.example/mcp","authorization_servers":["https://as.example"],"scopes_supported":["x"]}`))
	f.Add([]byte(`{"resource":"http://127.0.0.1:1","authorization_servers":["http://localhost:2/t"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseResourceMetadata(b)
		if err != nil {
			return
		}
		if _, err := resourceURL(m.Resource); err != nil || len(m.AuthorizationServers) == 0 {
			t.Fatalf("accepted %q", b)
		}
		for _, as := range m.AuthorizationServers {
			if _, err := ServerMetadataURLs(as); err != nil {
				t.Fatalf("an accepted authorization server has no metadata URLs: %q", as)
			}
		}
	})
}

func FuzzParseServerMetadata(f *testing.F) {
	f.Add([]byte(`{"issuer":"https://as.example/t","authorization_endpoint":"https://as.example/a","token_endpoint":"https://as.example/t/token"}`), "https://as.example/t")
	f.Fuzz(func(t *testing.T, b []byte, issuer string) {
		m, err := ParseServerMetadata(b, issuer)
		if err != nil {
			return
		}
		iss, err := issuerURL(m.Issuer)
		if err != nil || m.Issuer != issuer {
			t.Fatalf("issuer %q accepted for %q", m.Issuer, issuer)
		}
		for _, e := range []string{m.TokenEndpoint, m.AuthorizationEndpoint, m.RegistrationEndpoint} {
			if e != "" && sameOrigin(e, iss) != nil {
				t.Fatalf("endpoint %q at another origin than %q", e, m.Issuer)
			}
		}
	})
}

func TestWellKnownURLs(t *testing.T) {
	got, _ := ResourceMetadataURLs("https://mcp.example/public/mcp?x=1")
	if strings.Join(got, " ") != "https://mcp.example/.well-known/oauth-protected-resource/public/mcp https://mcp.example/.well-known/oauth-protected-resource" {
		t.Fatal(got)
	}
	got, _ = ServerMetadataURLs("https://auth.example/tenant1")
	if strings.Join(got, " ") != "https://auth.example/.well-known/oauth-authorization-server/tenant1 https://auth.example/.well-known/openid-configuration/tenant1 https://auth.example/tenant1/.well-known/openid-configuration" {
		t.Fatal(got)
	}
	for r, tg := range map[string]string{"https://a/mcp": "https://a/mcp", "https://a": "https://a:443/x", "http://127.0.0.1:5/": "http://127.0.0.1:5/mcp"} {
		if !Covers(r, tg) {
			t.Errorf("%s does not cover %s", r, tg)
		}
	}
	for r, tg := range map[string]string{"https://a/mcp": "https://a/mcpx", "https://a/mcp/": "https://b/mcp", "http://a/x": "https://a/x"} {
		if Covers(r, tg) {
			t.Errorf("%s covers %s", r, tg)
		}
	}
}
