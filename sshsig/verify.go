package sshsig

import (
	"errors"
	"time"

	"golang.org/x/crypto/ssh"
)

// Verify checks armoredSig, an SSHSIG signature, over message for
// namespace against the allowed signers at time now, and returns the
// principals field of the allowed-signers line that permits the signer.
// Its errors are *Error, each wrapping one sentinel (package
// documentation): ErrNoSignature for an empty armoredSig, ErrMalformed,
// ErrUnsupported, ErrWrongNamespace, ErrBadSignature, ErrUnknownSigner,
// ErrSignerNamespace, ErrSignerNotYetValid or ErrSignerExpired. A nil
// allowed, an empty namespace or a zero now are the caller's mistakes and
// give a plain error.
func Verify(message, armoredSig []byte, allowed *AllowedSigners, namespace string, now time.Time) (principal string, err error) {
	if allowed == nil {
		return "", errors.New("sshsig: Verify without allowed signers")
	}
	if namespace == "" {
		return "", errors.New("sshsig: Verify with an empty namespace")
	}
	if now.IsZero() {
		return "", errors.New("sshsig: Verify without the time")
	}
	sig, err := ParseSignature(armoredSig)
	if err != nil {
		return "", err
	}
	fp := sig.Fingerprint()
	if sig.Namespace != namespace {
		return "", newError(ErrWrongNamespace, fp, "key %s: made for namespace %s, not %s", fp, quote(sig.Namespace), quote(namespace))
	}
	data := signedData(namespace, sig.HashAlgorithm, digest(sig.HashAlgorithm, message))
	if err := sig.PublicKey.Verify(data, sig.Signature); err != nil {
		return "", newError(ErrBadSignature, fp, "key %s: the message or the signature was changed, or they do not belong together", fp)
	}
	return allowed.permit(sig.PublicKey, fp, namespace, now)
}

// permit finds a line listing key that permits namespace at now.
func (a *AllowedSigners) permit(key ssh.PublicKey, fp, namespace string, now time.Time) (string, error) {
	lines := a.byKey[string(key.Marshal())]
	if len(lines) == 0 {
		return "", newError(ErrUnknownSigner, fp, "key %s (%s) is not listed", fp, key.Type())
	}
	t := now.Unix()
	var nsMiss *signerLine
	var timeErr error
	for _, l := range lines {
		if l.namespaces != "" && !matchList(namespace, l.namespaces) {
			if nsMiss == nil {
				nsMiss = l
			}
			continue
		}
		if l.validAfter != 0 && t < l.validAfter {
			if timeErr == nil {
				timeErr = newError(ErrSignerNotYetValid, fp, "key %s of %s (allowed signers line %d) is valid only from %s; now is %s",
					fp, quote(l.principals), l.line, stamp(l.validAfter), stamp(t))
			}
			continue
		}
		if l.validBefore != 0 && t > l.validBefore {
			if timeErr == nil {
				timeErr = newError(ErrSignerExpired, fp, "key %s of %s (allowed signers line %d) was valid until %s; now is %s",
					fp, quote(l.principals), l.line, stamp(l.validBefore), stamp(t))
			}
			continue
		}
		return l.principals, nil
	}
	if timeErr != nil {
		return "", timeErr
	}
	return "", newError(ErrSignerNamespace, fp, "key %s of %s (allowed signers line %d) is allowed for namespaces=%s, not %s",
		fp, quote(nsMiss.principals), nsMiss.line, quote(nsMiss.namespaces), quote(namespace))
}

func stamp(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }
