// Package pgtest starts a private PostgreSQL server for tests: a fresh
// cluster (initdb) in a temporary directory, on 127.0.0.1 at a free port
// with its unix socket in that directory, run by pg_ctl and stopped at the
// end. As root it runs the server as the "postgres" user (initdb refuses
// root). The binaries are found in $MCPDRIFT_PG_BIN, /usr/lib/postgresql/*/bin
// (the newest) or on PATH; scripts/install-postgresql.sh installs them.
//
// MCPDRIFT_TEST_POSTGRES_URL, when set, names a server to use instead
// (nothing is started). MCPDRIFT_REQUIRE_POSTGRES=1 (CI) turns "no
// PostgreSQL" into a failure (see Required).
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
)

// Server is a running test PostgreSQL.
type Server struct {
	URL    string // postgres://mcpdrift@127.0.0.1:PORT/postgres?sslmode=disable
	Port   int
	dir    string
	bin    string
	asUser func(*exec.Cmd) // runs a program as the postgres user (as root); nil: as this one
	ext    bool
	n      atomic.Int64
}

// Required reports whether a missing PostgreSQL must fail the tests.
func Required() bool { return os.Getenv("MCPDRIFT_REQUIRE_POSTGRES") == "1" }

// BinDir finds the directory holding initdb and pg_ctl.
func BinDir() (string, error) {
	if d := os.Getenv("MCPDRIFT_PG_BIN"); d != "" {
		return d, nil
	}
	ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(ms, func(i, j int) bool { return verOf(ms[i]) > verOf(ms[j]) })
	if len(ms) > 0 {
		return filepath.Dir(ms[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, pg_ctl): install them with scripts/install-postgresql.sh")
}

func verOf(p string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
	return v
}

// Start starts a server (or connects to MCPDRIFT_TEST_POSTGRES_URL).
func Start(ctx context.Context) (*Server, error) {
	if u := os.Getenv("MCPDRIFT_TEST_POSTGRES_URL"); u != "" {
		s := &Server{URL: u, ext: true}
		return s, s.ping(ctx)
	}
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mcpdrift-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, errors.New("running as root and there is no postgres user to run PostgreSQL as (initdb refuses root)")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.asUser = runAs(uid, gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run(ctx, "initdb", "-D", data, "-U", "mcpdrift", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.Port = port
		s.URL = fmt.Sprintf("postgres://mcpdrift@127.0.0.1:%d/postgres?sslmode=disable", port)
		if lastErr = s.start(ctx); lastErr == nil {
			return s, s.ping(ctx)
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func (s *Server) start(ctx context.Context) error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=64MB", s.Port, s.dir)
	out, err := s.run(ctx, "pg_ctl", "-D", filepath.Join(s.dir, "data"), "-l", filepath.Join(s.dir, "log"), "-o", opts, "-w", "-t", "60", "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("pg_ctl start: %v: %s %s", err, out, lastLines(string(log), 10))
	}
	return nil
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

func (s *Server) run(ctx context.Context, prog string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, prog), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	if s.asUser != nil {
		s.asUser(cmd)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) ping(ctx context.Context) error {
	db, err := sql.Open("pgx", s.URL)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		err = db.PingContext(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Exec runs statements on the server's postgres database.
func (s *Server) Exec(ctx context.Context, stmts ...string) error {
	db, err := sql.Open("pgx", s.URL)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// NewSchema creates a fresh schema and returns a URL whose connections use
// it (search_path), so that each test starts from an empty store.
func (s *Server) NewSchema(ctx context.Context, prefix string) (string, error) {
	name := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), s.n.Add(1))
	if err := s.Exec(ctx, `CREATE SCHEMA `+name); err != nil {
		return "", err
	}
	sep := "?"
	if strings.Contains(s.URL, "?") {
		sep = "&"
	}
	return s.URL + sep + "search_path=" + name, nil
}

// Restart stops the server (fast: connections are terminated) and starts
// it again on the same port.
func (s *Server) Restart(ctx context.Context, down time.Duration) error {
	if s.ext {
		return errors.New("an external server cannot be restarted")
	}
	if out, err := s.run(ctx, "pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "fast", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	time.Sleep(down)
	return s.start(ctx)
}

// Stop stops the server and removes its directory.
func (s *Server) Stop() {
	if s == nil || s.ext {
		return
	}
	s.run(context.Background(), "pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
	os.RemoveAll(s.dir)
}
