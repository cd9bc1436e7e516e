// Package sshsig signs and verifies files with SSH keys in OpenSSH's SSHSIG
// format (PROTOCOL.sshsig), the format `ssh-keygen -Y sign` writes and
// `ssh-keygen -Y verify` reads, and reads OpenSSH allowed_signers files
// (ssh-keygen(1), "ALLOWED SIGNERS"). It is a library: it reads no terminal,
// prompts for nothing and prints nothing; the commands built on it (`lock
// sign`, `--allowed-signers`) turn its errors into messages and exit codes.
//
// # Signing
//
//	signer, err := sshsig.ParsePrivateKey(keyFileBytes, nil) // nil: no passphrase; an encrypted key gives ErrPassphraseRequired
//	sig, err := sshsig.Sign(lockBytes, signer, sshsig.Namespace)
//	// write sig to lockFile + sshsig.SignatureSuffix
//
// Sign takes any ssh.Signer, so a key held by ssh-agent
// (golang.org/x/crypto/ssh/agent) signs as well as one read from a file.
// The message is hashed with SHA-512 (as ssh-keygen does), RSA keys sign
// with rsa-sha2-512 (never the SHA-1 "ssh-rsa"), and the output is armored
// byte for byte as ssh-keygen writes it: the BEGIN line, the base64 blob in
// lines of 70 characters, the END line, a final newline. Ed25519 and RSA
// signatures are deterministic, so Sign and `ssh-keygen -Y sign` give the
// same file for the same key, message and namespace.
//
// Keys: Ed25519, ECDSA on P-256, P-384 and P-521, and RSA of 2048 to 16384
// bits. Not supported, on either side, and refused with ErrUnsupported:
// certificates (and so `cert-authority` lines in allowed_signers), FIDO
// security keys (sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com),
// DSA, and RSA below 2048 bits.
//
// # Verifying
//
//	allowed, err := sshsig.ParseAllowedSigners(f) // errors wrap ErrAllowedSigners, with the line
//	sig, err := sshsig.ReadSignatureFile(lockFile + sshsig.SignatureSuffix) // missing: ErrNoSignature
//	principal, err := sshsig.Verify(lockBytes, sig, allowed, sshsig.Namespace, time.Now())
//
// Verify succeeds only when the signature is well formed, was made for the
// namespace asked for, verifies over the message's exact bytes, and its key
// is listed in the allowed signers on a line that permits the namespace and
// whose validity window holds at now. It returns that line's principals
// field as written (for example "alice@example.com" or "*@example.com"):
// the caller names no identity, as with `ssh-keygen -Y find-principals`.
// The principals come from the allowed-signers file, which the operator
// wrote; escape them (safetext) before printing all the same. The validity
// window is checked at now, to the second and both ends inclusive, as
// ssh-keygen does: SSHSIG records no signing time, so once a key's
// valid-before has passed, what it signed no longer verifies.
//
// Every failure wraps exactly one sentinel, tested with errors.Is, and is an
// *Error (errors.As) that carries the signing key's SHA256 fingerprint once
// the key could be read:
//
//	ErrNoSignature       no signature: an empty input, or a missing file (ReadSignatureFile)
//	ErrMalformed         not an armored SSHSIG signature, or a corrupt one
//	ErrUnsupported       a key type or hash this package does not verify (see above)
//	ErrWrongNamespace    the signature was made for another namespace
//	ErrBadSignature      it does not verify: the message or the signature was changed
//	ErrUnknownSigner     a good signature by a key that no line of allowed signers lists
//	ErrSignerNamespace   the key is listed, but only for other namespaces (namespaces="...")
//	ErrSignerNotYetValid the key is listed, but now is before its valid-after
//	ErrSignerExpired     the key is listed, but now is after its valid-before
//
// They are checked in that order: the form of the signature, its namespace,
// the signature itself, then the allowed signers, so the error names the
// first thing wrong, and "not an allowed signer" is said only of a
// signature that is good. When several lines list the key and none permits
// the use, a validity error of a line that permits the namespace is
// reported before a namespace error.
//
// # Allowed signers
//
// Each line is `principals [options] keytype base64-key [comment]`; blank
// lines and lines starting with '#' are ignored. Principals is a
// comma-separated pattern list, optionally in double quotes. Options (names
// case-insensitive, values in double quotes): namespaces="pattern-list",
// valid-after="TIME", valid-before="TIME", where TIME is YYYYMMDD,
// YYYYMMDDHHMM or YYYYMMDDHHMMSS, in UTC with a Z (or UTC) suffix and in
// the local time zone without one, as in ssh-keygen. Patterns use '*' and
// '?', and a pattern starting with '!' excludes, as in ssh_config(5)
// PATTERNS; namespaces are matched case-sensitively.
//
// The file is read as a whole and any bad line refuses all of it, with its
// line number: ssh-keygen only looks at lines whose principal matches, but a
// typo in a line that restricts a key must not pass unnoticed. cert-authority
// lines are refused (certificates are not implemented).
//
// # Hostile input
//
// Signature files and allowed-signers files are untrusted. Both are bounded
// (MaxSignatureBytes; MaxAllowedSignersBytes, MaxAllowedSignersLine and
// MaxAllowedSigners), every length inside a signature is checked against
// what is left, nothing panics, and text from them appears in error messages
// only escaped and clipped (safetext). The reserved field of a signature is
// ignored, as PROTOCOL.sshsig says, so it is not covered by the signature.
package sshsig
