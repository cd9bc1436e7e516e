package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// htmlInjections are what a server can put in any text the page shows: a
// script, an image whose onerror runs one, a javascript: link and URL,
// style injection that would hide the page or load from elsewhere, an
// element that closes the page's own and loads a frame, a meta refresh,
// entities and template syntax, bidi, zero-width and tag characters, and
// terminal controls. Each script sets window.__mcpdriftPwned, which the
// browser test checks stays undefined.
var htmlInjections = []string{
	`<script>window.__mcpdriftPwned="script"</script>`,
	`<img src=x onerror="window.__mcpdriftPwned='img'">`,
	`<a href="javascript:window.__mcpdriftPwned='link'">click me</a>`,
	`javascript:window.__mcpdriftPwned='url'`,
	`</style><style>*{display:none}body{background:url(http://127.0.0.1:9/x.png)}</style>`,
	`<svg onload="window.__mcpdriftPwned='svg'"></svg>`,
	`</code></details></section><iframe src="http://127.0.0.1:9/frame"></iframe>`,
	`"><meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/">`,
	`{{.}} &lt;b&gt; &#60;script&#62; <!-- -->`,
	"bidi\u202egnp.exe\u2066iso\u2069 zero\u200bwidth\ufeff tag\U000E0041",
	"ansi\x1b[2J\r\nnext line",
}

