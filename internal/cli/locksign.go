package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/sshsig"
)

// Signed locks. `lock sign` writes an SSH signature (SSHSIG, namespace
// mcpdrift-lock) over the lock file's exact bytes into LOCK.sig, the file
// `ssh-keygen -Y sign -n mcpdrift-lock -f KEY LOCK` writes, so either tool
// signs and either verifies. --allowed-signers (on lock check and proxy
// --lock) checks that signature against an OpenSSH allowed_signers file
// before the lock is trusted: verifyLockSignature. docs/lock-signing.md.
//
// Private key material is read, used and dropped: no byte of it reaches
// any output, message or file (the tests grep for it). An encrypted key is
// refused with what to do instead (no prompt, no passphrase flag): sign
// with ssh-keygen, or load the key into ssh-agent and give --key the
// public key file, as ssh-keygen -Y sign -f KEY.pub does.

// agentTimeout bounds a signature by ssh-agent: dialling its socket and
// the whole exchange (a key added with ssh-add -c waits for the user to
// confirm).
const agentTimeout = 60 * time.Second

func newLockSign(e *env) *cobra.Command {
	var lockPath, keyPath, out string
	cmd := &cobra.Command{
		Use:   "sign [--lock FILE] --key PRIVATE_KEY_FILE [-o SIG_FILE]",
		Short: "Sign the lock with an SSH key (SSHSIG, namespace mcpdrift-lock), into LOCK.sig",
		Long: `Sign the lock file's exact bytes with an SSH key, in OpenSSH's SSHSIG format
and the namespace mcpdrift-lock, and write the signature to LOCK.sig (or -o).
It is the signature ssh-keygen -Y sign -n mcpdrift-lock -f KEY LOCK writes,
and ssh-keygen -Y verify checks it:

  ssh-keygen -Y verify -f allowed_signers -I EMAIL -n mcpdrift-lock -s mcpdrift.lock.sig < mcpdrift.lock

Only a lock that validates is signed. Keys: Ed25519, ECDSA (P-256, P-384,
P-521), RSA of 2048 bits or more (rsa-sha2-512). An encrypted key is not
read (no passphrase is asked for): load it into ssh-agent and give --key
the public key file (KEY.pub), or sign with ssh-keygen.
lock check --allowed-signers FILE and proxy --lock --allowed-signers FILE
verify the signature. See docs/lock-signing.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if keyPath == "" {
				return usageErr("lock sign needs --key PRIVATE_KEY_FILE (an OpenSSH private key, or a public key whose private half ssh-agent holds)")
			}
			sigPath := out
			if !cmd.Flags().Changed("output") {
				sigPath = lockPath + sshsig.SignatureSuffix
			}
			if sameFile(sigPath, lockPath) {
				return usageErr("-o %s is the lock itself: the signature goes beside it (default %s)", safetext.Quote(sigPath), safetext.Quote(lockPath+sshsig.SignatureSuffix))
			}
			lockBytes, err := readLockToSign(lockPath)
			if err != nil {
				return err
			}
			parsed, err := lock.Parse(lockBytes, lockPath)
			if err != nil {
				return &exitError{ExitUsage, safetext.Inert(err.Error()) + " (the lock does not validate, so it was not signed)"}
			}
			signer, err := loadSigner(keyPath)
			if err != nil {
				return err
			}
			sig, err := sshsig.Sign(lockBytes, signer, sshsig.Namespace)
			if err != nil {
				return usageErr("cannot sign with %s: %s", safetext.Quote(keyPath), safetext.Inert(err.Error()))
			}
			if err := e.emitAs("the signature", sigPath, sig); err != nil {
				return err
			}
			pub := signer.PublicKey()
			sum := sha256.Sum256(lockBytes)
			fmt.Fprintf(e.stderr, "mcpdrift: signing %s (%d bytes, sha256:%s) with %s key %s, namespace %s, into %s\n",
				safetext.Quote(lockPath), len(lockBytes), hex.EncodeToString(sum[:]), pub.Type(), ssh.FingerprintSHA256(pub),
				sshsig.Namespace, safetext.Quote(describe(sigPath)))
			fmt.Fprintf(e.stderr, "mcpdrift: the allowed_signers line for this key: EMAIL namespaces=%q %s %s\n",
				sshsig.Namespace, pub.Type(), authorizedKey(pub))
			if string(parsed.Marshal()) != string(lockBytes) {
				fmt.Fprintf(e.stderr, "mcpdrift: warning: %s is not in the form mcpdrift writes (edited by hand?): the next mcpdrift write rewrites its bytes, and this signature will no longer verify\n", safetext.Quote(lockPath))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&lockPath, "lock", lock.DefaultFile, "the lock file")
	f.StringVar(&keyPath, "key", "", "the SSH private key to sign with (or KEY.pub, signed by ssh-agent at $SSH_AUTH_SOCK)")
	f.StringVarP(&out, "output", "o", "", "where the signature goes (default: the lock's path + .sig; - for stdout)")
	return cmd
}

// registerAllowedSigners registers --allowed-signers FILE, for the
// commands that read the lock (lock check, proxy --lock); the command then
// calls verifyLockSignature with the lock's bytes.
func registerAllowedSigners(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "allowed-signers", "", "OpenSSH allowed_signers file: refuse the lock unless LOCK.sig is a good mcpdrift-lock signature by a key it lists (see docs/lock-signing.md)")
}

// verifyLockSignature checks LOCK.sig (lockPath + ".sig") over lockBytes,
// the lock exactly as read, against the allowed-signers file: nil when
// the signature is good, by a key the file lists for namespace
// mcpdrift-lock at this time (one line on stderr names the signer). Any
// refusal is a usage error (exit 2) saying which: the signature is
// missing, malformed, made for another namespace, does not verify (the
// lock changed after it was signed), or is by a key the file does not
// list (or lists only for other namespaces, or not at this time); and an
// allowed-signers file that cannot be read. An empty allowedSigners means
// the flag was not given: nothing is checked and nil is returned.
func verifyLockSignature(e *env, lockPath string, lockBytes []byte, allowedSigners string) error {
	if allowedSigners == "" {
		return nil
	}
	allowed, err := readAllowedSigners(allowedSigners)
	if err != nil {
		return err
	}
	if lockPath == "-" || lockPath == "" {
		return usageErr("the lock is not signed: a lock read from stdin has no signature beside it; give --lock FILE with FILE%s beside it", sshsig.SignatureSuffix)
	}
	sigPath := lockPath + sshsig.SignatureSuffix
	lq, sq, aq := safetext.Quote(lockPath), safetext.Quote(sigPath), safetext.Quote(allowedSigners)
	sig, err := sshsig.ReadSignatureFile(sigPath)
	if err == nil {
		var principal string
		principal, err = sshsig.Verify(lockBytes, sig, allowed, sshsig.Namespace, time.Now())
		if err == nil {
			keyType, fp := "", ""
			if s, perr := sshsig.ParseSignature(sig); perr == nil {
				keyType, fp = s.PublicKey.Type(), s.Fingerprint()
			}
			fmt.Fprintf(e.stderr, "mcpdrift: %s: good signature by %s (%s key %s, listed in %s)\n", lq, safetext.Quote(principal), keyType, fp, aq)
			return nil
		}
	}
	var se *sshsig.Error
	detail, fp := "", ""
	if errors.As(err, &se) {
		detail, fp = se.Detail, se.Fingerprint
	}
	switch {
	case errors.Is(err, sshsig.ErrNoSignature) && !errors.Is(err, fs.ErrNotExist):
		return usageErr("the lock is not signed: its signature file %s is empty (--allowed-signers %s asks for a signature)", sq, aq)
	case errors.Is(err, sshsig.ErrNoSignature):
		return usageErr("the lock is not signed: there is no signature %s beside %s (--allowed-signers %s asks for one). Sign it with mcpdrift lock sign --lock %s --key KEY, or ssh-keygen -Y sign -n %s -f KEY %s",
			sq, lq, aq, lq, sshsig.Namespace, lq)
	case errors.Is(err, sshsig.ErrMalformed), errors.Is(err, sshsig.ErrUnsupported):
		return usageErr("the lock's signature is malformed: %s is not an SSH signature mcpdrift can check (%s); the lock is refused", sq, safetext.Inert(detail))
	case errors.Is(err, sshsig.ErrWrongNamespace):
		ns := "another"
		if s, perr := sshsig.ParseSignature(sig); perr == nil {
			ns = safetext.Quote(safetext.Clip(s.Namespace, 80))
		}
		return usageErr("the lock's signature is for the wrong namespace: %s (key %s) was made for namespace %s, not %s, so it does not sign a lock; sign with -n %s",
			sq, fp, ns, sshsig.Namespace, sshsig.Namespace)
	case errors.Is(err, sshsig.ErrBadSignature):
		return usageErr("the lock's signature does not verify: %s does not match the bytes of %s: the lock was changed after it was signed (or the signature was); key %s. Review the change, then sign again",
			sq, lq, fp)
	case errors.Is(err, sshsig.ErrUnknownSigner):
		return usageErr("the lock is signed by a key that is not an allowed signer: %s is a good signature by key %s, which %s does not list", sq, fp, aq)
	case errors.Is(err, sshsig.ErrSignerNamespace), errors.Is(err, sshsig.ErrSignerNotYetValid), errors.Is(err, sshsig.ErrSignerExpired):
		return usageErr("the lock is signed by a key that is not an allowed signer now: %s is a good signature, but %s does not allow its key for %s at this time: %s",
			sq, aq, sshsig.Namespace, safetext.Inert(detail))
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return usageErr("cannot read the lock's signature %s: %s", sq, safetext.Inert(pe.Err.Error()))
	}
	return usageErr("cannot check the lock's signature %s: %s", sq, safetext.Inert(err.Error()))
}

// readAllowedSigners reads and parses an allowed_signers file (bounded by
// the parser); any bad line refuses the file.
func readAllowedSigners(path string) (*sshsig.AllowedSigners, error) {
	q := safetext.Quote(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErr("--allowed-signers %s: %s", q, safetext.Inert(errText(err)))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, usageErr("--allowed-signers %s: not a regular file", q)
	}
	a, err := sshsig.ParseAllowedSigners(f)
	if err != nil {
		return nil, usageErr("--allowed-signers %s: %s (the file is refused as a whole)", q, safetext.Inert(err.Error()))
	}
	return a, nil
}

// readLockToSign reads the lock's bytes by the rule of every lock
// command (lockfile.go: a regular file, not a symlink, bounded).
func readLockToSign(path string) ([]byte, error) {
	b, ok, err := readLockBytes(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, usageErr("there is no lock at %s to sign (give --lock FILE)", safetext.Quote(path))
	}
	return b, nil
}

// loadSigner reads --key: a private key file, or a public key whose
// private half ssh-agent holds. Messages name the file and the key's
// fingerprint, never a byte of the key.
func loadSigner(path string) (ssh.Signer, error) {
	q := safetext.Quote(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErr("--key %s: %s", q, safetext.Inert(errText(err)))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, usageErr("--key %s: not a regular file", q)
	}
	b, err := io.ReadAll(io.LimitReader(f, sshsig.MaxPrivateKeyBytes+1))
	if err != nil {
		return nil, usageErr("--key %s: %s", q, safetext.Inert(errText(err)))
	}
	defer clear(b)
	if len(b) > sshsig.MaxPrivateKeyBytes {
		return nil, usageErr("--key %s: larger than %d bytes: not an SSH key", q, sshsig.MaxPrivateKeyBytes)
	}
	if pub, _, _, _, perr := ssh.ParseAuthorizedKey(b); perr == nil {
		return agentSigner(path, pub)
	}
	signer, err := sshsig.ParsePrivateKey(b, nil)
	switch {
	case errors.Is(err, sshsig.ErrPassphraseRequired):
		return nil, usageErr("--key %s is encrypted, and mcpdrift asks for no passphrase: load it into ssh-agent (ssh-add %s) and give --key the public key file (%s.pub), or sign with ssh-keygen -Y sign -n %s -f %s LOCK, which writes the same LOCK.sig",
			q, q, safetext.Escape(path), sshsig.Namespace, q)
	case err != nil:
		var se *sshsig.Error
		if errors.As(err, &se) {
			return nil, usageErr("--key %s: %s", q, safetext.Inert(se.Kind.Error()+": "+se.Detail))
		}
		return nil, usageErr("--key %s is not an SSH private key mcpdrift can read (OpenSSH or PEM: Ed25519, ECDSA, RSA)", q)
	}
	return signer, nil
}

// agentSigner finds the signer for pub in the ssh-agent at $SSH_AUTH_SOCK.
func agentSigner(path string, pub ssh.PublicKey) (ssh.Signer, error) {
	q, fp := safetext.Quote(path), ssh.FingerprintSHA256(pub)
	sock := os.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, usageErr("--key %s is a public key (%s); signing with it needs ssh-agent holding its private half, and SSH_AUTH_SOCK is not set: give the private key file, or start ssh-agent and ssh-add the key", q, fp)
	}
	conn, err := net.DialTimeout("unix", sock, agentTimeout)
	if err != nil {
		return nil, usageErr("--key %s is a public key (%s), and ssh-agent at SSH_AUTH_SOCK cannot be reached: %s", q, fp, safetext.Inert(errText(err)))
	}
	// The connection stays open until the process ends: Sign asks the
	// agent through it. Its deadline bounds the whole exchange.
	_ = conn.SetDeadline(time.Now().Add(agentTimeout))
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		conn.Close()
		return nil, usageErr("--key %s: ssh-agent did not list its keys: %s", q, safetext.Inert(err.Error()))
	}
	want := pub.Marshal()
	for _, s := range signers {
		if string(s.PublicKey().Marshal()) == string(want) {
			return s, nil
		}
	}
	conn.Close()
	return nil, usageErr("--key %s is a public key (%s %s) that ssh-agent does not hold: ssh-add its private key, or give the private key file", q, pub.Type(), fp)
}

// authorizedKey is pub's "AAAA..." field, as in an authorized_keys or
// allowed_signers line.
func authorizedKey(pub ssh.PublicKey) string {
	line := ssh.MarshalAuthorizedKey(pub) // "type base64\n"
	for i := 0; i < len(line); i++ {
		if line[i] == ' ' {
			return string(line[i+1 : len(line)-1])
		}
	}
	return string(line)
}

// sameFile reports whether a and b name the same path.
func sameFile(a, b string) bool {
	if a == "" || a == "-" {
		return false
	}
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	if x == y {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
