package decide

import (
	"fmt"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// identityMismatch is CheckIdentity with its notes added to l's.
func identityMismatch(pinned, now manifest.Identity, prof *schemadiff.DecisionProfile, l *List) string {
	why, notes := CheckIdentity(pinned, now, prof)
	l.Notes = append(l.Notes, notes...)
	return why
}

// CheckIdentity is the gateway's rule on the identity tuple: why the
// server is withheld ("" when it is not) and the notes of what changed
// and does not decide. The fields both sides know are decided by
// schemadiff.JudgeIdentity, the decision diff makes (an install moved, a
// reported name or version: information under review, part of the tuple
// under fail-closed; an endpoint rebound or another publisher key
// withholds under both). A pinned endpoint or publisher key the upstream
// does not establish withholds (what cannot be verified is not served);
// a pinned name or version it does not report withholds under
// fail-closed and is noted under review. A stdio server's environment is
// not compared: the gateway does not record it. Drift and lock check ask
// it too.
func CheckIdentity(pinned, now manifest.Identity, prof *schemadiff.DecisionProfile) (why string, notes []string) {
	if prof == nil {
		prof = schemadiff.ReviewProfile
	}
	switch {
	case pinned.Endpoint != "" && now.Endpoint == "":
		return fmt.Sprintf("the endpoint is %s, the baseline pinned %s", safetext.Quote(now.Endpoint), safetext.Quote(pinned.Endpoint)), nil
	case pinned.PublisherKey != "" && now.PublisherKey == "":
		return "the publisher key is not the pinned one", nil
	}
	// The environment is not the gateway's to compare: its upstream
	// identity records none (diff reports server_env_changed).
	pinned.Env, now.Env = nil, nil
	v := schemadiff.JudgeIdentity(pinned, now, prof)
	if v.Decision != schemadiff.Allow {
		return v.Reason, v.Notes
	}
	notes = v.Notes
	failClosed := prof.Name == schemadiff.FailClosedProfile.Name
	for _, f := range []struct{ what, p, n string }{{"server name", pinned.ServerName, now.ServerName}, {"server version", pinned.ServerVersion, now.ServerVersion}} {
		if f.p == "" || f.n != "" {
			continue
		}
		if failClosed {
			return fmt.Sprintf("the %s is %s, the baseline pinned %s (fail-closed)", f.what, safetext.Quote(f.n), safetext.Quote(f.p)), notes
		}
		notes = append(notes, fmt.Sprintf("the %s is %s, the baseline pinned %s; each tool is judged by its digest", f.what, safetext.Quote(f.n), safetext.Quote(f.p)))
	}
	return "", notes
}
