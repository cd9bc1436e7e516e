package cli

// Tests of lock sign and verifyLockSignature (--allowed-signers), against
// the real ssh-keygen: what lock sign writes, ssh-keygen -Y verify accepts
// (namespace mcpdrift-lock, over the lock's exact bytes, read from stdin);
// what ssh-keygen -Y sign writes, verifyLockSignature accepts; and every
// refusal is exit 2 with the reason named. ssh-keygen comes from Debian's
// openssh-client (scripts/install-openssh-client.sh, called by .ci/run);
// without it the interop tests skip and say so, and under CI=true or
// MCPDRIFT_REQUIRE_SSH_KEYGEN=1 they fail.
//
// The commands run in a tree built here (lock sign, and lock
// verify-signature, a test command that reads the lock and calls
// verifyLockSignature as lock check and proxy --lock do), with the error
// and output handling of MainContext.

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/sshsig"
)

// runLockSign runs args ("lock sign ..." or "lock verify-signature ...")
// as MainContext runs a command: outputs committed only on success, an
// *exitError's message on stderr and its code.
func runLockSign(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := newEnv(strings.NewReader(""), &out, &errb)
	e.ctx = context.Background()
	root := &cobra.Command{Use: "mcpdrift", SilenceUsage: true, SilenceErrors: true}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageErr("%s", err.Error()) })
	lockCmd := &cobra.Command{Use: "lock"}
	var lockPath, allowed string
	verify := &cobra.Command{
		Use:  "verify-signature",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := readLockToSign(lockPath)
			if err != nil {
				return err
			}
			return verifyLockSignature(e, lockPath, b, allowed)
		},
	}
	verify.Flags().StringVar(&lockPath, "lock", lock.DefaultFile, "")
	registerAllowedSigners(verify, &allowed)
	lockCmd.AddCommand(newLockSign(e), verify)
	root.AddCommand(lockCmd)
	root.SetArgs(args)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	err := root.Execute()
	if err == nil {
		err = e.commit()
	}
	code := e.code
	if err != nil {
		e.discard()
		code = ExitUsage
		var xe *exitError
		if errors.As(err, &xe) {
			fmt.Fprintf(e.stderr, "mcpdrift: %s\n", xe.msg)
			code = xe.code
		} else {
			fmt.Fprintf(e.stderr, "mcpdrift: %s\n", err)
		}
	}
	return code, out.String(), errb.String()
}

// signLockFile writes a valid lock of two servers into dir.
func signLockFile(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "acme-github.v1.tools-list.json"))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := manifest.ParseToolList(b)
	if err != nil {
		t.Fatal(err)
	}
	l := &lock.Lock{}
	for _, name := range []string{"acme", "zeta"} {
		url := "http://127.0.0.1:8080/" + name
		s, err := lock.NewServer(name, lock.Source{URL: url, Headers: map[string]string{"Authorization": "Bearer ${env:ACME_TOKEN}"}}, lock.ProfileReview,
			manifest.Identity{Endpoint: url, ServerName: "acme-github", ServerVersion: "1.0.0"}, []byte(`{}`), tl.Tools, classify.Default(),
			lock.Approval{By: "alice@example.com", At: "2026-12-01T10:00:00Z"})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return writeFile(t, dir, "mcpdrift.lock", l.Marshal())
}

// sshKeygenForCLI returns ssh-keygen, or skips (fails when required).
func sshKeygenForCLI(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ssh-keygen")
	if err != nil {
		msg := "ssh-keygen is not installed (Debian package openssh-client; scripts/install-openssh-client.sh installs it): the lock signing tests against OpenSSH cannot run"
		if os.Getenv("CI") == "true" || os.Getenv("MCPDRIFT_REQUIRE_SSH_KEYGEN") == "1" {
			t.Fatalf("%s; CI=true or MCPDRIFT_REQUIRE_SSH_KEYGEN=1 requires them", msg)
		}
		t.Skip(msg)
	}
	return p
}

