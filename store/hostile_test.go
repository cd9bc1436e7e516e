package store

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/redact"
)

// child starts the test binary again in a child mode (see childMain).
func child(t *testing.T, mode string, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"MCPDRIFT_STORE_CHILD=" + mode}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

func init() {
	childModes["write"] = childWrite
	childModes["lock"] = childLock
	childModes["open"] = childOpen
}

// childWrite records servers into one scan: MCPDRIFT_N servers (0: until
// killed) of MCPDRIFT_TOOLS tools each, printing "recorded I" after each.
func childWrite() int {
	ctx := context.Background()
	s, err := Open(ctx, os.Getenv("MCPDRIFT_STORE_URL"), Options{BusyTimeout: 20 * time.Second})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer s.Close()
	n, _ := strconv.Atoi(os.Getenv("MCPDRIFT_N"))
	tools, _ := strconv.Atoi(os.Getenv("MCPDRIFT_TOOLS"))
	id, err := s.BeginScan(ctx, "child "+os.Getenv("MCPDRIFT_NAME"))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("scan", id)
	for i := 0; n == 0 || i < n; i++ {
		ts := make([]Tool, tools)
		for j := range ts {
			ts[j] = tool(fmt.Sprintf("tool%d", j), fmt.Sprintf("%s %d %d %s", os.Getenv("MCPDRIFT_NAME"), i, j, strings.Repeat("x", 500)))
		}
		if err := s.RecordServer(ctx, id, result(fmt.Sprintf("server%d", i), ts...)); err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println("recorded", i)
	}
	if err := s.FinishScan(ctx, id, 0); err != nil {
		fmt.Println("error", err)
		return 1
	}
	return 0
}

