package sshsig

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzParseSignature: no input panics; every refusal is an *Error of
// exactly one parse kind, its message free of raw control characters; what
// parses has the form ParseSignature promises, armors back to something
// that parses the same, and goes through Verify without a panic. Each
// input is tried as an armored file and, armored, as a blob, so that the
// fuzzer reaches the blob parser without having to find base64.
func FuzzParseSignature(f *testing.F) {
	msg := []byte("fuzzed lock\n")
	var allowedText strings.Builder
	for _, name := range []string{"ed25519", "ecdsa-p256", "rsa-2048"} {
		s := sshSigner(f, testKeys(f)[name])
		sig := mustSign(f, msg, s, Namespace)
		f.Add(sig)
		f.Add(bytes.ReplaceAll(sig, []byte("\n"), []byte("\r\n")))
		blob, err := dearmor(sig)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(blob)
		allowedText.WriteString(`p namespaces="mcpdrift-*" ` + authorized(s.PublicKey()) + "\n")
	}
	f.Add(mustSign(f, msg, edSigner(f), "file"))
	f.Add([]byte(""))
	f.Add([]byte(beginLine + "\n" + endLine + "\n"))
	f.Add([]byte(beginLine + "\nU1NIU0lHAAAAAQ==\n" + endLine + "\n"))
	f.Add(armor(append([]byte(magic), 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff)))
	allowed := mustAllowed(f, allowedText.String())
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, msg, data, allowed)
		if len(data) <= MaxSignatureBytes/2 {
			checkParse(t, msg, armor(data), allowed)
		}
	})
}

func checkParse(t *testing.T, msg, data []byte, allowed *AllowedSigners) {
	t.Helper()
	sig, err := ParseSignature(data)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%v is not an *Error", err)
		}
		n := 0
		for _, k := range []error{ErrNoSignature, ErrMalformed, ErrUnsupported} {
			if errors.Is(err, k) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%v matches %d parse kinds", err, n)
		}
		if strings.ContainsAny(err.Error(), "\x00\x1b\r\n") {
			t.Fatalf("raw control character in %q", err)
		}
		return
	}
	if sig.Namespace == "" || (sig.HashAlgorithm != HashSHA512 && sig.HashAlgorithm != HashSHA256) {
		t.Fatalf("parsed %+v", sig)
	}
	if err := supportedKey(sig.PublicKey); err != nil {
		t.Fatalf("parsed an unsupported key: %v", err)
	}
	if err := checkFormat(sig.PublicKey, sig.Signature.Format); err != nil {
		t.Fatalf("parsed a bad format: %v", err)
	}
	again, err := ParseSignature(armor(marshalBlob(sig.PublicKey, sig.Namespace, sig.HashAlgorithm, sig.Signature)))
	if err != nil || again.Namespace != sig.Namespace || again.HashAlgorithm != sig.HashAlgorithm ||
		!bytes.Equal(again.PublicKey.Marshal(), sig.PublicKey.Marshal()) ||
		again.Signature.Format != sig.Signature.Format || !bytes.Equal(again.Signature.Blob, sig.Signature.Blob) {
		t.Fatalf("re-armored signature parses as %+v, %v; was %+v", again, err, sig)
	}
	if _, err := Verify(msg, data, allowed, sig.Namespace, now); err != nil {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Verify: %v is not an *Error", err)
		}
	}
}

// FuzzParseAllowedSigners: no input panics; a refusal wraps
// ErrAllowedSigners and shows no raw control character; what parses lists
// at least one and at most MaxAllowedSigners keys, and verifying against it
// gives either a principal or one of the sentinels.
func FuzzParseAllowedSigners(f *testing.F) {
	s := edSigner(f)
	key := authorized(s.PublicKey())
	ec := authorized(sshSigner(f, testKeys(f)["ecdsa-p256"]).PublicKey())
	for _, seed := range []string{
		"alice@example.com " + key + "\n",
		"# comment\n\n\"a b\" " + key + " comment\r\n",
		`*@example.com,!bob@example.com namespaces="mcpdrift-lock,file",valid-after="20200101",valid-before="203001011200Z" ` + key + "\n",
		`a VALID-BEFORE="20250101000000UTC" ` + ec + "\nb " + key + "\n",
		`a namespaces="x \" y" ` + key,
		`a cert-authority ` + key,
		"a namespaces=\"x\",\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	msg := []byte("m")
	sig := mustSign(f, msg, s, Namespace)
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAllowedSigners(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrAllowedSigners) {
				t.Fatalf("%v does not wrap ErrAllowedSigners", err)
			}
			if strings.ContainsAny(err.Error(), "\x00\x1b\r\n") {
				t.Fatalf("raw control character in %q", err)
			}
			return
		}
		if a.Len() < 1 || a.Len() > MaxAllowedSigners {
			t.Fatalf("%d signers", a.Len())
		}
		p, err := Verify(msg, sig, a, Namespace, now)
		if err == nil {
			if p == "" {
				t.Fatal("empty principal")
			}
			return
		}
		n := 0
		for _, k := range sentinels {
			if errors.Is(err, k) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("Verify: %v matches %d kinds", err, n)
		}
	})
}