// keygen runs ssh-keygen in dir with stdin, without an agent.
func keygen(t *testing.T, dir string, stdin []byte, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sshKeygenForCLI(t), args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SSH_AUTH_SOCK=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("ssh-keygen %v: %v", args, err)
		}
		return ee.ExitCode(), string(out)
	}
	return 0, string(out)
}

// genSSHKey makes a key with ssh-keygen; it returns the private key's
// path and the public key line.
func genSSHKey(t *testing.T, dir, name, typ, bits, passphrase string) (string, string) {
	t.Helper()
	path := filepath.Join(dir, name)
	args := []string{"-q", "-t", typ, "-N", passphrase, "-C", name, "-f", path}
	if bits != "" {
		args = append(args, "-b", bits)
	}
	if code, out := keygen(t, dir, nil, args...); code != 0 {
		t.Fatalf("ssh-keygen %v: %s", args, out)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return path, strings.TrimSpace(string(pub))
}

// keyOnly is "type base64" of a public key line (without its comment).
func keyOnly(line string) string {
	f := strings.Fields(line)
	return f[0] + " " + f[1]
}

func TestLockSignInteropWithSSHKeygen(t *testing.T) {
	sshKeygenForCLI(t)
	for _, k := range []struct{ name, typ, bits string }{
		{"ed25519", "ed25519", ""},
		{"ecdsa", "ecdsa", "256"},
		{"rsa", "rsa", "2048"},
	} {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			lockPath := signLockFile(t, dir)
			keyPath, pubLine := genSSHKey(t, dir, "id_"+k.name, k.typ, k.bits, "")
			allowed := writeFile(t, dir, "allowed_signers", []byte(`alice@example.com namespaces="mcpdrift-lock" `+keyOnly(pubLine)+"\n"))

			code, stdout, stderr := runLockSign(t, "lock", "sign", "--lock", lockPath, "--key", keyPath)
			if code != 0 || stdout != "" {
				t.Fatalf("lock sign: %d %q %s", code, stdout, stderr)
			}
			sig, err := os.ReadFile(lockPath + ".sig")
			if err != nil {
				t.Fatal(err)
			}
			if k.typ == "rsa" {
				s, err := sshsig.ParseSignature(sig)
				if err != nil || s.Signature.Format != ssh.KeyAlgoRSASHA512 {
					t.Fatalf("RSA signature: %+v, %v", s, err)
				}
			}
			lockBytes, err := os.ReadFile(lockPath)
			if err != nil {
				t.Fatal(err)
			}
			// ssh-keygen -Y verify, as docs/lock-signing.md says to run it.
			vcode, vout := keygen(t, dir, lockBytes, "-Y", "verify", "-f", "allowed_signers", "-I", "alice@example.com",
				"-n", "mcpdrift-lock", "-s", "mcpdrift.lock.sig")
			if vcode != 0 || !strings.Contains(vout, `Good "mcpdrift-lock" signature for alice@example.com`) {
				t.Fatalf("ssh-keygen -Y verify of lock sign's signature: %d %s", vcode, vout)
			}
			// and another namespace is refused by ssh-keygen too.
			if vcode, vout := keygen(t, dir, lockBytes, "-Y", "verify", "-f", "allowed_signers", "-I", "alice@example.com",
				"-n", "file", "-s", "mcpdrift.lock.sig"); vcode == 0 {
				t.Fatalf("ssh-keygen accepts the lock signature for namespace file: %s", vout)
			}
			// mcpdrift's own check of it.
			code, _, stderr = runLockSign(t, "lock", "verify-signature", "--lock", lockPath, "--allowed-signers", allowed)
			if code != 0 || !strings.Contains(stderr, `good signature by "alice@example.com"`) {
				t.Fatalf("verify-signature: %d %s", code, stderr)
			}

			// ssh-keygen -Y sign writes the same file name; mcpdrift verifies it.
			if err := os.Remove(lockPath + ".sig"); err != nil {
				t.Fatal(err)
			}
			if c, o := keygen(t, dir, nil, "-Y", "sign", "-n", "mcpdrift-lock", "-f", keyPath, lockPath); c != 0 {
				t.Fatalf("ssh-keygen -Y sign: %s", o)
			}
			theirs, err := os.ReadFile(lockPath + ".sig")
			if err != nil {
				t.Fatal(err)
			}
			code, _, stderr = runLockSign(t, "lock", "verify-signature", "--lock", lockPath, "--allowed-signers", allowed)
			if code != 0 {
				t.Fatalf("verify-signature of ssh-keygen's signature: %d %s", code, stderr)
			}
			if k.typ != "ecdsa" && !bytes.Equal(theirs, sig) { // Ed25519 and RSA signatures are deterministic
				t.Fatalf("lock sign and ssh-keygen -Y sign differ:\n%s\n%s", sig, theirs)
			}
		})
	}
}

