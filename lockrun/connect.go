// Package lockrun runs the workflows of the lock (mcpdrift.lock) that
// observe its servers: Add pins a server in it, Check gates every server
// against its entry, Prepare and Approve write the served version of the
// tools a reviewer approves. The lock itself (its format, its checks and
// its approvals) is package lock's, pure; a server is listed through
// package observe.
package lockrun

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpdrift/mcpdrift/discover"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Connect turns a lock's source into the client configuration that
// reaches it, its placeholders expanded and every value it sends recorded
// as a secret of the run. An error is the run's for that server alone
// (a variable that is not set: the server is not observed).
type Connect func(src lock.Source) (mcpclient.Config, error)

// Connector is the Connect of a program that embeds the lock workflows:
// every bound, the CA, the client's name and what else base sets, with the
// source's URL and headers or stdio command, the ${env:NAME} placeholders
// expanded through lookup (os.LookupEnv) and recorded in secrets.
func Connector(base mcpclient.Config, secrets *redact.Set, lookup func(string) (string, bool)) Connect {
	return func(src lock.Source) (mcpclient.Config, error) {
		cfg := base
		cfg.BaseURL, cfg.Command, cfg.PassEnv, cfg.Headers, cfg.Transport = "", nil, nil, nil, ""
		if len(src.Stdio) > 0 {
			cfg.Command, cfg.PassEnv = make([]string, len(src.Stdio)), src.PassEnv
			for i, a := range src.Stdio {
				v, vals, err := discover.Expand(a, lookup)
				if err != nil {
					return cfg, runerr.Usagef("argument %d of the stdio command: %s", i+1, err.Error())
				}
				for _, s := range vals {
					secrets.Add("an env value in the stdio command", s)
				}
				cfg.Command[i] = v
			}
		} else {
			u, err := ExpandURL(src.URL, lookup, secrets)
			if err != nil {
				return cfg, err
			}
			cfg.BaseURL, cfg.Transport = u, src.Transport
			for name, tmpl := range src.Headers {
				v, _, err := discover.Expand(tmpl, lookup)
				if err != nil {
					return cfg, runerr.Usagef("header %s: %s", safetext.Quote(name), err.Error())
				}
				if cfg.Headers == nil {
					cfg.Headers = http.Header{}
				}
				cfg.Headers.Set(name, v)
			}
		}
		observe.RecordSecrets(cfg, secrets)
		return cfg, nil
	}
}

// ExpandURL expands the ${env:NAME} path segments of a lock's URL
// (lock.URLSegmentTemplate) through lookup, each value path-escaped into
// its segment (a '/' in it stays in the segment), in the URL as written:
// every other byte stays as it was (a %2F in another segment too). Each
// value is recorded in secrets before anything can print it. A variable
// that is not set, a value too short to be redacted (redact.MinLen: the
// URL is printed in every report), or a placeholder that is not written
// as ${env:NAME} between slashes is a runerr.Usage error.
func ExpandURL(raw string, lookup func(string) (string, bool), secrets *redact.Set) (string, error) {
	if !strings.Contains(raw, "${") && !strings.Contains(raw, "%7B") && !strings.Contains(raw, "%7b") {
		return raw, nil
	}
	out, err := redact.MapPathSegments(raw, func(written, decoded string) (string, error) {
		switch {
		case !strings.Contains(decoded, "${"):
			return written, nil
		case written != decoded || !lock.URLSegmentTemplate(written):
			return "", runerr.Usagef("a placeholder in the url is a whole path segment written as ${env:NAME}, /${env:NAME}/, not escaped")
		}
		name := strings.TrimSuffix(strings.TrimPrefix(written, "${env:"), "}")
		v, ok := lookup(name)
		switch {
		case !ok || v == "":
			return "", runerr.Usagef("the url's path segment ${env:%s} is not set: export %s", name, name)
		case len(v) < redact.MinLen:
			return "", runerr.Usagef("the url's path segment ${env:%s} is shorter than %d bytes: it cannot be told apart from other text, so it would be written wherever the url is", name, redact.MinLen)
		}
		// Recorded in every form it can take in the URL sent and in what
		// is written about it (escaped again by Go when the URL's path is
		// not a valid encoding).
		secrets.AddPathValue("the value of env "+name+" in the url", v)
		return url.PathEscape(v), nil
	})
	if err != nil {
		return "", err
	}
	if _, err := url.Parse(out); err != nil {
		return "", runerr.Usagef("the lock's url is not a URL once its placeholders are expanded")
	}
	return out, nil
}
