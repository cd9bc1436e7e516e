package sshsig

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// sentinels are the kinds of verification error; each failure must match
// exactly one of them.
var sentinels = []error{ErrNoSignature, ErrMalformed, ErrUnsupported, ErrWrongNamespace, ErrBadSignature,
	ErrUnknownSigner, ErrSignerNamespace, ErrSignerNotYetValid, ErrSignerExpired}

// wantKind fails unless err matches want and no other sentinel, and is an
// *Error of that kind.
func wantKind(t *testing.T, err, want error) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", want)
	}
	for _, s := range sentinels {
		if got := errors.Is(err, s); got != (s == want) {
			t.Fatalf("errors.Is(%q, %v) = %v", err, s, got)
		}
	}
	var e *Error
	if !errors.As(err, &e) || e.Kind != want {
		t.Fatalf("%q is not an *Error of kind %v", err, want)
	}
	return e
}

var (
	keysOnce sync.Once
	keys     map[string]crypto.Signer
)

// testKeys are one private key of each supported type, made once per test
// binary (RSA key generation takes a while).
func testKeys(t testing.TB) map[string]crypto.Signer {
	t.Helper()
	keysOnce.Do(func() {
		keys = map[string]crypto.Signer{}
		_, ed, _ := ed25519.GenerateKey(rand.Reader)
		keys["ed25519"] = ed
		for name, c := range map[string]elliptic.Curve{"ecdsa-p256": elliptic.P256(), "ecdsa-p384": elliptic.P384(), "ecdsa-p521": elliptic.P521()} {
			k, err := ecdsa.GenerateKey(c, rand.Reader)
			if err != nil {
				panic(err)
			}
			keys[name] = k
		}
		r, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keys["rsa-2048"] = r
	})
	return keys
}

func sshSigner(t testing.TB, k crypto.Signer) ssh.Signer {
	t.Helper()
	s, err := ssh.NewSignerFromKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func edSigner(t testing.TB) ssh.Signer { return sshSigner(t, testKeys(t)["ed25519"]) }

// authorized is pub in authorized_keys form, without the newline.
func authorized(pub ssh.PublicKey) string {
	return strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(pub)), "\n")
}

func mustAllowed(t testing.TB, text string) *AllowedSigners {
	t.Helper()
	a, err := ParseAllowedSigners(strings.NewReader(text))
	if err != nil {
		t.Fatalf("ParseAllowedSigners(%q): %v", text, err)
	}
	return a
}

