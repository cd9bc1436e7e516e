package telemetry

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
	"github.com/mcpdrift/mcpdrift/telemetry/otlptest"
)

// testPKI is a CA, a server certificate for 127.0.0.1 and a client
// certificate it signed, as PEM files in a directory.
type testPKI struct {
	dir                          string
	ca, clientCert, clientKey    string // paths
	serverTLS                    tls.Certificate
	pool                         *x509.CertPool
	otherCert, otherKey, garbage string // a pair that does not match, a file with no PEM
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir()}
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(p.dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcpdrift test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p.ca = write("ca.pem", "CERTIFICATE", caDER)
	p.pool = x509.NewCertPool()
	p.pool.AddCert(caCert)
	leaf := func(serial int64, usage x509.ExtKeyUsage, k *ecdsa.PrivateKey) []byte {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "leaf"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	sk := key()
	sDER := leaf(2, x509.ExtKeyUsageServerAuth, sk)
	p.serverTLS = tls.Certificate{Certificate: [][]byte{sDER}, PrivateKey: sk}
	ck := key()
	p.clientCert = write("client.pem", "CERTIFICATE", leaf(3, x509.ExtKeyUsageClientAuth, ck))
	p.clientKey = write("client-key.pem", "PRIVATE KEY", keyDER(ck))
	p.otherCert = p.clientCert
	p.otherKey = write("other-key.pem", "PRIVATE KEY", keyDER(key()))
	p.garbage = filepath.Join(p.dir, "garbage.pem")
	if err := os.WriteFile(p.garbage, []byte("not-a-pem SECRET-LOOKING-CONTENT-42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// exportVia resolves env with the flag set to url, starts a provider,
// exports one span and reports whether it reached the collector, and the
// warnings.
func exportVia(t *testing.T, url string, e map[string]string) (bool, []string) {
	t.Helper()
	s, err := Resolve(url, true, env(e))
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	p, err := New(s, Options{Warn: func(w string) { warnings = append(warnings, w) }})
	if err != nil {
		t.Fatal(err)
	}
	_, sp := p.Tracer().Start(context.Background(), mcptrace.Request{Kind: mcptrace.Client, Method: "tools/list"})
	sp.End(mcptrace.Outcome{})
	return p.Flush(), warnings
}

// TestExportOverTLS: the certificate variables of the OTLP exporter
// specification are honoured for the client mcpdrift gives the exporter
// (which reads them only for one it builds itself): a collector with a
// private CA is verified with OTEL_EXPORTER_OTLP_CERTIFICATE (the traces
// variable first), one that asks for a client certificate gets
// OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _KEY. Before, both failed
// with one warning, and no span was exported.
func TestExportOverTLS(t *testing.T) {
	pki := newTestPKI(t)
	server := otlptest.NewTLS(otlptest.Accept, &tls.Config{Certificates: []tls.Certificate{pki.serverTLS}})
	defer server.Close()
	mutual := otlptest.NewTLS(otlptest.Accept, &tls.Config{Certificates: []tls.Certificate{pki.serverTLS},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pki.pool})
	defer mutual.Close()
	for _, c := range []struct {
		name string
		col  *otlptest.Collector
		env  map[string]string
		ok   bool
	}{
		{"no CA", server, map[string]string{}, false},
		{"CA", server, map[string]string{EnvCertificate: pki.ca}, true},
		{"traces CA first", server, map[string]string{EnvTracesCertificate: pki.ca, EnvCertificate: pki.garbage}, true},
		{"mutual without a client certificate", mutual, map[string]string{EnvCertificate: pki.ca}, false},
		{"mutual", mutual, map[string]string{EnvCertificate: pki.ca, EnvClientCertificate: pki.clientCert, EnvClientKey: pki.clientKey}, true},
		{"mutual, traces variables", mutual, map[string]string{EnvTracesCertificate: pki.ca, EnvTracesClientCertificate: pki.clientCert, EnvTracesClientKey: pki.clientKey}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := c.col.Received()
			ok, warnings := exportVia(t, c.col.URL(), c.env)
			got := c.col.Received() - before
			if ok != c.ok || (c.ok && (got != 1 || len(warnings) != 0)) || (!c.ok && (got != 0 || len(warnings) != 1)) {
				t.Fatalf("ok %v (want %v), %d span(s) received, warnings %q", ok, c.ok, got, warnings)
			}
		})
	}
}

// TestTLSFilesRefused: a certificate or key the environment names that
// cannot be used is a ConfigError (the CLI's exit 2) naming the variable
// and the path, never the file's contents.
func TestTLSFilesRefused(t *testing.T) {
	pki := newTestPKI(t)
	url := "https://127.0.0.1:4318"
	for _, c := range []struct {
		name    string
		env     map[string]string
		resolve bool // refused by Resolve (else by New)
		want    string
	}{
		{"certificate without key", map[string]string{EnvClientCertificate: pki.clientCert}, true, EnvClientCertificate + " is set without " + EnvClientKey},
		{"key without certificate", map[string]string{EnvTracesClientKey: pki.clientKey}, true, EnvTracesClientKey + " is set without " + EnvClientCertificate},
		{"missing CA", map[string]string{EnvCertificate: filepath.Join(pki.dir, "nope.pem")}, false, EnvCertificate + ` ("` + filepath.Join(pki.dir, "nope.pem") + `") cannot be read: no such file`},
		{"CA with no PEM", map[string]string{EnvCertificate: pki.garbage}, false, "holds no PEM certificate"},
		{"key not the certificate's", map[string]string{EnvClientCertificate: pki.otherCert, EnvClientKey: pki.otherKey}, false, "are not a PEM certificate and its private key"},
		{"key with no PEM", map[string]string{EnvClientCertificate: pki.clientCert, EnvClientKey: pki.garbage}, false, "are not a PEM certificate and its private key"},
		{"a directory", map[string]string{EnvCertificate: pki.dir}, false, "is not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Resolve(url, true, env(c.env))
			if !c.resolve {
				if err != nil {
					t.Fatal(err)
				}
				_, err = New(s, Options{})
			}
			var ce *ConfigError
			if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want a ConfigError with %q", err, c.want)
			}
			if strings.Contains(err.Error(), "SECRET-LOOKING") || strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Fatalf("the error quotes a file's contents: %v", err)
			}
		})
	}
	// An http:// endpoint uses none of them: they are not read, and a bad
	// one does not refuse it (the reviewer's case: it was exit 2).
	for _, ca := range []string{pki.ca, filepath.Join(pki.dir, "nope.pem"), pki.garbage} {
		s, err := Resolve("http://127.0.0.1:4318", true, env(map[string]string{EnvCertificate: ca}))
		if err != nil || s == nil {
			t.Fatalf("http endpoint with CA %s: %v", ca, err)
		}
		if _, err := New(s, Options{}); err != nil {
			t.Errorf("http endpoint refused over an unused CA file %s: %v", ca, err)
		}
	}
}

