package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/lockrun"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// The reviewer's loop: review shows what changed, tool by tool, as the
// readable delta, and on a terminal asks for each (git add -p style);
// approve is the same approval for CI. Both write the served version of
// exactly the tools approved, and every notation-only change the
// server's profile auto-approves, recorded as such.

// reviewState is what review and approve read: the lock, the server's
// review (lockrun.Prepare) and the suppression file that acknowledges
// colliding names.
type reviewState struct {
	lf       *lockFile
	r        *lockrun.Review
	suppress *suppressionFlags
}

// reviewOptions are the options of the review of server name of the lock
// (opened for writing when write).
func reviewOptions(e *env, lockPath, name string, obs *observeFlags, write bool) (lockrun.ReviewOptions, *lockFile, error) {
	var opt lockrun.ReviewOptions
	c, err := loadClassifier(obs.rules)
	if err != nil {
		return opt, nil, err
	}
	var lf *lockFile
	if write {
		lf, err = openLockForWrite(e, lockPath, false)
	} else {
		lf, err = openLock(lockPath, false)
	}
	if err != nil {
		return opt, nil, err
	}
	s, err := lf.server(name)
	if err != nil {
		return opt, nil, err
	}
	base := obs.live()
	return lockrun.ReviewOptions{Server: s, Today: today(),
		ObserveOptions: lockrun.ObserveOptions{Connect: lockConnect(e, base), Classifier: c, Secrets: e.secrets, Timeout: base.timeout}}, lf, nil
}

func loadReview(e *env, lockPath, name string, obs *observeFlags, write bool) (*reviewState, error) {
	opt, lf, err := reviewOptions(e, lockPath, name, obs, write)
	if err != nil {
		return nil, err
	}
	r, err := lockrun.Prepare(e.context(), opt)
	if err != nil {
		return nil, err
	}
	return &reviewState{lf: lf, r: r, suppress: &obs.suppress}, nil
}

// vouch is the check of colliding names an approval makes.
func (st *reviewState) vouch(e *env) manifest.Vouch {
	return manifest.Vouch{Suppressions: func() (*manifest.Suppressions, error) { return st.suppress.load(e) }, Today: today()}
}

// said says on stderr what an approval did beside the tools named.
func said(e *env, a *lockrun.Applied) {
	for _, t := range a.AutoApproved {
		fmt.Fprintf(e.stderr, "mcpdrift: auto-approved %s: it validates the same (the profile's auto_approve: notation)\n", safetext.QuoteASCII(t))
	}
	for _, x := range a.Acknowledged {
		fmt.Fprintf(e.stderr, "mcpdrift: %s\n", x)
	}
	if a.IdentityMismatch != "" {
		fmt.Fprintf(e.stderr, "mcpdrift: warning: the identity tuple does not match the lock (%s): approve it with --identity once you have checked it\n", safetext.Inert(a.IdentityMismatch))
	}
}

// approveOptions are approve's flags.
type approveOptions struct {
	lockPath       string
	all, identity  bool
	reviewedDenied bool
	obs            observeFlags
	appr           approvalFlags
	sf             surfaceApproveFlags
}

func (o *approveOptions) AddFlags(cmd *cobra.Command) {
	registerLockPath(cmd, &o.lockPath)
	o.obs.AddFlags(cmd, 2*time.Minute)
	f := cmd.Flags()
	f.BoolVar(&o.all, "all", false, "approve every changed, added or removed tool")
	f.BoolVar(&o.identity, "identity", false, "accept the server's identity tuple as it is now")
	f.BoolVar(&o.reviewedDenied, "i-reviewed-the-denied-change", false, "approve a change the profile denies (explicit re-consent)")
	o.sf.AddFlags(f)
	o.appr.AddFlags(cmd)
}