func mustSign(t testing.TB, msg []byte, s ssh.Signer, ns string) []byte {
	t.Helper()
	sig, err := Sign(msg, s, ns)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func TestSignVerifyEveryKeyType(t *testing.T) {
	msg := []byte("{\"lock\": 1}\n")
	for name, k := range testKeys(t) {
		t.Run(name, func(t *testing.T) {
			s := sshSigner(t, k)
			sig := mustSign(t, msg, s, Namespace)
			allowed := mustAllowed(t, "alice@example.com "+authorized(s.PublicKey())+" alice's key\n")
			p, err := Verify(msg, sig, allowed, Namespace, now)
			if err != nil || p != "alice@example.com" {
				t.Fatalf("Verify = %q, %v", p, err)
			}
			parsed, err := ParseSignature(sig)
			if err != nil {
				t.Fatal(err)
			}
			if parsed.Namespace != Namespace || parsed.HashAlgorithm != HashSHA512 ||
				!bytes.Equal(parsed.PublicKey.Marshal(), s.PublicKey().Marshal()) {
				t.Fatalf("parsed %+v", parsed)
			}
			wantFormat := s.PublicKey().Type()
			if wantFormat == ssh.KeyAlgoRSA {
				wantFormat = ssh.KeyAlgoRSASHA512
			}
			if parsed.Signature.Format != wantFormat {
				t.Fatalf("signature algorithm %s, want %s", parsed.Signature.Format, wantFormat)
			}
			checkArmor(t, sig)
		})
	}
}

// checkArmor checks the layout ssh-keygen writes: the BEGIN line, base64
// lines of 70 characters (the last one shorter or equal), the END line,
// one newline.
func checkArmor(t *testing.T, sig []byte) {
	t.Helper()
	s := string(sig)
	if !strings.HasPrefix(s, beginLine+"\n") || !strings.HasSuffix(s, "\n"+endLine+"\n") {
		t.Fatalf("armor:\n%s", s)
	}
	body := strings.Split(strings.TrimSuffix(strings.TrimPrefix(s, beginLine+"\n"), "\n"+endLine+"\n"), "\n")
	for i, l := range body {
		if len(l) > 70 || (i < len(body)-1 && len(l) != 70) || l == "" {
			t.Fatalf("line %d is %d long:\n%s", i, len(l), s)
		}
	}
}

func TestSignIsDeterministicForEd25519(t *testing.T) {
	// Ed25519 (and RSA PKCS#1 v1.5) signatures are deterministic: the
	// OpenSSH test compares such files with ssh-keygen's byte for byte.
	s := edSigner(t)
	a, b := mustSign(t, []byte("m"), s, Namespace), mustSign(t, []byte("m"), s, Namespace)
	if !bytes.Equal(a, b) {
		t.Fatal("two Ed25519 signatures differ")
	}
}

func TestVerifyRefusals(t *testing.T) {
	msg := bytes.Repeat([]byte("lock line\n"), 100)
	for _, name := range []string{"ed25519", "ecdsa-p256", "rsa-2048"} {
		t.Run(name, func(t *testing.T) {
			s := sshSigner(t, testKeys(t)[name])
			other := sshSigner(t, testKeys(t)["ecdsa-p384"])
			key := authorized(s.PublicKey())
			fp := ssh.FingerprintSHA256(s.PublicKey())
			sig := mustSign(t, msg, s, Namespace)
			listed := mustAllowed(t, "alice "+key+"\n")

			tampered := bytes.Clone(msg)
			tampered[17] ^= 1
			badSig := reblob(t, sig, func(b []byte) []byte { b[len(b)-1] ^= 1; return b })

			cases := []struct {
				name    string
				msg     []byte
				sig     []byte
				allowed *AllowedSigners
				want    error
				detail  string
			}{
				{"empty signature", msg, nil, listed, ErrNoSignature, ""},
				{"blank signature", msg, []byte(" \n\r\n"), listed, ErrNoSignature, ""},
				{"not a signature", msg, []byte("hello\n"), listed, ErrMalformed, "BEGIN SSH SIGNATURE"},
				{"one message byte changed", tampered, sig, listed, ErrBadSignature, fp},
				{"one signature byte changed", msg, badSig, listed, ErrBadSignature, fp},
				{"message truncated", msg[:len(msg)-1], sig, listed, ErrBadSignature, fp},
				{"wrong namespace", msg, mustSign(t, msg, s, "file"), listed, ErrWrongNamespace, `"file", not "mcpdrift-lock"`},
				{"unlisted key", msg, sig, mustAllowed(t, "bob "+authorized(other.PublicKey())+"\n"), ErrUnknownSigner, fp},
				{"listed for another namespace", msg, sig, mustAllowed(t, `alice namespaces="other" `+key+"\n"), ErrSignerNamespace, `namespaces="other"`},
				{"excluded by a negated pattern", msg, sig, mustAllowed(t, `alice namespaces="*,!mcpdrift-lock" `+key+"\n"), ErrSignerNamespace, fp},
				{"expired", msg, sig, mustAllowed(t, `alice valid-before="20260101Z" `+key+"\n"), ErrSignerExpired, "2026-01-01T00:00:00Z"},
				{"not yet valid", msg, sig, mustAllowed(t, `alice valid-after="20270101000000Z" `+key+"\n"), ErrSignerNotYetValid, "2027-01-01T00:00:00Z"},
				{"expired beats another namespace", msg, sig, mustAllowed(t,
					`alice namespaces="other" `+key+"\n"+`alice valid-before="20260101Z" `+key+"\n"), ErrSignerExpired, "line 2"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					p, err := Verify(c.msg, c.sig, c.allowed, Namespace, now)
					if p != "" {
						t.Fatalf("principal %q with error %v", p, err)
					}
					e := wantKind(t, err, c.want)
					if !strings.Contains(err.Error(), c.detail) {
						t.Fatalf("%q does not say %q", err, c.detail)
					}
					if c.want != ErrNoSignature && c.want != ErrMalformed && e.Fingerprint != fp {
						t.Fatalf("fingerprint %q, want %q", e.Fingerprint, fp)
					}
				})
			}

			for _, ok := range []struct{ allowed, principal string }{
				{`"alice@example.com,*@corp" namespaces="mcpdrift-*",valid-after="20260101Z",VALID-BEFORE="20270101Z" ` + key + " comment", "alice@example.com,*@corp"},
				{`first namespaces="other" ` + key + "\nsecond " + key, "second"},
				{`  spaced	namespaces="a,mcpdrift-lock"	` + key, "spaced"},
			} {
				p, err := Verify(msg, sig, mustAllowed(t, ok.allowed), Namespace, now)
				if err != nil || p != ok.principal {
					t.Fatalf("%s: Verify = %q, %v; want %q", ok.allowed, p, err, ok.principal)
				}
			}
		})
	}
}

