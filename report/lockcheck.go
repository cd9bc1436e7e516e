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
// versioned lock.CheckReportSchema), text and markdown (a summary line, a
// table of every server worst first, then the details of each server that
// is not clean, capped: renderLockCheckText), sarif (one run per server),
// or html (one page, a section per server). deltas holds each observed
// server's readable deltas, by server name (nil: none).
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
		return renderLockCheckText(w, r, deltas, format == "markdown", opt)
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
	if len(names) > 50 {
		return safetext.QuoteNames(names[:50]) + fmt.Sprintf(", and %d more", len(names)-50)
	}
	return safetext.QuoteNames(names)
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

// The caps of lock check's text and markdown without Options.Verbose:
// the details of at most maxDetailedServers servers that are not clean, at
// most maxDetailLines lines each. What is left out is counted where it
// would have been.
const (
	maxDetailedServers = 10
	maxDetailLines     = 40
)

// renderLockCheckText is lock check as text or markdown: the summary line,
// a table of the servers (worst first), then the details of each server
// that is not clean: why it was not observed, what the gateway would
// withhold, the tools to review, the readable delta of each change (text)
// and, when there is no delta to read, the gate report; capped. With
// opt.Verbose: every server, clean ones too, each with its delta and its
// gate report, uncapped.
//
// Every line is composed of escaped parts (Quote, QuoteASCII, Escape, and
// the run's own messages, which are escaped where they are made); put
// writes it inert, and in Markdown escapes its Markdown too, once: a tool
// name or a server's error message is never a link, an image or HTML in
// the report.
func renderLockCheckText(w io.Writer, r *lock.CheckReport, deltas map[string][]delta.Tool, md bool, opt Options) error {
	var b bytes.Buffer
	t := &textWriter{color: opt.Color && !md}
	head := fmt.Sprintf("mcpdrift lock check: %s, %d server(s): %d with findings, %d not observed, %d inconclusive, %d clean (exit %d)",
		safetext.Quote(r.Lock), len(r.Servers), r.Counts[lock.StatusFindings], r.Counts[lock.StatusNotObserved], r.Counts[lock.StatusInconclusive], r.Counts[lock.StatusClean], r.ExitCode)
	h1 := ""
	if md {
		h1 = "# "
	}
	putLine(t, md, h1, head)
	if r.Signed != "" {
		putLine(t, md, "", "signature: "+safetext.Escape(r.Signed))
	}
	t.line("")
	b.WriteString(t.b.String())
	b.WriteString(lockCheckTable(r, md))
	detailed, left := 0, 0
	for _, s := range r.Servers {
		if s.Status == lock.StatusClean && !opt.Verbose {
			continue
		}
		if detailed == maxDetailedServers && !opt.Verbose {
			left++
			continue
		}
		detailed++
		d, err := lockCheckDetails(s, deltas[s.Name], md, opt)
		if err != nil {
			return err
		}
		b.WriteString("\n")
		b.WriteString(d)
	}
	if left > 0 {
		t := &textWriter{}
		t.line("")
		putLine(t, md, "", fmt.Sprintf("… and the details of %d more servers that are not clean, left out (the table lists them; --verbose shows everything)", left))
		b.WriteString(t.b.String())
	}
	_, err := w.Write(b.Bytes())
	return err
}

// putLine writes an escaped line inert (text) or with its Markdown
// escaped (markdown).
func putLine(t *textWriter, md bool, prefix, line string) {
	if md {
		line = mdMsg(line)
	} else {
		line = safetext.Inert(line)
	}
	t.line("%s", prefix+line)
}