func newApprove(e *env) *cobra.Command {
	o := &approveOptions{}
	cmd := &cobra.Command{
		Use:   "approve NAME (TOOL... | --all) [--instructions] [--prompt P]... [--template URI]... [--resource URI]... [--identity] [--note TEXT] [--by WHO] [--i-reviewed-the-denied-change]",
		Short: "Approve the served version of exactly the named tools of a server into the lock (the CI form of review)",
		Long: `Observes the server, and writes into the lock the version it serves now of exactly the tools
named (or of every changed tool with --all): a changed tool's new definition, an added tool, or the
removal of a tool it no longer serves. Each approval records who (--by, else git config user.email),
when and the note. A change the server's profile denies (for example schema drift under a stable
description, under fail-closed) also needs --i-reviewed-the-denied-change. Notation-only changes the
profile auto-approves are approved too, recorded as auto-approved. --identity accepts the identity
tuple the server has now (endpoint, name, version, env). --instructions, --prompt, --template and
--resource approve what the server puts before the model beside its tools, one at a time
(docs/surface.md); --all approves every changed item of it too. Nothing is written unless every
named tool and item can be approved.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageErr("approve takes the server's NAME, then the tools to approve (or --all)")
			}
			switch {
			case o.all && len(args) > 1:
				return usageErr("give tools or --all, not both")
			case o.all && !o.sf.empty():
				return usageErr("--all approves the changed surface too: give it without --instructions, --prompt, --template or --resource")
			case !o.all && len(args) == 1 && !o.identity && o.sf.empty():
				return usageErr("name the tools to approve, or give --all (every changed tool), --identity, --instructions, --prompt, --template or --resource")
			}
			a, err := o.appr.approval(e)
			if err != nil {
				return err
			}
			ropt, lf, err := reviewOptions(e, o.lockPath, args[0], &o.obs, true)
			if err != nil {
				return err
			}
			st := &reviewState{lf: lf, suppress: &o.obs.suppress}
			r, err := lockrun.Approve(e.context(), lockrun.ApproveOptions{ReviewOptions: ropt, Tools: args[1:], All: o.all, Surface: o.sf.refs(),
				Identity: o.identity, ReviewedDenied: o.reviewedDenied, Approval: a, Vouch: st.vouch(e)})
			if err != nil {
				return err
			}
			for _, n := range r.NotApproved {
				fmt.Fprintf(e.stderr, "mcpdrift: not approved: %s\n", n)
			}
			saySurfaceApproved(e, r.SurfaceApproved)
			said(e, &r.Applied)
			if r.Events == 0 {
				fmt.Fprintf(e.stderr, "mcpdrift: nothing to approve: the lock already holds what %s serves for those tools\n", safetext.Quote(args[0]))
				return nil
			}
			for _, t := range r.Approved {
				fmt.Fprintf(e.stderr, "mcpdrift: approved %s (%s)\n", safetext.QuoteASCII(t.Tool), t.Reason)
			}
			return lf.save(e)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// stdinTerminal says whether stdin is a terminal.
func stdinTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// reviewFlags are review's flags.
type reviewFlags struct {
	lockPath, color          string
	history, interactive, no bool
	obs                      observeFlags
	appr                     approvalFlags
}

func (o *reviewFlags) AddFlags(cmd *cobra.Command) {
	registerLockPath(cmd, &o.lockPath)
	o.obs.AddFlags(cmd, 2*time.Minute)
	f := cmd.Flags()
	f.BoolVar(&o.history, "history", false, "list the server's approvals, auto-approvals and other events")
	f.BoolVar(&o.interactive, "interactive", false, "ask for each tool even when stdin is not a terminal (answers read line by line)")
	f.BoolVar(&o.no, "no-prompt", false, "print the changes and ask nothing, even on a terminal")
	f.StringVar(&o.color, "color", "auto", "colour: auto|always|never")
	o.appr.AddFlags(cmd)
}

func newReview(e *env) *cobra.Command {
	o := &reviewFlags{}
	cmd := &cobra.Command{
		Use:   "review NAME [--history]",
		Short: "Show what changed on a server, tool by tool, in readable form; on a terminal, approve or skip each",
		Long: `Observes the server and shows, for every tool that changed, what it can now do that it could
not (new parameters with their descriptions and types, widened types and enums, dropped constraints,
required to optional, new external $refs), what it can no longer do, the description as a word
diff, changed hints, the severity and the decision of the server's profile.

On a terminal it asks for each tool, the way git add -p does: y approve, n skip, q quit (what was
approved so far is written), ? help. A change the profile denies asks once more. Only what was
approved is written, with the notation-only changes the profile auto-approves. Off a terminal it
prints the changes and writes nothing (exit 1 when a tool needs review, else 0); --interactive reads
the answers from stdin anyway. --history lists the server's approvals, auto-approvals included.

What the server puts before the model beside its tools (its instructions, prompts, resource
templates: docs/surface.md) is shown after the tools, each changed item with its word diffs, and
asked for the same way.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("review takes one NAME")
			}
			if err := checkColor(o.color); err != nil {
				return err
			}
			if o.history {
				lf, err := openLock(o.lockPath, false)
				if err != nil {
					return err
				}
				s, err := lf.server(args[0])
				if err != nil {
					return err
				}
				return e.emit("", historyText(s))
			}
			return o.review(e, args[0])
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// review shows what changed on server name; on a terminal (or with
// --interactive) it asks for each tool and writes what was approved.
func (o *reviewFlags) review(e *env, name string) error {
	ropt := report.Options{ToolVersion: version(), Color: useColor(e, "", o.color)}
	ask := !o.no && (o.interactive || stdinTerminal(e.stdin))
	var a lock.Approval
	if ask {
		var err error
		if a, err = o.appr.approval(e); err != nil {
			return err
		}
	}
	st, err := loadReview(e, o.lockPath, name, &o.obs, ask)
	if err != nil {
		return err
	}
	r := st.r
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s (%s), profile %s: %d tool(s) to review", safetext.QuoteASCII(r.Server.Name), safetext.Quote(r.Listing.Target), r.Server.Profile, len(r.Result.Pending))
	surfacePending := r.Result.Surface != nil && len(r.Result.Surface.Pending) > 0
	if surfacePending {
		fmt.Fprintf(&buf, ", and %d item(s) of the surface (instructions, prompts, resource templates)", len(r.Result.Surface.Pending))
	}
	if len(r.Result.AutoApprovable) > 0 {
		fmt.Fprintf(&buf, ", %d notation-only auto-approved by the profile", len(r.Result.AutoApprovable))
	}
	buf.WriteString("\n")
	if r.Result.Withheld {
		fmt.Fprintf(&buf, "the gateway would withhold this server: %s\n", safetext.Inert(r.Result.WithheldDetail))
	}
	if !ask {
		if len(r.Deltas) > 0 {
			buf.WriteString("\n")
			if err := report.RenderDelta(&buf, r.Deltas, ropt); err != nil {
				return err
			}
		}
		surfaceReview(&buf, r, ropt)
		if len(r.Result.Pending) > 0 || surfacePending {
			fmt.Fprintf(&buf, "\napprove with: mcpdrift approve %s TOOL... (--instructions, --prompt P, --template URI for the surface; or run review on a terminal)\n", safetext.QuoteASCII(r.Server.Name))
			e.code = ExitFindings
		}
		return e.emit("", buf.Bytes())
	}
	// Interactive: what is printed goes out as it is asked.
	e.stdout.Write(buf.Bytes())
	approved, srefs, err := askEach(e, r, ropt)
	if err != nil {
		return err
	}
	sev, err := r.ApplySurface(srefs, a)
	if err != nil {
		return err
	}
	saySurfaceApproved(e, sev)
	applied, err := r.Apply(approved, false, a, st.vouch(e))
	if err != nil {
		return err
	}
	said(e, applied)
	fmt.Fprintf(e.stdout, "approved %d, skipped %d\n", len(approved), len(r.Result.Pending)-len(approved))
	if applied.Events+len(sev) == 0 {
		return nil
	}
	return st.lf.save(e)
}

const reviewHelp = `y - approve this change (the served version goes into the lock)
n - skip it (the lock keeps what was approved before)
q - quit; the changes approved so far are written
? - this help
`

// askEach shows each pending tool's delta and asks, then each changed
// item of the surface; it returns the tools and the items approved.
func askEach(e *env, st *lockrun.Review, ropt report.Options) ([]string, []lock.SurfaceRef, error) {
	in := bufio.NewReader(io.LimitReader(e.stdin, 1<<20))
	var approved []string
	byName := map[string]delta.Tool{}
	for _, d := range st.Deltas {
		byName[d.Name] = d
	}
	total := len(st.Result.Pending)
	for i, name := range st.Result.Pending {
		if note, byRefs := lockrun.RefOnly(st.Server, st.Decisions[name]); byRefs {
			// Nothing to approve: what decides it is a document to pin.
			fmt.Fprintf(e.stdout, "\n(%d/%d) %s (not asked: an approval cannot change it)\n", i+1, total, note)
			continue
		}
		var db bytes.Buffer
		if d, ok := byName[name]; ok {
			if err := report.RenderDelta(&db, []delta.Tool{d}, ropt); err != nil {
				return nil, nil, err
			}
		} else {
			fmt.Fprintf(&db, "%s: %s\n", safetext.QuoteASCII(name), st.Decisions[name].Reason)
		}
		fmt.Fprintf(e.stdout, "\n(%d/%d) ", i+1, total)
		e.stdout.Write(db.Bytes())
	ask:
		for {
			fmt.Fprintf(e.stdout, "(%d/%d) Approve this change to %s [y,n,q,?]? ", i+1, total, safetext.QuoteASCII(name))
			ans, err := readAnswer(in)
			if err != nil {
				fmt.Fprintln(e.stdout)
				return approved, nil, nil // end of input: quit, keeping what was approved
			}
			switch ans {
			case "y", "yes":
				if d := st.Decisions[name]; d.Decision == decide.Deny {
					fmt.Fprintf(e.stdout, "The %s profile denies this change (denied by %s). Type yes to approve it anyway: ", st.Server.Profile, safetext.Escape(strings.Join(d.DeniedBy, ", ")))
					if again, err := readAnswer(in); err != nil || again != "yes" {
						fmt.Fprintln(e.stdout, "not approved")
						break ask
					}
				}
				approved = append(approved, name)
				break ask
			case "n", "no":
				break ask
			case "q", "quit":
				return approved, nil, nil
			default:
				io.WriteString(e.stdout, reviewHelp)
			}
		}
	}
	srefs, _ := askSurface(e, st, in, ropt)
	return approved, srefs, nil
}

func readAnswer(in *bufio.Reader) (string, error) {
	line, err := in.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.ToLower(strings.TrimSpace(line)), nil
}

// historyText lists a server's history, oldest first.
func historyText(s *lock.Server) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "history of %s (%d events)\n", safetext.QuoteASCII(s.Name), len(s.History))
	for _, ev := range s.History {
		fmt.Fprintf(&b, "%s  %-17s", safetext.Escape(ev.At), safetext.Escape(ev.Action))
		switch {
		case ev.Kind != "":
			fmt.Fprintf(&b, " %s", lock.SurfaceRef{Kind: ev.Kind, Key: ev.Tool}.Label())
		case ev.Tool != "":
			fmt.Fprintf(&b, " %s", safetext.QuoteASCII(ev.Tool))
		}
		switch {
		case ev.From != "" && ev.To != "":
			fmt.Fprintf(&b, " %s -> %s", shortDigest(ev.From), shortDigest(ev.To))
		case ev.To != "":
			fmt.Fprintf(&b, " -> %s", shortDigest(ev.To))
		case ev.From != "":
			fmt.Fprintf(&b, " %s ->", shortDigest(ev.From))
		}
		fmt.Fprintf(&b, " by %s", safetext.Quote(ev.By))
		if ev.Reason != "" {
			fmt.Fprintf(&b, " [%s]", safetext.Inert(ev.Reason))
		}
		if ev.Note != "" {
			fmt.Fprintf(&b, ": %s", safetext.Quote(ev.Note))
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

func shortDigest(d string) string {
	d = safetext.Escape(d)
	if len(d) > 19 {
		return d[:19]
	}
	return d
}
