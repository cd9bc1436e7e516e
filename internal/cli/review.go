package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// The reviewer's loop: review shows what changed, tool by tool, as the
// readable delta, and on a terminal asks for each (git add -p style);
// approve is the same approval for CI. Both write the served version of
// exactly the tools approved, and every notation-only change the
// server's profile auto-approves, recorded as such.

// reviewState is what review and approve read: the lock, the server, its
// observation and the decision of its profile on every tool.
type reviewState struct {
	lf        *lockFile
	s         *lock.Server
	o         *observation
	res       *lock.ServerResult
	decisions map[string]decide.Tool
	deltas    []delta.Tool
	// classifierRules are the --rules the approvals classify with.
	classifierRules string
	// suppress is the suppression file that acknowledges colliding names.
	suppress *suppressionFlags
}

func loadReview(e *env, lockPath, name string, obs *observeFlags, write bool) (*reviewState, error) {
	c, err := loadClassifier(obs.rules)
	if err != nil {
		return nil, err
	}
	var lf *lockFile
	if write {
		lf, err = openLockForWrite(e, lockPath, false)
	} else {
		lf, err = openLock(lockPath, false)
	}
	if err != nil {
		return nil, err
	}
	s, err := lf.server(name)
	if err != nil {
		return nil, err
	}
	o, err := observeSource(e.context(), e, obs.live(), s.Name, s.Source, s.ClientCapabilities, s.Identity.PublisherKey, c, nil, surfaceOptionsFor(s.Surface))
	if err != nil {
		return nil, err
	}
	if err := o.complete(); err != nil {
		return nil, err
	}
	res, err := s.Check(o.served, lock.CheckOptions{Classifier: c, Today: today()})
	if err != nil {
		return nil, usageErr("%s", safetext.Inert(err.Error()))
	}
	res.Target = o.target
	// The check's own decisions: each tool's is made once.
	st := &reviewState{lf: lf, s: s, o: o, res: res, decisions: map[string]decide.Tool{}, classifierRules: obs.rules, suppress: &obs.suppress}
	for _, d := range res.Decisions {
		st.decisions[d.Name] = d
	}
	st.deltas = changedDeltas(delta.Build(s.ToolValues(), o.served.Tools, res.Gate.StructuralChanges, res.Gate.Tools))
	return st, nil
}

// apply approves names (by the reviewer) and the auto-approvable tools
// (by the profile), and the identity when asked; it returns how many
// events it recorded.
func (st *reviewState) apply(e *env, names []string, identity bool, a lock.Approval) (int, error) {
	c, err := loadClassifier(st.classifierRules)
	if err != nil {
		return 0, err
	}
	served := st.o.served.Tools
	ev, err := st.s.Approve(served, names, a, c, "")
	if err != nil {
		return 0, usageErr("%s", safetext.Inert(err.Error()))
	}
	n := len(ev)
	auto := slices.DeleteFunc(slices.Clone(st.res.AutoApprovable), func(x string) bool { return slices.Contains(names, x) })
	if len(auto) > 0 {
		ev2, err := st.s.Approve(served, auto, a, c, lock.AutoNotation)
		if err != nil {
			return 0, usageErr("%s", safetext.Inert(err.Error()))
		}
		for _, x := range ev2 {
			fmt.Fprintf(e.stderr, "mcpdrift: auto-approved %s: it validates the same (the profile's auto_approve: notation)\n", safetext.QuoteASCII(x.Tool))
		}
		n += len(ev2)
	}
	// The lock vouches for the approved names from now on: refused when
	// they collide, unless acknowledged (nothing is written then).
	if err := e.vouchNames("approve "+quoteNames(names)+" of "+safetext.Quote(st.s.Name), lockToolNames(st.s), []string{st.s.Name, st.o.target}, st.suppress, append(slices.Clone(names), auto...)...); err != nil {
		return 0, err
	}
	if identity {
		st.s.ApproveIdentity(st.o.served.Identity, a)
		n++
	} else if st.res.Withheld && st.res.WithheldReason == decide.ReasonIdentityMismatch {
		fmt.Fprintf(e.stderr, "mcpdrift: warning: the identity tuple does not match the lock (%s): approve it with --identity once you have checked it\n", safetext.Inert(st.res.WithheldDetail))
	}
	return n, nil
}

