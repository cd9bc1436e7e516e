package cli

import (
	"fmt"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/toolname"
)

// vouchNames is the check pin, lock add and approve make before they vouch
// for a list of tool names (manifest.Vouch): colliding names are refused
// unless acknowledged in the suppression file, which is read only then;
// each acknowledged one is said on stderr with its reason.
func (e *env) vouchNames(what string, names, servers []string, sf *suppressionFlags, only ...string) error {
	said, err := manifest.Vouch{What: what, Servers: servers, Suppressions: func() (*manifest.Suppressions, error) { return sf.load(e) }, Today: today()}.Check(names, only...)
	if err != nil {
		return err
	}
	for _, s := range said {
		fmt.Fprintf(e.stderr, "mcpdrift: %s\n", s)
	}
	return nil
}

// acknowledgeNames gives the gateway's baseline the operator's
// acknowledgement of colliding names (decide.Baseline.NameAcknowledged):
// when the pinned names collide, the suppression file is read (once) and
// each name is acknowledged while its suppression has not expired, on the
// day the gateway decides.
func (e *env) acknowledgeNames(b *decide.Baseline, servers []string, sf *suppressionFlags) error {
	names := make([]string, len(b.Tools))
	for i := range b.Tools {
		names[i] = b.Tools[i].Name
	}
	if len(toolname.Check(names).Ambiguous) == 0 {
		return nil
	}
	sup, err := sf.load(e)
	if err != nil || sup == nil {
		return err
	}
	b.NameAcknowledged = func(name string) bool {
		m, _ := sup.AcknowledgesName(name, servers, today())
		return m != nil
	}
	return nil
}

// pinBaseline is pin's last step: the baseline of o (manifest.Pin, whose
// refusals come first), refused when its names collide and were not
// acknowledged (vouchNames), then the shape warnings of a list pin read
// (checks, when read).
func (e *env) pinBaseline(o *manifest.Observed, source string, allowEmpty bool, sf *suppressionFlags, checks *pinChecks, read bool) (*manifest.Declared, error) {
	d, err := manifest.Pin(o, manifest.PinOptions{AllowEmpty: allowEmpty})
	if err != nil {
		return nil, inputErr(source, err)
	}
	names := make([]string, len(o.Observed.ToolDigests))
	for i := range o.Observed.ToolDigests {
		names[i] = o.Observed.ToolDigests[i].Name
	}
	if err := e.vouchNames("pin "+safetext.Quote(source), names, []string{o.Server.ID, source}, sf); err != nil {
		return nil, err
	}
	if read {
		checks.warnShape()
	}
	return d, nil
}
