package telemetry

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// The environment variables Resolve reads (the OpenTelemetry exporter
// specification's names).
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvHeaders        = "OTEL_EXPORTER_OTLP_HEADERS"
	EnvTracesHeaders  = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	EnvServiceName    = "OTEL_SERVICE_NAME"
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"

	// TLS to the collector: a CA bundle to verify it with, and a client
	// certificate and key (PEM files), the traces-specific ones first.
	EnvCertificate             = "OTEL_EXPORTER_OTLP_CERTIFICATE"
	EnvTracesCertificate       = "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"
	EnvClientCertificate       = "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"
	EnvTracesClientCertificate = "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE"
	EnvClientKey               = "OTEL_EXPORTER_OTLP_CLIENT_KEY"
	EnvTracesClientKey         = "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY"
)

// FlagEndpoint is the flag every command that makes MCP requests takes.
const FlagEndpoint = "--otlp-endpoint"

// DefaultServiceName is service.name without OTEL_SERVICE_NAME.
const DefaultServiceName = "mcpdrift"

// TracesPath is appended to a base endpoint (the flag, or
// OTEL_EXPORTER_OTLP_ENDPOINT).
const TracesPath = "v1/traces"

// Settings say where spans go. Headers are secrets: callers add every
// value to the run's redact.Set before anything can print it.
type Settings struct {
	// URL is the OTLP/HTTP traces endpoint, …/v1/traces.
	URL string
	// From names what set URL: FlagEndpoint or an environment variable.
	From        string
	Headers     map[string]string
	ServiceName string
	// TLS names the PEM files the environment gives for TLS to the
	// collector (New reads them); zero when it gives none. An http://
	// endpoint uses none of them.
	TLS TLSFiles
}

// TLSFiles are the PEM files of TLS to the collector, and the variables
// that named them (for messages).
type TLSFiles struct {
	CA, Cert, Key             string
	CAFrom, CertFrom, KeyFrom string
}

// ConfigError is a configuration that cannot be used. Its message names
// the flag or variable, never a header value or the URL's credentials.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

func bad(format string, args ...any) error {
	return &ConfigError{Msg: fmt.Sprintf(format, args...)}
}

// Resolve reads the export configuration. flag is --otlp-endpoint (a base
// URL, as OTEL_EXPORTER_OTLP_ENDPOINT: /v1/traces is appended) and set
// says whether it was given; lookup reads the environment (os.LookupEnv).
//
// The flag wins over the environment; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// (used as it is) wins over OTEL_EXPORTER_OTLP_ENDPOINT.
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn off export the
// environment configured, not the flag. Headers come from
// OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS,
// whose entries win by name ("name=value,name=value", values
// percent-decoded). Without an endpoint it returns nil: no export.
func Resolve(flag string, set bool, lookup func(string) (string, bool)) (*Settings, error) {
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	s := &Settings{ServiceName: DefaultServiceName}
	switch {
	case set:
		u, err := endpointURL(FlagEndpoint, flag, true)
		if err != nil {
			return nil, err
		}
		s.URL, s.From = u, FlagEndpoint
	case strings.EqualFold(get(EnvSDKDisabled), "true") || strings.EqualFold(get(EnvTracesExporter), "none"):
		return nil, nil
	case get(EnvTracesEndpoint) != "":
		u, err := endpointURL(EnvTracesEndpoint, get(EnvTracesEndpoint), false)
		if err != nil {
			return nil, err
		}
		s.URL, s.From = u, EnvTracesEndpoint
	case get(EnvEndpoint) != "":
		u, err := endpointURL(EnvEndpoint, get(EnvEndpoint), true)
		if err != nil {
			return nil, err
		}
		s.URL, s.From = u, EnvEndpoint
	default:
		return nil, nil
	}
	for _, k := range []string{EnvHeaders, EnvTracesHeaders} {
		v, ok := lookup(k)
		if !ok {
			continue
		}
		h, err := parseHeaders(k, v)
		if err != nil {
			return nil, err
		}
		if s.Headers == nil && len(h) > 0 {
			s.Headers = map[string]string{}
		}
		for name, val := range h {
			s.Headers[name] = val
		}
	}
	// pick is a signal-specific variable's value, else the general one's,
	// and which gave it.
	pick := func(specific, general string) (value, from string) {
		if v := get(specific); v != "" {
			return v, specific
		}
		if v := get(general); v != "" {
			return v, general
		}
		return "", ""
	}
	// The protocol: OTLP over HTTP, protobuf (or JSON, which the exporter
	// also speaks). An environment that configured the endpoint for gRPC
	// is refused: the exporter would send HTTP to it anyway (it turns
	// grpc into http/protobuf without a word), and every export would
	// fail. With the flag, which asks for OTLP/HTTP, grpc is overridden.
	proto, protoFrom := pick(EnvTracesProtocol, EnvProtocol)
	switch proto {
	case "", "http/protobuf", "http/json":
	case "grpc":
		if s.From != FlagEndpoint {
			return nil, bad("%s is grpc: mcpdrift exports OTLP over HTTP only; give the collector's OTLP/HTTP endpoint (port 4318 by default) and set %s to http/protobuf, or unset it", protoFrom, protoFrom)
		}
	default:
		return nil, bad("%s must be http/protobuf or http/json (mcpdrift exports OTLP over HTTP), not %s", protoFrom, safetext.Quote(safetext.Clip(proto, 32)))
	}
	s.TLS.CA, s.TLS.CAFrom = pick(EnvTracesCertificate, EnvCertificate)
	s.TLS.Cert, s.TLS.CertFrom = pick(EnvTracesClientCertificate, EnvClientCertificate)
	s.TLS.Key, s.TLS.KeyFrom = pick(EnvTracesClientKey, EnvClientKey)
	switch {
	case s.TLS.Cert != "" && s.TLS.Key == "":
		return nil, bad("%s is set without %s: a client certificate needs its key", s.TLS.CertFrom, EnvClientKey)
	case s.TLS.Key != "" && s.TLS.Cert == "":
		return nil, bad("%s is set without %s: a client key needs its certificate", s.TLS.KeyFrom, EnvClientCertificate)
	}
	if n := get(EnvServiceName); n != "" {
		if !safetext.IsSafe(n) || len(n) > 256 {
			return nil, bad("%s must be printable text of at most 256 bytes", EnvServiceName)
		}
		s.ServiceName = n
	}
	return s, nil
}

