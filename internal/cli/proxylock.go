package cli

import (
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/lock"
)

// proxy --lock FILE --server NAME: the gateway fronts one server of the
// lock. The upstream is the lock's source (read once, at start), the
// baseline the tools the lock approves with the identity it pins, the
// profile the server's (unless --profile is given). With
// --allowed-signers the lock's signature is checked before anything is
// served, and again at every reload: a gateway never serves from a lock
// whose signature does not verify. At start, a lock that cannot be read,
// whose signature does not verify, or whose entry fails the baseline's
// validity (lock.Parse: manifest.CheckBaseline) is refused (exit 2: the
// upstream itself comes from the lock). On reload each of these withholds
// the server until a good lock is loaded (watchBaseline: fail-closed).

// loadLockBaseline reads and validates the lock, checks its signature
// when asked, and returns the server, with the colliding names the
// suppression file acknowledges (lock.Server.NameAcknowledged).
func loadLockBaseline(e *env, path, name, allowedSigners string, sf *suppressionFlags) (*lock.Server, *lockFile, error) {
	lf, err := openLock(path, false)
	if err != nil {
		return nil, nil, err
	}
	if err := verifyLockSignature(e, path, lf.data, allowedSigners); err != nil {
		return nil, nil, err
	}
	s, err := lf.server(name)
	if err != nil {
		return nil, nil, err
	}
	b := &decide.Baseline{Tools: s.ToolValues()}
	if err := e.acknowledgeNames(b, []string{s.Name, s.Identity.Endpoint}, sf); err != nil {
		return nil, nil, err
	}
	s.NameAcknowledged = b.NameAcknowledged
	return s, lf, nil
}
