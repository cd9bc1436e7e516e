package redact

import (
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// TestCredentialLike: the shapes of real keys and tokens in URL paths are
// credentials; the words, versions and dates real MCP paths are made of
// are not.
func TestCredentialLike(t *testing.T) {
	for _, s := range []string{
		"sk-ak-1a2B3c4D5e6F7g8H9i0J",               // Zapier
		"sk-proj-abcdefghijklmnop",                 // OpenAI
		"ghp_0123456789abcdefghijABCDEFGHIJ0123",   // GitHub
		"github_pat_11ABCDEFG0123456789_abcdef",    // GitHub fine-grained
		"xoxb-123456789012-123456789012-abcdefABC", // Slack
		"AKIAIOSFODNN7EXAMPLE",                     // AWS
		"550e8400-e29b-41d4-a716-446655440000",     // a UUID
		"a8F3kLm29QzX7pRt4VwY1nB6",                 // base62
		"0123456789abcdef0123456789abcdef01234567", // hex
		"3f786850e387550fdab836ed7e6dc881de23",     // random hex, shorter
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcDEF123",
		"tenant-7f3a9c2e41b8d605e1",
		"ZmFrZS10b2tlbi1mb3ItdGVzdHM", // base64url
		"Xk9pL2mN4qR7sT1uV8wY3zA6bC",  // base62
		"dGhpcyBpcyBhIHNlY3JldCBrZXk=",
		// Keys written in groups, and a key beside words.
		"K7QX-M2PA-9WZR-T4NB-H8LC-3DVE",
		"a8F3-kLm2-9QzX-7pRt-4VwY-1nB6",
		"my-mcp-a8F3kLm29QzX7pRt4VwY1nB6",
		"x-y-z-0123456789abcdef0123456789abcdef",
		// Groups after a word or before a shorter group, short groups
		// (missed by a first version of the word rule; the review's).
		"key-K7QX-M2PA-9WZR-T4NB", "u_a8F3-kLm2-9QzX-7pRt", "v1-K7Q-M2P-9WZ-T4N-H8L",
		"K7QX-M2PA-9WZR-T4NB-H8", "K7-M2-9W-T4-H8-LC-3D-VE", "a8F-kLm2-9Qz-X7pR-4Vw-Y1nB",
	} {
		if !credentialLike(s) {
			t.Errorf("%q is not taken for a credential", s)
		}
	}
	for _, s := range []string{
		"", "mcp", "sse", "v1", "api", "mcp-server-2025-06-18", "streamable-http-server-v2", "2025-11-25",
		"server-everything", "my_server_name_long_version", "index.html", "@modelcontextprotocol",
		"github-mcp-server", "skills-and-tools", "sk-short", "abcdefghijklmnopqrstuvwx", "1234567890123456789",
		"streamableHttpServer", "MCP_SERVER_GATEWAY_V2",
		// Real organisations, repositories and servers in MCP URLs.
		"GoogleCloudPlatform", "PowerShellGallery", "YouTubeTranscriptMCP", "GitHubMCPv2Server", "OpenAPI2MCPServer",
		"mcpServerOAuth2Demo", "PersonalAccessTokenDemo", "modelcontextprotocol", "@smithery-ai", "context7-mcp",
		"copilot_spaces", "readonly", "runtime", "webhooks", "MicrosoftDocs", "AzureDevOpsMCP", "2025-03-26",
		"streamable-http", "awslabs.aws-documentation-mcp-server", "cloudflare-docs-mcp",
		// Words joined by separators: model and server names with versions.
		"all-MiniLM-L6-v2", "k8s-mcp-server-v2", "s3-mcp-server-v2", "o4-mini-2025-04-16",
		"gpt-4o-mini-2024-07-18", "Llama-3.1-8B-Instruct", "Qwen2.5-Coder-32B-Instruct",
		"Mistral-7B-Instruct-v0.3", "claude-3-5-sonnet-20241022", "text-embedding-3-large",
		"bge-m3-v1.5-q4_k_m", "gemini-2.0-flash-001", "e5-mistral-7b-instruct",
	} {
		if credentialLike(s) {
			t.Errorf("%q is taken for a credential", s)
		}
	}
}

// TestURLPathCredentials: a path segment that looks like a credential is a
// secret of the run, redacted wherever it is written (as written and
// decoded, in the URL and on its own), and left out of a recorded URL;
// the rest of the path stays.
func TestURLPathCredentials(t *testing.T) {
	const key = "sk-ak-1a2B3c4D5e6F7g8H9i0J"
	raw := "https://actions.example.com/mcp/" + key + "/sse?x=1"
	if got, want := SanitizeURL(raw), "https://actions.example.com/mcp/[REDACTED]/sse?x="; got != want {
		t.Errorf("SanitizeURL = %q, want %q", got, want)
	}
	var s Set
	s.AddURL(raw)
	for _, text := range []string{
		raw,
		`cannot reach "` + raw + `": dial tcp 127.0.0.1:1: connect: connection refused`,
		"the key " + key + " alone",
	} {
		if out := s.String(text); strings.Contains(out, key) || strings.Contains(out, key[:12]) && !strings.Contains(out, Placeholder) {
			t.Errorf("%q: %q", text, out)
		}
	}
	// Written escaped in the URL (a space in the key), and decoded.
	esc := "https://h.example.com/" + "a8F3kLm29Q%20zX7pRt4VwY1nB6" + "/mcp"
	var s2 Set
	s2.AddURL(esc)
	if out := s2.String(esc + " a8F3kLm29Q zX7pRt4VwY1nB6"); strings.Contains(out, "a8F3kLm29Q") {
		t.Errorf("escaped or decoded segment left: %q", out)
	}
	if got := SanitizeURL(esc); got != "https://h.example.com/[REDACTED]/mcp" {
		t.Errorf("SanitizeURL(escaped) = %q", got)
	}
	for _, u := range []string{"https://h.example.com/mcp", "http://127.0.0.1:8931/v1/mcp-server-2025-06-18/sse", "https://h.example.com/"} {
		if got := SanitizeURL(u); got != u {
			t.Errorf("SanitizeURL(%q) = %q", u, got)
		}
	}
}

// FuzzURLCredentials: whatever the URL, a recorded URL (SanitizeURL) holds
// none of its path segments that look like a credential, as written or
// decoded, nor does anything the run's set redacts once AddURL has seen
// it; sanitizing an http(s) URL twice changes nothing more.
func FuzzURLCredentials(f *testing.F) {
	for _, s := range []string{
		"https://actions.example.com/mcp/sk-ak-1a2B3c4D5e6F7g8H9i0J/sse?x=1",
		"https://h.example.com/a8F3kLm29Q%20zX7pRt4VwY1nB6/mcp",
		"http://127.0.0.1:1/550e8400-e29b-41d4-a716-446655440000",
		"https://h/%2Fsk-0123456789abcdef%2F/x",
		"https://u:p@h/mcp",
		"http://127.0.0.1:1/ü/sk-ak-1a2B3c%2F4D5e6F7g8H9i0J/sse",
		"http://h/a{b}/abc%20def;ghi12345%20zzzzzz/sse",
		"http://h/mcp?sk-ak-Q7w2E9r4T1y8U3i6O5p0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		segs, at, decoded := pathCredentials(raw)
		clean := SanitizeURL(raw)
		var s Set
		s.AddURL(raw)
		// What is written of the URL: as typed, and as Go writes it again
		// (what an HTTP error message quotes).
		// Each is searched on its own: joined, the end of one and the
		// start of the next could spell a segment neither holds (a query
		// key of hex digits, then the joining space, spelled the segment
		// "<the same digits> ", found by the fuzzer).
		redacted := []string{s.String(raw), s.String(u.String()), s.String(u.EscapedPath())}
		for k, i := range at {
			if len(decoded[k]) < MinLen {
				continue
			}
			for _, v := range append([]string{segs[i]}, pathForms(decoded[k])...) {
				if len(v) >= 16 && strings.Contains(clean, v) {
					t.Fatalf("SanitizeURL(%q) = %q holds %q", raw, clean, v)
				}
				for _, r := range redacted {
					if len(v) >= 16 && strings.Contains(r, v) {
						t.Fatalf("redacted %q = %q holds %q", raw, r, v)
					}
				}
			}
		}
		// (For the URLs mcpdrift sends to: absolute http or https.)
		if again := SanitizeURL(clean); (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && again != clean {
			t.Fatalf("SanitizeURL(%q) = %q, then %q", raw, clean, again)
		}
	})
}

// TestCredentialLikeRandomKeys: random keys of the usual alphabets (base62,
// base64url, base36, base32), 16 bytes and more, are taken for
// credentials nearly always (the rule is statistical: a key that happens
// to look like words is missed, and the figures say how often).
func TestCredentialLikeRandomKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name, set  string
		at16, at32 float64
	}{
		{"base62", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 0.95, 0.98},
		{"base64url", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", 0.90, 0.98},
		{"base36", "abcdefghijklmnopqrstuvwxyz0123456789", 0.85, 0.95},
		{"base32", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 0.75, 0.85},
	} {
		for _, x := range []struct {
			n    int
			want float64
		}{{16, c.at16}, {32, c.at32}} {
			n, want := x.n, x.want
			hit := 0
			for range 2000 {
				b := make([]byte, n)
				for i := range b {
					b[i] = c.set[r.IntN(len(c.set))]
				}
				if credentialLike(string(b)) {
					hit++
				}
			}
			if got := float64(hit) / 2000; got < want {
				t.Errorf("%s keys of %d bytes: %.1f%% taken for credentials, want at least %.0f%%", c.name, n, 100*got, 100*want)
			} else {
				t.Logf("%s keys of %d bytes: %.1f%%", c.name, n, 100*got)
			}
		}
	}
}

