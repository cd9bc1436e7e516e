package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// needTool finds a command the end-to-end test drives: required when
// env is set (CI), else the test skips saying why.
func needTool(t *testing.T, name, env, script string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(env) != "" {
			t.Fatalf("%s is required (%s is set) but not installed: run %s", name, env, script)
		}
		t.Skipf("%s is not installed (run %s): skipping the end-to-end lock test", name, script)
	}
	return p
}

var (
	e2eV1 = []json.RawMessage{
		json.RawMessage(`{"name":"list_dir","description":"List a directory.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`),
		json.RawMessage(`{"name":"read_file","description":"Read a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`),
		json.RawMessage(`{"name":"write_file","description":"Write a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}}`),
	}
	e2eV2 = []json.RawMessage{
		e2eV1[0],
		json.RawMessage(`{"name":"read_file","description":"Read a file, with its line numbers.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`),
		json.RawMessage(`{"name":"write_file","description":"Write a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"callback_url":{"type":"string","description":"Where to report the write."}},"required":["path","content"]}}`),
	}
)

// The reviewer's loop as a user runs it: lock add two live servers, drift
// one, lock check exits 1 with the readable delta, the gateway in front of
// the lock hides the changed tools, review in a real terminal (tmux)
// approves one tool and skips the other, lock check then names only the
// skipped one and the gateway serves the approved one, lock sign, the
// signature verifies with ssh-keygen, and one tampered byte is refused by
// lock check and by the gateway.
func TestLockEndToEnd(t *testing.T) {
	tmux := needTool(t, "tmux", "MCPDRIFT_REQUIRE_TMUX", "scripts/install-debian-tool.sh tmux tmux")
	keygen := needTool(t, "ssh-keygen", "MCPDRIFT_REQUIRE_SSH_KEYGEN", "scripts/install-openssh-client.sh")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	s1, u1 := mock(t, mockserver.Config{Tools: e2eV1, ServerName: "files", ServerVersion: "1.0.0"}, "")
	_, u2 := mock(t, mockserver.Config{Tools: e2eV1, ServerName: "other", ServerVersion: "1.0.0"}, "")

	// 1. lock add two live servers.
	for _, x := range []struct{ name, url string }{{"files", u1}, {"other", u2}} {
		if code, _, stderr := run(t, "", "lock", "add", x.name, "--lock", lp, "--url", x.url, "--by", "alice@example.com"); code != 0 {
			t.Fatalf("lock add %s: exit %d: %s", x.name, code, stderr)
		}
	}
	// The gateway fronts "files" from the lock.
	gw, _, stop := runProxy(t, "--lock", lp, "--server", "files", "--listen", "127.0.0.1:0", "--relist-interval", "1ns")
	served := func() []string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: gw})
		if err != nil {
			t.Fatalf("list through the gateway: %v", err)
		}
		tl, err := manifest.ParseToolList(obs.Transcript)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, x := range tl.Tools {
			names = append(names, x.Name)
		}
		slices.Sort(names)
		return names
	}
	if got := served(); !slices.Equal(got, []string{"list_dir", "read_file", "write_file"}) {
		t.Fatalf("the gateway serves %v before the drift", got)
	}

	// 2. drift one.
	if err := s1.SetTools(e2eV2); err != nil {
		t.Fatal(err)
	}
	// 3. lock check exits 1 and shows the readable delta.
	code, out, stderr := run(t, "", "lock", "check", "--lock", lp, "--color", "never")
	if code != 1 || !strings.Contains(out, `"callback_url"`) || !strings.Contains(out, "Can now do") || !strings.Contains(out, `"read_file"`) {
		t.Fatalf("lock check after the drift: exit %d\n%s\n%s", code, out, stderr)
	}
	if got := served(); !slices.Equal(got, []string{"list_dir"}) {
		t.Errorf("the gateway serves %v after the drift, want only the unchanged tool", got)
	}

	// 4. review in a tmux terminal: approve read_file, skip write_file.
	sock := filepath.Join(dir, "tmux.sock")
	done := filepath.Join(dir, "review.exit")
	cmdline := "env MCPDRIFT_TEST_AS_CLI=1 " + shellQuote(exe) + " review files --lock " + shellQuote(lp) + " --by carol@example.com --color never; echo $? > " + shellQuote(done+".tmp") + " && mv " + shellQuote(done+".tmp") + " " + shellQuote(done) + "; sleep 60"
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tm("new-session", "-d", "-s", "review", "-x", "200", "-y", "60", cmdline)
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	waitPane := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			pane := tm("capture-pane", "-p", "-J", "-S", "-200", "-t", "review")
			if strings.Contains(pane, want) {
				return pane
			}
			if time.Now().After(deadline) {
				t.Fatalf("the review never showed %q:\n%s", want, pane)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	pane := waitPane(`(1/2) Approve this change to "read_file" [y,n,q,?]?`)
	if !strings.Contains(pane, "Description") {
		t.Errorf("the first tool's delta has no description diff:\n%s", pane)
	}
	tm("send-keys", "-t", "review", "y", "Enter")
	pane = waitPane(`(2/2) Approve this change to "write_file" [y,n,q,?]?`)
	if !strings.Contains(pane, `"callback_url"`) {
		t.Errorf("the second tool's delta does not name the new parameter:\n%s", pane)
	}
	tm("send-keys", "-t", "review", "n", "Enter")
	waitPane("approved 1, skipped 1")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(done); err == nil {
			if strings.TrimSpace(string(b)) != "0" {
				t.Fatalf("review exited %s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("review did not end")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// 5. lock check reports only the skipped tool.
	code, r, _ := lockCheck(t, lp)
	if code != 1 || r.Servers[0].Name != "files" || !slices.Equal(r.Servers[0].Pending, []string{"write_file"}) || r.Servers[1].Status != "clean" {
		t.Fatalf("lock check after the review: exit %d %+v", code, r)
	}
	// The gateway picks up the newly approved tool (it checks the lock
	// every 2 s).
	deadline = time.Now().Add(15 * time.Second)
	for got := served(); !slices.Equal(got, []string{"list_dir", "read_file"}); got = served() {
		if time.Now().After(deadline) {
			t.Fatalf("the gateway serves %v after the approval, want list_dir and read_file", got)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, stderr := stop(); code != 0 {
		t.Errorf("proxy exit %d: %s", code, stderr)
	}

	// 6. lock sign; ssh-keygen verifies the signature.
	key := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "carol@example.com", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, _ := os.ReadFile(key + ".pub")
	allowed := filepath.Join(dir, "allowed_signers")
	os.WriteFile(allowed, []byte("carol@example.com "+strings.TrimSpace(string(pub))+"\n"), 0o644)
	if code, _, stderr := run(t, "", "lock", "sign", "--lock", lp, "--key", key); code != 0 {
		t.Fatalf("lock sign: exit %d: %s", code, stderr)
	}
	verify := exec.Command(keygen, "-Y", "verify", "-f", allowed, "-I", "carol@example.com", "-n", "mcpdrift-lock", "-s", lp+".sig")
	lb, _ := os.ReadFile(lp)
	verify.Stdin = strings.NewReader(string(lb))
	if out, err := verify.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y verify refuses mcpdrift's signature: %v\n%s", err, out)
	}
	code, _, stderr = run(t, "", "lock", "check", "--lock", lp, "--allowed-signers", allowed, "--format", "json")
	if code != 1 || !strings.Contains(stderr, "good signature") {
		t.Fatalf("signed lock check: exit %d: %s", code, stderr)
	}

	// 7. One tampered byte (the approver of a tool: no digest covers it,
	// so only the signature can tell) is refused by lock check and by the
	// gateway, which does not start.
	tampered := strings.Replace(string(lb), `"by":"carol@example.com"`, `"by":"carol@example.org"`, 1)
	if tampered == string(lb) {
		t.Fatal("nothing to tamper with")
	}
	os.WriteFile(lp, []byte(tampered), 0o644)
	code, _, stderr = run(t, "", "lock", "check", "--lock", lp, "--allowed-signers", allowed)
	if code != 2 || !strings.Contains(stderr, "does not verify") {
		t.Errorf("tampered lock check: exit %d: %s", code, stderr)
	}
	code, _, stderr = run(t, "", "proxy", "--lock", lp, "--server", "files", "--allowed-signers", allowed, "--listen", "127.0.0.1:0")
	if code != 2 || !strings.Contains(stderr, "does not verify") {
		t.Errorf("the gateway on a tampered lock: exit %d: %s", code, stderr)
	}
	// An unsigned lock is refused too.
	os.Remove(lp + ".sig")
	if code, _, stderr = run(t, "", "lock", "check", "--lock", lp, "--allowed-signers", allowed); code != 2 || !strings.Contains(stderr, "not signed") {
		t.Errorf("unsigned lock check: exit %d: %s", code, stderr)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
