package mcpwire

import (
	"crypto/tls"
	"crypto/x509"
	"errors"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// ErrorText shows a wrapped error, clipped to about n bytes, in a
// message: the client's and the gateway's upstream errors. A certificate
// error names what the server's certificate holds (its DNS names, its subject, its issuer) as
// the certificate gave them, so that a name can read as mcpdrift's own
// words ("valid for evil.example, not localhost; verified OK"): it is
// quoted whole, the bounds of the server's text shown. Other errors are
// mcpdrift's or the standard library's, composed and escaped where they
// were made: shown inert.
func ErrorText(err error, n int) string {
	var (
		he  x509.HostnameError
		ua  x509.UnknownAuthorityError
		ci  x509.CertificateInvalidError
		cve *tls.CertificateVerificationError
	)
	if errors.As(err, &he) || errors.As(err, &ua) || errors.As(err, &ci) || errors.As(err, &cve) {
		return safetext.Quote(safetext.Clip(err.Error(), n))
	}
	return safetext.Inert(safetext.ClipEscaped(err.Error(), n))
}
