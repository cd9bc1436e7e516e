package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// LockCheckFormats lists the formats of RenderLockCheck.
func LockCheckFormats() []string { return []string{"json", "text", "sarif", "markdown", "html"} }

// RenderLockCheck writes the report of mcpdrift lock check: json (the
// versioned lock.CheckReportSchema), text (a summary line, then each
// server worst first with the readable delta of every tool that changed
// and its gate report), sarif (one run per server), markdown, or html
// (one page, a section per server). deltas holds each observed server's
// readable deltas, by server name (nil: none).
func RenderLockCheck(w io.Writer, r *lock.CheckReport, deltas map[string][]delta.Tool, format string, opt Options) error {
	switch format {
	case "json":
		return writeJSON(w, r)
	case "sarif":
		runs := make([]sarifRun, 0, len(r.Servers))
		for _, s := range r.Servers {
			if s.Gate == nil {
				continue
			}
			run := gateSARIFRunWith(s.Gate, s.Surface, opt)
			if s.Status == lock.StatusNotObserved {
				run.Invocations[0].ExecutionSuccessful = false
				run.Invocations[0].ToolExecutionNotifications = []sarifNotification{{Level: "error", Message: sarifMessage{Text: sarifMsg(s.Error)}}}
			}
			runs = append(runs, run)
		}
		return writeSARIFLog(w, runs...)
	case "html":
		p := &Page{Title: "mcpdrift lock check", ToolVersion: opt.ToolVersion}
		for _, s := range r.Servers {
			if s.Gate == nil {
				continue
			}
			p.Sections = append(p.Sections, GateSection(s.Gate, deltas[s.Name]).ForServer(s.Name))
		}
		return RenderHTML(w, p)
	case "text", "markdown":
		var b bytes.Buffer
		md := format == "markdown"
		t := &textWriter{color: opt.Color && !md}
		head := fmt.Sprintf("mcpdrift lock check: %s, %d server(s): %d with findings, %d not observed, %d inconclusive, %d clean (exit %d)",
			safetext.Quote(r.Lock), len(r.Servers), r.Counts[lock.StatusFindings], r.Counts[lock.StatusNotObserved], r.Counts[lock.StatusInconclusive], r.Counts[lock.StatusClean], r.ExitCode)
		// Every line is composed of escaped parts (Quote, QuoteASCII,
		// Escape, and the run's own messages, which are escaped where
		// they are made); put writes it inert, and in Markdown escapes
		// its Markdown too, once: a tool name or a server's error
		// message is never a link, an image or HTML in the report.
		put := func(t *textWriter, prefix, line string) {
			if md {
				line = mdMsg(line)
			} else {
				line = safetext.Inert(line)
			}
			t.line("%s", prefix+line)
		}
		h1, h2 := "", ""
		if md {
			h1, h2 = "# ", "## "
		}
		put(t, h1, head)
		if r.Signed != "" {
			put(t, "", "signature: "+safetext.Escape(r.Signed))
		}
		b.WriteString(t.b.String())
		for _, s := range r.Servers {
			t := &textWriter{color: opt.Color && !md}
			t.line("")
			line := fmt.Sprintf("%s %s: %s", statusMark(s.Status), safetext.QuoteASCII(s.Name), strings.ReplaceAll(s.Status, "_", " "))
			if s.Target != "" {
				line += " — " + safetext.Quote(s.Target)
			}
			line += " (profile " + safetext.Escape(s.Profile) + ")"
			put(t, h2, line)
			if s.Error != "" {
				put(t, "  ", "not observed: "+s.Error)
			}
			if s.Withheld {
				put(t, "  ", "the gateway would withhold this server: "+safetext.Escape(s.WithheldReason)+": "+s.WithheldDetail)
			}
			if len(s.Pending) > 0 {
				put(t, "  ", "to review: "+quoteNames(s.Pending)+fmt.Sprintf(" — mcpdrift review %s, or mcpdrift approve %s TOOL...", safetext.QuoteASCII(s.Name), safetext.QuoteASCII(s.Name)))
			}
			if len(s.AutoApprovable) > 0 {
				put(t, "  ", "notation only, auto-approved by the profile: "+quoteNames(s.AutoApprovable))
			}
			lockSurfaceLines(func(prefix, line string) { put(t, prefix, line) }, s.Name, s.Surface)
			b.WriteString(t.b.String())
			if d := deltas[s.Name]; len(d) > 0 && !md {
				b.WriteString("\n")
				var db bytes.Buffer
				if err := RenderDelta(&db, d, opt); err != nil {
					return err
				}
				b.WriteString(indent(db.String(), "  "))
			}
			if s.Gate != nil && s.Status != lock.StatusClean {
				b.WriteString("\n")
				var gb bytes.Buffer
				if err := Render(&gb, s.Gate, format, opt); err != nil {
					return err
				}
				if md {
					b.Write(gb.Bytes())
				} else {
					b.WriteString(indent(gb.String(), "  "))
				}
			}
		}
		_, err := w.Write(b.Bytes())
		return err
	}
	return fmt.Errorf("unknown lock check format %s (known: %s)", safetext.Quote(format), strings.Join(LockCheckFormats(), ", "))
}

func statusMark(status string) string {
	switch status {
	case lock.StatusClean:
		return "ok"
	case lock.StatusFindings:
		return "FAIL"
	}
	return "??"
}

func quoteNames(names []string) string {
	q := make([]string, 0, len(names))
	for i, n := range names {
		if i == 50 {
			q = append(q, fmt.Sprintf("and %d more", len(names)-50))
			break
		}
		q = append(q, safetext.QuoteASCII(n))
	}
	return strings.Join(q, ", ")
}

func indent(s, pre string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l == "" {
			continue
		}
		if l != "\n" {
			b.WriteString(pre)
		}
		b.WriteString(l)
	}
	return b.String()
}
