package cli

import (
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/toolname"
)

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
