package sshsig

// Tests against the real OpenSSH: ssh-keygen -Y verify accepts what Sign
// makes, Verify accepts what ssh-keygen -Y sign makes, and both refuse the
// same tampered, misdirected and unauthorised signatures, for the same
// reason.
//
// ssh-keygen comes from Debian's openssh-client, which
// scripts/install-openssh-client.sh installs when it is missing (.ci/run
// calls it). Without ssh-keygen these tests skip and say so; under CI=true
// or MCPDRIFT_REQUIRE_SSH_KEYGEN=1 they fail instead. MCPDRIFT_SSH_KEYGEN
// names another ssh-keygen binary.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const envSSHKeygen, envRequireSSHKeygen = "MCPDRIFT_SSH_KEYGEN", "MCPDRIFT_REQUIRE_SSH_KEYGEN"

func sshKeygenRequired() bool {
	return os.Getenv("CI") == "true" || os.Getenv(envRequireSSHKeygen) == "1"
}

// sshKeygen returns the ssh-keygen to test against, or skips (fails when
// required).
func sshKeygen(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(envSSHKeygen); p != "" {
		return p
	}
	p, err := exec.LookPath("ssh-keygen")
	if err != nil {
		msg := "ssh-keygen is not installed (Debian package openssh-client; scripts/install-openssh-client.sh installs it), so the tests against OpenSSH cannot run"
		if sshKeygenRequired() {
			t.Fatalf("%s; CI=true or %s=1 requires them", msg, envRequireSSHKeygen)
		}
		t.Skip(msg)
	}
	return p
}

type keygenResult struct {
	stdout, stderr string
	code           int
}

// runKeygen runs ssh-keygen in dir with stdin, no agent and TZ=UTC.
func runKeygen(t *testing.T, dir string, stdin []byte, args ...string) keygenResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sshKeygen(t), args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "SSH_AUTH_SOCK=") && !strings.HasPrefix(e, "TZ=") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, "TZ=UTC")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("ssh-keygen %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return keygenResult{stdout.String(), stderr.String(), code}
}

type keygenKey struct {
	name, typ, bits string
	deterministic   bool // the same key and message give the same signature
}

var keygenKeys = []keygenKey{
	{"ed25519", "ed25519", "", true},
	{"ecdsa-p256", "ecdsa", "256", false},
	{"ecdsa-p384", "ecdsa", "384", false},
	{"ecdsa-p521", "ecdsa", "521", false},
	{"rsa-3072", "rsa", "3072", true},
}

