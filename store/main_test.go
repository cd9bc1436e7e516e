package store

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/pgtest"
)

// pg is the test PostgreSQL server (nil when none could be started).
var (
	pg    *pgtest.Server
	pgErr error
)

func TestMain(m *testing.M) {
	// The test binary re-executed as a child process (crash and lock
	// tests): run the child's part and exit.
	if mode := os.Getenv("MCPDRIFT_STORE_CHILD"); mode != "" {
		os.Exit(childMain(mode))
	}
	// A fuzzing run (the coordinator and each worker run TestMain) needs
	// no PostgreSQL: the fuzz targets are parsers.
	flag.Parse()
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	pg, pgErr = pgtest.Start(context.Background())
	if pgErr != nil {
		msg := fmt.Sprintf("store: no PostgreSQL for the tests (%v)", pgErr)
		if pgtest.Required() {
			fmt.Fprintln(os.Stderr, msg+"; MCPDRIFT_REQUIRE_POSTGRES=1 makes this a failure")
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, msg+"; the PostgreSQL tests skip")
	}
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}

// pgBackend is the PostgreSQL backend: a fresh schema per test.
func pgBackend(t testing.TB) (backend, bool) {
	if pg == nil {
		if pgtest.Required() {
			t.Fatalf("no PostgreSQL: %v", pgErr)
		}
		return backend{}, false
	}
	return backend{"postgres", func(t testing.TB) (*Store, string) {
		url, err := pg.NewSchema(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(context.Background(), url, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, url
	}}, true
}

// needPG skips (or, when required, fails) a PostgreSQL-only test.
func needPG(t testing.TB) {
	if pg == nil {
		if pgtest.Required() {
			t.Fatalf("no PostgreSQL: %v", pgErr)
		}
		t.Skipf("no PostgreSQL (%v)", pgErr)
	}
}

// childModes are the parts a re-executed test binary can play.
var childModes = map[string]func() int{}

func childMain(mode string) int {
	f, ok := childModes[mode]
	if !ok {
		fmt.Fprintln(os.Stderr, "unknown child mode", mode)
		return 2
	}
	return f()
}
