package manifest

import (
	"os"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/hugemem"
)

// TestMain runs manifest's tests with hugemem's advice on, as the command
// line reads a list: a large list's tools and artifacts are then advised,
// and every test of them holds with it.
func TestMain(m *testing.M) {
	hugemem.Enable(true)
	os.Exit(m.Run())
}
