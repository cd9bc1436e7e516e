package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/oauth"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// newAuth is mcpdrift auth: login, status and logout of the OAuth tokens
// mcpdrift caches (package oauth does the protocol).
func newAuth(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth login|status|logout",
		Short: "Log in to MCP servers behind OAuth, and see or drop the cached tokens",
		Long: `auth holds the OAuth tokens mcpdrift uses for servers that ask for
authorization (the MCP authorization specification). login runs the
authorization code flow with PKCE in the browser (or prints the URL with
--no-browser) and caches the token under $XDG_STATE_HOME/mcpdrift/oauth,
one file of mode 0600 per resource and client; pin, drift, lock, scan and
watch then use it (--oauth auto, the default), refreshing it before it
expires. Tokens and secrets are never printed.`,
	}
	cmd.AddCommand(newAuthLogin(e), newAuthStatus(e), newAuthLogout(e))
	return cmd
}

func newAuthLogin(e *env) *cobra.Command {
	var live liveFlags
	cmd := &cobra.Command{
		Use:   "login (URL | --url URL) [--oauth-client-id ID [--oauth-client-secret-file F]] [--oauth-scope S]... [--no-browser]",
		Short: "Authorize mcpdrift for a server (authorization code flow with PKCE, or client credentials)",
		Long: `login reaches the server at URL, follows its authorization challenge
(protected resource metadata, the authorization server's metadata), and
gets a token: with the authorization code flow (PKCE S256, a loopback
redirect; the browser opens, $BROWSER when set, or the URL is printed with
--no-browser), or with --oauth client-credentials the client_credentials
grant of a pre-registered client. The token is cached for the resource
and client; nothing secret is printed. Exit 0 when a token is held, 2 on
bad usage, 3 when the server could not be authorized.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := serverURL(args, live.baseURL, true)
			if err != nil {
				return err
			}
			live.baseURL = u
			if live.oauth.mode == oauthAuto || live.oauth.mode == "" {
				live.oauth.mode = oauthLogin
			}
			if live.oauth.mode == oauthOff {
				return usageErr("auth login needs --oauth login or client-credentials")
			}
			live.oauth.force = true
			cfg, err := live.config(e, nil)
			if err != nil {
				return err
			}
			if cfg.Auth == nil {
				return usageErr("auth login does not go with an Authorization header given by hand")
			}
			ctx, cancel := context.WithTimeout(e.ctx, live.timeout)
			defer cancel()
			_, err = mcpclient.ListTools(ctx, cfg)
			return renderLogin(e, cfg, err)
		},
	}
	live.AddFlags(cmd, "url")
	return cmd
}

// renderLogin says what the login got, or why not.
func renderLogin(e *env, cfg mcpclient.Config, err error) error {
	s, _ := cfg.Auth.(*oauth.Session)
	var held []oauth.GrantInfo
	if s != nil {
		held = s.Grants()
	}
	if len(held) == 0 {
		if err != nil {
			return &exitError{ExitInconclusive, "auth login: " + safetext.Inert(err.Error())}
		}
		fmt.Fprintf(e.stdout, "mcpdrift: %s did not ask for authorization: no token is needed\n", safetext.Quote(cfg.BaseURL))
		return nil
	}
	for _, g := range held {
		fmt.Fprintln(e.stdout, grantLine(g, time.Now()))
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "mcpdrift: warning: authorized, but listing the server then failed: %s\n", safetext.Inert(err.Error()))
	}
	return nil
}

// grantLine is one grant for people: every server-controlled value quoted.
func grantLine(g oauth.GrantInfo, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: issuer %s, client %s (%s)", safetext.Quote(g.Resource), safetext.Quote(g.Issuer), safetext.Quote(g.ClientID), g.ClientKind)
	if g.Scope != "" {
		fmt.Fprintf(&b, ", scope %s", safetext.Quote(g.Scope))
	}
	switch {
	case g.Expiry.IsZero():
		b.WriteString(", no expiry given")
	case now.After(g.Expiry):
		fmt.Fprintf(&b, ", expired %s", g.Expiry.UTC().Format(time.RFC3339))
	default:
		fmt.Fprintf(&b, ", expires %s", g.Expiry.UTC().Format(time.RFC3339))
	}
	if g.Refreshable {
		b.WriteString(", refreshable")
	}
	return b.String()
}

// serverURL is the server's URL given as the argument or as --url (one
// of them; required when need).
func serverURL(args []string, flag string, need bool) (string, error) {
	switch {
	case len(args) == 1 && flag != "":
		return "", usageErr("give the server's URL once: as the argument or as --url")
	case len(args) == 1:
		return args[0], nil
	case flag == "" && need:
		return "", usageErr("give the server's URL: as the argument or as --url")
	}
	return flag, nil
}

func authStore() (*oauth.Store, error) {
	dir, err := oauth.DefaultDir()
	if err != nil {
		return nil, usageErr("%s", err.Error())
	}
	return &oauth.Store{Dir: dir}, nil
}

// matching are the cached grants of target ("" all): those whose resource
// covers it.
func matching(st *oauth.Store, target string) ([]*oauth.Entry, error) {
	es, err := st.List()
	if err != nil {
		return nil, &exitError{ExitUsage, safetext.Inert(err.Error())}
	}
	var out []*oauth.Entry
	for _, x := range es {
		if target == "" || oauth.Covers(x.Resource, target) || x.Resource == target {
			out = append(out, x)
		}
	}
	return out, nil
}

func newAuthStatus(e *env) *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "status [URL | --url URL]",
		Short: "List the cached OAuth grants (of the server at URL): never a token",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := authStore()
			if err != nil {
				return err
			}
			target, err := serverURL(args, url, false)
			if err != nil {
				return err
			}
			es, err := matching(st, target)
			if err != nil {
				return err
			}
			if len(es) == 0 {
				fmt.Fprintf(e.stdout, "mcpdrift: no cached OAuth grant in %s\n", safetext.Quote(st.Dir))
				return nil
			}
			for _, x := range es {
				fmt.Fprintln(e.stdout, grantLine(oauth.InfoOf(x), time.Now()))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "the server's URL (the same as the argument)")
	return cmd
}

func newAuthLogout(e *env) *cobra.Command {
	var all bool
	var url string
	cmd := &cobra.Command{
		Use:   "logout (URL | --url URL | --all)",
		Short: "Drop the cached OAuth grants of the server at URL (or all)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := serverURL(args, url, false)
			if err != nil {
				return err
			}
			if all == (target != "") {
				return usageErr("give a URL or --all")
			}
			st, err := authStore()
			if err != nil {
				return err
			}
			es, err := matching(st, target)
			if err != nil {
				return err
			}
			for _, x := range es {
				if err := st.Delete(x); err != nil {
					return &exitError{ExitUsage, safetext.Inert(err.Error())}
				}
			}
			fmt.Fprintf(e.stdout, "mcpdrift: dropped %d cached OAuth grant(s)\n", len(es))
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "drop every cached grant")
	cmd.Flags().StringVar(&url, "url", "", "the server's URL (the same as the argument)")
	return cmd
}
