package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/reffetch"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// External documents pinned by hash (docs/lock.md): lock pin-ref records a
// $ref's document by its SHA-256 in the lock, and --verify-refs (lock
// check, proxy) fetches the pinned documents again to compare. Nothing
// else fetches a referenced document, and nothing here runs unasked.

// refFetchFlags are the bounds of a fetch of a referenced document.
type refFetchFlags struct {
	allowPrivate bool
	maxBytes     int64
	timeout      time.Duration
	maxRedirects int
}

func (f *refFetchFlags) AddFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.allowPrivate, "allow-private-refs", false, "fetch a document from a private, loopback or link-local address (refused by default, so a tool list cannot make mcpdrift probe an internal network)")
	fl.Int64Var(&f.maxBytes, "max-ref-bytes", reffetch.DefaultMaxBytes, "the largest document fetched or read")
	fl.DurationVar(&f.timeout, "ref-timeout", reffetch.DefaultTimeout, "how long one fetch may take, body included")
	fl.IntVar(&f.maxRedirects, "max-ref-redirects", reffetch.DefaultMaxRedirects, "how many redirects are followed, each only to the document's own origin (scheme, host and port)")
}

func (f *refFetchFlags) options() (reffetch.Options, error) {
	switch {
	case f.maxBytes < 1:
		return reffetch.Options{}, usageErr("--max-ref-bytes must be at least 1")
	case f.timeout <= 0:
		return reffetch.Options{}, usageErr("--ref-timeout must be positive")
	case f.maxRedirects < 0:
		return reffetch.Options{}, usageErr("--max-ref-redirects must be 0 or more")
	}
	o := reffetch.Options{MaxBytes: f.maxBytes, Timeout: f.timeout, MaxRedirects: f.maxRedirects, AllowPrivate: f.allowPrivate}
	if f.maxRedirects == 0 {
		o.MaxRedirects = -1 // none
	}
	return o, nil
}

// registerVerifyRefs registers --verify-refs and --allow-private-refs (on
// lock check and proxy). With verify set, fetch the servers' pinned refs
// with verifiedRefs and pass the map as lock.CheckOptions.VerifiedRefs or
// decide.Options.VerifiedRefs.
func registerVerifyRefs(cmd *cobra.Command, verify, allowPrivate *bool) {
	f := cmd.Flags()
	f.BoolVar(verify, "verify-refs", false, "fetch every external document the lock pins (bounded: 4 MiB, 10 s, 3 same-origin redirects) and compare its SHA-256 with the pin: a changed document is denied under fail-closed, with the URL and both digests")
	f.BoolVar(allowPrivate, "allow-private-refs", false, "with --verify-refs, fetch documents from private, loopback or link-local addresses too")
}

// maxRefFetches bounds the fetches of verifiedRefs that run at once.
const maxRefFetches = 4

// verifiedRefs fetches each document pinned by servers once (at most
// maxRefFetches at a time, each with reffetch's default bounds) and
// returns document URL → the digest fetched now. A document that could
// not be fetched is absent (its refs are external_ref_unverified), with
// one warning each on stderr, in URL order. Never nil. With base (the
// run's live flags: its --oauth group), a document that answers 401 is
// fetched with a token as refAuthorizers allows.
func verifiedRefs(ctx context.Context, e *env, servers []*lock.Server, allowPrivate bool, base *liveFlags) map[string]string {
	var urls []string
	for _, s := range servers {
		for _, r := range s.Refs {
			urls = append(urls, r.URL)
		}
	}
	slices.Sort(urls)
	urls = slices.Compact(urls)
	auth := refAuthorizers(e, base, servers)
	digests := make([]string, len(urls))
	errs := make([]error, len(urls))
	sem := make(chan struct{}, maxRefFetches)
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			d, err := reffetch.Fetch(ctx, u, reffetch.Options{AllowPrivate: allowPrivate, Auth: auth[u]})
			if err != nil {
				errs[i] = err
				return
			}
			digests[i] = d.SHA256
		}()
	}
	wg.Wait()
	out := make(map[string]string, len(urls))
	for i, u := range urls {
		if errs[i] != nil {
			fmt.Fprintf(e.stderr, "mcpdrift: warning: --verify-refs could not fetch %s: %s%s\n", safetext.Quote(u), safetext.Inert(errs[i].Error()), privateHint(errs[i], "--allow-private-refs"))
			continue
		}
		out[u] = digests[i]
	}
	return out
}