func TestValidityBoundaries(t *testing.T) {
	s := edSigner(t)
	key := authorized(s.PublicKey())
	sig := mustSign(t, []byte("m"), s, Namespace)
	a := mustAllowed(t, `p valid-after="20260101000000Z",valid-before="20260201000000Z" `+key)
	after := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	before := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		at   time.Time
		want error
	}{
		{after.Add(-time.Second), ErrSignerNotYetValid},
		{after, nil},
		{after.Add(999 * time.Millisecond), nil},
		{before, nil}, // valid-before is inclusive, as in ssh-keygen
		{before.Add(999 * time.Millisecond), nil},
		{before.Add(time.Second), ErrSignerExpired},
	} {
		_, err := Verify([]byte("m"), sig, a, Namespace, c.at)
		if c.want == nil {
			if err != nil {
				t.Fatalf("at %v: %v", c.at, err)
			}
			continue
		}
		wantKind(t, err, c.want)
	}
}

func TestVerifyCallerMistakes(t *testing.T) {
	s := edSigner(t)
	sig := mustSign(t, []byte("m"), s, Namespace)
	a := mustAllowed(t, "p "+authorized(s.PublicKey()))
	for name, err := range map[string]error{
		"nil allowed":     second(Verify([]byte("m"), sig, nil, Namespace, now)),
		"empty namespace": second(Verify([]byte("m"), sig, a, "", now)),
		"zero time":       second(Verify([]byte("m"), sig, a, Namespace, time.Time{})),
	} {
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				t.Fatalf("%s: %v matches %v", name, err, s)
			}
		}
	}
}

func second(_ string, err error) error { return err }

// reblob decodes an armored signature, lets edit change the blob and
// armors the result again.
func reblob(t testing.TB, sig []byte, edit func([]byte) []byte) []byte {
	t.Helper()
	blob, err := dearmor(sig)
	if err != nil {
		t.Fatal(err)
	}
	return armor(edit(bytes.Clone(blob)))
}

// blobFields builds a signature blob from its fields.
func blobFields(magicVersion []byte, fields ...[]byte) []byte {
	b := bytes.Clone(magicVersion)
	for _, f := range fields {
		b = appendString(b, f)
	}
	return b
}

func sigField(format string, blob []byte) []byte {
	return appendString(appendString(nil, []byte(format)), blob)
}

