package sshsig

import (
	"errors"
	"fmt"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// The sentinels every verification error wraps (see the package
// documentation for what each one means).
var (
	ErrNoSignature       = errors.New("no signature")
	ErrMalformed         = errors.New("malformed signature")
	ErrUnsupported       = errors.New("unsupported signature")
	ErrWrongNamespace    = errors.New("signature is for another namespace")
	ErrBadSignature      = errors.New("signature does not verify")
	ErrUnknownSigner     = errors.New("signed by a key that is not an allowed signer")
	ErrSignerNamespace   = errors.New("signer is not allowed for this namespace")
	ErrSignerNotYetValid = errors.New("signer is not valid yet")
	ErrSignerExpired     = errors.New("signer has expired")
)

// ErrAllowedSigners is wrapped by every error of ParseAllowedSigners.
var ErrAllowedSigners = errors.New("bad allowed signers")

// ErrPassphraseRequired is returned by ParsePrivateKey for an encrypted key
// when no passphrase was given. The library never prompts; the caller asks
// for one (or uses an agent) and calls again.
var ErrPassphraseRequired = errors.New("private key is encrypted and no passphrase was given")

// Error is the error of ParseSignature, ReadSignatureFile and Verify.
type Error struct {
	// Kind is one of the sentinels ErrNoSignature ... ErrSignerExpired.
	Kind error
	// Fingerprint is the signing key's SHA256 fingerprint ("SHA256:...", as
	// ssh-keygen -l prints it), empty when the key could not be read.
	Fingerprint string
	// Detail says what exactly; untrusted text in it is already escaped.
	Detail string
	// cause is an underlying error (fs.ErrNotExist for a missing file).
	cause error
}

func (e *Error) Error() string {
	s := "sshsig: " + e.Kind.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns Kind and, when there is one, the underlying error, so
// errors.Is(err, ErrNoSignature) and errors.Is(err, fs.ErrNotExist) both
// hold for a missing signature file.
func (e *Error) Unwrap() []error {
	if e.cause != nil {
		return []error{e.Kind, e.cause}
	}
	return []error{e.Kind}
}

func newError(kind error, fingerprint, format string, args ...any) *Error {
	return &Error{Kind: kind, Fingerprint: fingerprint, Detail: fmt.Sprintf(format, args...)}
}

// SyntaxError is an error of ParseAllowedSigners: the line (1-based; 0 for
// the file as a whole) and what is wrong with it. It wraps
// ErrAllowedSigners.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 {
		return "allowed signers: " + e.Msg
	}
	return fmt.Sprintf("allowed signers line %d: %s", e.Line, e.Msg)
}

func (e *SyntaxError) Unwrap() error { return ErrAllowedSigners }

// quote shows untrusted text in a message: clipped, escaped, quoted.
func quote(s string) string { return safetext.Quote(safetext.Clip(s, 80)) }