func privateHint(err error, flag string) string {
	if errors.Is(err, reffetch.ErrPrivateAddress) {
		return " (give " + flag + " to allow it)"
	}
	return ""
}

// pinRefOptions are lock pin-ref's flags.
type pinRefOptions struct {
	lockPath, fromFile string
	fetch              refFetchFlags
	appr               approvalFlags
	oauth              oauthFlags
}

func (o *pinRefOptions) AddFlags(cmd *cobra.Command) {
	registerLockPath(cmd, &o.lockPath)
	cmd.Flags().StringVar(&o.fromFile, "from-file", "", "record the digest of this file (a copy of the document you hold) instead of fetching")
	o.fetch.AddFlags(cmd)
	o.appr.AddFlags(cmd)
	o.oauth.AddFlags(cmd.Flags())
}

func newLockPinRef(e *env) *cobra.Command {
	o := &pinRefOptions{}
	cmd := &cobra.Command{
		Use:   "pin-ref NAME URL [--from-file FILE] [--allow-private-refs] [--by WHO] [--note TEXT]",
		Short: "Pin the external document a $ref of server NAME names, by its SHA-256, in the lock",
		Long: `Fetches the document at URL once and records its URL and SHA-256 (and size) in the lock, under
server NAME: a tool whose external $refs are all pinned is then judged like any other tool, where
under fail-closed an unpinned one is denied. The fragment (#/$defs/x) is dropped: the document is
what is pinned. Pinning a URL again replaces its pin; the history records both digests.

The fetch is bounded (--max-ref-bytes, --ref-timeout, --max-ref-redirects, each redirect only to the
URL's own scheme, host and port), uses no proxy and sends no credential, but for a document that
answers 401 when NAME is an HTTP server reached with OAuth (the --oauth flags): if the document's
protected resource metadata names the authorization server NAME is authorized by, a token for the
document's own resource is got and sent to it (never NAME's token, nor any to another server's). A private, loopback,
link-local or other non-public address is refused — checked on the address connected to, after name
resolution — unless --allow-private-refs. --from-file FILE records the digest of a copy you already
hold, and fetches nothing.

A URL no approved tool of NAME refers to is pinned with a warning (a tool not yet approved may).
Exit 0 pinned; 2 bad input or a refused fetch (an address, a redirect, the size); 3 the document
could not be had (unreachable, too slow, not 200).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErr("lock pin-ref takes NAME and URL")
			}
			name, raw := args[0], args[1]
			doc, err := schemadiff.RefDocument(raw)
			if err != nil {
				return usageErr("%s cannot be pinned: %s", safetext.Quote(reffetch.Redacted(raw)), safetext.Inert(err.Error()))
			}
			if _, err := o.fetch.options(); err != nil {
				return err
			}
			a, err := o.appr.approval(e)
			if err != nil {
				return err
			}
			lf, err := openLockForWrite(e, o.lockPath, false)
			if err != nil {
				return err
			}
			s, err := lf.server(name)
			if err != nil {
				return err
			}
			if w := unreferenced(s, doc); w != "" {
				fmt.Fprintf(e.stderr, "mcpdrift: warning: %s\n", w)
			}
			ref, where, err := o.digest(e, s, doc, a)
			if err != nil {
				return err
			}
			ev := s.PinRef(ref, a)
			if err := lf.save(e); err != nil {
				return err
			}
			was := ""
			switch {
			case ev.From == ev.To:
				was = ", unchanged"
			case ev.From != "":
				was = ", was " + ev.From
			}
			fmt.Fprintf(e.stderr, "mcpdrift: pinned %s for %s: %s (%d bytes, %s%s)\n", safetext.Quote(doc), safetext.Quote(name), ref.SHA256, *ref.Bytes, where, was)
			return nil
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// digest is the pin of doc: the digest of --from-file, or of the document
// fetched (bounded; with the token of the document's own resource when s
// is reached with OAuth), and where it was read from.
func (o *pinRefOptions) digest(e *env, s *lock.Server, doc string, a lock.Approval) (lock.Ref, string, error) {
	ref := lock.Ref{URL: doc, By: a.By, At: a.At}
	opt, err := o.fetch.options()
	if err != nil {
		return ref, "", err
	}
	if o.fromFile != "" {
		sum, n, err := digestFile(o.fromFile, opt.MaxBytes)
		if err != nil {
			return ref, "", err
		}
		ref.SHA256, ref.Bytes, ref.FromFile = sum, &n, true
		return ref, "read from " + safetext.Quote(o.fromFile), nil
	}
	if sess, u := serverSession(e, &liveFlags{oauth: o.oauth}, s); sess != nil {
		opt.Auth = sess.Documents(u)
	}
	d, err := reffetch.Fetch(e.context(), doc, opt)
	if err != nil {
		code := ExitInconclusive
		if errors.Is(err, reffetch.ErrPrivateAddress) || errors.Is(err, reffetch.ErrBadURL) || errors.Is(err, reffetch.ErrRedirect) || errors.Is(err, reffetch.ErrTooLarge) {
			code = ExitUsage
		}
		return ref, "", &exitError{code, "cannot pin: " + safetext.Inert(err.Error()) + privateHint(err, "--allow-private-refs") + " (the lock was not changed)"}
	}
	ref.SHA256, ref.Bytes = d.SHA256, &d.Bytes
	return ref, "fetched from " + safetext.Quote(d.Final), nil
}

// unreferenced warns when no approved tool of s refers to doc, naming
// the documents they do refer to ("" when one does).
func unreferenced(s *lock.Server, doc string) string {
	var docs []string
	for _, t := range s.ToolValues() {
		for _, r := range schemadiff.ToolRefs(&t) {
			if r.Document == doc {
				return ""
			}
			if r.Document != "" {
				docs = append(docs, r.Document)
			}
		}
	}
	slices.Sort(docs)
	docs = slices.Compact(docs)
	msg := fmt.Sprintf("no approved tool of %s refers to %s; pinned anyway (a tool not yet approved may)", safetext.Quote(s.Name), safetext.Quote(doc))
	if len(docs) == 0 {
		return msg + "; its approved tools refer to no external document"
	}
	q := make([]string, len(docs))
	for i, d := range docs {
		q[i] = safetext.Quote(d)
	}
	return msg + "; they refer to " + joinMax(q, 10)
}

// digestFile is the digest of a regular file of at most max bytes.
func digestFile(path string, max int64) (string, int64, error) {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return "", 0, inputErr(path, errors.New(errText(err)))
	case !st.Mode().IsRegular():
		return "", 0, inputErr(path, errors.New("--from-file must be a regular file"))
	case st.Size() > max:
		return "", 0, inputErr(path, fmt.Errorf("%d bytes is more than --max-ref-bytes (%d)", st.Size(), max))
	}
	f, err := os.Open(path)
	if err != nil {
		return "", 0, inputErr(path, errors.New(errText(err)))
	}
	defer f.Close()
	sum, n, err := reffetch.DigestReader(f, max)
	if err != nil {
		return "", 0, inputErr(path, errors.New(strings.TrimSpace(errText(err))))
	}
	return sum, n, nil
}
