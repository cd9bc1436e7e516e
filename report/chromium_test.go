package report

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// The HTML report in a real browser: Debian's chromium, headless, driven
// with chromedp (scripts/install-chromium.sh installs it; .ci/run calls
// it and sets MCPDRIFT_REQUIRE_CHROMIUM=1, so that a missing browser fails
// CI; elsewhere the test skips, saying so). One browser serves every
// subtest, a tab each.
//
// The screenshot in docs/ is taken by the same test:
//
//	go run ./cmd/mcpdrift demo --format html -o /tmp/demo.html
//	go test ./report -run 'TestChromium/screenshot' -args -screenshot-page /tmp/demo.html -screenshot ../docs/report-html.png
var (
	screenshotOut  = flag.String("screenshot", "", "TestChromium: write a screenshot of -screenshot-page (or of the rug pull page) to this PNG file")
	screenshotPage = flag.String("screenshot-page", "", "TestChromium: the HTML file the screenshot shows")
)

// chromiumPath finds the browser as scripts/install-chromium.sh does:
// MCPDRIFT_CHROMIUM, else chromium or chromium-browser on PATH.
func chromiumPath(t *testing.T) string {
	if p := os.Getenv("MCPDRIFT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium is not installed, so the HTML report is not tested in a browser (scripts/install-chromium.sh installs Debian's chromium package)"
	if os.Getenv("MCPDRIFT_REQUIRE_CHROMIUM") == "1" {
		t.Fatal(msg + "; MCPDRIFT_REQUIRE_CHROMIUM=1 requires it")
	}
	t.Skip(msg)
	return ""
}

// pageEvents are what a tab reported while it showed a page.
type pageEvents struct {
	mu       sync.Mutex
	requests []string // every request the page made, its own included
	console  []string // console calls, log entries and exceptions
	served   []string // the paths the server was asked for
}

func (p *pageEvents) add(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, e.Request.URL)
	case *runtime.EventConsoleAPICalled:
		p.console = append(p.console, "console."+string(e.Type))
	case *runtime.EventExceptionThrown:
		p.console = append(p.console, "exception: "+e.ExceptionDetails.Text)
	case *log.EventEntryAdded:
		p.console = append(p.console, string(e.Entry.Level)+" "+string(e.Entry.Source)+": "+e.Entry.Text)
	}
}

// pageFacts is what the page's DOM says, read after it loaded.
type pageFacts struct {
	Pwned       string   `json:"pwned"`   // typeof window.__mcpdriftPwned
	Scripts     int      `json:"scripts"` // script elements
	Loaders     int      `json:"loaders"` // elements that load or embed anything
	Handlers    []string `json:"handlers"`
	Styles      int      `json:"styles"`
	StyleAttrs  int      `json:"styleAttrs"`
	Links       []string `json:"links"`
	Display     string   `json:"display"`
	Background  string   `json:"background"`
	Sections    int      `json:"sections"`
	Cards       int      `json:"cards"`
	VisibleCard int      `json:"visibleCards"`
	Names       []string `json:"names"`
	Text        string   `json:"text"`
	Decisions   []string `json:"decisions"`
	DecisionTop float64  `json:"decisionTop"`
	DecisionH   float64  `json:"decisionHeight"`
	VerdictTop  float64  `json:"verdictTop"`
	CardTop     float64  `json:"cardTop"`
	Viewport    float64  `json:"viewport"`
	Settled     bool     `json:"settled"`
}

const factsScript = `new Promise(resolve => requestAnimationFrame(() => setTimeout(() => {
  const q = s => Array.from(document.querySelectorAll(s));
  const handlers = [];
  for (const el of q('*')) for (const a of el.attributes) if (a.name.startsWith('on')) handlers.push(el.tagName + ' ' + a.name);
  const top = el => el ? el.getBoundingClientRect().top : -1;
  const dec = document.querySelector('details.card .badge[class*="dec-"]');
  resolve({
    pwned: typeof window.__mcpdriftPwned,
    scripts: document.scripts.length,
    loaders: q('img,picture,svg,iframe,frame,object,embed,link,base,form,input,audio,video,source,track,canvas,meta[http-equiv="refresh" i]').length,
    handlers,
    styles: q('style').length,
    styleAttrs: q('[style]').length,
    links: q('a').map(a => a.getAttribute('href')),
    display: getComputedStyle(document.body).display,
    background: getComputedStyle(document.body).backgroundImage,
    sections: q('section.report').length,
    cards: q('details.card').length,
    visibleCards: q('details.card').filter(c => c.getBoundingClientRect().height > 0).length,
    names: q('details.card summary h3 code').map(c => c.textContent),
    text: document.body.innerText,
    decisions: q('details.card summary .badge[class*="dec-"]').map(b => b.textContent),
    decisionTop: top(dec),
    decisionHeight: dec ? dec.getBoundingClientRect().height : 0,
    verdictTop: top(document.querySelector('.verdict')),
    cardTop: top(document.querySelector('details.card')),
    viewport: window.innerHeight,
    settled: true,
  });
}, 100)))`