func newApprove(e *env) *cobra.Command {
	var (
		lockPath       string
		all, identity  bool
		reviewedDenied bool
		obs            observeFlags
		appr           approvalFlags
		sf             surfaceApproveFlags
	)
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
			name, tools := args[0], args[1:]
			switch {
			case all && len(tools) > 0:
				return usageErr("give tools or --all, not both")
			case all && !sf.empty():
				return usageErr("--all approves the changed surface too: give it without --instructions, --prompt, --template or --resource")
			case !all && len(tools) == 0 && !identity && sf.empty():
				return usageErr("name the tools to approve, or give --all (every changed tool), --identity, --instructions, --prompt, --template or --resource")
			}
			a, err := appr.approval(e)
			if err != nil {
				return err
			}
			st, err := loadReview(e, lockPath, name, &obs, true)
			if err != nil {
				return err
			}
			if all {
				tools = slices.Clone(st.res.Pending)
			}
			var denied, unknown, refs []string
			for _, t := range tools {
				d, ok := st.decisions[t]
				note, byRefs := refOnly(st.s, d)
				switch {
				case !ok:
					unknown = append(unknown, t)
				case byRefs:
					refs = append(refs, note)
				case d.Decision == decide.Deny && !reviewedDenied:
					denied = append(denied, fmt.Sprintf("%s (denied by %s)", safetext.QuoteASCII(t), safetext.Escape(strings.Join(d.DeniedBy, ", "))))
				}
			}
			if len(unknown) > 0 {
				return usageErr("not served by %s and not in the lock: %s (nothing was approved)", safetext.Quote(name), quoteList(unknown))
			}
			if len(refs) > 0 && !all {
				return usageErr("%s; an approval cannot change that (nothing was approved)", strings.Join(refs, "; "))
			}
			for _, r := range refs {
				fmt.Fprintf(e.stderr, "mcpdrift: not approved: %s\n", r)
			}
			tools = slices.DeleteFunc(tools, func(t string) bool { _, byRefs := refOnly(st.s, st.decisions[t]); return byRefs })
			srefs := sf.refs(all, st)
			if !reviewedDenied {
				denied = append(denied, surfaceDenied(st, srefs)...)
			}
			if len(denied) > 0 {
				return usageErr("the %s profile denies the change of %s: read it (mcpdrift review %s) and approve with --i-reviewed-the-denied-change (nothing was approved)", st.s.Profile, strings.Join(denied, ", "), safetext.QuoteASCII(name))
			}
			m, err := st.applySurface(e, srefs, a)
			if err != nil {
				return err
			}
			n, err := st.apply(e, tools, identity, a)
			if err != nil {
				return err
			}
			n += m
			if n == 0 {
				fmt.Fprintf(e.stderr, "mcpdrift: nothing to approve: the lock already holds what %s serves for those tools\n", safetext.Quote(name))
				return nil
			}
			for _, t := range tools {
				if d := st.decisions[t]; d.Reason != decide.ReasonUnchanged {
					fmt.Fprintf(e.stderr, "mcpdrift: approved %s (%s)\n", safetext.QuoteASCII(t), d.Reason)
				}
			}
			return st.lf.save(e)
		},
	}
	registerLockPath(cmd, &lockPath)
	obs.register(cmd, 2*time.Minute)
	f := cmd.Flags()
	f.BoolVar(&all, "all", false, "approve every changed, added or removed tool")
	f.BoolVar(&identity, "identity", false, "accept the server's identity tuple as it is now")
	f.BoolVar(&reviewedDenied, "i-reviewed-the-denied-change", false, "approve a change the profile denies (explicit re-consent)")
	sf.register(f)
	appr.register(cmd)
	return cmd
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = safetext.QuoteASCII(x)
	}
	return strings.Join(q, ", ")
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