// jsonText is s as the inside of a JSON string, <, > and & as written.
func jsonText(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// hostileLists are two tool lists with every injection in every text the
// readable delta shows: tool names, descriptions (changed, and a new
// tool's), parameter names, titles and descriptions, a hint that is not a
// boolean, an external $ref, an enum value.
func hostileLists(t testing.TB) (old, nw []manifest.Tool) {
	t.Helper()
	var o, n []string
	for i, s := range htmlInjections {
		q := jsonText(t, s)
		name := `t` + string(rune('a'+i)) + q
		o = append(o, `{"name":"`+name+`","description":"approved text","annotations":{"readOnlyHint":true,"destructiveHint":false},
		 "inputSchema":{"type":"object","properties":{"p":{"type":"string","description":"approved","enum":["a"]}}}}`)
		n = append(n, `{"name":"`+name+`","description":"approved text `+q+`","title":"`+q+`","annotations":{"readOnlyHint":"`+q+`","destructiveHint":true},
		 "inputSchema":{"type":"object","properties":{"p":{"type":"string","description":"`+q+`","enum":["a","`+q+`"]},
		  "n`+q+`":{"type":"string","title":"`+q+`","description":"`+q+`"},"r":{"$ref":"https://x.example/`+q+`"}}}}`,
			`{"name":"new`+string(rune('a'+i))+q+`","description":"`+q+`","inputSchema":{"type":"object","properties":{"`+q+`":{"type":"string","description":"`+q+`"}}}}`)
	}
	parse := func(items []string) []manifest.Tool {
		tl, err := manifest.ParseToolList([]byte("[" + strings.Join(items, ",") + "]"))
		if err != nil {
			t.Fatal(err)
		}
		return tl.Tools
	}
	return parse(o), parse(n)
}

// hostilePage is a page of the three sections, each named for a hostile
// server, every one with the readable deltas of the hostile lists.
func hostilePage(t testing.TB) *Page {
	t.Helper()
	old, nw := hostileLists(t)
	in := func(tools []manifest.Tool) schemadiff.Input {
		return schemadiff.Input{Side: schemadiff.Side{Source: htmlInjections[0], Completeness: "complete"}, Tools: tools}
	}
	d := schemadiff.Compare(in(old), in(nw), schemadiff.FailClosedProfile, schemadiff.ToolOptions{})
	deltas := delta.Build(old, nw, d.Changes, d.Tools)
	g := hostile()
	g.StructuralChanges, g.Tools, g.DecisionProfile = d.Changes, d.Tools, d.Profile
	dr := driftReport()
	dr.Tools, dr.Profile = d.Tools, d.Profile
	dr.Warnings = htmlInjections
	// The cards are one template whichever section holds them: each
	// section shows a third of the deltas, so that the page stays small.
	third := len(deltas) / 3
	return &Page{Title: "mcpdrift " + htmlInjections[1], ToolVersion: htmlInjections[0], Sections: []Section{
		GateSection(g, deltas[:third]).ForServer(htmlInjections[2]),
		DiffSection(d, deltas[third:2*third]).ForServer(htmlInjections[6]),
		DriftSection(dr, deltas[2*third:]).ForServer(htmlInjections[9]),
	}}
}

func renderPage(t testing.TB, p *Page) string {
	t.Helper()
	var b strings.Builder
	if err := RenderHTML(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The elements and attributes the page may hold: nothing that runs, loads
// or links out; the one link form is a fragment to a section (#r1).
var (
	htmlElements = map[string]bool{
		"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true, "main": true, "footer": true,
		"h1": true, "h2": true, "h3": true, "h4": true, "p": true, "section": true, "header": true, "div": true,
		"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
		"ul": true, "li": true, "dl": true, "dt": true, "dd": true, "span": true, "b": true, "code": true, "br": true,
		"details": true, "summary": true, "ins": true, "del": true, "a": true,
	}
	htmlAttrs = map[string]*regexp.Regexp{
		"lang": regexp.MustCompile(`^en$`), "charset": regexp.MustCompile(`^utf-8$`),
		"http-equiv": regexp.MustCompile(`^Content-Security-Policy$`), "name": regexp.MustCompile(`^(referrer|viewport)$`),
		"content": regexp.MustCompile(`.`), "class": regexp.MustCompile(`^[a-z0-9 -]*$`), "id": regexp.MustCompile(`^r[0-9]+$`),
		"open": regexp.MustCompile(`^$`), "href": regexp.MustCompile(`^#r[0-9]+$`),
	}
	metaContent = map[string]bool{"no-referrer": true, "width=device-width, initial-scale=1": true}
)

// checkHTMLStructure parses out as a browser would (golang.org/x/net/html)
// and checks it holds only the page's own elements and attributes: one
// style element, allowed by its hash in the one Content-Security-Policy,
// which is the strict one; no script, no element that loads anything, no
// event handler, no link but to a section. It returns the page's text.
func checkHTMLStructure(t testing.TB, out string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var styles, csps int
	var walk func(n *html.Node, inHead bool)
	walk = func(n *html.Node, inHead bool) {
		switch n.Type {
		case html.ElementNode:
			if !htmlElements[n.Data] {
				t.Fatalf("element <%s> on the page", n.Data)
			}
			for _, a := range n.Attr {
				re, ok := htmlAttrs[a.Key]
				if !ok || a.Namespace != "" || !re.MatchString(a.Val) {
					t.Fatalf("attribute %s=%q on <%s>", a.Key, a.Val, n.Data)
				}
			}
			switch n.Data {
			case "style":
				styles++
				if !inHead || n.FirstChild == nil || n.FirstChild != n.LastChild {
					t.Fatalf("a style element outside the head or not one text")
				}
				sum := sha256.Sum256([]byte(n.FirstChild.Data))
				if want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(HTMLContentSecurityPolicy, "style-src "+want+";") {
					t.Fatalf("the style element's hash %s is not the policy's", want)
				}
				return
			case "meta":
				attr := map[string]string{}
				for _, a := range n.Attr {
					attr[a.Key] = a.Val
				}
				if !inHead {
					t.Fatalf("a meta element outside the head")
				}
				if attr["http-equiv"] != "" {
					csps++
					if attr["content"] != HTMLContentSecurityPolicy {
						t.Fatalf("policy %q", attr["content"])
					}
				} else if c, ok := attr["content"]; ok && !metaContent[c] {
					t.Fatalf("meta content %q", c)
				}
			case "head":
				inHead = true
			}
		case html.TextNode:
			text.WriteString(n.Data)
		case html.CommentNode:
			t.Fatalf("a comment on the page: %q", n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inHead)
		}
	}
	walk(doc, false)
	if styles != 1 || csps != 1 {
		t.Fatalf("%d style elements and %d policies, want one each", styles, csps)
	}
	return text.String()
}

func TestHTMLPolicy(t *testing.T) {
	for _, d := range []string{"default-src 'none'", "script-src 'none'", "img-src 'none'", "font-src 'none'", "connect-src 'none'", "frame-src 'none'", "form-action 'none'", "base-uri 'none'"} {
		if !strings.Contains(HTMLContentSecurityPolicy, d+";") && !strings.HasSuffix(HTMLContentSecurityPolicy, d) {
			t.Errorf("the policy lacks %q: %s", d, HTMLContentSecurityPolicy)
		}
	}
	if strings.Contains(HTMLContentSecurityPolicy, "unsafe") || strings.Contains(HTMLContentSecurityPolicy, "http") {
		t.Errorf("the policy allows too much: %s", HTMLContentSecurityPolicy)
	}
}

// Every injection, in every place a page shows server text, is text: the
// page holds only its own elements and attributes, every injection is
// shown in its escaped form, and no character safetext escapes is raw.
func TestHTMLHostile(t *testing.T) {
	out := renderPage(t, hostilePage(t))
	checkGolden(t, "html_hostile_deltas.html", out)
	if c, bad := rawUnsafe(out, false); bad {
		t.Fatalf("raw unsafe %U on the page", c)
	}
	text := checkHTMLStructure(t, out)
	for _, s := range htmlInjections {
		if !strings.Contains(text, safetext.Escape(s)) && !strings.Contains(text, safetext.EscapeASCII(s)) {
			t.Errorf("%q is not shown as text", s)
		}
	}
	for _, want := range []string{`\u202e`, `\u200b`, `\u2066`, `\ufeff`, `\U000e0041`, `\u001b[2J`} {
		if !strings.Contains(strings.ToLower(text), strings.ToLower(want)) {
			t.Errorf("the escape %s is not shown", want)
		}
	}
	if again := renderPage(t, hostilePage(t)); again != out {
		t.Error("two renderings differ")
	}
}

// The rug pull of the bundled demo: one card per changed tool with its
// readable delta, the decision and the summary first.
func TestHTMLRugPull(t *testing.T) {
	old, err := manifest.ParseToolList(examples.V1)
	if err != nil {
		t.Fatal(err)
	}
	nw, err := manifest.ParseToolList(examples.V2RugPull)
	if err != nil {
		t.Fatal(err)
	}
	d := schemadiff.Compare(schemadiff.Input{Side: schemadiff.Side{Source: "v1.json", Completeness: "complete"}, Tools: old.Tools},
		schemadiff.Input{Side: schemadiff.Side{Source: "v2.json", Completeness: "complete"}, Tools: nw.Tools}, schemadiff.FailClosedProfile, schemadiff.ToolOptions{})
	out := renderPage(t, &Page{Title: "mcpdrift diff", ToolVersion: "0.0.0-test", Sections: []Section{DiffSection(d, delta.Build(old.Tools, nw.Tools, d.Changes, d.Tools))}})
	checkGolden(t, "html_rugpull.html", out)
	text := checkHTMLStructure(t, out)
	for _, want := range []string{
		"DENY", "add_deploy_key", "Can now do", "gained optional parameter", "callback_url",
		"Can no longer do", "tool removed", "destructiveHint", "Before calling any other tool", "run_workflow_command",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	if strings.Index(out, `class="verdict`) > strings.Index(out, `<details class="card`) {
		t.Error("the verdict is not before the cards")
	}
	if n := strings.Count(out, `<details class="card`); n != 5 {
		t.Errorf("%d cards, want 5 (changed, added and removed tools)", n)
	}
}

// lock check's page: one section per server, named, and an overview row
// linking to each.
func TestHTMLManyServers(t *testing.T) {
	p := &Page{Title: "mcpdrift lock check"}
	names := []string{"github", "filesystem", "evil\u202e<b>"}
	for _, n := range names {
		p.Sections = append(p.Sections, DriftSection(driftReport(), nil).ForServer(n))
	}
	out := renderPage(t, p)
	checkHTMLStructure(t, out)
	for i, n := range names {
		id := "r" + string(rune('1'+i))
		if !strings.Contains(out, `<a href="#`+id+`">`) || !strings.Contains(out, `<section class="report" id="`+id+`">`) {
			t.Errorf("no link to or section %s", id)
		}
		var b bytes.Buffer
		htmlTemplate.ExecuteTemplate(&b, "txt", hname(n))
		if strings.Count(out, "<code>"+b.String()+"</code>") != 2 {
			t.Errorf("server %q is not named in its overview row and its section", n)
		}
	}
	if strings.Count(out, "<tr><td><a href=") != len(names) {
		t.Errorf("the overview has not one row per server")
	}
	// ForServer copies: the section it was called on is unnamed.
	s := DriftSection(driftReport(), nil)
	s.ForServer("x")
	if s.v.Server != nil {
		t.Error("ForServer changed its receiver")
	}
	if err := RenderHTML(&bytes.Buffer{}, &Page{Sections: []Section{{}}}); err == nil {
		t.Error("a zero Section rendered")
	}
}

// FuzzHTML: tool lists are untrusted. For any two that parse, the page of
// their diff with the readable deltas renders, holds only its own
// elements and attributes, and no raw character safetext escapes.
func FuzzHTML(f *testing.F) {
	f.Add(string(examples.V1), string(examples.V2RugPull))
	f.Add(`[{"name":"a","description":"x"}]`, `[{"name":"a","description":"<script>alert(1)</script>","inputSchema":{"type":"object","properties":{"<img src=x onerror=alert(1)>":{"description":"</style>"}}}}]`)
	f.Add(`[{"name":"\u202e<b>"}]`, `[{"name":"\u202e<b>","title":"javascript:x","annotations":{"readOnlyHint":"<!--"}}]`)
	f.Fuzz(func(t *testing.T, a, b string) {
		old, err := manifest.ParseToolList([]byte(a))
		if err != nil {
			return
		}
		nw, err := manifest.ParseToolList([]byte(b))
		if err != nil {
			return
		}
		in := func(tools []manifest.Tool) schemadiff.Input {
			return schemadiff.Input{Side: schemadiff.Side{Source: a, Completeness: "complete"}, Tools: tools}
		}
		d := schemadiff.Compare(in(old.Tools), in(nw.Tools), schemadiff.FailClosedProfile, schemadiff.ToolOptions{})
		out := renderPage(t, &Page{Title: b, Sections: []Section{DiffSection(d, delta.Build(old.Tools, nw.Tools, d.Changes, d.Tools)).ForServer(a)}})
		if c, bad := rawUnsafe(out, false); bad {
			t.Fatalf("raw unsafe %U", c)
		}
		checkHTMLStructure(t, out)
	})
}

// fatalTB records the first Fatalf instead of stopping the test.
type fatalTB struct {
	testing.TB
	msg string
}

type fatal struct{}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = format
	panic(fatal{})
}
func (f *fatalTB) Fatal(args ...any) { f.Fatalf("fatal") }

// The structure check fails on each thing it is there to catch.
func TestHTMLStructureCheckFails(t *testing.T) {
	good := renderPage(t, &Page{Sections: []Section{DriftSection(driftReport(), nil)}})
	checkHTMLStructure(t, good)
	for _, bad := range []struct{ what, old, new string }{
		{"a script", "<main>", "<main><script>x</script>"},
		{"an image", "<main>", `<main><img src="x">`},
		{"an event handler", `<main>`, `<main onclick="x">`},
		{"a link out", "<main>", `<main><a href="http://x">x</a>`},
		{"a javascript: link", "<main>", `<main><a href="javascript:x">x</a>`},
		{"a second style", "<main>", `<main><style>*{}</style>`},
		{"a style attribute", `<main>`, `<main style="color:red">`},
		{"another policy", `script-src &#39;none&#39;`, `script-src &#39;self&#39;`},
		{"a changed style", "*{box-sizing:border-box}", "*{box-sizing:content-box}"},
		{"a comment", "<main>", "<main><!-- x -->"},
	} {
		out := strings.Replace(good, bad.old, bad.new, 1)
		if out == good {
			t.Fatalf("%s: the page has no %q", bad.what, bad.old)
		}
		f := &fatalTB{TB: t}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(fatal); !ok {
						panic(r)
					}
				}
			}()
			checkHTMLStructure(f, out)
		}()
		if f.msg == "" {
			t.Errorf("%s passed the structure check", bad.what)
		}
	}
}