// genKey makes a key with ssh-keygen in dir and returns the private key
// file's path and the public key line.
func genKey(t *testing.T, dir string, k keygenKey, passphrase string) (string, string) {
	t.Helper()
	path := filepath.Join(dir, "id_"+k.name)
	args := []string{"-q", "-t", k.typ, "-N", passphrase, "-C", k.name + "@test", "-f", path}
	if k.bits != "" {
		args = append(args, "-b", k.bits)
	}
	if r := runKeygen(t, dir, nil, args...); r.code != 0 {
		t.Fatalf("ssh-keygen %v: %d %s", args, r.code, r.stderr)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return path, strings.TrimSpace(string(pub))
}

// keygenSign signs message with ssh-keygen -Y sign (which writes FILE.sig)
// and returns the signature.
func keygenSign(t *testing.T, dir, key, namespace string, message []byte, extra ...string) []byte {
	t.Helper()
	sub, err := os.MkdirTemp(dir, "sign")
	if err != nil {
		t.Fatal(err)
	}
	msg := filepath.Join(sub, "mcpdrift.lock")
	if err := os.WriteFile(msg, message, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-Y", "sign", "-f", key, "-n", namespace}, extra...)
	if r := runKeygen(t, sub, nil, append(args, msg)...); r.code != 0 {
		t.Fatalf("ssh-keygen -Y sign: %d %s", r.code, r.stderr)
	}
	sig, err := os.ReadFile(msg + SignatureSuffix)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// keygenVerify runs ssh-keygen -Y verify.
func keygenVerify(t *testing.T, dir string, message, sig []byte, allowed, principal, namespace string) keygenResult {
	t.Helper()
	sub, err := os.MkdirTemp(dir, "verify")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "allowed_signers"), []byte(allowed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "msg.sig"), sig, 0o644); err != nil {
		t.Fatal(err)
	}
	return runKeygen(t, sub, message, "-Y", "verify", "-f", "allowed_signers", "-I", principal, "-n", namespace, "-s", "msg.sig")
}

// lockMessage is a message that ends without a newline and holds every
// byte value, so nothing is lost on the way through stdin.
func lockMessage() []byte {
	var b []byte
	for i := 0; i < 4; i++ {
		for c := 0; c < 256; c++ {
			b = append(b, byte(c))
		}
	}
	return append(b, []byte(`{"servers":[]}`)...)
}

func TestOpenSSHInterop(t *testing.T) {
	sshKeygen(t)
	msg := lockMessage()
	for _, k := range keygenKeys {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			keyFile, pubLine := genKey(t, dir, k, "")
			allowedText := "alice@example.com " + pubLine + "\n"
			allowed := mustAllowed(t, allowedText)
			pem, err := os.ReadFile(keyFile)
			if err != nil {
				t.Fatal(err)
			}
			signer, err := ParsePrivateKey(pem, nil)
			if err != nil {
				t.Fatal(err)
			}

			// ssh-keygen -Y verify accepts Sign's signature.
			ours := mustSign(t, msg, signer, Namespace)
			r := keygenVerify(t, dir, msg, ours, allowedText, "alice@example.com", Namespace)
			if r.code != 0 || !strings.Contains(r.stdout, `Good "mcpdrift-lock" signature for alice@example.com`) {
				t.Fatalf("ssh-keygen -Y verify of Sign's signature: %d\n%s%s\n%s", r.code, r.stdout, r.stderr, ours)
			}
			fp := sigFingerprint(t, ours)
			if !strings.Contains(r.stdout, fp) {
				t.Fatalf("ssh-keygen names another key than %s: %s", fp, r.stdout)
			}

			// Verify accepts ssh-keygen -Y sign's signature.
			theirs := keygenSign(t, dir, keyFile, Namespace, msg)
			if p, err := Verify(msg, theirs, allowed, Namespace, time.Now()); err != nil || p != "alice@example.com" {
				t.Fatalf("Verify of ssh-keygen's signature = %q, %v\n%s", p, err, theirs)
			}
			checkArmor(t, theirs) // the layout Sign copies is the one ssh-keygen writes
			if k.deterministic && !bytes.Equal(ours, theirs) {
				t.Fatalf("Sign and ssh-keygen -Y sign differ:\n%s\n%s", ours, theirs)
			}

			// and one made over SHA-256.
			sha256Sig := keygenSign(t, dir, keyFile, Namespace, msg, "-O", "hashalg=sha256")
			if s, err := ParseSignature(sha256Sig); err != nil || s.HashAlgorithm != HashSHA256 {
				t.Fatalf("ssh-keygen -O hashalg=sha256: %+v, %v", s, err)
			}
			if _, err := Verify(msg, sha256Sig, allowed, Namespace, time.Now()); err != nil {
				t.Fatalf("Verify of ssh-keygen's SHA-256 signature: %v", err)
			}
		})
	}
}

// sigFingerprint is the fingerprint of the key that made sig.
func sigFingerprint(t *testing.T, sig []byte) string {
	t.Helper()
	s, err := ParseSignature(sig)
	if err != nil {
		t.Fatal(err)
	}
	return s.Fingerprint()
}