// TestCredentialLikeGroupedKeys: keys written in groups for people to
// read, alone, after a word, or before a shorter last group, are taken for
// credentials about as often as the same letters and digits without the
// separators.
func TestCredentialLikeGroupedKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const set = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	group := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[r.IntN(len(set))]
		}
		return string(b)
	}
	for _, c := range []struct {
		prefix string
		groups []int
	}{
		{"", []int{4, 4, 4, 4}}, {"key-", []int{4, 4, 4, 4}}, {"u_", []int{5, 5, 5}}, {"", []int{4, 4, 4, 2}},
		{"mcp-", []int{4, 4, 4, 4, 4, 2}}, {"", []int{2, 2, 2, 2, 2, 2, 2, 2}}, {"v1-", []int{3, 3, 3, 3, 3}},
	} {
		hit := 0
		for range 2000 {
			var parts []string
			for _, n := range c.groups {
				parts = append(parts, group(n))
			}
			if credentialLike(c.prefix + strings.Join(parts, "-")) {
				hit++
			}
		}
		if got := float64(hit) / 2000; got < 0.85 {
			t.Errorf("%q + groups %v: %.1f%% taken for credentials, want at least 85%%", c.prefix, c.groups, 100*got)
		} else {
			t.Logf("%q + groups %v: %.1f%%", c.prefix, c.groups, 100*got)
		}
	}
}