// childLock holds an exclusive lock on the SQLite file until stdin closes.
func childLock() int {
	db, err := sql.Open("sqlite", "file:"+os.Getenv("MCPDRIFT_STORE_PATH"))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// childOpen opens the store (MCPDRIFT_READONLY=1: read-only), reads its
// history and tries to begin a scan, printing what happened.
func childOpen() int {
	ctx := context.Background()
	s, err := Open(ctx, os.Getenv("MCPDRIFT_STORE_URL"), Options{ReadOnly: os.Getenv("MCPDRIFT_READONLY") == "1", BusyTimeout: time.Second})
	if err != nil {
		fmt.Println("open:", kindOf(err), err)
		return 0
	}
	defer s.Close()
	vs, err := s.History(ctx, Query{})
	fmt.Println("history:", len(vs), kindOf(err))
	_, err = s.BeginScan(ctx, "x")
	fmt.Println("write:", kindOf(err), err)
	return 0
}

func kindOf(err error) string {
	for _, k := range []error{ErrReadOnly, ErrLocked, ErrCorrupt, ErrTooNew, ErrNotFound} {
		if errors.Is(err, k) {
			return k.Error()
		}
	}
	if err == nil {
		return "ok"
	}
	return "other"
}

func integrityOK(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, Options{})
	if err != nil {
		t.Fatalf("the store does not open after the kill: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("integrity: %v", err)
	}
	return s
}

// A process killed with SIGKILL in the middle of writing loses at most
// the server record it was writing: the store opens, integrity_check is
// ok, the earlier scans are intact and the killed scan's committed servers
// are all there, each whole.
func TestKillMidWrite(t *testing.T) {
	dir := t.TempDir()
	url := "sqlite:" + filepath.Join(dir, "h.db")
	// An earlier, finished scan.
	s, err := Open(context.Background(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id0, _ := s.BeginScan(context.Background(), "earlier")
	for i := 0; i < 3; i++ {
		s.RecordServer(context.Background(), id0, result(fmt.Sprintf("server%d", i), tool("a", "1"), tool("b", "2")))
	}
	s.FinishScan(context.Background(), id0, 0)
	s.Close()

	for round := 0; round < 3; round++ {
		cmd := child(t, "write", "MCPDRIFT_STORE_URL="+url, "MCPDRIFT_N=0", "MCPDRIFT_TOOLS=300", "MCPDRIFT_NAME=killed"+strconv.Itoa(round))
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		recorded := 0
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "error") {
				t.Fatal(line)
			}
			if strings.HasPrefix(line, "recorded") {
				recorded++
				if recorded == 3+round {
					// kill in the middle of the next server's transaction
					time.Sleep(time.Duration(round*3) * time.Millisecond)
					cmd.Process.Signal(syscall.SIGKILL)
					break
				}
			}
		}
		cmd.Wait()
		s := integrityOK(t, url)
		ctx := context.Background()
		obs, err := s.Observations(ctx, id0)
		if err != nil || len(obs) != 3 {
			t.Fatalf("the earlier scan lost observations: %d %v", len(obs), err)
		}
		scans, _ := s.Scans(ctx, 0)
		killed := scans[0]
		if !killed.Finished.IsZero() || killed.Exit != nil {
			t.Fatalf("the killed scan is marked finished: %+v", killed)
		}
		obs, err = s.Observations(ctx, killed.ID)
		if err != nil || len(obs) < recorded {
			t.Fatalf("the killed scan has %d servers, %d were reported recorded (%v)", len(obs), recorded, err)
		}
		for _, o := range obs {
			l, err := s.LastComplete(ctx, o.Server)
			if err != nil || len(l.Tools) != 300 {
				t.Fatalf("%s is not whole: %v", o.Server, err)
			}
		}
		s.Close()
	}
}

// Check runs SQLite's integrity_check.
func TestCheck(t *testing.T) {
	s, _ := sqliteBackend().open(t)
	if err := s.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCorrupted(t *testing.T) {
	ctx := context.Background()
	t.Run("not a database", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "h.db")
		os.WriteFile(p, []byte(strings.Repeat("this is not an SQLite file\n", 400)), 0o600)
		_, err := Open(ctx, "sqlite:"+p, Options{})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not an mcpdrift store, or damaged") {
			t.Fatalf("garbage: %v", err)
		}
		if b, _ := os.ReadFile(p); !strings.HasPrefix(string(b), "this is not") {
			t.Fatal("the file was changed")
		}
	})
	t.Run("another program's database", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "h.db")
		db, _ := sql.Open("sqlite", p)
		db.Exec(`CREATE TABLE contacts (name TEXT)`)
		db.Close()
		_, err := Open(ctx, "sqlite:"+p, Options{})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "another program") {
			t.Fatalf("foreign database: %v", err)
		}
	})
	t.Run("damaged pages", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "h.db")
		s, err := Open(ctx, "sqlite:"+p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		id, _ := s.BeginScan(ctx, "x")
		for i := 0; i < 20; i++ {
			ts := make([]Tool, 50)
			for j := range ts {
				ts[j] = tool(fmt.Sprint("t", j), strings.Repeat("d", 300)+fmt.Sprint(i))
			}
			s.RecordServer(ctx, id, result(fmt.Sprint("s", i), ts...))
		}
		s.Close()
		f, _ := os.OpenFile(p, os.O_RDWR, 0)
		st, _ := f.Stat()
		junk := []byte(strings.Repeat("\xde\xad\xbe\xef", 1024))
		for off := int64(8192); off+4096 < st.Size(); off += 3 * 4096 {
			f.WriteAt(junk, off)
		}
		f.Close()
		s, err = Open(ctx, "sqlite:"+p, Options{})
		if err == nil {
			defer s.Close()
			err = s.Check(ctx)
			if err == nil {
				_, err = s.History(ctx, Query{})
			}
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("damaged pages: %v", err)
		}
	})
}

