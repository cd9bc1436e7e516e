package mcpclient

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

func TestResolveEndpoint(t *testing.T) {
	stream, _ := url.Parse("http://127.0.0.1:8080/sse")
	base := stream
	good := map[string]string{
		"/message?sessionId=abc":                    "http://127.0.0.1:8080/message?sessionId=abc",
		"message?sessionId=abc":                     "http://127.0.0.1:8080/message?sessionId=abc",
		"http://127.0.0.1:8080/m":                   "http://127.0.0.1:8080/m",
		"HTTP://127.0.0.1:8080/m#frag":              "http://127.0.0.1:8080/m",
		"/../../admin":                              "http://127.0.0.1:8080/admin", // same origin: the path is the server's business
		"?sessionId=1":                              "http://127.0.0.1:8080/sse?sessionId=1",
		"/m?next=http://other.example/":             "http://127.0.0.1:8080/m?next=http://other.example/",
		"//127.0.0.1:8080/x":                        "http://127.0.0.1:8080/x",
		"/%2F%2Fevil.example/x":                     "http://127.0.0.1:8080/%2F%2Fevil.example/x",
		"/\\evil.example/x":                         "http://127.0.0.1:8080/%5Cevil.example/x",
		"http://127.0.0.1:8080/m?sessionId=a%20b&x": "http://127.0.0.1:8080/m?sessionId=a%20b&x",
	}
	for in, want := range good {
		u, err := resolveEndpoint(stream, base, []byte(in))
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if u.String() != want {
			t.Errorf("%q resolved to %s, want %s", in, u, want)
		}
	}
	bad := []string{
		"", " /m", "/m x", "/m\n", "/m\x00", "/ünï",
		"http://127.0.0.1:8081/m",  // another port
		"https://127.0.0.1:8080/m", // another scheme
		"http://localhost:8080/m",  // another host name for the same address is another origin
		"//evil.example/m",         // scheme-relative, another host
		"http://evil.example/m",    // another host
		"http://127.0.0.1:8080@evil.example/m",
		"http://user:pw@127.0.0.1:8080/m", // user info, even same origin
		"ftp://127.0.0.1:8080/m", "javascript:alert(1)", "mailto:a@b", "http:opaque", "data:,x",
		"http://[::1]:8080/m", "http://127.0.0.1.:8080/m", "http://0x7f000001:8080/m",
		strings.Repeat("a", maxEndpointLen+1),
	}
	for _, in := range bad {
		if u, err := resolveEndpoint(stream, base, []byte(in)); err == nil {
			t.Errorf("%q accepted as %s", in, u)
		}
	}
	// Default ports are the same origin written or not.
	s80, _ := url.Parse("http://example.test/sse")
	if u, err := resolveEndpoint(s80, s80, []byte("http://example.test:80/m")); err != nil || u.Host != "example.test:80" {
		t.Errorf("explicit default port: %v %v", u, err)
	}
}

func FuzzResolveEndpoint(f *testing.F) {
	for _, s := range []string{"/message?sessionId=1", "//evil/x", "http://127.0.0.1:8080/x", "http://a@127.0.0.1:8080/", "../x", "?a", "http:x", "/\\x"} {
		f.Add(s)
	}
	stream, _ := url.Parse("http://127.0.0.1:8080/sse/stream")
	f.Fuzz(func(t *testing.T, in string) {
		u, err := resolveEndpoint(stream, stream, []byte(in))
		if err != nil {
			return
		}
		if origin(u) != origin(stream) || u.User != nil || u.Fragment != "" || (u.Scheme != "http" && u.Scheme != "https") {
			t.Fatalf("%q accepted as %s", in, u)
		}
		// What is sent is the URL's text: it must name the same origin.
		again, err := url.Parse(u.String())
		if err != nil || origin(again) != origin(stream) || again.User != nil {
			t.Fatalf("%q -> %s re-reads as %v (%v)", in, u, again, err)
		}
	})
}

func TestParseClientCapabilities(t *testing.T) {
	good := map[string]string{
		"":                           `{}`,
		"  ":                         `{}`,
		"{}":                         `{}`,
		"sampling":                   `{"sampling":{}}`,
		" roots , sampling,roots ":   `{"roots":{},"sampling":{}}`,
		"elicitation,sampling,roots": `{"elicitation":{},"roots":{},"sampling":{}}`,
		`{"sampling":{},"roots":{"listChanged":true}}`:             `{"roots":{"listChanged":true},"sampling":{}}`,
		` { "elicitation" : { "form" : {} , "url":{} } }`:          `{"elicitation":{"form":{},"url":{}}}`,
		`{"experimental":{"x.y/z":{"n":1.0E2}}}`:                   `{"experimental":{"x.y/z":{"n":100}}}`,
		`{"tasks":{"requests":{"sampling":{"createMessage":{}}}}}`: `{"tasks":{"requests":{"sampling":{"createMessage":{}}}}}`,
	}
	for in, want := range good {
		got, err := ParseClientCapabilities(in)
		if err != nil || string(got) != want {
			t.Errorf("%q: %s, %v; want %s", in, got, err, want)
		}
	}
	bad := []string{
		"sampeling", "sampling,", ",", "sampling roots", `{"sampeling":{}}`, `{"sampling":true}`, `{"sampling":null}`,
		`[]`, `"sampling"`, `{"sampling":{}`, `{"sampling":{},"sampling":{}}`, `{"sampling":{}} x`, "{\"s\xffampling\":{}}",
		"{" + strings.Repeat(" ", MaxClientCapabilities) + "}",
	}
	for _, in := range bad {
		if got, err := ParseClientCapabilities(in); err == nil {
			t.Errorf("%q accepted as %s", in, got)
		}
	}
	if CapabilityNames([]byte(`{"roots":{},"sampling":{}}`)) != "roots, sampling" || CapabilityNames([]byte(`{}`)) != "none" {
		t.Errorf("CapabilityNames")
	}
}

func FuzzClientCapabilities(f *testing.F) {
	for _, s := range []string{"", "sampling,roots", `{"sampling":{}}`, `{"roots":{"listChanged":true}}`, `{"experimental":{"a":[1,2]}}`, "{", "roots,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := ParseClientCapabilities(in)
		if err != nil {
			return
		}
		// A canonical JSON object of known capabilities, each an object,
		// and a fixed point: parsing it again gives the same bytes.
		doc, perr := jcs.Parse(out)
		if perr != nil || doc.Root().Kind() != jcs.Object || !bytes.Equal(doc.Root().Canonical(), out) {
			t.Fatalf("%q -> %s (%v)", in, out, perr)
		}
		again, err := ParseClientCapabilities(string(out))
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("%q -> %s -> %s, %v", in, out, again, err)
		}
	})
}