// TestLockSignatureRefusals: every way a signed lock is refused exits 2
// and names which, and ssh-keygen refuses the same lock.
func TestLockSignatureRefusals(t *testing.T) {
	sshKeygenForCLI(t)
	dir := t.TempDir()
	lockPath := signLockFile(t, dir)
	keyPath, pubLine := genSSHKey(t, dir, "id_alice", "ed25519", "", "")
	_, otherLine := genSSHKey(t, dir, "id_other", "ed25519", "", "")
	allowedText := "alice@example.com " + keyOnly(pubLine) + "\n"
	if code, _, stderr := runLockSign(t, "lock", "sign", "--lock", lockPath, "--key", keyPath); code != 0 {
		t.Fatalf("lock sign: %s", stderr)
	}
	good, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	goodSig, err := os.ReadFile(lockPath + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	fp := keyFingerprint(t, pubLine)
	fileNS := func() []byte { // ssh-keygen's signature of the same lock for namespace "file"
		sub := t.TempDir()
		p := writeFile(t, sub, "mcpdrift.lock", good)
		if c, o := keygen(t, sub, nil, "-Y", "sign", "-n", "file", "-f", keyPath, p); c != 0 {
			t.Fatalf("ssh-keygen -Y sign: %s", o)
		}
		b, err := os.ReadFile(p + ".sig")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}()
	oneByte := bytes.Clone(good)
	i := bytes.Index(oneByte, []byte(`"alice@example.com"`))
	oneByte[i+1] = 'e' // still a valid lock: approved by elice@example.com
	if _, err := lock.Parse(oneByte, "x"); err != nil {
		t.Fatalf("the one-byte tamper should still parse: %v", err)
	}
	profile := bytes.Replace(good, []byte(`"profile": "review"`), []byte(`"profile": "fail-closed"`), 1)
	if bytes.Equal(profile, good) {
		t.Fatal("profile tamper changed nothing")
	}

	cases := []struct {
		name     string
		lock     []byte
		sig      []byte // nil: no .sig file
		allowed  string
		want     []string
		keygenOK bool // ssh-keygen accepts it (only the controls)
	}{
		{"good (control)", good, goodSig, allowedText, []string{"good signature"}, true},
		{"one byte of the lock changed", oneByte, goodSig, allowedText, []string{"signature does not verify", "changed after it was signed", fp}, false},
		{"the profile changed", profile, goodSig, allowedText, []string{"signature does not verify", "changed after it was signed"}, false},
		{"no signature", good, nil, allowedText, []string{"the lock is not signed", "mcpdrift.lock.sig"}, false},
		{"empty signature", good, []byte{}, allowedText, []string{"the lock is not signed"}, false},
		{"malformed signature", good, []byte("-----BEGIN SSH SIGNATURE-----\nnot base64!\n-----END SSH SIGNATURE-----\n"), allowedText, []string{"signature is malformed"}, false},
		{"a truncated signature", good, goodSig[:len(goodSig)/2], allowedText, []string{"signature is malformed"}, false},
		{"unlisted signer", good, goodSig, "alice@example.com " + keyOnly(otherLine) + "\n", []string{"not an allowed signer", fp}, false},
		{"wrong namespace", good, fileNS, allowedText, []string{"wrong namespace", `"file"`}, false},
		{"listed for another namespace", good, goodSig, `alice@example.com namespaces="file" ` + keyOnly(pubLine) + "\n", []string{"not an allowed signer now", "namespaces="}, false},
		{"expired signer", good, goodSig, `alice@example.com valid-before="20200101Z" ` + keyOnly(pubLine) + "\n", []string{"not an allowed signer now", "was valid until"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sub := t.TempDir()
			lp := writeFile(t, sub, "mcpdrift.lock", c.lock)
			if c.sig != nil {
				writeFile(t, sub, "mcpdrift.lock.sig", c.sig)
			}
			ap := writeFile(t, sub, "allowed_signers", []byte(c.allowed))
			code, stdout, stderr := runLockSign(t, "lock", "verify-signature", "--lock", lp, "--allowed-signers", ap)
			wantCode := ExitUsage
			if c.keygenOK {
				wantCode = 0
			}
			if code != wantCode || stdout != "" {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %s", code, wantCode, stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("want one line on stderr:\n%s", stderr)
			}
			if c.sig == nil {
				return // ssh-keygen needs a file
			}
			kc, ko := keygen(t, sub, c.lock, "-Y", "verify", "-f", "allowed_signers", "-I", "alice@example.com", "-n", "mcpdrift-lock", "-s", "mcpdrift.lock.sig")
			if (kc == 0) != c.keygenOK {
				t.Fatalf("ssh-keygen -Y verify: %d %s", kc, ko)
			}
		})
	}
}

func keyFingerprint(t *testing.T, line string) string {
	t.Helper()
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return ssh.FingerprintSHA256(pub)
}

// TestVerifyLockSignatureUsage: a bad or missing allowed-signers file is
// exit 2 with its line; no flag checks nothing; a lock from stdin has no
// signature.
func TestVerifyLockSignatureUsage(t *testing.T) {
	dir := t.TempDir()
	lockPath := signLockFile(t, dir)
	signer := testEd25519Signer(t)
	sig, err := sshsig.Sign(mustRead(t, lockPath), signer, sshsig.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "mcpdrift.lock.sig", sig)
	line := "alice@example.com " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	for _, c := range []struct {
		name, allowed, want string
	}{
		{"bad option on line 2", "# team\nbob foo=\"x\" " + strings.TrimPrefix(line, "alice@example.com ") + "\n" + line + "\n", `line 2: unknown option "foo"`},
		{"cert-authority", "alice@example.com cert-authority " + strings.TrimPrefix(line, "alice@example.com ") + "\n", "cert-authority is not supported"},
		{"empty", "# nobody\n", "no signer is listed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ap := writeFile(t, t.TempDir(), "allowed_signers", []byte(c.allowed))
			code, _, stderr := runLockSign(t, "lock", "verify-signature", "--lock", lockPath, "--allowed-signers", ap)
			if code != ExitUsage || !strings.Contains(stderr, "--allowed-signers") || !strings.Contains(stderr, c.want) {
				t.Fatalf("%d %s (want %q)", code, stderr, c.want)
			}
		})
	}
	code, _, stderr := runLockSign(t, "lock", "verify-signature", "--lock", lockPath, "--allowed-signers", filepath.Join(dir, "missing"))
	if code != ExitUsage || !strings.Contains(stderr, "--allowed-signers") || !strings.Contains(stderr, "no such file") {
		t.Fatalf("missing allowed signers: %d %s", code, stderr)
	}
	ap := writeFile(t, dir, "allowed_signers", []byte(line+"\n"))
	code, _, stderr = runLockSign(t, "lock", "verify-signature", "--lock", lockPath, "--allowed-signers", ap)
	if code != 0 || !strings.Contains(stderr, "good signature") {
		t.Fatalf("good: %d %s", code, stderr)
	}
	// No --allowed-signers: no check, and nothing said.
	code, _, stderr = runLockSign(t, "lock", "verify-signature", "--lock", lockPath)
	if code != 0 || stderr != "" {
		t.Fatalf("without --allowed-signers: %d %s", code, stderr)
	}
	var out bytes.Buffer
	e := newEnv(strings.NewReader(""), &out, &out)
	if err := verifyLockSignature(e, "-", mustRead(t, lockPath), ap); err == nil || exitCode(err) != ExitUsage || !strings.Contains(err.Error(), "stdin") {
		t.Fatalf("a lock from stdin: %v", err)
	}
}