func TestChromium(t *testing.T) {
	path := chromiumPath(t)
	start := time.Now()

	// The pages, served on loopback; every request is recorded, so that a
	// request for anything but the page itself is seen from both ends.
	pages := map[string][]byte{}
	var mu sync.Mutex
	var served []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, r.URL.Path)
		b, ok := pages[r.URL.Path]
		mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	}))
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900), chromedp.DisableGPU,
		// Nothing but the test's loopback server may be reached.
		chromedp.Flag("no-proxy-server", true), chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"))
	if os.Geteuid() == 0 || os.Getenv("MCPDRIFT_CHROMIUM_NO_SANDBOX") == "1" {
		// The sandbox refuses to run as root, and needs user namespaces a
		// container may not have (MCPDRIFT_CHROMIUM_NO_SANDBOX=1).
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	// The first action starts the browser and must not have a deadline of
	// its own (it would stop the browser): a browser that does not start
	// within a minute is stopped.
	stuck := time.AfterFunc(time.Minute, cancelBrowser)
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	stuck.Stop()
	t.Logf("started %s in %v", path, time.Since(start).Round(time.Millisecond))

	// show opens the page in a tab of its own and returns what the tab
	// reported and what the DOM says.
	show := func(t *testing.T, name string, page []byte, shot *[]byte) (*pageEvents, pageFacts) {
		t.Helper()
		mu.Lock()
		pages["/"+name] = page
		served = nil
		mu.Unlock()
		tab, cancel := chromedp.NewContext(browser)
		defer cancel()
		ctx, cancelT := context.WithTimeout(tab, 30*time.Second)
		defer cancelT()
		ev := &pageEvents{}
		if err := chromedp.Listen(ctx, ev.add); err != nil {
			t.Fatal(err)
		}
		url := srv.URL + "/" + name
		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
			t.Fatal(err)
		}
		facts, err := chromedp.Run(ctx, chromedp.Evaluate[pageFacts](factsScript, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		if !facts.Settled {
			t.Fatal("the page's facts were not read")
		}
		if shot != nil {
			// A screen of the page as a reviewer first sees it.
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 1400)); err != nil {
				t.Fatal(err)
			}
			b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			*shot = b
		}
		ev.mu.Lock()
		defer ev.mu.Unlock()
		mu.Lock()
		defer mu.Unlock()
		return &pageEvents{requests: ev.requests, console: ev.console, served: served}, facts
	}

	// checkQuiet: the page made one request, its own, and wrote nothing
	// to the console (a Content-Security-Policy violation is an error
	// there).
	checkQuiet := func(t *testing.T, name string, ev *pageEvents) {
		t.Helper()
		if url := srv.URL + "/" + name; len(ev.requests) != 1 || ev.requests[0] != url {
			t.Errorf("requests from the page: %q, want only %s", ev.requests, url)
		}
		if len(ev.console) > 0 {
			t.Errorf("the console is not empty: %q", ev.console)
		}
		if len(ev.served) != 1 {
			t.Errorf("the server was asked for %q, want only /%s", ev.served, name)
		}
	}

	// Nothing the page holds may run, load or hide it.
	checkInert := func(t *testing.T, f pageFacts) {
		t.Helper()
		if f.Pwned != "undefined" {
			t.Errorf("a script ran: window.__mcpdriftPwned is %s", f.Pwned)
		}
		if f.Scripts != 0 || f.Loaders != 0 || len(f.Handlers) != 0 || f.StyleAttrs != 0 {
			t.Errorf("injected elements: %d scripts, %d loading elements, handlers %q, %d style attributes", f.Scripts, f.Loaders, f.Handlers, f.StyleAttrs)
		}
		if f.Styles != 1 {
			t.Errorf("%d style elements, want the page's one", f.Styles)
		}
		for _, l := range f.Links {
			if !strings.HasPrefix(l, "#r") {
				t.Errorf("a link to %q", l)
			}
		}
		if f.Display == "none" || f.Background != "none" || f.VisibleCard != f.Cards {
			t.Errorf("styles applied: body display %q, background %q, %d of %d cards visible", f.Display, f.Background, f.VisibleCard, f.Cards)
		}
	}

	// The instruments work: a page without the policy whose script runs,
	// logs and loads an image is seen doing each.
	t.Run("control", func(t *testing.T) {
		page := `<!DOCTYPE html><html><head><title>control</title></head><body><script>window.__mcpdriftPwned = 1; console.error("ran")</script><img src="/control.png"></body></html>`
		ev, f := show(t, "control.html", []byte(page), nil)
		if f.Pwned != "number" || f.Scripts != 1 || f.Loaders != 1 {
			t.Errorf("the control page's script and image are not seen: %+v", f)
		}
		if len(ev.requests) < 2 || len(ev.console) == 0 || len(ev.served) < 2 {
			t.Errorf("the control page's request and console call are not seen: %q %q %q", ev.requests, ev.console, ev.served)
		}
	})

	t.Run("hostile", func(t *testing.T) {
		p := hostilePage(t)
		ev, f := show(t, "hostile.html", []byte(renderPage(t, p)), nil)
		checkQuiet(t, "hostile.html", ev)
		checkInert(t, f)
		if f.Sections != 3 {
			t.Errorf("%d sections, want 3", f.Sections)
		}
		// Every injection is on the page as visible text, escaped where
		// safetext escapes it; the raw bidi and invisible characters are
		// not.
		for _, s := range htmlInjections[:9] {
			if !strings.Contains(f.Text, s) {
				t.Errorf("%q is not visible text", s)
			}
		}
		for _, esc := range []string{`bidi\u202egnp.exe\u2066iso\u2069 zero\u200bwidth\ufeff tag\U000e0041`, `ansi\u001b[2J\u000d\u000anext line`} {
			if !strings.Contains(f.Text, esc) {
				t.Errorf("%s is not shown", esc)
			}
		}
		for _, r := range "\u202e\u2066\u2069\u200b\ufeff\U000E0041\x1b" {
			if strings.ContainsRune(f.Text, r) {
				t.Errorf("raw %U in the page's text", r)
			}
		}
		var tools int
		for _, s := range p.Sections {
			tools += len(s.v.Cards)
		}
		if f.Cards != tools || len(f.Names) != tools {
			t.Errorf("%d cards and %d names, want %d", f.Cards, len(f.Names), tools)
		}
		for _, n := range f.Names {
			if !strings.HasPrefix(n, "t") && !strings.HasPrefix(n, "new") && !strings.HasPrefix(n, "evil") && !strings.HasPrefix(n, "tab") {
				t.Errorf("a card named %q", n)
			}
		}
	})

	t.Run("rugpull", func(t *testing.T) {
		ev, f := show(t, "rugpull.html", rugPullPage(t), nil)
		checkQuiet(t, "rugpull.html", ev)
		checkInert(t, f)
		if f.Sections != 1 || f.Cards != 5 {
			t.Errorf("%d sections and %d cards, want 1 and 5", f.Sections, f.Cards)
		}
		// The denied tool first, its decision visible in the first screen,
		// after the summary.
		if len(f.Decisions) != 5 || f.Decisions[0] != "DENY" || len(f.Names) == 0 || f.Names[0] != "add_deploy_key" {
			t.Errorf("decisions %q of %q, want add_deploy_key DENY first", f.Decisions, f.Names)
		}
		if f.DecisionH <= 0 || f.DecisionTop < 0 || f.DecisionTop > f.Viewport {
			t.Errorf("the first decision is not visible: top %.0f, height %.0f, viewport %.0f", f.DecisionTop, f.DecisionH, f.Viewport)
		}
		if f.VerdictTop < 0 || f.VerdictTop > f.CardTop {
			t.Errorf("the verdict (top %.0f) is not above the cards (%.0f)", f.VerdictTop, f.CardTop)
		}
		// (innerText is the text as shown: headings are upper case.)
		for _, want := range []string{"can now do", "callback_url", "can no longer do", "destructivehint", "before calling any other tool", "high", "medium", "low"} {
			if !strings.Contains(strings.ToLower(f.Text), want) {
				t.Errorf("the page does not show %q", want)
			}
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		page := rugPullPage(t)
		if *screenshotPage != "" {
			b, err := os.ReadFile(*screenshotPage)
			if err != nil {
				t.Fatal(err)
			}
			page = b
		}
		var shot []byte
		ev, f := show(t, "shot.html", page, &shot)
		checkQuiet(t, "shot.html", ev)
		checkInert(t, f)
		cfg, err := png.DecodeConfig(bytes.NewReader(shot))
		if err != nil || cfg.Width < 800 || cfg.Height < 400 {
			t.Fatalf("the screenshot is not a page: %v %dx%d", err, cfg.Width, cfg.Height)
		}
		if *screenshotOut != "" {
			if err := os.WriteFile(*screenshotOut, shot, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s (%dx%d, %d bytes)", *screenshotOut, cfg.Width, cfg.Height, len(shot))
		}
	})
	t.Logf("browser tests took %v", time.Since(start).Round(time.Millisecond))
}

// rugPullPage is the page of the bundled rug pull under fail-closed, with
// the readable deltas.
func rugPullPage(t testing.TB) []byte {
	t.Helper()
	old, err := manifest.ParseToolList(examples.V1)
	if err != nil {
		t.Fatal(err)
	}
	nw, err := manifest.ParseToolList(examples.V2RugPull)
	if err != nil {
		t.Fatal(err)
	}
	d := schemadiff.Compare(schemadiff.Input{Side: schemadiff.Side{Source: "acme-github.v1.tools-list.json", Completeness: "complete"}, Tools: old.Tools},
		schemadiff.Input{Side: schemadiff.Side{Source: "acme-github.v2-rugpull.tools-list.json", Completeness: "complete"}, Tools: nw.Tools}, schemadiff.FailClosedProfile, schemadiff.ToolOptions{})
	return []byte(renderPage(t, &Page{Title: "mcpdrift diff", ToolVersion: "0.0.0-test", Sections: []Section{DiffSection(d, delta.Build(old.Tools, nw.Tools, d.Changes, d.Tools))}}))
}