// A store locked by another process: a write waits up to the busy
// timeout, then fails with a clear error; once the lock is gone it works.
func TestLockedByAnotherProcess(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h.db")
	url := "sqlite:" + p
	s, err := Open(context.Background(), url, Options{BusyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cmd := child(t, "lock", "MCPDRIFT_STORE_PATH="+p)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("child: %q", line)
	}
	start := time.Now()
	_, err = s.BeginScan(context.Background(), "x")
	waited := time.Since(start)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("a locked store: %v", err)
	}
	if waited < 250*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("waited %v for a 300 ms busy timeout", waited)
	}
	// Reading is not blocked by a writer (WAL; read transactions are
	// deferred): history works while a scan writes.
	start = time.Now()
	if _, err := s.History(context.Background(), Query{}); err != nil || time.Since(start) > 250*time.Millisecond {
		t.Fatalf("history while another process writes: %v after %v", err, time.Since(start))
	}
	if _, err := s.LastComplete(context.Background(), "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("last complete while another process writes: %v", err)
	}
	// Open itself (the migration transaction) also gives up.
	if _, err := Open(context.Background(), url, Options{BusyTimeout: 200 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Fatalf("open of a locked store: %v", err)
	}
	in.Close()
	cmd.Wait()
	if _, err := s.BeginScan(context.Background(), "x"); err != nil {
		t.Fatalf("after the lock was released: %v", err)
	}
}

// Two scans at once on one SQLite store, in two processes: both are
// recorded whole.
func TestTwoWriters(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	s, err := Open(context.Background(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := child(t, "write", "MCPDRIFT_STORE_URL="+url, "MCPDRIFT_N=25", "MCPDRIFT_TOOLS=40", fmt.Sprint("MCPDRIFT_NAME=w", i))
			b, err := cmd.Output()
			outs[i] = string(b)
			if err != nil {
				outs[i] += err.Error()
			}
		}()
	}
	wg.Wait()
	scans, err := s.Scans(context.Background(), 0)
	if err != nil || len(scans) != 2 {
		t.Fatalf("scans %+v %v\n%s", scans, err, outs)
	}
	for _, sc := range scans {
		if sc.Exit == nil || *sc.Exit != 0 {
			t.Fatalf("scan %d did not finish: %s", sc.ID, outs)
		}
		obs, _ := s.Observations(context.Background(), sc.ID)
		if len(obs) != 25 {
			t.Fatalf("scan %d recorded %d servers of 25", sc.ID, len(obs))
		}
	}
	vs, _ := s.History(context.Background(), Query{Server: "server3", Tool: "tool7"})
	if len(vs) != 2 {
		t.Fatalf("both writers' versions: %+v", vs)
	}
}

