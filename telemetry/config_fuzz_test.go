package telemetry

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// FuzzResolve: whatever --otlp-endpoint and the OTEL_EXPORTER_OTLP_*
// variables hold, Resolve never panics; what it accepts is an http(s)
// traces URL with a host and no user info or fragment, headers with token
// names and values a request can carry; what it refuses is a ConfigError
// whose message is printable as it is and never holds a header value or
// the URL's user info (the marker the fuzzer's values carry).
func FuzzResolve(f *testing.F) {
	const mark = "SECRETMARK"
	for _, s := range [][4]string{
		{"http://127.0.0.1:4318", "", "authorization=Bearer%20x", "ci"},
		{"", "https://collector.example/otlp", "a=1,b=2", ""},
		{"not a url", "", "", ""},
		{"http://user:pw@h:4318", "", "", ""},
		{"", "::x", "no-equals", "svc\x1b[31m"},
		{"http://h:4318/#x", "", "bad name=1", ""},
		{"", "http://h:4318/v1/traces?token=t", "k=%zz", ""},
		{"http://[::1]:4318/base/", "", "x-api-key=\r\nInjected: 1", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[0] != "", false)
	}
	f.Fuzz(func(t *testing.T, flag, endpoint, headers, service string, set, traces bool) {
		// Every header value and the flag's user info carry the marker.
		headers = strings.ReplaceAll(headers, "=", "="+mark)
		if u, err := url.Parse(flag); err == nil && u.User != nil {
			flag = strings.Replace(flag, "@", mark+"@", 1)
		}
		vars := map[string]string{EnvHeaders: headers, EnvServiceName: service}
		if traces {
			vars[EnvTracesEndpoint] = endpoint
		} else {
			vars[EnvEndpoint] = endpoint
		}
		s, err := Resolve(flag, set, env(vars))
		if err != nil {
			if _, ok := err.(*ConfigError); !ok {
				t.Fatalf("not a ConfigError: %T %v", err, err)
			}
			if msg := err.Error(); strings.Contains(msg, mark) || !safetext.IsSafe(msg) {
				t.Fatalf("message %q", msg)
			}
			return
		}
		if s == nil {
			return
		}
		u, err := url.Parse(s.URL)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" || u.User != nil || u.Fragment != "" {
			t.Fatalf("accepted %q", s.URL)
		}
		if (s.From == FlagEndpoint || s.From == EnvEndpoint) && !strings.HasSuffix(u.Path, "/"+TracesPath) {
			t.Fatalf("base URL %q without the traces path", s.URL)
		}
		for name, v := range s.Headers {
			if name != http.CanonicalHeaderKey(name) || !token(name) || strings.ContainsAny(v, "\r\n\x00") {
				t.Fatalf("header %q: %q", name, v)
			}
		}
		if !safetext.IsSafe(s.ServiceName) || s.ServiceName == "" || len(s.ServiceName) > 256 {
			t.Fatalf("service name %q", s.ServiceName)
		}
		if !safetext.IsSafe(s.Shown()) {
			t.Fatalf("shown %q", s.Shown())
		}
	})
}