func newReview(e *env) *cobra.Command {
	var (
		lockPath, color          string
		history, interactive, no bool
		obs                      observeFlags
		appr                     approvalFlags
	)
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
			if color != "auto" && color != "always" && color != "never" {
				return usageErr("--color must be auto, always or never")
			}
			ropt := report.Options{ToolVersion: version(), Color: useColor(e, "", color)}
			if history {
				lf, err := openLock(lockPath, false)
				if err != nil {
					return err
				}
				s, err := lf.server(args[0])
				if err != nil {
					return err
				}
				return e.emit("", historyText(s))
			}
			ask := !no && (interactive || stdinTerminal(e.stdin))
			var a lock.Approval
			if ask {
				var err error
				if a, err = appr.approval(e); err != nil {
					return err
				}
			}
			st, err := loadReview(e, lockPath, args[0], &obs, ask)
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			fmt.Fprintf(&buf, "%s (%s), profile %s: %d tool(s) to review", safetext.QuoteASCII(st.s.Name), safetext.Quote(st.o.target), st.s.Profile, len(st.res.Pending))
			if st.res.Surface != nil && len(st.res.Surface.Pending) > 0 {
				fmt.Fprintf(&buf, ", and %d item(s) of the surface (instructions, prompts, resource templates)", len(st.res.Surface.Pending))
			}
			if len(st.res.AutoApprovable) > 0 {
				fmt.Fprintf(&buf, ", %d notation-only auto-approved by the profile", len(st.res.AutoApprovable))
			}
			buf.WriteString("\n")
			if st.res.Withheld {
				fmt.Fprintf(&buf, "the gateway would withhold this server: %s\n", safetext.Inert(st.res.WithheldDetail))
			}
			if !ask {
				if len(st.deltas) > 0 {
					buf.WriteString("\n")
					if err := report.RenderDelta(&buf, st.deltas, ropt); err != nil {
						return err
					}
				}
				surfaceReview(&buf, st, ropt)
				if len(st.res.Pending) > 0 || st.res.Surface != nil && len(st.res.Surface.Pending) > 0 {
					fmt.Fprintf(&buf, "\napprove with: mcpdrift approve %s TOOL... (--instructions, --prompt P, --template URI for the surface; or run review on a terminal)\n", safetext.QuoteASCII(st.s.Name))
					e.code = ExitFindings
				}
				return e.emit("", buf.Bytes())
			}
			// Interactive: what is printed goes out as it is asked.
			e.stdout.Write(buf.Bytes())
			approved, srefs, err := askEach(e, st, ropt)
			if err != nil {
				return err
			}
			m, err := st.applySurface(e, srefs, a)
			if err != nil {
				return err
			}
			n, err := st.apply(e, approved, false, a)
			if err != nil {
				return err
			}
			n += m
			fmt.Fprintf(e.stdout, "approved %d, skipped %d\n", len(approved), len(st.res.Pending)-len(approved))
			if n == 0 {
				return nil
			}
			return st.lf.save(e)
		},
	}
	registerLockPath(cmd, &lockPath)
	obs.register(cmd, 2*time.Minute)
	f := cmd.Flags()
	f.BoolVar(&history, "history", false, "list the server's approvals, auto-approvals and other events")
	f.BoolVar(&interactive, "interactive", false, "ask for each tool even when stdin is not a terminal (answers read line by line)")
	f.BoolVar(&no, "no-prompt", false, "print the changes and ask nothing, even on a terminal")
	f.StringVar(&color, "color", "auto", "colour: auto|always|never")
	appr.register(cmd)
	return cmd
}

const reviewHelp = `y - approve this change (the served version goes into the lock)
n - skip it (the lock keeps what was approved before)
q - quit; the changes approved so far are written
? - this help
`

// askEach shows each pending tool's delta and asks, then each changed
// item of the surface; it returns the tools and the items approved.
func askEach(e *env, st *reviewState, ropt report.Options) ([]string, []lock.SurfaceRef, error) {
	in := bufio.NewReader(io.LimitReader(e.stdin, 1<<20))
	var approved []string
	byName := map[string]delta.Tool{}
	for _, d := range st.deltas {
		byName[d.Name] = d
	}
	total := len(st.res.Pending)
	for i, name := range st.res.Pending {
		if note, byRefs := refOnly(st.s, st.decisions[name]); byRefs {
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
			fmt.Fprintf(&db, "%s: %s\n", safetext.QuoteASCII(name), st.decisions[name].Reason)
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
				if d := st.decisions[name]; d.Decision == decide.Deny {
					fmt.Fprintf(e.stdout, "The %s profile denies this change (denied by %s). Type yes to approve it anyway: ", st.s.Profile, safetext.Escape(strings.Join(d.DeniedBy, ", ")))
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