// endpointURL checks an endpoint (an http or https URL with a host, no
// user info, no fragment) and returns the traces URL: with base, the
// traces path appended to its path.
func endpointURL(from, raw string, base bool) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case raw == "" || err != nil:
		return "", bad("%s is not a URL: give the collector's base URL, for example %s http://127.0.0.1:4318", from, FlagEndpoint)
	case u.User != nil:
		return "", bad("%s carries user info (credentials before @): send them as a header in %s instead (the URL is not repeated here)", from, EnvHeaders)
	case u.Scheme != "http" && u.Scheme != "https":
		if u.Scheme == "" {
			return "", bad("%s must be an http:// or https:// URL, for example http://127.0.0.1:4318", from)
		}
		return "", bad("%s must be an http:// or https:// URL, not %s", from, safetext.Quote(safetext.Clip(u.Scheme, 32)+":"))
	case u.Host == "" || u.Hostname() == "":
		return "", bad("%s has no host", from)
	case u.Fragment != "" || u.RawFragment != "" || strings.Contains(raw, "#"):
		return "", bad("%s must not have a #fragment", from)
	case u.Opaque != "":
		return "", bad("%s is not a URL with a path", from)
	}
	if p := u.Port(); p != "" && !allDigits(p) {
		return "", bad("%s has a port that is not a number", from)
	}
	if base {
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		u.Path += TracesPath
		u.RawPath = ""
	}
	return u.String(), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseHeaders reads "name=value,name=value" (W3C Baggage's list form, as
// the OTLP exporter specification gives it): names are HTTP tokens,
// values percent-decoded, and no value may hold CR, LF or NUL. Messages
// name the variable and the entry's position, never a value.
func parseHeaders(from, v string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(v) == "" {
		return out, nil
	}
	for i, part := range strings.Split(v, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || !token(name) {
			return nil, bad("%s: entry %d is not name=value with an HTTP token for a name (values are not repeated here)", from, i+1)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil || strings.ContainsAny(dec, "\r\n\x00") {
			return nil, bad("%s: the value of entry %d (%s) is not a header value (it is not repeated here)", from, i+1, safetext.Quote(name))
		}
		cn := http.CanonicalHeaderKey(name)
		if slices.Contains([]string{"Content-Type", "Content-Length", "Content-Encoding", "Host", "Transfer-Encoding", "Connection"}, cn) {
			return nil, bad("%s: header %s is set by the exporter", from, cn)
		}
		out[cn] = dec
	}
	return out, nil
}

func token(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}
