package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/oauth"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// OAuth modes of --oauth.
const (
	oauthAuto              = "auto"               // cached tokens only (refreshed), never a new grant
	oauthLogin             = "login"              // also the browser flow when a server asks for it
	oauthClientCredentials = "client-credentials" // the client_credentials grant (CI)
	oauthOff               = "off"                // never send a token
)

// oauthFlags are the flag group of the MCP authorization (package oauth)
// on every command that reaches a live server. One session serves every
// server of a run: copies of the flags share it.
type oauthFlags struct {
	mode        string
	clientID    string
	secretFile  string
	secretEnv   string
	metadataURL string
	scopes      []string
	noBrowser   bool
	redirectURI string
	force       bool // auth login: a new grant, whatever is cached
	shared      *oauthShared
}

type oauthShared struct {
	once sync.Once
	sess *oauth.Session
	err  error
}

func (o *oauthFlags) AddFlags(f *pflag.FlagSet) {
	o.shared = &oauthShared{}
	f.StringVar(&o.mode, "oauth", oauthAuto, "OAuth for servers that ask for it (the MCP authorization): auto (use tokens cached by mcpdrift auth login, refreshing them), login (also open the browser when a server asks for authorization), client-credentials (the client_credentials grant of --oauth-client-id, for CI), off")
	f.StringVar(&o.clientID, "oauth-client-id", "", "a client registered with the authorization server beforehand (default: a client metadata document when --oauth-client-metadata-url is given and the server supports them, else dynamic registration)")
	f.StringVar(&o.secretFile, "oauth-client-secret-file", "", "file holding the secret of --oauth-client-id (never a flag value)")
	f.StringVar(&o.secretEnv, "oauth-client-secret-env", "", "environment variable holding the secret of --oauth-client-id")
	f.StringVar(&o.metadataURL, "oauth-client-metadata-url", "", "https URL of this client's Client ID Metadata Document, used as its client_id where the server supports it")
	f.StringArrayVar(&o.scopes, "oauth-scope", nil, "scope to ask for (repeatable; default: the server's challenge, else its scopes_supported)")
	f.BoolVar(&o.noBrowser, "no-browser", false, "print the authorization URL instead of opening the browser")
	f.StringVar(&o.redirectURI, "oauth-redirect-uri", "", "the loopback redirect URI of a pre-registered client (http://127.0.0.1:PORT/PATH; default: a free port)")
}

