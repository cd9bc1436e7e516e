package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// maxEntryBytes bounds one cache file.
const maxEntryBytes = 64 << 10

// Client kinds: how a client identified itself to the authorization
// server.
const (
	ClientPreRegistered    = "pre-registered"    // --oauth-client-id
	ClientMetadataDocument = "metadata-document" // a Client ID Metadata Document URL
	ClientDynamic          = "dynamic"           // registered at run time (RFC 7591)
)

// Entry is one cached grant: the token of one resource from one client of
// one authorization server, and what refreshing it needs. It holds
// secrets (the tokens, a registered client's secret): it is written only
// to the Store's files, never printed.
type Entry struct {
	Resource      string    `json:"resource"`
	Issuer        string    `json:"issuer"`
	TokenEndpoint string    `json:"token_endpoint"`
	ClientKind    string    `json:"client_kind"`
	ClientID      string    `json:"client_id"`
	ClientSecret  string    `json:"client_secret,omitempty"`
	AuthMethod    string    `json:"token_endpoint_auth_method"`
	RedirectURI   string    `json:"redirect_uri,omitempty"`
	AccessToken   string    `json:"access_token"`
	RefreshToken  string    `json:"refresh_token,omitempty"`
	Expiry        time.Time `json:"expiry,omitzero"`
	Scope         string    `json:"scope,omitempty"`
	Saved         time.Time `json:"saved"`
}

// key is the file name of an entry: the resource, issuer and client.
func (e *Entry) key() string {
	h := sha256.Sum256([]byte(e.Resource + "\n" + e.Issuer + "\n" + e.ClientID))
	return hex.EncodeToString(h[:16]) + ".json"
}

// Store is the token cache: one file per resource and client in Dir
// (mode 0700), each of mode 0600. A directory or file that is a symbolic
// link, of another owner, or readable or writable by others is refused,
// never used.
type Store struct {
	Dir string
}

// DefaultDir is where tokens are cached: $XDG_STATE_HOME/mcpdrift/oauth,
// else ~/.local/state/mcpdrift/oauth (on Windows %LOCALAPPDATA%).
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpdrift", "oauth"), nil
	}
	if runtime.GOOS == "windows" {
		if d := os.Getenv("LOCALAPPDATA"); d != "" {
			return filepath.Join(d, "mcpdrift", "oauth"), nil
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("oauth: no state directory: set XDG_STATE_HOME or HOME")
	}
	return filepath.Join(home, ".local", "state", "mcpdrift", "oauth"), nil
}

func (s *Store) path(name string) string { return filepath.Join(s.Dir, name) }

func pathText(p string) string { return safetext.Quote(p) }

// ensureDir makes the directory (0700) and checks it.
func (s *Store) ensureDir() error {
	if s == nil || s.Dir == "" {
		return errors.New("oauth: no token cache directory")
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("oauth: token cache %s: %s", pathText(s.Dir), safetext.Inert(safetext.Escape(err.Error())))
	}
	return s.checkDir()
}

func (s *Store) checkDir() error {
	fi, err := os.Lstat(s.Dir)
	if err != nil {
		return fmt.Errorf("oauth: token cache %s: %s", pathText(s.Dir), safetext.Escape(err.Error()))
	}
	if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("oauth: token cache %s is not a directory (a symbolic link is refused)", pathText(s.Dir))
	}
	return checkPrivate(s.Dir, fi)
}

// Save writes e (atomically: a temporary file of mode 0600 renamed over
// the entry's file).
func (s *Store) Save(e *Entry) error {
	if err := s.ensureDir(); err != nil {
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("oauth: token cache: %s", safetext.Escape(err.Error()))
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		f.Close()
		return fmt.Errorf("oauth: token cache: %s", safetext.Escape(err.Error()))
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("oauth: token cache: %s", safetext.Escape(err.Error()))
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("oauth: token cache: %s", safetext.Escape(err.Error()))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("oauth: token cache: %s", safetext.Escape(err.Error()))
	}
	dst := s.path(e.key())
	if fi, err := os.Lstat(dst); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("oauth: token cache file %s is not a regular file (a symbolic link is refused)", pathText(dst))
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("oauth: token cache: %s", safetext.Escape(err.Error()))
	}
	return nil
}

// read reads one entry file, refusing a symbolic link, a file that is not
// regular, one of another owner or open to others.
func (s *Store) read(name string) (*Entry, error) {
	p := s.path(name)
	f, err := openNoFollow(p)
	if err != nil {
		return nil, fmt.Errorf("oauth: token cache file %s: %s (a symbolic link is refused)", pathText(p), safetext.Escape(err.Error()))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("oauth: token cache file %s: %s", pathText(p), safetext.Escape(err.Error()))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("oauth: token cache file %s is not a regular file", pathText(p))
	}
	if err := checkPrivate(p, fi); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxEntryBytes+1))
	if err != nil || len(b) > maxEntryBytes {
		return nil, fmt.Errorf("oauth: token cache file %s cannot be read or is too large", pathText(p))
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil || e.Resource == "" || e.ClientID == "" {
		return nil, fmt.Errorf("oauth: token cache file %s is not a cached grant", pathText(p))
	}
	return &e, nil
}

// List returns every entry, newest first. A file that fails the checks
// makes List fail: a tampered cache is reported, not skipped.
func (s *Store) List() ([]*Entry, error) {
	if s == nil || s.Dir == "" {
		return nil, errors.New("oauth: no token cache directory")
	}
	if _, err := os.Lstat(s.Dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err := s.checkDir(); err != nil {
		return nil, err
	}
	des, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("oauth: token cache %s: %s", pathText(s.Dir), safetext.Escape(err.Error()))
	}
	var out []*Entry
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".json") || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		e, err := s.read(de.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Saved.After(out[j].Saved) })
	return out, nil
}

// Find is the newest entry whose resource covers target, from the client
// clientID ("" any), or nil.
func (s *Store) Find(target, clientID string) (*Entry, error) {
	es, err := s.List()
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		if Covers(e.Resource, target) && (clientID == "" || e.ClientID == clientID) {
			return e, nil
		}
	}
	return nil, nil
}

// Delete removes e's file.
func (s *Store) Delete(e *Entry) error {
	if err := s.checkDir(); err != nil {
		return err
	}
	if err := os.Remove(s.path(e.key())); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("oauth: token cache: %s", safetext.Escape(err.Error()))
	}
	return nil
}