// TestOpenSSHRefusesTheSame: each signature Verify refuses, ssh-keygen
// -Y verify refuses too, with the reason that matches the error's kind;
// and each control (the same file with the restriction lifted) both accept,
// so a refusal is never down to a syntax ssh-keygen reads differently.
func TestOpenSSHRefusesTheSame(t *testing.T) {
	sshKeygen(t)
	msg := lockMessage()
	for _, k := range []keygenKey{keygenKeys[0], keygenKeys[1], keygenKeys[4]} {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			keyFile, pubLine := genKey(t, dir, k, "")
			_, otherLine := genKey(t, dir, keygenKey{"other", "ed25519", "", true}, "")
			theirs := keygenSign(t, dir, keyFile, Namespace, msg)
			pem, err := os.ReadFile(keyFile)
			if err != nil {
				t.Fatal(err)
			}
			signer, err := ParsePrivateKey(pem, nil)
			if err != nil {
				t.Fatal(err)
			}
			ours := mustSign(t, msg, signer, Namespace)
			fp := sigFingerprint(t, theirs)

			tamperedMsg := bytes.Clone(msg)
			tamperedMsg[500] ^= 0x20
			plain := "alice " + pubLine + "\n"

			cases := []struct {
				name        string
				msg, sig    []byte
				allowed     string
				want        error
				keygenSays  string // in ssh-keygen's stderr ("" when it gives no reason)
				controlFile string // an allowed signers file both accept ("" for none)
			}{
				{"one message byte changed", tamperedMsg, theirs, plain, ErrBadSignature, "Signature verification failed", ""},
				{"one message byte changed (Sign)", tamperedMsg, ours, plain, ErrBadSignature, "Signature verification failed", ""},
				{"one signature byte changed", msg, flipSignatureByte(t, theirs), plain, ErrBadSignature, "Signature verification failed", ""},
				{"one base64 character changed", msg, flipBase64Char(t, ours), plain, ErrBadSignature, "Signature verification failed", ""},
				{"wrong namespace", msg, keygenSign(t, dir, keyFile, "file", msg), plain, ErrWrongNamespace, "namespace does not match", ""},
				{"unlisted key", msg, theirs, "alice " + otherLine + "\n", ErrUnknownSigner, "", plain},
				{"listed for another namespace", msg, theirs, `alice namespaces="other" ` + pubLine + "\n", ErrSignerNamespace,
					`not permitted for use in signature namespace "mcpdrift-lock"`, `alice namespaces="other,mcpdrift-lock" ` + pubLine + "\n"},
				{"expired", msg, theirs, `alice valid-before="20200101Z" ` + pubLine + "\n", ErrSignerExpired,
					"key has expired", `alice valid-before="20990101Z" ` + pubLine + "\n"},
				{"not yet valid", msg, theirs, `alice valid-after="20990101000000Z" ` + pubLine + "\n", ErrSignerNotYetValid,
					"key is not yet valid", `alice valid-after="20200101000000Z" ` + pubLine + "\n"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					_, err := Verify(c.msg, c.sig, mustAllowed(t, c.allowed), Namespace, time.Now())
					e := wantKind(t, err, c.want)
					if e.Fingerprint != fp {
						t.Fatalf("fingerprint %q, want %q", e.Fingerprint, fp)
					}
					if c.want == ErrUnknownSigner && !strings.Contains(err.Error(), fp) {
						t.Fatalf("%q does not name %s", err, fp)
					}
					r := keygenVerify(t, dir, c.msg, c.sig, c.allowed, "alice", Namespace)
					if r.code == 0 {
						t.Fatalf("ssh-keygen accepts what Verify refuses (%v): %s", err, r.stdout)
					}
					if !strings.Contains(r.stderr, c.keygenSays) {
						t.Fatalf("ssh-keygen says %q, want %q", r.stderr, c.keygenSays)
					}
					if c.controlFile != "" {
						if _, err := Verify(c.msg, c.sig, mustAllowed(t, c.controlFile), Namespace, time.Now()); err != nil {
							t.Fatalf("control: %v", err)
						}
						if r := keygenVerify(t, dir, c.msg, c.sig, c.controlFile, "alice", Namespace); r.code != 0 {
							t.Fatalf("control: ssh-keygen refuses: %s", r.stderr)
						}
					}
				})
			}
		})
	}
}