func exitCode(err error) int {
	var xe *exitError
	if errors.As(err, &xe) {
		return xe.code
	}
	return -1
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testEd25519Signer is an Ed25519 key made here, and its OpenSSH private
// key file's bytes are keyPEM.
func testEd25519Signer(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLockSignRefusals: lock sign signs nothing it should not, exit 2
// with the reason, and writes no .sig.
func TestLockSignRefusals(t *testing.T) {
	dir := t.TempDir()
	lockPath := signLockFile(t, dir)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "k")
	if err != nil {
		t.Fatal(err)
	}
	keyPath := writeFile(t, dir, "id_ed25519", pem.EncodeToMemory(block))
	enc, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "k", []byte("correct horse"))
	if err != nil {
		t.Fatal(err)
	}
	encPath := writeFile(t, dir, "id_encrypted", pem.EncodeToMemory(enc))
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	pubPath := writeFile(t, dir, "id_ed25519.pub", ssh.MarshalAuthorizedKey(pub))
	good := mustRead(t, lockPath)
	badLock := writeFile(t, dir, "bad.lock", bytes.Replace(good, []byte(`"profile": "review"`), []byte(`"profile": "review", "extra": 1`), 1))
	notJSON := writeFile(t, dir, "notjson.lock", []byte("{"))
	if err := os.Symlink(lockPath, filepath.Join(dir, "link.lock")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	for _, c := range []struct {
		name string
		args []string
		want string
		sig  string // the .sig that must not exist afterwards
	}{
		{"a lock that does not validate", []string{"--lock", badLock, "--key", keyPath}, "not signed", badLock + ".sig"},
		{"not JSON", []string{"--lock", notJSON, "--key", keyPath}, "not signed", notJSON + ".sig"},
		{"no lock", []string{"--lock", filepath.Join(dir, "none.lock"), "--key", keyPath}, "there is no lock", filepath.Join(dir, "none.lock.sig")},
		{"a symlinked lock", []string{"--lock", filepath.Join(dir, "link.lock"), "--key", keyPath}, "symlink", filepath.Join(dir, "link.lock.sig")},
		{"no --key", []string{"--lock", lockPath}, "needs --key", lockPath + ".sig"},
		{"a missing key", []string{"--lock", lockPath, "--key", filepath.Join(dir, "nokey")}, "no such file", lockPath + ".sig"},
		{"an encrypted key", []string{"--lock", lockPath, "--key", encPath}, "is encrypted", lockPath + ".sig"},
		{"the lock as a key", []string{"--lock", lockPath, "--key", lockPath}, "is not an SSH private key", lockPath + ".sig"},
		{"a public key and no agent", []string{"--lock", lockPath, "--key", pubPath}, "SSH_AUTH_SOCK is not set", lockPath + ".sig"},
		{"-o the lock itself", []string{"--lock", lockPath, "--key", keyPath, "-o", lockPath}, "is the lock itself", lockPath + ".sig"},
		{"an argument", []string{"--lock", lockPath, "--key", keyPath, "extra"}, "unknown command", lockPath + ".sig"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runLockSign(t, append([]string{"lock", "sign"}, c.args...)...)
			if code != ExitUsage || stdout != "" || !strings.Contains(stderr, c.want) {
				t.Fatalf("%d %q %s (want exit 2 and %q)", code, stdout, stderr, c.want)
			}
			if _, err := os.Stat(c.sig); err == nil {
				t.Fatalf("%s was written", c.sig)
			}
			if !bytes.Equal(mustRead(t, lockPath), good) {
				t.Fatal("the lock changed")
			}
		})
	}
	// The encrypted key's message says what to do instead.
	_, _, stderr := runLockSign(t, "lock", "sign", "--lock", lockPath, "--key", encPath)
	for _, w := range []string{"ssh-agent", "ssh-add", "ssh-keygen -Y sign -n mcpdrift-lock"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("encrypted key: %q not in %s", w, stderr)
		}
	}
}