func TestParseSignatureRefusals(t *testing.T) {
	s := edSigner(t)
	pub := s.PublicKey().Marshal()
	good := mustSign(t, []byte("m"), s, Namespace)
	parsed, err := ParseSignature(good)
	if err != nil {
		t.Fatal(err)
	}
	edSig := parsed.Signature.Blob
	mv := append([]byte(magic), 0, 0, 0, 1)
	rsaPub := sshSigner(t, testKeys(t)["rsa-2048"]).PublicKey().Marshal()
	_, dsaKey := dsaPublicKey(t)
	cert := &ssh.Certificate{Key: s.PublicKey(), CertType: ssh.UserCert, ValidPrincipals: []string{"a"}, ValidBefore: ssh.CertTimeInfinity}
	if err := cert.SignCert(rand.Reader, s); err != nil {
		t.Fatal(err)
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	smallPub, _ := ssh.NewPublicKey(&small.PublicKey)

	blobs := []struct {
		name string
		blob []byte
		want error
	}{
		{"good (control)", blobFields(mv, pub, []byte(Namespace), nil, []byte("sha512"), sigField("ssh-ed25519", edSig)), nil},
		{"reserved is ignored", blobFields(mv, pub, []byte(Namespace), []byte("future"), []byte("sha512"), sigField("ssh-ed25519", edSig)), nil},
		{"empty blob", nil, ErrMalformed},
		{"bad magic", blobFields(append([]byte("SSHSIH"), 0, 0, 0, 1), pub, []byte(Namespace), nil, []byte("sha512"), sigField("ssh-ed25519", edSig)), ErrMalformed},
		{"version 2", blobFields(append([]byte(magic), 0, 0, 0, 2), pub, []byte(Namespace), nil, []byte("sha512"), sigField("ssh-ed25519", edSig)), ErrMalformed},
		{"version 0", blobFields(append([]byte(magic), 0, 0, 0, 0), pub, []byte(Namespace), nil, []byte("sha512"), sigField("ssh-ed25519", edSig)), ErrMalformed},
		{"truncated version", []byte(magic + "\x00\x00"), ErrMalformed},
		{"truncated", blobFields(mv, pub, []byte(Namespace), nil, []byte("sha512")), ErrMalformed},
		{"huge length", append(bytes.Clone(mv), 0xff, 0xff, 0xff, 0xff), ErrMalformed},
		{"length past the end", append(bytes.Clone(mv), 0x00, 0x00, 0x01, 0x00, 1, 2, 3), ErrMalformed},
		{"trailing bytes", append(blobFields(mv, pub, []byte(Namespace), nil, []byte("sha512"), sigField("ssh-ed25519", edSig)), 0), ErrMalformed},
		{"empty namespace", blobFields(mv, pub, nil, nil, []byte("sha512"), sigField("ssh-ed25519", edSig)), ErrMalformed},
		{"bad public key", blobFields(mv, []byte("\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x01x"), []byte(Namespace), nil, []byte("sha512"), sigField("ssh-ed25519", edSig)), ErrMalformed},
		{"public key with trailing bytes", blobFields(mv, append(bytes.Clone(pub), 0), []byte(Namespace), nil, []byte("sha512"), sigField("ssh-ed25519", edSig)), ErrMalformed},
		{"md5", blobFields(mv, pub, []byte(Namespace), nil, []byte("md5"), sigField("ssh-ed25519", edSig)), ErrUnsupported},
		{"SHA512 in capitals", blobFields(mv, pub, []byte(Namespace), nil, []byte("SHA512"), sigField("ssh-ed25519", edSig)), ErrUnsupported},
		{"signature field not a signature", blobFields(mv, pub, []byte(Namespace), nil, []byte("sha512"), []byte("xx")), ErrMalformed},
		{"signature field with trailing bytes", blobFields(mv, pub, []byte(Namespace), nil, []byte("sha512"), append(sigField("ssh-ed25519", edSig), 0)), ErrMalformed},
		{"algorithm of another key type", blobFields(mv, pub, []byte(Namespace), nil, []byte("sha512"), sigField("ecdsa-sha2-nistp256", edSig)), ErrMalformed},
		{"RSA with SHA-1", blobFields(mv, rsaPub, []byte(Namespace), nil, []byte("sha512"), sigField("ssh-rsa", edSig)), ErrUnsupported},
		{"RSA below 2048 bits", blobFields(mv, smallPub.Marshal(), []byte(Namespace), nil, []byte("sha512"), sigField("rsa-sha2-512", edSig)), ErrUnsupported},
		{"DSA key", blobFields(mv, dsaKey, []byte(Namespace), nil, []byte("sha512"), sigField("ssh-dss", edSig)), ErrUnsupported},
		{"certificate", blobFields(mv, cert.Marshal(), []byte(Namespace), nil, []byte("sha512"), sigField("ssh-ed25519", edSig)), ErrUnsupported},
	}
	for _, c := range blobs {
		_, err := ParseSignature(armor(c.blob))
		if c.want == nil {
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			continue
		}
		wantKind(t, err, c.want)
	}

	// The armor.
	body := strings.TrimSuffix(strings.TrimPrefix(string(good), beginLine+"\n"), endLine+"\n")
	for _, c := range []struct {
		name string
		text string
		want error
	}{
		{"CRLF line ends", strings.ReplaceAll(string(good), "\n", "\r\n"), nil},
		{"no final newline", strings.TrimSuffix(string(good), "\n"), nil},
		{"white space after the END line", string(good) + "\n \t\n", nil},
		{"one base64 line", beginLine + "\n" + strings.ReplaceAll(body, "\n", "") + "\n" + endLine + "\n", nil},
		{"text before the BEGIN line", "x\n" + string(good), ErrMalformed},
		{"space before the BEGIN line", " " + string(good), ErrMalformed},
		{"no END line", beginLine + "\n" + body, ErrMalformed},
		{"another signature after the END line", string(good) + string(good), ErrMalformed},
		{"text after the END line", string(good) + "x", ErrMalformed},
		{"space inside the base64", beginLine + "\n" + " " + body + endLine + "\n", ErrMalformed},
		{"non-base64 byte", beginLine + "\n" + "\x1b[31m" + body + endLine + "\n", ErrMalformed},
		{"bad padding", beginLine + "\nU1NIU0lHAA=\n" + endLine + "\n", ErrMalformed},
		{"non-zero padding bits", beginLine + "\nU1NIU0lHAAB=\n" + endLine + "\n", ErrMalformed},
		{"empty body", beginLine + "\n" + endLine + "\n", ErrMalformed},
		{"too large", beginLine + "\n" + strings.Repeat("A", MaxSignatureBytes) + "\n" + endLine + "\n", ErrMalformed},
	} {
		_, err := ParseSignature([]byte(c.text))
		if c.want == nil {
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			continue
		}
		e := wantKind(t, err, c.want)
		if strings.ContainsAny(e.Error(), "\x1b\r") {
			t.Fatalf("%s: unescaped control character in %q", c.name, e)
		}
	}
}

// dsaPublicKey is a well-formed ssh-dss public key (x/crypto/ssh still
// parses them; this package refuses them).
func dsaPublicKey(t *testing.T) (string, []byte) {
	t.Helper()
	one := big.NewInt(1)
	k := ssh.Marshal(struct {
		Name       string
		P, Q, G, Y *big.Int
	}{"ssh-dss", new(big.Int).Add(new(big.Int).Lsh(one, 1023), one), new(big.Int).Add(new(big.Int).Lsh(one, 159), one), big.NewInt(2), big.NewInt(5)})
	if _, err := ssh.ParsePublicKey(k); err != nil {
		t.Fatalf("x/crypto/ssh does not parse the DSA key: %v", err)
	}
	return "ssh-dss", k
}

// plainSigner is a signer that is not an ssh.AlgorithmSigner.
type plainSigner struct{ s ssh.Signer }

func (p plainSigner) PublicKey() ssh.PublicKey { return p.s.PublicKey() }
func (p plainSigner) Sign(r io.Reader, data []byte) (*ssh.Signature, error) {
	return p.s.Sign(r, data)
}

// liar signs with one key and claims another.
type liar struct{ claim, signWith ssh.Signer }

func (l liar) PublicKey() ssh.PublicKey { return l.claim.PublicKey() }
func (l liar) Sign(r io.Reader, data []byte) (*ssh.Signature, error) {
	return l.signWith.Sign(r, data)
}

func TestSignRefusals(t *testing.T) {
	ed := edSigner(t)
	rsaSigner := sshSigner(t, testKeys(t)["rsa-2048"])
	if _, err := Sign([]byte("m"), plainSigner{rsaSigner}, Namespace); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("RSA without algorithm choice: %v", err)
	}
	// A non-RSA signer need not choose an algorithm.
	if _, err := Sign([]byte("m"), plainSigner{ed}, Namespace); err != nil {
		t.Fatal(err)
	}
	other, err := ssh.NewSignerFromKey(func() ed25519.PrivateKey { _, k, _ := ed25519.GenerateKey(rand.Reader); return k }())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sign([]byte("m"), liar{ed, other}, Namespace); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("a signer that signs with another key: %v", err)
	}
	if _, err := Sign([]byte("m"), liar{ed, sshSigner(t, testKeys(t)["ecdsa-p256"])}, Namespace); err == nil {
		t.Fatal("a signer that answers with another algorithm: no error")
	}
	if _, err := Sign([]byte("m"), nil, Namespace); err == nil {
		t.Fatal("nil signer")
	}
	if _, err := Sign([]byte("m"), ed, ""); err == nil {
		t.Fatal("empty namespace")
	}
	cert := &ssh.Certificate{Key: ed.PublicKey(), CertType: ssh.UserCert, ValidPrincipals: []string{"a"}, ValidBefore: ssh.CertTimeInfinity}
	if err := cert.SignCert(rand.Reader, ed); err != nil {
		t.Fatal(err)
	}
	cs, err := ssh.NewCertSigner(cert, ed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sign([]byte("m"), cs, Namespace); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("certificate signer: %v", err)
	}
}