// flipSignatureByte changes the last byte of the key's signature inside
// the blob, leaving the signature well formed.
func flipSignatureByte(t *testing.T, sig []byte) []byte {
	return reblob(t, sig, func(b []byte) []byte { b[len(b)-3] ^= 0x01; return b })
}

// flipBase64Char changes one base64 character of the armored text, in
// the last line, well inside the key's signature.
func flipBase64Char(t *testing.T, sig []byte) []byte {
	t.Helper()
	out := bytes.Clone(sig)
	end := bytes.LastIndex(out, []byte("\n"+endLine))
	i := end - 12
	for out[i] == '=' || out[i] == '\n' {
		i--
	}
	if out[i] == 'A' {
		out[i] = 'B'
	} else {
		out[i] = 'A'
	}
	return out
}

func TestOpenSSHEncryptedKey(t *testing.T) {
	sshKeygen(t)
	dir := t.TempDir()
	keyFile, pubLine := genKey(t, dir, keygenKeys[0], "correct horse")
	pem, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParsePrivateKey(pem, nil); !errors.Is(err, ErrPassphraseRequired) {
		t.Fatalf("encrypted key without a passphrase: %v", err)
	}
	if _, err := ParsePrivateKey(pem, []byte("wrong")); err == nil {
		t.Fatal("wrong passphrase: no error")
	}
	signer, err := ParsePrivateKey(pem, []byte("correct horse"))
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("locked\n")
	sig := mustSign(t, msg, signer, Namespace)
	if r := keygenVerify(t, dir, msg, sig, "p "+pubLine+"\n", "p", Namespace); r.code != 0 {
		t.Fatalf("ssh-keygen: %s", r.stderr)
	}
}

// TestOpenSSHReadsAllowedSignersAlike: for files in the forms the format
// allows, ssh-keygen -Y find-principals and Verify name the same
// principals for the signer.
func TestOpenSSHReadsAllowedSignersAlike(t *testing.T) {
	sshKeygen(t)
	dir := t.TempDir()
	keyFile, pubLine := genKey(t, dir, keygenKeys[0], "")
	_, otherLine := genKey(t, dir, keygenKey{"other", "ecdsa", "256", false}, "")
	msg := []byte("m")
	sig := keygenSign(t, dir, keyFile, Namespace, msg)
	keyType, rest, _ := strings.Cut(pubLine, " ")
	b64, _, _ := strings.Cut(rest, " ")
	for _, c := range []struct{ file, want string }{
		{"alice@example.com " + pubLine + "\n", "alice@example.com"},
		{"# team\n\nbob " + otherLine + "\n  alice,carol\t" + pubLine + "\n", "alice,carol"},
		{`"*@example.com" ` + keyType + " " + b64 + " a comment\n", "*@example.com"},
		{"old VALID-BEFORE=\"20200101\" " + pubLine + "\nnew Valid-After=\"20200101Z\" " + pubLine + "\n", "new"},
		{"crlf " + pubLine + "\r\n", "crlf"},
	} {
		sub, err := os.MkdirTemp(dir, "find")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "allowed_signers"), []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "msg.sig"), sig, 0o644); err != nil {
			t.Fatal(err)
		}
		r := runKeygen(t, sub, nil, "-Y", "find-principals", "-f", "allowed_signers", "-s", "msg.sig")
		// find-principals prints a line's principals one per line.
		if r.code != 0 || strings.Join(strings.Fields(r.stdout), ",") != c.want {
			t.Fatalf("%q: ssh-keygen -Y find-principals = %d %q %s, want %q", c.file, r.code, r.stdout, r.stderr, c.want)
		}
		p, err := Verify(msg, sig, mustAllowed(t, c.file), Namespace, time.Now())
		if err != nil || p != c.want {
			t.Fatalf("%q: Verify = %q, %v; want %q", c.file, p, err, c.want)
		}
	}
}