// TestLockSignOutputs: -o FILE and -o - (stdout); a lock not in canonical
// form is signed with a warning.
func TestLockSignOutputs(t *testing.T) {
	dir := t.TempDir()
	lockPath := signLockFile(t, dir)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "k")
	if err != nil {
		t.Fatal(err)
	}
	keyPath := writeFile(t, dir, "id_ed25519", pem.EncodeToMemory(block))
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := sshsig.ParseAllowedSigners(strings.NewReader("a " + string(ssh.MarshalAuthorizedKey(signer.PublicKey()))))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runLockSign(t, "lock", "sign", "--lock", lockPath, "--key", keyPath, "-o", "-")
	if code != 0 || !strings.HasPrefix(stdout, "-----BEGIN SSH SIGNATURE-----\n") {
		t.Fatalf("-o -: %d %q %s", code, stdout, stderr)
	}
	if _, err := sshsig.Verify(mustRead(t, lockPath), []byte(stdout), allowed, sshsig.Namespace, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lockPath + ".sig"); err == nil {
		t.Fatal("-o - also wrote LOCK.sig")
	}
	if strings.Contains(stderr, "warning") || !strings.Contains(stderr, `EMAIL namespaces="mcpdrift-lock" ssh-ed25519 `) {
		t.Fatalf("stderr: %s", stderr)
	}
	other := filepath.Join(dir, "elsewhere.sig")
	if code, _, stderr := runLockSign(t, "lock", "sign", "--lock", lockPath, "--key", keyPath, "-o", other); code != 0 {
		t.Fatalf("-o FILE: %s", stderr)
	}
	if _, err := sshsig.Verify(mustRead(t, lockPath), mustRead(t, other), allowed, sshsig.Namespace, time.Now()); err != nil {
		t.Fatal(err)
	}
	// Re-indented by hand: still valid, signed, with a warning.
	hand := writeFile(t, dir, "hand.lock", bytes.ReplaceAll(mustRead(t, lockPath), []byte("\n  "), []byte("\n   ")))
	code, _, stderr = runLockSign(t, "lock", "sign", "--lock", hand, "--key", keyPath)
	if code != 0 || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "no longer verify") {
		t.Fatalf("a hand-edited lock: %d %s", code, stderr)
	}
}

