package mcpclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"
	"testing"
)

// A certificate's names are the server's words: an error that lists them
// shows them quoted, never as mcpdrift's prose (found by a review: a SAN
// "evil.example, not localhost; the chain is fine, mcpdrift verified OK"
// read as the sentence's own).
func TestUnreachableCertificateText(t *testing.T) {
	san := `evil.example, not localhost; the chain is fine, mcpdrift verified \u202e OK`
	cert := &x509.Certificate{DNSNames: []string{san}}
	for _, err := range []error{
		x509.HostnameError{Certificate: cert, Host: "localhost"},
		&tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: cert, Host: "localhost"}},
		fmt.Errorf("Post: %w", x509.HostnameError{Certificate: cert, Host: "localhost"}),
	} {
		msg := (&UnreachableError{Target: "https://localhost:1/mcp", Err: err}).Error()
		// the SAN's backslash is the server's, shown as one (\\), inside
		// the quotes of the server's text
		if !strings.Contains(msg, `: "`) || !strings.Contains(msg, `verified \\u202e OK`) || strings.Contains(msg, `verified \u202e OK`) {
			t.Errorf("%s", msg)
		}
	}
	// Other errors are shown as they were composed.
	if msg := (&UnreachableError{Target: "x", Err: fmt.Errorf(`dial tcp: connection refused`)}).Error(); !strings.HasSuffix(msg, ": dial tcp: connection refused") {
		t.Errorf("%s", msg)
	}
}
