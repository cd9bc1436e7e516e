package lockrun_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/lockrun"
	"github.com/mcpdrift/mcpdrift/redact"
)

// FuzzExpandURL: the expansion of a lock URL's ${env:NAME} path segments
// never panics, leaves a URL without a placeholder as it is, and gives a
// URL that parses, with every value recorded as a secret.
func FuzzExpandURL(f *testing.F) {
	for _, s := range []string{"https://h/mcp", "https://h/mcp/${env:KEY}/sse", "https://h/${env:KEY}", "https://h/a%7B${env:KEY}%7D", "https://h/x${env:KEY}", "https://h/${env:NOPE}/", "https://h/%2F${env:KEY}/"} {
		f.Add(s)
	}
	const key = "k3y-value/with-slash-0123"
	f.Fuzz(func(t *testing.T, raw string) {
		secrets := &redact.Set{}
		out, err := lockrun.ExpandURL(raw, func(k string) (string, bool) { return key, k == "KEY" }, secrets)
		if err != nil {
			return
		}
		if !strings.Contains(raw, "${") && !strings.Contains(strings.ToLower(raw), "%7b") && out != raw {
			t.Fatalf("ExpandURL(%q) = %q: a URL without a placeholder changed", raw, out)
		}
		if out != raw {
			if _, err := url.Parse(out); err != nil {
				t.Fatalf("ExpandURL(%q) = %q, which does not parse", raw, out)
			}
			if strings.Contains(secrets.String(out), url.PathEscape(key)) {
				t.Fatalf("the value expanded into %q is not a secret of the run", out)
			}
		}
	})
}
