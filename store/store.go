// Package store keeps mcpdrift's history: scan runs, what each server
// served in each run, when each tool digest was first and last seen, the
// raw tool definitions (content-addressed), and the findings. One schema
// on two backends: SQLite (modernc.org/sqlite, pure Go, the default) and
// PostgreSQL (github.com/jackc/pgx/v5, for shared fleets), through
// database/sql. PostgreSQL also holds the work queue of `scan --worker`.
//
// # Opening
//
//	s, err := store.Open(ctx, "sqlite:/var/lib/mcpdrift/history.db", store.Options{})
//	s, err := store.Open(ctx, "postgres://user@host/db", store.Options{})
//	s, err := store.Open(ctx, "", store.Options{}) // DefaultURL(): $XDG_STATE_HOME/mcpdrift/history.db
//
// Versioned migrations run on open, in one transaction (serialised between
// processes: BEGIN IMMEDIATE on SQLite, an advisory lock on PostgreSQL). A
// store whose schema is newer than this binary is refused (ErrTooNew);
// one that is not an SQLite database or is damaged is refused (ErrCorrupt);
// one held locked past Options.BusyTimeout is refused (ErrLocked); one the
// process may not write is refused (ErrReadOnly) unless Options.ReadOnly
// is set, which opens it for reading without migrating.
//
// # Recording a scan
//
//	id, err := s.BeginScan(ctx, "scan --inventory fleet.json")
//	for each server: err = s.RecordServer(ctx, id, store.ServerResult{...})
//	err = s.FinishScan(ctx, id, exitCode)
//	_, err = s.Prune(ctx, keep) // retention (--keep)
//
// Each RecordServer is one transaction: a server's observation, its tool
// list, the new raw definitions, the first/last-seen periods and its
// findings are committed together or not at all. It is idempotent per
// (scan, server): a retry after a lost connection that had in fact
// committed records nothing twice. On PostgreSQL a write that fails because
// the connection went away (a restarted server, a terminated backend) is
// retried on a new connection for up to Options.RetryFor. SQLite runs in
// WAL mode with a busy timeout, so two scans on one file both record; a
// process killed mid-scan loses at most the server record it was writing
// (the scan stays unfinished: Scan.Finished is zero).
//
// # Reading
//
// LastComplete returns a server's last complete observation and its raw
// tool definitions (Last.ToolArray is a JSON array manifest.ParseToolList
// reads), the baseline a later scan is gated against. History returns the
// timeline of tool digests (one Version per server, tool and digest: first
// and last seen, the scans, and the findings raised against that digest).
//
// Scans, Observations and Findings list what was recorded; Check runs
// SQLite's integrity_check. ParseURL, ParseKeep (--keep), ParseSince
// (--since) and ParseShard (--shard) read the flags; DefaultURL is the
// default store.
//
// # Work queue (PostgreSQL; SQLite too, for one machine)
//
// SeedRound inserts a round's servers idempotently (any worker may seed);
// ClaimNext claims one unclaimed server (or one whose lease expired) with
// SELECT … FOR UPDATE SKIP LOCKED and a lease; Renew extends the lease;
// Complete marks it done, refusing a claim whose lease was taken over
// (ErrLeaseLost). ClaimNext returns ErrRoundDrained when every server of
// the round is done, and ErrNoneClaimable when the rest is leased by
// other workers. Leases are timed by the database server's clock on
// PostgreSQL. RoundKey names the round of an interval; Status counts a
// round's servers.
//
// # Errors
//
// Every failure is an *Error naming the store (never its password) whose
// class errors.Is finds: ErrTooNew, ErrCorrupt, ErrLocked, ErrReadOnly,
// ErrNotFound, ErrInvalid (a ServerResult refused before anything is
// written), ErrURL; and ErrLeaseLost, ErrRoundDrained, ErrNoneClaimable of
// the queue. The messages are composed with safetext.
//
// # Text
//
// Server names, targets, tool names, server-reported identity and finding
// messages are stored as bytes (BLOB/BYTEA), exactly as given: they may
// hold any byte, which PostgreSQL TEXT refuses. Nothing in this package
// prints them; callers escape with package safetext. A target that is a
// URL is stored with redact.SanitizeURL applied (no user info, no query
// values); no header or env value is ever stored.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Errors callers can test with errors.Is.
var (
	ErrNotFound      = errors.New("not found")
	ErrTooNew        = errors.New("store schema is newer than this mcpdrift")
	ErrCorrupt       = errors.New("store is not a valid mcpdrift store or is damaged")
	ErrLocked        = errors.New("store is locked by another process")
	ErrReadOnly      = errors.New("store is read-only")
	ErrInvalid       = errors.New("invalid record")
	ErrUnsupported   = errors.New("not supported by this backend")
	ErrLeaseLost     = errors.New("the lease was lost: another worker holds this server")
	ErrRoundDrained  = errors.New("every server of the round is done")
	ErrNoneClaimable = errors.New("no server can be claimed now: the rest are leased by other workers")
	ErrURL           = errors.New("bad store URL")
	ErrSecret        = errors.New("the record holds a secret of this run; nothing was recorded")
)

