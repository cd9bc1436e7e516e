package sshsig

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/crypto/ssh"
)

// Namespace is the SSHSIG namespace of mcpdrift's lock signatures: what
// `lock sign` signs with and `--allowed-signers` verifies against
// (`ssh-keygen -Y sign -n mcpdrift-lock` makes the same signatures).
const Namespace = "mcpdrift-lock"

// SignatureSuffix is appended to a file's name to name its signature, as
// `ssh-keygen -Y sign FILE` does (FILE.sig).
const SignatureSuffix = ".sig"

// MaxSignatureBytes bounds an armored signature (one made with a
// 16384-bit RSA key, the largest supported, is under 6 KiB).
const MaxSignatureBytes = 16 << 10

const (
	magic       = "SSHSIG"
	sigVersion  = 1
	beginLine   = "-----BEGIN SSH SIGNATURE-----"
	endLine     = "-----END SSH SIGNATURE-----"
	armorColumn = 70 // what ssh-keygen writes (PROTOCOL.sshsig says 76; its own example and ssh-keygen use 70)

	HashSHA512 = "sha512"
	HashSHA256 = "sha256"
)

// Signature is a parsed SSHSIG signature. ParseSignature checks its form;
// only Verify says whether it is good.
type Signature struct {
	PublicKey     ssh.PublicKey  // the signing key
	Namespace     string         // the namespace it was made for
	HashAlgorithm string         // HashSHA512 or HashSHA256
	Signature     *ssh.Signature // the key's signature over the signed data
}

// Fingerprint is the signing key's SHA256 fingerprint, as ssh-keygen -l
// prints it.
func (s *Signature) Fingerprint() string { return ssh.FingerprintSHA256(s.PublicKey) }

// signedData is what the key signs (PROTOCOL.sshsig section 3). The
// reserved field is always empty here, whatever a signature carries.
func signedData(namespace, hashAlg string, digest []byte) []byte {
	b := make([]byte, 0, len(magic)+4+len(namespace)+4+4+len(hashAlg)+4+len(digest))
	b = append(b, magic...)
	b = appendString(b, []byte(namespace))
	b = appendString(b, nil)
	b = appendString(b, []byte(hashAlg))
	return appendString(b, digest)
}

func digest(hashAlg string, message []byte) []byte {
	if hashAlg == HashSHA256 {
		h := sha256.Sum256(message)
		return h[:]
	}
	h := sha512.Sum512(message)
	return h[:]
}

func appendString(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// marshalBlob is the signature blob (PROTOCOL.sshsig section 2).
func marshalBlob(pub ssh.PublicKey, namespace, hashAlg string, sig *ssh.Signature) []byte {
	var b []byte
	b = append(b, magic...)
	b = binary.BigEndian.AppendUint32(b, sigVersion)
	b = appendString(b, pub.Marshal())
	b = appendString(b, []byte(namespace))
	b = appendString(b, nil)
	b = appendString(b, []byte(hashAlg))
	return appendString(b, ssh.Marshal(sig))
}

// armor writes blob as ssh-keygen does.
func armor(blob []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(blob)
	var b bytes.Buffer
	b.Grow(len(beginLine) + len(endLine) + len(enc) + len(enc)/armorColumn + 4)
	b.WriteString(beginLine + "\n")
	for len(enc) > armorColumn {
		b.WriteString(enc[:armorColumn])
		b.WriteByte('\n')
		enc = enc[armorColumn:]
	}
	b.WriteString(enc)
	b.WriteString("\n" + endLine + "\n")
	return b.Bytes()
}

// dearmor returns the blob inside an armored signature. Line ends may be
// LF or CRLF, base64 lines may be of any length, and after the END line
// only white space may follow.
func dearmor(armored []byte) ([]byte, error) {
	if len(armored) > MaxSignatureBytes {
		return nil, newError(ErrMalformed, "", "larger than %d bytes", MaxSignatureBytes)
	}
	if len(bytes.TrimSpace(armored)) == 0 {
		return nil, newError(ErrNoSignature, "", "the signature is empty")
	}
	rest := armored
	line, rest, ok := cutLine(rest)
	if !ok || line != beginLine {
		return nil, newError(ErrMalformed, "", "it does not start with the line %s", beginLine)
	}
	var b64 []byte
	for {
		line, rest, ok = cutLine(rest)
		if line == endLine {
			break
		}
		if !ok {
			return nil, newError(ErrMalformed, "", "no line %s", endLine)
		}
		for i := 0; i < len(line); i++ {
			if !isBase64(line[i]) {
				return nil, newError(ErrMalformed, "", "a byte that is not base64 (%s) between the BEGIN and END lines", quote(line[i:i+1]))
			}
		}
		b64 = append(b64, line...)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, newError(ErrMalformed, "", "data after the line %s", endLine)
	}
	blob, err := base64.StdEncoding.Strict().DecodeString(string(b64))
	if err != nil {
		return nil, newError(ErrMalformed, "", "bad base64: %v", err)
	}
	return blob, nil
}

// cutLine returns the first line of b (without its LF or CRLF), the rest,
// and whether the line was ended by a line feed.
func cutLine(b []byte) (line string, rest []byte, ended bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return string(bytes.TrimSuffix(b, []byte("\r"))), nil, false
	}
	return string(bytes.TrimSuffix(b[:i], []byte("\r"))), b[i+1:], true
}

func isBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '='
}

// wire reads the SSH wire encoding (RFC 4251), every length checked
// against what is left.
type wire struct {
	b   []byte
	bad bool
}

func (w *wire) take(n int) []byte {
	if w.bad || n < 0 || n > len(w.b) {
		w.bad = true
		return nil
	}
	s := w.b[:n]
	w.b = w.b[n:]
	return s
}

func (w *wire) uint32() uint32 {
	s := w.take(4)
	if s == nil {
		return 0
	}
	return binary.BigEndian.Uint32(s)
}

func (w *wire) string() []byte {
	n := w.uint32()
	if w.bad || uint64(n) > uint64(len(w.b)) {
		w.bad = true
		return nil
	}
	return w.take(int(n))
}

// ParseSignature parses an armored SSHSIG signature and checks its form:
// the armor, the magic, version 1, a public key of a supported type, a
// non-empty namespace, a hash of sha512 or sha256, and a signature whose
// algorithm fits the key (rsa-sha2-512 or rsa-sha2-256 for RSA, never
// ssh-rsa), with nothing after it. Errors are *Error of kind
// ErrNoSignature (empty input), ErrMalformed or ErrUnsupported.
func ParseSignature(armored []byte) (*Signature, error) {
	blob, err := dearmor(armored)
	if err != nil {
		return nil, err
	}
	w := &wire{b: blob}
	if m := w.take(len(magic)); w.bad || string(m) != magic {
		return nil, newError(ErrMalformed, "", "the blob does not start with %q", magic)
	}
	if v := w.uint32(); w.bad || v != sigVersion {
		if w.bad {
			return nil, newError(ErrMalformed, "", "truncated before the version")
		}
		return nil, newError(ErrMalformed, "", "version %d; only version %d is supported", v, sigVersion)
	}
	keyBytes := w.string()
	if w.bad {
		return nil, newError(ErrMalformed, "", "truncated public key")
	}
	pub, err := ssh.ParsePublicKey(keyBytes)
	if err != nil {
		return nil, newError(ErrMalformed, "", "public key: %s", quote(err.Error()))
	}
	fp := ssh.FingerprintSHA256(pub)
	if err := supportedKey(pub); err != nil {
		return nil, err
	}
	ns := w.string()
	_ = w.string() // reserved: ignored (PROTOCOL.sshsig)
	hashAlg := w.string()
	sigBytes := w.string()
	if w.bad {
		return nil, newError(ErrMalformed, fp, "key %s: truncated blob", fp)
	}
	if len(w.b) != 0 {
		return nil, newError(ErrMalformed, fp, "key %s: %d bytes after the signature", fp, len(w.b))
	}
	if len(ns) == 0 {
		return nil, newError(ErrMalformed, fp, "key %s: empty namespace", fp)
	}
	switch string(hashAlg) {
	case HashSHA512, HashSHA256:
	default:
		return nil, newError(ErrUnsupported, fp, "key %s: hash algorithm %s; sha512 and sha256 are supported", fp, quote(string(hashAlg)))
	}
	sw := &wire{b: sigBytes}
	format := sw.string()
	sigBlob := sw.string()
	if sw.bad || len(sw.b) != 0 {
		return nil, newError(ErrMalformed, fp, "key %s: the signature field is not an SSH signature", fp)
	}
	if err := checkFormat(pub, string(format)); err != nil {
		return nil, err
	}
	return &Signature{
		PublicKey:     pub,
		Namespace:     string(ns),
		HashAlgorithm: string(hashAlg),
		Signature:     &ssh.Signature{Format: string(format), Blob: sigBlob},
	}, nil
}

// checkFormat checks that a signature's algorithm is one the key makes and
// SSHSIG allows.
func checkFormat(pub ssh.PublicKey, format string) error {
	fp := ssh.FingerprintSHA256(pub)
	if pub.Type() == ssh.KeyAlgoRSA {
		switch format {
		case ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256:
			return nil
		case ssh.KeyAlgoRSA:
			return newError(ErrUnsupported, fp, "key %s: RSA signature with ssh-rsa (SHA-1); SSHSIG requires rsa-sha2-512 or rsa-sha2-256", fp)
		}
	} else if format == pub.Type() {
		return nil
	}
	return newError(ErrMalformed, fp, "key %s: signature algorithm %s does not fit key type %s", fp, quote(format), pub.Type())
}

// ReadSignatureFile reads an armored signature file, at most
// MaxSignatureBytes of it. A missing file gives an *Error of kind
// ErrNoSignature (that also matches fs.ErrNotExist); a file that is not a
// regular file or is too large, ErrMalformed. Other errors (permissions)
// are returned as they are.
func ReadSignatureFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{Kind: ErrNoSignature, Detail: quote(path) + " does not exist", cause: err}
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, newError(ErrMalformed, "", "%s is not a regular file", quote(path))
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxSignatureBytes+1))
	if err != nil {
		return nil, fmt.Errorf("sshsig: reading %s: %w", quote(path), err)
	}
	if len(b) > MaxSignatureBytes {
		return nil, newError(ErrMalformed, "", "%s is larger than %d bytes", quote(path), MaxSignatureBytes)
	}
	return b, nil
}