// FuzzTLSFiles: whatever the certificate and key files hold, reading them
// never panics, and a refusal is a ConfigError printable as it is that
// never quotes a file's contents (the marker every file carries).
func FuzzTLSFiles(f *testing.F) {
	const mark = "FILEMARK"
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), []byte(""), []byte(""), true, false)
	f.Add([]byte("not pem"), []byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"), []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), false, true)
	f.Fuzz(func(t *testing.T, ca, cert, key []byte, withCA, withPair bool) {
		if !withCA && !withPair {
			return
		}
		dir := t.TempDir()
		write := func(name string, b []byte) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, append(append([]byte(mark), b...), mark...), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		var files TLSFiles
		if withCA {
			files.CA, files.CAFrom = write("ca.pem", ca), EnvCertificate
		}
		if withPair {
			files.Cert, files.CertFrom = write("cert.pem", cert), EnvClientCertificate
			files.Key, files.KeyFrom = write("key.pem", key), EnvClientKey
		}
		cfg, err := files.config()
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("not a ConfigError: %T %v", err, err)
			}
			if msg := err.Error(); strings.Contains(msg, mark) || !safetext.IsSafe(msg) {
				t.Fatalf("message %q", msg)
			}
			return
		}
		if cfg == nil || withCA && cfg.RootCAs == nil || withPair && len(cfg.Certificates) != 1 {
			t.Fatalf("accepted without what was asked: %+v", cfg)
		}
	})
}

// TestEndpointQueryKept: the endpoint's query (an API key, often) reaches
// the collector on every export. The exporter keeps only the host and the
// path of the URL it is given, so it was dropped.
func TestEndpointQueryKept(t *testing.T) {
	c := otlptest.New(otlptest.Accept)
	defer c.Close()
	if ok, w := exportVia(t, c.URL()+"/?api_key=k3y-value&team=a%20b", nil); !ok {
		t.Fatalf("export failed: %q", w)
	}
	reqs := c.Requests()
	if len(reqs) != 1 || reqs[0].URL.Path != "/v1/traces" || reqs[0].URL.Query().Get("api_key") != "k3y-value" || reqs[0].URL.Query().Get("team") != "a b" {
		t.Fatalf("requests %d, URL %v", len(reqs), reqs[0].URL)
	}
}
