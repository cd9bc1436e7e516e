package sshsig

import (
	"crypto/ed25519"
	"crypto/sha512"
	"testing"
	"time"
)

// Signing and verifying a 10 MB lock, against the named baseline of the
// bare primitives over the same bytes (SHA-512 of the message, then
// ed25519.Sign or ed25519.Verify of the digest), in one run. What sshsig
// adds is the SSHSIG framing, the armor, the check of its own signature
// after signing, and the parse and allowed-signers lookup before verifying.
func BenchmarkSignVerify10MB(b *testing.B) {
	msg := make([]byte, 10<<20)
	for i := range msg {
		msg[i] = byte(i*7 + i>>9)
	}
	for _, name := range []string{"ed25519", "ecdsa-p256"} {
		s := sshSigner(b, testKeys(b)[name])
		sig := mustSign(b, msg, s, Namespace)
		allowed := mustAllowed(b, "alice "+authorized(s.PublicKey())+"\n")
		b.Run("Sign/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Sign(msg, s, Namespace); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Verify/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			now := time.Now()
			for b.Loop() {
				if _, err := Verify(msg, sig, allowed, Namespace, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	priv := testKeys(b)["ed25519"].(ed25519.PrivateKey)
	pub := priv.Public().(ed25519.PublicKey)
	h := sha512.Sum512(msg)
	raw := ed25519.Sign(priv, h[:])
	b.Run("baseline=sha512+ed25519.Sign", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			h := sha512.Sum512(msg)
			ed25519.Sign(priv, h[:])
		}
	})
	b.Run("baseline=sha512+ed25519.Verify", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			h := sha512.Sum512(msg)
			if !ed25519.Verify(pub, h[:], raw) {
				b.Fatal("baseline does not verify")
			}
		}
	})
}