// A read-only store (file and directory not writable by the process):
// reading works with Options.ReadOnly, writing fails clearly, and opening
// for writing is refused with ErrReadOnly.
func TestReadOnlyStore(t *testing.T) {
	// not t.TempDir: its parent is private to the test's user, and the
	// child may run as another
	dir, err := os.MkdirTemp("", "mcpdrift-ro-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	p := filepath.Join(dir, "ro", "h.db")
	url := "sqlite:" + p
	s, err := Open(context.Background(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := s.BeginScan(context.Background(), "x")
	s.RecordServer(context.Background(), id, result("a", tool("t", "d")))
	s.Close()
	os.Chmod(filepath.Dir(p), 0o755)
	os.Chmod(p, 0o444)
	os.Chmod(filepath.Dir(p), 0o555)
	defer os.Chmod(filepath.Dir(p), 0o755)
	var run func(ro bool) string
	if os.Geteuid() != 0 {
		run = func(ro bool) string {
			cmd := child(t, "open", "MCPDRIFT_STORE_URL="+url, "MCPDRIFT_READONLY="+map[bool]string{true: "1"}[ro])
			b, _ := cmd.Output()
			return string(b)
		}
	} else {
		// root writes anything: run the child as another user.
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Skip("running as root with no nobody user to drop to")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		exe, _ := os.Executable()
		bin := filepath.Join(dir, "store.test")
		b, _ := os.ReadFile(exe)
		os.WriteFile(bin, b, 0o755)
		os.Chmod(dir, 0o755)
		run = func(ro bool) string {
			cmd := exec.Command(bin, "-test.run=^$")
			cmd.Env = append(os.Environ(), "MCPDRIFT_STORE_CHILD=open", "MCPDRIFT_STORE_URL="+url, "MCPDRIFT_READONLY="+map[bool]string{true: "1"}[ro])
			runAs(cmd, uid, gid)
			cmd.Dir = "/"
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v %s", err, b)
			}
			return string(b)
		}
	}
	out := run(false)
	if !strings.Contains(out, "open: "+ErrReadOnly.Error()) || !strings.Contains(out, "read-only (the file or its directory cannot be written)") {
		t.Fatalf("open for writing:\n%s", out)
	}
	out = run(true)
	if !strings.Contains(out, "history: 1 ok") || !strings.Contains(out, "write: "+ErrReadOnly.Error()) {
		t.Fatalf("open read-only:\n%s", out)
	}
}

func init() {
	childModes["worker"] = childWorker
}

// childWorker sweeps MCPDRIFT_ROUND of the store at MCPDRIFT_STORE_URL:
// claim (lease MCPDRIFT_LEASE), print "claimed SERVER ATTEMPT", and, unless
// MCPDRIFT_STALL=1 (a worker that hangs after its first claim until it is
// killed), complete it and print "done SERVER", until the round is drained.
func childWorker() int {
	ctx := context.Background()
	s, err := Open(ctx, os.Getenv("MCPDRIFT_STORE_URL"), Options{})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer s.Close()
	lease, _ := time.ParseDuration(os.Getenv("MCPDRIFT_LEASE"))
	round := os.Getenv("MCPDRIFT_ROUND")
	for {
		c, err := s.ClaimNext(ctx, round, fmt.Sprint("pid-", os.Getpid()), lease, Shard{})
		if errors.Is(err, ErrRoundDrained) {
			return 0
		}
		if errors.Is(err, ErrNoneClaimable) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println("claimed", c.Server, c.Attempt)
		if os.Getenv("MCPDRIFT_STALL") == "1" {
			select {}
		}
		time.Sleep(5 * time.Millisecond) // the scan
		if err := s.Complete(ctx, c, 0); err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println("done", c.Server)
	}
}

// Worker processes on one PostgreSQL round, one of them killed with
// SIGKILL while it holds a lease: its server is claimed again once the
// lease expired, and every server is completed exactly once.
func TestWorkerKilledMidLease(t *testing.T) {
	needPG(t)
	s, url := pgStore(t, Options{})
	ctx := context.Background()
	var servers []string
	for i := 0; i < 60; i++ {
		servers = append(servers, fmt.Sprintf("srv-%02d", i))
	}
	if _, err := s.SeedRound(ctx, "r", servers); err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPDRIFT_STORE_URL=" + url, "MCPDRIFT_ROUND=r", "MCPDRIFT_LEASE=700ms"}
	stall := child(t, "worker", append(env, "MCPDRIFT_STALL=1")...)
	out, _ := stall.StdoutPipe()
	if err := stall.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	var held string
	if _, err := fmt.Sscanf(line, "claimed %s 1", &held); err != nil {
		t.Fatalf("stalled worker: %q", line)
	}
	stall.Process.Signal(syscall.SIGKILL)
	stall.Wait()

	var wg sync.WaitGroup
	outs := make([]string, 3)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := child(t, "worker", env...).Output()
			outs[i] = string(b)
			if err != nil {
				outs[i] += "exit: " + err.Error()
			}
		}()
	}
	wg.Wait()
	done := map[string]int{}
	for _, o := range outs {
		for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
			f := strings.Fields(l)
			switch {
			case len(f) == 2 && f[0] == "done":
				done[f[1]]++
			case len(f) == 3 && f[0] == "claimed":
				// a second attempt is possible only once the lease expired
				if f[1] == held && f[2] != "2" {
					t.Errorf("the killed worker's server was claimed as attempt %s", f[2])
				}
			default:
				t.Fatalf("worker output %q", l)
			}
		}
	}
	if len(done) != len(servers) {
		t.Fatalf("%d of %d servers done", len(done), len(servers))
	}
	for sv, n := range done {
		if n != 1 {
			t.Fatalf("%s done %d times", sv, n)
		}
	}
	if st, _ := s.Status(ctx, "r"); st.Done != len(servers) {
		t.Fatalf("status %+v", st)
	}
}