// lockCheckTable is the table of every server: status, name, tools
// observed, tools to review, and the target or why it was not observed.
func lockCheckTable(r *lock.CheckReport, md bool) string {
	rows := [][]string{{"STATUS", "SERVER", "TOOLS", "TO REVIEW", "DETAIL"}}
	for _, s := range r.Servers {
		tools := "-"
		if s.Gate != nil && s.Status != lock.StatusNotObserved {
			tools = fmt.Sprint(s.Gate.ObservedToolCount)
		}
		detail := safetext.Quote(s.Target)
		switch {
		case s.Error != "":
			detail = s.Error
		case s.Withheld:
			detail = "withheld: " + safetext.Escape(s.WithheldReason)
		case s.Target == "":
			detail = ""
		}
		rows = append(rows, []string{strings.ReplaceAll(s.Status, "_", " "), safetext.QuoteASCII(s.Name), tools, fmt.Sprint(len(s.Pending)), safetext.ClipEscaped(detail, 120)})
	}
	var b strings.Builder
	if md {
		for i, row := range rows {
			cells := make([]string, len(row))
			for j, c := range row {
				cells[j] = strings.ReplaceAll(mdMsg(strings.ToLower(c)), "|", `\|`)
				if i > 0 {
					cells[j] = strings.ReplaceAll(mdMsg(c), "|", `\|`)
				}
			}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
			if i == 0 {
				b.WriteString("|---|---|---:|---:|---|\n")
			}
		}
		return b.String()
	}
	width := make([]int, len(rows[0])-1)
	for _, row := range rows {
		for j := range width {
			width[j] = max(width[j], len(row[j]))
		}
	}
	for _, row := range rows {
		for j, c := range row[:len(row)-1] {
			b.WriteString(c + strings.Repeat(" ", width[j]-len(c)+2))
		}
		b.WriteString(safetext.Inert(row[len(row)-1]))
		b.WriteString("\n")
	}
	return b.String()
}

// lockCheckDetails are one server's details: its line, why it was not
// observed, what the gateway would withhold, the tools to review and to
// auto-approve, its readable delta (text) and, when it has no delta (or
// with opt.Verbose), its gate report; at most maxDetailLines lines unless
// opt.Verbose.
func lockCheckDetails(s *lock.ServerResult, deltas []delta.Tool, md bool, opt Options) (string, error) {
	t := &textWriter{color: opt.Color && !md}
	h2 := ""
	if md {
		h2 = "## "
	}
	line := fmt.Sprintf("%s %s: %s", statusMark(s.Status), safetext.QuoteASCII(s.Name), strings.ReplaceAll(s.Status, "_", " "))
	if s.Target != "" {
		line += " — " + safetext.Quote(s.Target)
	}
	line += " (profile " + safetext.Escape(s.Profile) + ")"
	putLine(t, md, h2, line)
	if s.Error != "" {
		putLine(t, md, "  ", "not observed: "+s.Error)
	}
	if s.Withheld {
		putLine(t, md, "  ", "the gateway would withhold this server: "+safetext.Escape(s.WithheldReason)+": "+s.WithheldDetail)
	}
	if len(s.Pending) > 0 {
		putLine(t, md, "  ", "to review: "+quoteNames(s.Pending)+fmt.Sprintf(" — mcpdrift review %s, or mcpdrift approve %s TOOL...", safetext.QuoteASCII(s.Name), safetext.QuoteASCII(s.Name)))
	}
	if len(s.AutoApprovable) > 0 {
		putLine(t, md, "  ", "notation only, auto-approved by the profile: "+quoteNames(s.AutoApprovable))
	}
	lockSurfaceLines(func(prefix, line string) { putLine(t, md, prefix, line) }, s.Name, s.Surface)
	var b strings.Builder
	b.WriteString(t.b.String())
	shown := len(deltas) > 0 && !md
	if shown {
		b.WriteString("\n")
		var db bytes.Buffer
		if err := RenderDelta(&db, deltas, opt); err != nil {
			return "", err
		}
		b.WriteString(indent(db.String(), "  "))
	}
	if s.Gate != nil && (s.Status != lock.StatusClean || opt.Verbose) && (!shown || opt.Verbose) {
		b.WriteString("\n")
		var gb bytes.Buffer
		format := "text"
		if md {
			format = "markdown"
		}
		if err := Render(&gb, s.Gate, format, opt); err != nil {
			return "", err
		}
		if md {
			b.Write(gb.Bytes())
		} else {
			b.WriteString(indent(gb.String(), "  "))
		}
	}
	if opt.Verbose {
		return b.String(), nil
	}
	return capLines(b.String(), maxDetailLines, s.Name, md), nil
}

// capLines keeps the first n lines of s, and says how many of server's
// lines were left out.
func capLines(s string, n int, server string, md bool) string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= n {
		return s
	}
	t := &textWriter{}
	putLine(t, md, "  ", fmt.Sprintf("… %d more lines of %s's details left out (--verbose shows everything)", len(lines)-n, safetext.QuoteASCII(server)))
	return strings.Join(lines[:n], "") + t.b.String()
}