// TestLockSignWithAgent: --key KEY.pub signs with the ssh-agent at
// SSH_AUTH_SOCK (here an in-process agent on a unix socket) that holds an
// encrypted key's private half; a key the agent does not hold is refused.
func TestLockSignWithAgent(t *testing.T) {
	dir := t.TempDir()
	lockPath := signLockFile(t, dir)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "agent") // short: unix socket paths are bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); agent.ServeAgent(keyring, c) }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	pubPath := writeFile(t, dir, "id.pub", ssh.MarshalAuthorizedKey(pub))
	code, _, stderr := runLockSign(t, "lock", "sign", "--lock", lockPath, "--key", pubPath)
	if code != 0 {
		t.Fatalf("agent: %d %s", code, stderr)
	}
	allowed := writeFile(t, dir, "allowed_signers", []byte("a "+string(ssh.MarshalAuthorizedKey(pub))))
	if code, _, stderr := runLockSign(t, "lock", "verify-signature", "--lock", lockPath, "--allowed-signers", allowed); code != 0 {
		t.Fatalf("verify: %s", stderr)
	}
	_, other, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherPub, err := ssh.NewPublicKey(other.Public())
	if err != nil {
		t.Fatal(err)
	}
	otherPath := writeFile(t, dir, "other.pub", ssh.MarshalAuthorizedKey(otherPub))
	code, _, stderr = runLockSign(t, "lock", "sign", "--lock", lockPath, "--key", otherPath, "-o", filepath.Join(dir, "o.sig"))
	if code != ExitUsage || !strings.Contains(stderr, "ssh-agent does not hold") {
		t.Fatalf("a key the agent does not hold: %d %s", code, stderr)
	}
}