// secret reads the client secret from the file or the environment.
func (o *oauthFlags) secret() (string, error) {
	switch {
	case o.secretFile != "" && o.secretEnv != "":
		return "", usageErr("give --oauth-client-secret-file or --oauth-client-secret-env, not both")
	case o.secretFile != "":
		b, err := os.ReadFile(o.secretFile)
		if err != nil {
			return "", usageErr("--oauth-client-secret-file: %s", safetext.Inert(safetext.Escape(err.Error())))
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	case o.secretEnv != "":
		v, ok := os.LookupEnv(o.secretEnv)
		if !ok || v == "" {
			return "", usageErr("--oauth-client-secret-env: %s is not set", safetext.Quote(o.secretEnv))
		}
		return v, nil
	}
	return "", nil
}

// options turns the flags into the session's options.
func (o *oauthFlags) options(e *env, mode oauth.Mode) (oauth.Options, error) {
	secret, err := o.secret()
	if err != nil {
		return oauth.Options{}, err
	}
	if secret != "" {
		warnShort(e, shortOnly(e.secrets.Add("the OAuth client secret", secret), "the OAuth client secret"))
		if o.clientID == "" {
			return oauth.Options{}, usageErr("a client secret goes with --oauth-client-id")
		}
	}
	dir, err := oauth.DefaultDir()
	if err != nil {
		return oauth.Options{}, usageErr("%s", err.Error())
	}
	var scopes []string
	for _, s := range o.scopes {
		scopes = append(scopes, strings.Fields(s)...)
	}
	opt := oauth.Options{
		Mode: mode, Scopes: scopes, Store: &oauth.Store{Dir: dir}, Secrets: e.secrets, RedirectURI: o.redirectURI,
		Client:     oauth.ClientOptions{ID: o.clientID, Secret: secret, MetadataURL: o.metadataURL, Name: "mcpdrift"},
		ForceLogin: o.force,
	}
	if mode == oauth.ModeLogin {
		opt.Open = o.opener(e)
	}
	return opt, nil
}

// auth is the Config.Auth of a run to the HTTP server at target (nil:
// off, an Authorization header given by hand, or --oauth auto and no
// token cached for target: the run is then what it was without OAuth).
func (o *oauthFlags) auth(e *env, target string, headers http.Header) (*oauth.Session, error) {
	if o.shared == nil {
		o.shared = &oauthShared{}
	}
	var mode oauth.Mode
	switch o.mode {
	case oauthAuto, "":
		mode = oauth.ModeCached
	case oauthLogin:
		mode = oauth.ModeLogin
	case oauthClientCredentials:
		mode = oauth.ModeClientCredentials
	case oauthOff:
		return nil, nil
	default:
		return nil, usageErr("--oauth must be auto, login, client-credentials or off")
	}
	if headers.Get("Authorization") != "" {
		if o.mode != oauthAuto && o.mode != "" {
			return nil, usageErr("--oauth %s and an Authorization header given by hand: give one", o.mode)
		}
		return nil, nil
	}
	if mode == oauth.ModeCached && !o.force && !o.cached(e, target) {
		return nil, nil
	}
	o.shared.once.Do(func() {
		opt, err := o.options(e, mode)
		if err != nil {
			o.shared.err = err
			return
		}
		s, err := oauth.NewSession(opt)
		if err != nil {
			o.shared.err = usageErr("%s", err.Error())
			return
		}
		o.shared.sess = s
	})
	return o.shared.sess, o.shared.err
}

// cached reports whether the token cache holds a grant for target. A
// cache that is refused (a symbolic link, a file open to others) is
// warned about and not used.
func (o *oauthFlags) cached(e *env, target string) bool {
	dir, err := oauth.DefaultDir()
	if err != nil {
		return false
	}
	x, err := (&oauth.Store{Dir: dir}).Find(target, o.clientID)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcpdrift: warning: %s; no cached OAuth token is used\n", safetext.Inert(err.Error()))
		return false
	}
	return x != nil
}

// openForTest, when set, replaces the browser: tests follow the
// authorization URL themselves, and no browser is ever launched.
var openForTest func(context.Context, string) error

// opener shows the authorization URL: the browser ($BROWSER when set, else
// the system's opener), or with --no-browser a line on stderr.
func (o *oauthFlags) opener(e *env) func(context.Context, string) error {
	show := func(u string) {
		fmt.Fprintf(e.stderr, "mcpdrift: open this URL to authorize mcpdrift:\n  %s\n", safetext.Escape(u))
	}
	if o.noBrowser {
		return func(_ context.Context, u string) error { show(u); return nil }
	}
	if openForTest != nil {
		return openForTest
	}
	return func(ctx context.Context, u string) error {
		cmd := browserCommand(u)
		if cmd == nil {
			show(u)
			return nil
		}
		fmt.Fprintf(e.stderr, "mcpdrift: opening the browser to authorize mcpdrift (--no-browser prints the URL instead)\n")
		if err := cmd.Start(); err != nil {
			show(u)
			return nil
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
}

// browserCommand is the command that opens u: $BROWSER (a program, given
// u as its one argument), else the system's opener; nil when none.
func browserCommand(u string) *exec.Cmd {
	if b := os.Getenv("BROWSER"); b != "" {
		return exec.Command(b, u)
	}
	switch runtime.GOOS {
	case "darwin":
		return exec.Command("open", u)
	case "windows":
		return exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	}
	if p, err := exec.LookPath("xdg-open"); err == nil {
		return exec.Command(p, u)
	}
	return nil
}

// lockAuth is the auth method lock add records for the server at target:
// how it authorized this run, never a token ("" none).
func (o *oauthFlags) lockAuth(target string) string {
	if o.shared == nil || o.shared.sess == nil || !o.shared.sess.Holds(target) {
		return ""
	}
	if o.mode == oauthClientCredentials {
		return lock.AuthOAuthClientCredentials
	}
	return lock.AuthOAuth
}
