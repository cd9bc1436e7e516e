package sshsig

import (
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/crypto/ssh"
)

// Sign signs message for namespace with signer and returns the armored
// signature, byte for byte as `ssh-keygen -Y sign` writes it (hash sha512;
// rsa-sha2-512 for RSA keys). signer may be a key from ParsePrivateKey or
// any other ssh.Signer, such as one from an ssh-agent; an RSA signer must
// implement ssh.AlgorithmSigner (those of x/crypto/ssh and its agent
// package do), since SSHSIG forbids SHA-1 RSA signatures. Certificates and
// keys of unsupported types are refused with ErrUnsupported. The signature
// is verified before it is returned, so a faulty signer (an agent that
// answered with another key) is caught here and not by the verifier.
func Sign(message []byte, signer ssh.Signer, namespace string) ([]byte, error) {
	if signer == nil {
		return nil, errors.New("sshsig: no signer")
	}
	if namespace == "" {
		return nil, errors.New("sshsig: empty namespace")
	}
	pub := signer.PublicKey()
	if pub == nil {
		return nil, errors.New("sshsig: signer without a public key")
	}
	if err := supportedKey(pub); err != nil {
		return nil, err
	}
	fp := ssh.FingerprintSHA256(pub)
	data := signedData(namespace, HashSHA512, digest(HashSHA512, message))
	want := pub.Type()
	var sig *ssh.Signature
	var err error
	if want == ssh.KeyAlgoRSA {
		as, ok := signer.(ssh.AlgorithmSigner)
		if !ok {
			return nil, newError(ErrUnsupported, fp, "RSA signer for %s cannot choose rsa-sha2-512 (it is not an ssh.AlgorithmSigner), and SSHSIG forbids SHA-1 ssh-rsa signatures", fp)
		}
		want = ssh.KeyAlgoRSASHA512
		sig, err = as.SignWithAlgorithm(rand.Reader, data, want)
	} else {
		sig, err = signer.Sign(rand.Reader, data)
	}
	if err != nil {
		return nil, fmt.Errorf("sshsig: signing with %s: %w", fp, err)
	}
	if sig == nil || sig.Format != want || len(sig.Rest) != 0 {
		return nil, fmt.Errorf("sshsig: signer for %s returned a signature that is not %s", fp, want)
	}
	if err := pub.Verify(data, sig); err != nil {
		return nil, fmt.Errorf("sshsig: signer for %s returned a signature that does not verify: %v", fp, err)
	}
	return armor(marshalBlob(pub, namespace, HashSHA512, sig)), nil
}