// TestLockSignWritesNoKeyMaterial: no byte of a private key (its file's
// base64 lines, the raw seed in base64 and hex) is in stdout, stderr or
// any file lock sign leaves, for a good run and each refusal.
func TestLockSignWritesNoKeyMaterial(t *testing.T) {
	dir := t.TempDir()
	lockPath := signLockFile(t, dir)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "k")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := pem.EncodeToMemory(block)
	keyDir := t.TempDir()
	keyPath := writeFile(t, keyDir, "id_ed25519", keyFile)
	// The secret is the seed (the rest of the key file is its public
	// key, which the signature and the allowed_signers hint carry): look
	// for it raw, in hex, and in base64 at each of the three alignments it
	// can have inside a larger base64 text (such as the key file's).
	seed := priv.Seed()
	pieces := []string{string(seed), hex.EncodeToString(seed)}
	for k := 0; k < 3; k++ {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, k), seed...))
		pieces = append(pieces, enc[4:len(enc)-4])
	}
	if !bytes.Contains(bytes.ReplaceAll(keyFile, []byte("\n"), nil), []byte(pieces[2][:12])) &&
		!bytes.Contains(bytes.ReplaceAll(keyFile, []byte("\n"), nil), []byte(pieces[3][:12])) &&
		!bytes.Contains(bytes.ReplaceAll(keyFile, []byte("\n"), nil), []byte(pieces[4][:12])) {
		t.Fatal("the check would not find the seed in the key file itself")
	}
	// a key that is refused: the same private key under a broken header.
	brokenPath := writeFile(t, keyDir, "broken", bytes.Replace(keyFile, []byte("OPENSSH PRIVATE KEY"), []byte("OPENSSH PRIVATE KEE"), 2))
	var all [][]byte
	for _, args := range [][]string{
		{"--lock", lockPath, "--key", keyPath},
		{"--lock", lockPath, "--key", keyPath, "-o", "-"},
		{"--lock", lockPath, "--key", brokenPath, "-o", filepath.Join(dir, "b.sig")},
		{"--lock", filepath.Join(dir, "missing.lock"), "--key", keyPath},
	} {
		_, stdout, stderr := runLockSign(t, append([]string{"lock", "sign"}, args...)...)
		all = append(all, []byte(stdout), []byte(stderr))
	}
	for _, b := range everyFile(t, dir) {
		all = append(all, b)
	}
	if _, err := os.Stat(lockPath + ".sig"); err != nil {
		t.Fatal("the good run wrote no signature")
	}
	for i, b := range all {
		for _, p := range pieces {
			for j := 0; j+12 <= len(p); j += 4 {
				if bytes.Contains(b, []byte(p[j:j+12])) {
					t.Fatalf("output %d holds %q, a piece of the private key", i, p[j:j+12])
				}
			}
		}
	}
}