func TestParsePrivateKey(t *testing.T) {
	k := testKeys(t)["ed25519"]
	plain, err := ssh.MarshalPrivateKey(k, "c")
	if err != nil {
		t.Fatal(err)
	}
	enc, err := ssh.MarshalPrivateKeyWithPassphrase(k, "c", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	want := sshSigner(t, k).PublicKey().Marshal()
	check := func(s ssh.Signer, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(s.PublicKey().Marshal(), want) {
			t.Fatal("another key")
		}
	}
	check(ParsePrivateKey(pem.EncodeToMemory(plain), nil))
	check(ParsePrivateKey(pem.EncodeToMemory(plain), []byte("ignored")))
	check(ParsePrivateKey(pem.EncodeToMemory(enc), []byte("secret")))
	_, err = ParsePrivateKey(pem.EncodeToMemory(enc), nil)
	if !errors.Is(err, ErrPassphraseRequired) || !strings.Contains(err.Error(), ssh.FingerprintSHA256(sshSigner(t, k).PublicKey())) {
		t.Fatalf("encrypted key without a passphrase: %v", err)
	}
	if _, err = ParsePrivateKey(pem.EncodeToMemory(enc), []byte("wrong")); err == nil || !strings.Contains(err.Error(), "wrong passphrase") {
		t.Fatalf("wrong passphrase: %v", err)
	}
	if _, err = ParsePrivateKey([]byte("not a key"), nil); err == nil {
		t.Fatal("garbage: no error")
	}
	if _, err = ParsePrivateKey(make([]byte, MaxPrivateKeyBytes+1), nil); err == nil {
		t.Fatal("too large: no error")
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := ssh.MarshalPrivateKey(small, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err = ParsePrivateKey(pem.EncodeToMemory(sb), nil); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("RSA 1024: %v", err)
	}
}

func TestParseAllowedSigners(t *testing.T) {
	ed := authorized(edSigner(t).PublicKey())
	edType, edB64, _ := strings.Cut(ed, " ")
	ec := authorized(sshSigner(t, testKeys(t)["ecdsa-p521"]).PublicKey())
	dsaType, dsaKey := dsaPublicKey(t)
	dsa := dsaType + " " + b64(dsaKey)
	good := []struct {
		text string
		n    int
	}{
		{"# comment\n\n   \n\t# indented comment\na " + ed + "\n", 1},
		{"a " + ed + "\r\nb " + ec + "\r\n", 2},
		{"a " + ed, 1},
		{"a " + ed + " trailing comment with \"quotes\" and = signs", 1},
		{`"a b" ` + ed, 1},
		{`a Namespaces="x",Valid-After="20200101" ` + ed, 1},
		{`a namespaces="x \" y" ` + ed, 1},
		{`a valid-before="202001011200UTC" ` + ed, 1},
		{`a valid-after="20200101120000z" ` + ed, 1},
		{"a " + ed + "\na " + ed, 2},
	}
	for _, c := range good {
		a, err := ParseAllowedSigners(strings.NewReader(c.text))
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if a.Len() != c.n {
			t.Fatalf("%q: %d signers, want %d", c.text, a.Len(), c.n)
		}
	}
	bad := []struct {
		text, msg string
	}{
		{"", "no signer is listed"},
		{"# only a comment\n\n", "no signer is listed"},
		{"a", "no key"},
		{"a\n", "no key"},
		{"a " + edType, "missing base64 key"},
		{"a " + edType + " !!!", "not base64"},
		{"a " + edType + " " + b64([]byte("junk")), "bad"},
		{"a ssh-ed448 " + edB64, "unknown key type"},
		{"a ecdsa-sha2-nistp256 " + edB64, "key type \"ecdsa-sha2-nistp256\" but the key is \"ssh-ed25519\""},
		{"a " + dsa, "ssh-dss"},
		{"a cert-authority " + ed, "cert-authority is not supported"},
		{"a CERT-AUTHORITY,namespaces=\"x\" " + ed, "cert-authority is not supported"},
		{"a namespaces=\"x\",cert-authority " + ed, "cert-authority is not supported"},
		{"a restrict " + ed, "unknown"},
		{"a no-touch-required " + ed, "unknown"},
		{`a namespaces=x ` + ed, "double quotes"},
		{`a namespaces="x ` + ed, "no closing quote"},
		{`a namespaces="x",namespaces="y" ` + ed, "given twice"},
		{`a namespaces="" ` + ed, "allows no namespace"},
		{`a namespaces="x", ` + ed, "end with a comma"},
		{`a namespaces="x"y ` + ed, "after its closing quote"},
		{`a principal="x" ` + ed, "unknown option"},
		{`a valid-after="2020" ` + ed, "not a time"},
		{`a valid-after="20201301Z" ` + ed, "not a valid date"},
		{`a valid-after="20200230Z" ` + ed, "not a valid date"},
		{`a valid-after="20200101246000Z" ` + ed, "not a valid date"},
		{`a valid-after="19700101Z" ` + ed, "not after 1970"},
		{`a valid-after="-2020010Z" ` + ed, "not a time"},
		{`a valid-after="20210101Z",valid-before="20200101Z" ` + ed, "valid-before is not after valid-after"},
		{`a valid-after="20200101Z",valid-before="20200101Z" ` + ed, "valid-before is not after valid-after"},
		{`"a b ` + ed, "no closing quote"},
		{`"a"b ` + ed, "after the closing quote"},
		{`a"b ` + ed, "a quote inside"},
		{`"" ` + ed, "empty principals"},
		{"a\x00 " + ed, "control character"},
		{"a " + ed + "\x1b[2J", "control character"},
		{"a " + ed + "\rX", "control character"},
		{"a " + ed + "\nb junk junk", "line 2:"},
	}
	for _, c := range bad {
		_, err := ParseAllowedSigners(strings.NewReader(c.text))
		if err == nil {
			t.Fatalf("%q: no error", c.text)
		}
		var se *SyntaxError
		if !errors.Is(err, ErrAllowedSigners) || !errors.As(err, &se) {
			t.Fatalf("%q: %v is not a SyntaxError", c.text, err)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Fatalf("%q: %q does not say %q", c.text, err, c.msg)
		}
		if strings.ContainsAny(err.Error(), "\x00\x1b\r") {
			t.Fatalf("%q: unescaped control character in %q", c.text, err)
		}
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// countingReader counts what is read from an endless source.
type countingReader struct {
	n    int64
	line []byte
	off  int
}

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.line[c.off]
		c.off = (c.off + 1) % len(c.line)
	}
	c.n += int64(len(p))
	return len(p), nil
}

func TestAllowedSignersBounds(t *testing.T) {
	line := "alice@example.com " + authorized(edSigner(t).PublicKey()) + "\n"
	start := time.Now()

	// An endless stream of valid lines: refused once past the byte bound,
	// having read no more than the bound and a buffer.
	endless := &countingReader{line: []byte(line)}
	_, err := ParseAllowedSigners(endless)
	if err == nil || !strings.Contains(err.Error(), "larger than") && !strings.Contains(err.Error(), "more than") {
		t.Fatalf("endless: %v", err)
	}
	if endless.n > MaxAllowedSignersBytes+64<<10 {
		t.Fatalf("read %d bytes of an endless file", endless.n)
	}

	// An endless line.
	endless = &countingReader{line: []byte("a")}
	if _, err = ParseAllowedSigners(endless); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("endless line: %v", err)
	}
	if endless.n > MaxAllowedSignersLine+64<<10 {
		t.Fatalf("read %d bytes of an endless line", endless.n)
	}

	// Just over the line bound, and just within it.
	long := "a " + authorized(edSigner(t).PublicKey()) + " " + strings.Repeat("c", MaxAllowedSignersLine)
	if _, err = ParseAllowedSigners(strings.NewReader(long[:MaxAllowedSignersLine+1])); err == nil || !strings.Contains(err.Error(), "line 1: longer than") {
		t.Fatalf("long line: %v", err)
	}
	if _, err = ParseAllowedSigners(strings.NewReader(long[:MaxAllowedSignersLine])); err != nil {
		t.Fatalf("line at the bound: %v", err)
	}

	// More keys than the bound, within the byte bound.
	short := "a " + authorized(edSigner(t).PublicKey()) + "\n"
	many := strings.Repeat(short, MaxAllowedSigners+1)
	if len(many) > MaxAllowedSignersBytes {
		t.Fatalf("test needs shorter lines: %d bytes", len(many))
	}
	if _, err = ParseAllowedSigners(strings.NewReader(many)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("too many keys: %v", err)
	}
	if a, err := ParseAllowedSigners(strings.NewReader(strings.Repeat(short, MaxAllowedSigners))); err != nil || a.Len() != MaxAllowedSigners {
		t.Fatalf("keys at the bound: %v", err)
	}

	// A megabyte of comments is fine.
	if _, err = ParseAllowedSigners(strings.NewReader(strings.Repeat("#\n", MaxAllowedSignersBytes/2-len(short)) + short)); err != nil {
		t.Fatalf("comments: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("bounds took %v", d)
	}
}

func TestMatchPattern(t *testing.T) {
	for _, c := range []struct {
		s, list string
		want    bool
	}{
		{"mcpdrift-lock", "mcpdrift-lock", true},
		{"mcpdrift-lock", "MCPDRIFT-LOCK", false},
		{"mcpdrift-lock", "mcpdrift-*", true},
		{"mcpdrift-lock", "*", true},
		{"mcpdrift-lock", "mcpdrift-loc?", true},
		{"mcpdrift-lock", "mcpdrift-lo?", false},
		{"mcpdrift-lock", "file,git", false},
		{"mcpdrift-lock", "file,mcpdrift-lock", true},
		{"mcpdrift-lock", "*,!mcpdrift-lock", false},
		{"mcpdrift-lock", "!mcpdrift-lock,*", false},
		{"mcpdrift-lock", "!file", false}, // a negation alone allows nothing
		{"mcpdrift-lock", "!file,mcp*", true},
		{"mcpdrift-lock", "*-*-*", false},
		{"a-b-c", "*-*-*", true},
		{"", "*", true},
		{"", "", false},
		{"mcpdrift-lock", ",", false},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "*a*a*a*a*a*a*a*a*a*a*a*a*b", false},
	} {
		if got := matchList(c.s, c.list); got != c.want {
			t.Errorf("matchList(%q, %q) = %v", c.s, c.list, got)
		}
	}
	// Worst case stays quadratic, not exponential.
	start := time.Now()
	matchPattern(strings.Repeat("a", 4000), strings.Repeat("*a", 2000)+"b")
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("pattern took %v", d)
	}
}