// TestURLCredentialsAsWritten: a path that is not a valid encoding (a
// non-ASCII byte, a '{') is cut as it is written, not as Go writes it
// again (where a %2F becomes a '/'); a credential as a bare query key is
// one too.
func TestURLCredentialsAsWritten(t *testing.T) {
	for _, c := range []struct{ raw, key string }{
		{"http://127.0.0.1:1/ü/sk-ak-1a2B3c%2F4D5e6F7g8H9i0J/sse", "4D5e6F7g8H9i0J"},
		{"http://127.0.0.1:1/a{b}/sk-ak-1a2B3c%2F4D5e6F7g8H9i0J/sse", "4D5e6F7g8H9i0J"},
		{"http://h/mcp?sk-ak-Q7w2E9r4T1y8U3i6O5p0", "Q7w2E9r4T1y8U3i6O5p0"},
		{"http://h/mcp?x=1&sk-ak-Q7w2E9r4T1y8U3i6O5p0=", "Q7w2E9r4T1y8U3i6O5p0"},
	} {
		clean := SanitizeURL(c.raw)
		if strings.Contains(clean, c.key) || !strings.Contains(clean, "REDACTED") {
			t.Errorf("SanitizeURL(%q) = %q", c.raw, clean)
		}
		if !HasCredentialShape(c.raw) {
			t.Errorf("HasCredentialShape(%q) = false", c.raw)
		}
		var s Set
		s.AddURL(c.raw)
		u, _ := url.Parse(c.raw)
		for _, w := range []string{c.raw, u.String(), `Post "` + u.String() + `": dial tcp: connection refused`} {
			if out := s.String(w); strings.Contains(out, c.key) {
				t.Errorf("%q redacted: %q", w, out)
			}
		}
	}
	if HasCredentialShape("https://h.example/v1/mcp-server-2025-06-18/sse?page=2") {
		t.Error("an ordinary URL has a credential shape")
	}
}
