//go:build !linux

package mapfile

import (
	"errors"
	"os"
)

// Mapping is never made here: only Linux has the read lease that holds a
// mapped file unchanged.
type Mapping struct{}

// Map never maps here: the caller reads the file.
func Map(f *os.File, size int64) (*Mapping, bool) { return nil, false }

// Bytes is never called here.
func (m *Mapping) Bytes() []byte { return nil }

// Unchanged is never called here.
func (m *Mapping) Unchanged() error { return nil }

// Release is never called here.
func (m *Mapping) Release() {}

// Mappable says that nothing is mapped here.
func Mappable(path string) error { return errors.New("files are mapped only on Linux") }