// A record that holds a secret of the run — a server reflecting the
// Authorization header it was sent into a tool, escaped, percent-encoded,
// cut before an ellipsis or as sent, or a target or message that carries
// one — is refused and nothing is written: no byte of the store's files
// holds the secret.
func TestSecretsNeverStored(t *testing.T) {
	const secret = "sk-live-9f8e7d6c5b4a"
	set := &redact.Set{}
	set.AddHeader("Authorization", "Bearer "+secret)
	dir := t.TempDir()
	url := "sqlite:" + filepath.Join(dir, "h.db")
	s, err := Open(context.Background(), url, Options{Secrets: set})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.BeginScan(ctx, "scan --header Authorization=Bearer "+secret); !errors.Is(err, ErrSecret) {
		t.Fatalf("source: %v", err)
	}
	id, err := s.BeginScan(ctx, "scan")
	if err != nil {
		t.Fatal(err)
	}
	escaped := `sk-live-9f8e7d6c5b4\u0061`
	for name, mut := range map[string]func(r *ServerResult){
		"raw":         func(r *ServerResult) { r.Tools[0].Raw = []byte(`{"name":"t","description":"token ` + secret + `"}`) },
		"escaped raw": func(r *ServerResult) { r.Tools[0].Raw = []byte(`{"name":"t","description":"token ` + escaped + `"}`) },
		"member name": func(r *ServerResult) { r.Tools[0].Raw = []byte(`{"name":"t","x` + escaped + `":1}`) },
		"percent": func(r *ServerResult) {
			r.Tools[0].Raw = []byte(`{"name":"t","description":"?k=%73k-live-9f8e7d6c5b4a"}`)
		},
		"clipped":      func(r *ServerResult) { r.Tools[0].Raw = []byte(`{"name":"t","description":"token sk-live-9f8e7d…"}`) },
		"tool name":    func(r *ServerResult) { r.Tools[0].Name = "t" + secret },
		"target host":  func(r *ServerResult) { r.Target = "https://" + secret + ".example.test/mcp" },
		"error detail": func(r *ServerResult) { r.ErrorDetail = "401 for Bearer " + secret },
		"server info":  func(r *ServerResult) { r.Identity.ServerName = secret },
		"finding":      func(r *ServerResult) { r.Findings = []Finding{{RuleID: "R", Message: "saw " + secret}} },
	} {
		r := result("srv", tool("t", "d"))
		mut(&r)
		err := s.RecordServer(ctx, id, r)
		if !errors.Is(err, ErrSecret) || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "header Authorization") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// a URL credential is removed, not refused: user info, a query
	// value, a path segment that looks like a credential
	for _, target := range []string{"https://u:" + secret + "@example.test/mcp?key=" + secret, "https://example.test/" + secret + "/mcp"} {
		r := result("srv", tool("t", "d"))
		r.Target = target
		if err := s.RecordServer(ctx, id, r); err != nil {
			t.Fatalf("a credential the store removes: %v", err)
		}
	}
	s.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), secret) || strings.Contains(string(b), "9f8e7d6c5b4") || strings.Contains(string(b), "sk-live-9f8e7d") {
			t.Fatalf("%s holds the secret", f)
		}
	}
}

// A password holding an unencoded '?', '#', '/' or '@' (generated ones
// do) ends the authority early for url.Parse, whose error then quotes a
// piece of it ("invalid port \":S3cretPw\" after host", found by the
// review); a sqlite path or any other message showing such a URL must
// not show the password either. No piece of the password is written.
func TestParseURLPasswordWithDelimiter(t *testing.T) {
	for _, s := range []string{
		"postgres://app:S3cretPw?x@db/mcp",
		"postgres://app:S3cretPw#x@db/mcp",
		"postgres://app:S3cretPw/x@db/mcp",
		"postgres://app:S3cretPw@x@db/mcp",
		"postgres://app:S3cretPw%zz@db/mcp",
		"postgresql://app:S3cretPw?x=1@[::1/mcp",
		"sqlite://app:S3cretPw?x@db/mcp",
	} {
		l, err := ParseURL(s)
		if err == nil {
			if strings.Contains(l.Display, "S3cret") {
				t.Errorf("ParseURL(%s): shown as %s", s, l.Display)
			}
			continue
		}
		if strings.Contains(err.Error(), "S3cret") {
			t.Errorf("ParseURL(%s): %v", s, err)
		}
	}
}
