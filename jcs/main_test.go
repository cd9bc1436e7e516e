package jcs

import (
	"os"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/hugemem"
)

// TestMain runs jcs's tests with hugemem's advice on, as the command line
// runs a parse: the large parses' arrays and buffers are then advised,
// and every test of the trees holds with them.
func TestMain(m *testing.M) {
	hugemem.Enable(true)
	os.Exit(m.Run())
}