func TestParseTime(t *testing.T) {
	utc := func(y, mo, d, h, mi, s int) int64 {
		return time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC).Unix()
	}
	for _, c := range []struct {
		s    string
		want int64
	}{
		{"20260131Z", utc(2026, 1, 31, 0, 0, 0)},
		{"202601311530Z", utc(2026, 1, 31, 15, 30, 0)},
		{"20260131153045Z", utc(2026, 1, 31, 15, 30, 45)},
		{"20260131153045utc", utc(2026, 1, 31, 15, 30, 45)},
		{"20240229z", utc(2024, 2, 29, 0, 0, 0)},
	} {
		got, err := parseTime(c.s)
		if err != nil || got != c.want {
			t.Errorf("parseTime(%q) = %d, %v; want %d", c.s, got, err, c.want)
		}
	}
	// Without a suffix: the local time zone, as ssh-keygen.
	got, err := parseTime("20260131")
	if want := time.Date(2026, 1, 31, 0, 0, 0, 0, time.Local).Unix(); err != nil || got != want {
		t.Errorf("local: %d, %v; want %d", got, err, want)
	}
	for _, s := range []string{"", "Z", "UTC", "2026013", "202601311", "20230229Z", "20260131240000Z", "20260131235960Z", "2026-01-31", "+0260131", "２０２６０１３１"} {
		if _, err := parseTime(s); err == nil {
			t.Errorf("parseTime(%q): no error", s)
		}
	}
}