// Options tune Open. The zero value is the default.
type Options struct {
	// BusyTimeout bounds how long a write waits for a lock another process
	// holds (SQLite busy_timeout). Default 5 s.
	BusyTimeout time.Duration
	// RetryFor bounds how long a PostgreSQL write is retried after the
	// connection went away. Default 30 s; negative: no retry.
	RetryFor time.Duration
	// ReadOnly opens the store for reading only: no migration, no write,
	// and the SQLite file and its directory are never created.
	ReadOnly bool
	// Secrets are the secrets of the run (header values, URL credentials,
	// env values). With them, RecordServer and BeginScan refuse
	// (ErrSecret) a record that holds one anywhere — a target, a message,
	// a name, the identity, or a raw tool definition that reflects it,
	// escaped or not — and write nothing: the store is a file, and no
	// secret is ever written.
	Secrets *redact.Set
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// walAutocheckpoint overrides the SQLite WAL checkpoint interval
	// (benchmark baseline).
	walAutocheckpoint int
}

// Store is an open history store. It is safe for concurrent use.
type Store struct {
	db      *sql.DB
	d       dialect
	loc     Location
	opt     Options
	version int
	retries atomic.Int64 // operations repeated after a lost connection
}

// Backend reports "sqlite" or "postgres".
func (s *Store) Backend() string { return s.loc.Kind }

// String names the store for messages: the SQLite path, or the PostgreSQL
// URL without its password and query values. It is config-controlled:
// escape it before printing.
func (s *Store) String() string { return s.loc.Display }

// SchemaVersion is the schema version of the open store.
func (s *Store) SchemaVersion() int { return s.version }

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) now() time.Time {
	if s.opt.Now != nil {
		return s.opt.Now()
	}
	return time.Now()
}

// Open opens (creating, for SQLite, when missing) the store at url and
// migrates it to the current schema. An empty url is DefaultURL().
func Open(ctx context.Context, url string, opt Options) (*Store, error) {
	if url == "" {
		u, err := DefaultURL()
		if err != nil {
			return nil, err
		}
		url = u
	}
	loc, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = 5 * time.Second
	}
	if opt.RetryFor == 0 {
		opt.RetryFor = 30 * time.Second
	}
	var s *Store
	switch loc.Kind {
	case KindSQLite:
		s, err = openSQLite(ctx, loc, opt)
	case KindPostgres:
		s, err = openPostgres(ctx, loc, opt)
	}
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// storeErr wraps a backend error with the store's name and, where the
// cause is known, one of the package's errors.
func (s *Store) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	return &Error{Store: s.loc.Display, Op: op, Kind: s.d.classify(err), Err: scrub(err, s.loc)}
}

// Error is a store failure: which store, what was being done, and the
// class (one of the package's errors, or nil) with the backend's error.
type Error struct {
	Store string
	Op    string
	Kind  error
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("store")
	if e.Store != "" {
		b.WriteString(" ")
		b.WriteString(safetext.Quote(e.Store))
	}
	if e.Op != "" {
		b.WriteString(": ")
		b.WriteString(e.Op)
	}
	b.WriteString(": ")
	switch {
	case errors.Is(e.Kind, ErrLocked):
		b.WriteString("locked by another process (gave up waiting); try again when the other scan has finished")
	case errors.Is(e.Kind, ErrCorrupt):
		b.WriteString("not an mcpdrift store, or damaged (move it aside to start a new history)")
	case errors.Is(e.Kind, ErrReadOnly):
		b.WriteString("read-only (the file or its directory cannot be written)")
	case e.Kind != nil:
		b.WriteString(e.Kind.Error())
	}
	if e.Err != nil {
		if e.Kind != nil {
			b.WriteString(": ")
		}
		b.WriteString(safetext.Inert(e.Err.Error()))
	}
	return b.String()
}

func (e *Error) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

func errorf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Err: fmt.Errorf(format, args...)}
}
