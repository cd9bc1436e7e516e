// Package docs_test holds the test that the documentation's relative
// links resolve: README.md and every Markdown page under docs/.
package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestRelativeLinksResolve: every relative link of README.md and of the
// Markdown pages under docs/ names a file or directory of the repository,
// and a link with a fragment into a Markdown page names one of its
// headings (as GitHub makes their anchors).
func TestRelativeLinksResolve(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	pages := []string{filepath.Join(root, "README.md")}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 10 {
		t.Fatalf("found only %d pages under %s: the docs moved?", len(pages), root)
	}
	links := 0
	for _, p := range pages {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range pageLinks(string(text)) {
			links++
			if problem := checkLink(root, p, l.target); problem != "" {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s:%d: link %q: %s", rel, l.line, l.target, problem)
			}
		}
	}
	if links < 100 {
		t.Errorf("only %d relative links in %d pages: the link reader is broken?", links, len(pages))
	}
}

// TestCheckLinkFindsBrokenOnes holds the checker to failing: a missing
// file, a missing heading, a link out of the repository.
func TestCheckLinkFindsBrokenOnes(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(root, "docs", "a.md")
	body := "# The `lock` (a file)\n\n## Settings: `MCPDRIFT_<FLAG>` and `mcpdrift.yaml`\n\n## Twice\n\n## Twice\n\n" +
		"```\n# not a heading\n[not a link](nowhere.md)\n```\n\n" +
		"[ok](a.md#the-lock-a-file) [ok](#settings-mcpdrift_flag-and-mcpdriftyaml) [ok](#twice-1) " +
		"[ok](../docs/) `[code](nowhere.md)` [web](https://example.com/x)\n" +
		"[gone](b.md) [no heading](a.md#nope) [out](../../etc/passwd) [no heading](#not-a-heading)\n"
	if err := os.WriteFile(page, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range pageLinks(body) {
		if p := checkLink(root, page, l.target); p != "" {
			got = append(got, l.target)
		}
	}
	want := []string{"b.md", "a.md#nope", "../../etc/passwd", "#not-a-heading"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("broken links found %q, want %q", got, want)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Settings: `MCPDRIFT_<FLAG>` and `mcpdrift.yaml`":          "settings-mcpdrift_flag-and-mcpdriftyaml",
		"The gateway's JSON-RPC errors":                            "the-gateways-json-rpc-errors",
		"`mcpdrift history` and the store":                         "mcpdrift-history-and-the-store",
		"The readable delta and the HTML report (`--format html`)": "the-readable-delta-and-the-html-report---format-html",
		"Redesign against the previous head":                       "redesign-against-the-previous-head",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

type link struct {
	target string
	line   int
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	scheme     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// pageLinks returns the relative links of a Markdown page, outside fenced
// code blocks and code spans.
func pageLinks(text string) []link {
	var out []link
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		if f := fenceOf(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence):
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, tg := range targets {
			tg = strings.Trim(tg, "<>")
			if scheme.MatchString(tg) {
				continue
			}
			out = append(out, link{target: tg, line: i + 1})
		}
	}
	return out
}

// fenceOf is the fence a line opens or closes (``` or ~~~, at least
// three), or "".
func fenceOf(line string) string {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return ""
	}
	for _, c := range []string{"`", "~"} {
		n := len(s) - len(strings.TrimLeft(s, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// checkLink says what is wrong with a relative link of page, or "".
func checkLink(root, page, target string) string {
	path, frag, _ := strings.Cut(target, "#")
	file := page
	if path != "" {
		file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
		rel, err := filepath.Rel(root, file)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "points out of the repository"
		}
		if _, err := os.Stat(file); err != nil {
			return "no such file or directory"
		}
	}
	if frag == "" || !strings.HasSuffix(file, ".md") {
		return ""
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	if !anchors(string(text))[frag] {
		return "no heading with that anchor"
	}
	return ""
}

var htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)

// anchors are the fragments a Markdown page answers to: its headings'
// anchors as GitHub makes them (a repeated one gets -1, -2, ...) and
// explicit <a name|id> anchors.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		if f := fenceOf(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence):
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		h := strings.TrimLeft(line, "#")
		if n := len(line) - len(h); n == 0 || n > 6 || !strings.HasPrefix(h, " ") {
			continue
		}
		s := slug(strings.TrimSpace(h))
		if k := seen[s]; k > 0 {
			out[fmt.Sprintf("%s-%d", s, k)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// slug is GitHub's anchor of a heading: lower case, letters, digits, '_'
// and '-' kept, a space made '-', everything else dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '_', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