func TestReadSignatureFile(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadSignatureFile(filepath.Join(dir, "mcpdrift.lock.sig"))
	wantKind(t, err, ErrNoSignature)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "mcpdrift.lock.sig") {
		t.Fatalf("missing file: %v", err)
	}
	_, err = ReadSignatureFile(dir)
	wantKind(t, err, ErrMalformed)
	big := filepath.Join(dir, "big.sig")
	if err := os.WriteFile(big, make([]byte, MaxSignatureBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadSignatureFile(big)
	wantKind(t, err, ErrMalformed)
	ok := filepath.Join(dir, "ok.sig")
	sig := mustSign(t, []byte("m"), edSigner(t), Namespace)
	if err := os.WriteFile(ok, sig, 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadSignatureFile(ok); err != nil || !bytes.Equal(b, sig) {
		t.Fatalf("ReadSignatureFile = %v", err)
	}
}

func TestSignedDataLayout(t *testing.T) {
	// PROTOCOL.sshsig section 3, spelled out.
	d := signedData("ns", "sha512", []byte{1, 2})
	want := []byte("SSHSIG")
	for _, f := range [][]byte{[]byte("ns"), nil, []byte("sha512"), {1, 2}} {
		want = binary.BigEndian.AppendUint32(want, uint32(len(f)))
		want = append(want, f...)
	}
	if !bytes.Equal(d, want) {
		t.Fatalf("%x\n%x", d, want)
	}
}
