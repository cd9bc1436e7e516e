package sshsig

import (
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Key size bounds for RSA. OpenSSH accepts 1024 bits; this package asks
// for 2048, the smallest size still considered safe. 16384 is the largest
// size ssh-keygen generates (and the largest x/crypto/ssh parses).
const (
	MinRSABits = 2048
	MaxRSABits = 16384
)

// MaxPrivateKeyBytes bounds the private key ParsePrivateKey reads (a
// 16384-bit RSA key in OpenSSH format is about 12 KiB).
const MaxPrivateKeyBytes = 64 << 10

// supportedKey reports whether pub is a key this package signs and verifies
// with: an *Error of kind ErrUnsupported (with the key's fingerprint) if not.
func supportedKey(pub ssh.PublicKey) error {
	fp := ssh.FingerprintSHA256(pub)
	if _, ok := pub.(*ssh.Certificate); ok {
		return newError(ErrUnsupported, fp, "key %s is an SSH certificate (%s); certificates are not supported", fp, quote(pub.Type()))
	}
	switch t := pub.Type(); t {
	case ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
		return nil
	case ssh.KeyAlgoRSA:
		ck, ok := pub.(ssh.CryptoPublicKey)
		if !ok {
			return newError(ErrUnsupported, fp, "RSA key %s without a public key", fp)
		}
		rk, ok := ck.CryptoPublicKey().(*rsa.PublicKey)
		if !ok {
			return newError(ErrUnsupported, fp, "RSA key %s without an RSA public key", fp)
		}
		if bits := rk.N.BitLen(); bits < MinRSABits || bits > MaxRSABits {
			return newError(ErrUnsupported, fp, "RSA key %s has %d bits; %d to %d are supported", fp, bits, MinRSABits, MaxRSABits)
		}
		return nil
	default:
		return newError(ErrUnsupported, fp, "key %s is of type %s; %s", fp, quote(t), supportedTypes)
	}
}

const supportedTypes = "supported are ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521 and ssh-rsa (rsa-sha2-512/256 signatures)"

// keyTypeName reports whether s names an SSH public key type (one this
// package supports or a known other one), so that the allowed-signers
// parser can tell a key type from an options field.
func keyTypeName(s string) bool {
	switch s {
	case ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521, ssh.KeyAlgoRSA,
		"ssh-dss", ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256:
		return true
	}
	return strings.HasSuffix(s, "-cert-v01@openssh.com") || strings.HasPrefix(s, "ssh-mldsa-")
}

// ParsePrivateKey reads a private key (OpenSSH format, or PEM PKCS#1,
// PKCS#8 or SEC 1) and returns a signer for Sign. passphrase nil means none
// is available: an encrypted key then gives an error wrapping
// ErrPassphraseRequired (and never a prompt). A passphrase given for a key
// that is not encrypted is ignored. Keys of unsupported types are refused
// here, before anything is signed.
func ParsePrivateKey(pemBytes, passphrase []byte) (ssh.Signer, error) {
	if len(pemBytes) > MaxPrivateKeyBytes {
		return nil, fmt.Errorf("sshsig: private key: larger than %d bytes", MaxPrivateKeyBytes)
	}
	signer, err := ssh.ParsePrivateKey(pemBytes)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		if passphrase == nil {
			if missing.PublicKey != nil {
				return nil, fmt.Errorf("sshsig: private key %s: %w", ssh.FingerprintSHA256(missing.PublicKey), ErrPassphraseRequired)
			}
			return nil, fmt.Errorf("sshsig: private key: %w", ErrPassphraseRequired)
		}
		signer, err = ssh.ParsePrivateKeyWithPassphrase(pemBytes, passphrase)
		if errors.Is(err, x509.IncorrectPasswordError) {
			return nil, errors.New("sshsig: private key: wrong passphrase")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sshsig: private key: %v", err)
	}
	if err := supportedKey(signer.PublicKey()); err != nil {
		return nil, err
	}
	return signer, nil
}
