//go:build unix

package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
)

// goal is issue 31's bound on the new build against the old at a size:
// within 1.10x at up to 1,000 tools, 1.5x at 10,000, 3x beyond (or
// refused by a documented bound).
func goal(size int) float64 {
	switch {
	case size <= 1000:
		return 1.10
	case size <= 10000:
		return 1.5
	}
	return 3
}

// render is the table of rows, in Markdown.
func render(o options, old build, rows []row, inspector bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpdrift built from %s (old) and from the working tree (new), %s, %s/%s, %d CPUs; %s\n\n",
		old.name, time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(&b, "Each cell: median [min–max] of %d runs (%d at 100,000 tools and more), the builds in turn; a ratio is new/old, the median of the runs paired. Wall and CPU time and peak resident memory are each command's own process's. Within: CPU time and peak memory within the goal (wall time is shown, but on a shared machine it moves with the load more than with the build).\n\n", o.n, o.nLarge)
	b.WriteString("| tools | command | old wall s | new wall s | wall new/old | cpu new/old | old peak MiB | new peak MiB | peak new/old | goal | within |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	pins := map[int][]sample{}
	for _, r := range rows {
		if r.op == "inspector" {
			continue
		}
		if r.op == "pin" {
			pins[r.size] = r.samples[1]
		}
		old, neu := r.samples[0], r.samples[1]
		wall := pairRatio(old, neu, func(s sample) float64 { return s.wall.Seconds() })
		cpu := pairRatio(old, neu, func(s sample) float64 { return s.cpu.Seconds() })
		peak := pairRatio(old, neu, func(s sample) float64 { return float64(s.peakKiB) })
		g := goal(r.size)
		within := "yes"
		switch {
		case failedAll(neu):
			within = "refused: " + firstFailure(neu)
		case failedAll(old) || cpu == 0 || peak == 0:
			within = "—"
		case cpu > g || peak > g:
			within = "no"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | ≤ %.2f× | %s |\n", thousands(r.size), commandLabel(r),
			cell(old, wallOf), cell(neu, wallOf), ratio(wall), ratio(cpu), cell(old, peakOf), cell(neu, peakOf), ratio(peak), g, within)
	}
	if inspector {
		b.WriteString("\nThe MCP Inspector's CLI listing the same tools from the live server (`--cli URL --method tools/list`: every page, at most 64, so larger pages where the list needs more), against the new build's `pin --url`:\n\n")
		b.WriteString("| tools | Inspector wall s | Inspector peak MiB | new pin wall s | Inspector/pin | goal | within |\n")
		b.WriteString("|---:|---:|---:|---:|---:|---:|---|\n")
		for _, r := range rows {
			if r.op != "inspector" {
				continue
			}
			x := ratioOfMedians(r.samples[0], pins[r.size], wallOf)
			within := "—"
			if x > 0 {
				within = yesNo(x >= 5)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | ≥ 5× | %s |\n", thousands(r.size), cell(r.samples[0], wallOf), cell(r.samples[0], peakOf),
				cell(pins[r.size], wallOf), ratio(x), within)
		}
	}
	fmt.Fprintf(&b, "\nRerun: `go run ./scripts/benchhouse -ref %s -n %d -n-large %d`\n", o.ref, o.n, o.nLarge)
	return b.String()
}

func commandLabel(r row) string {
	if r.note != "" {
		return r.op + " (" + r.note + ")"
	}
	return r.op
}

func wallOf(s sample) float64 { return s.wall.Seconds() }
func peakOf(s sample) float64 { return float64(s.peakKiB) / 1024 }

// cell is the median [min–max] of what f reads from the samples that
// finished, or why none did.
func cell(ss []sample, f func(sample) float64) string {
	v := values(ss, f)
	if len(v) == 0 {
		if len(ss) == 0 {
			return "—"
		}
		return "failed"
	}
	med := median(v)
	if len(v) == 1 {
		return format(med)
	}
	return fmt.Sprintf("%s [%s–%s]", format(med), format(v[0]), format(v[len(v)-1]))
}

func values(ss []sample, f func(sample) float64) []float64 {
	var v []float64
	for _, s := range ss {
		if s.failed == "" {
			v = append(v, f(s))
		}
	}
	slices.Sort(v)
	return v
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// pairRatio is the median of new/old over the runs paired (the i-th of
// each), both finished; 0 when no pair did.
func pairRatio(old, neu []sample, f func(sample) float64) float64 {
	var r []float64
	for i := range min(len(old), len(neu)) {
		if old[i].failed == "" && neu[i].failed == "" && f(old[i]) > 0 {
			r = append(r, f(neu[i])/f(old[i]))
		}
	}
	slices.Sort(r)
	return median(r)
}

func ratioOfMedians(a, b []sample, f func(sample) float64) float64 {
	ma, mb := median(values(a, f)), median(values(b, f))
	if ma == 0 || mb == 0 {
		return 0
	}
	return ma / mb
}

func failedAll(ss []sample) bool {
	for _, s := range ss {
		if s.failed == "" {
			return false
		}
	}
	return len(ss) > 0
}

func firstFailure(ss []sample) string {
	for _, s := range ss {
		if s.failed != "" {
			return strings.ReplaceAll(s.failed, "|", "/")
		}
	}
	return ""
}

func ratio(x float64) string {
	if x == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", x)
}

func format(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
