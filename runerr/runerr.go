// Package runerr holds the errors a workflow returns instead of a result,
// by what they mean for a verdict: the caller's input or options cannot
// be used (Usage), or the evidence cannot support a verdict: a server that
// could not be observed, a listing that is not complete (Inconclusive).
// The command line maps each kind to its exit code; a library caller
// tells them apart with KindOf.
package runerr

import (
	"errors"
	"fmt"
)

// Kind is what an error means for a verdict.
type Kind int

const (
	// Other is an error of neither kind (KindOf of a plain error).
	Other Kind = iota
	// Usage: the input or the options cannot be used as given.
	Usage
	// Inconclusive: the evidence cannot support a verdict.
	Inconclusive
)

// Error is an error of a kind. Its message is escaped already (safetext):
// it may be printed as it is, and is never escaped again.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Usagef is a Usage error; the arguments must be escaped already.
func Usagef(format string, args ...any) error {
	return &Error{Usage, fmt.Sprintf(format, args...)}
}

// Inconclusivef is an Inconclusive error; the arguments must be escaped
// already.
func Inconclusivef(format string, args ...any) error {
	return &Error{Inconclusive, fmt.Sprintf(format, args...)}
}

// KindOf is the kind of err's first *Error (Other when there is none).
func KindOf(err error) Kind {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind
	}
	return Other
}
