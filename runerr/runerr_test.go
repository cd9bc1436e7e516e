package runerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestKindOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Kind
	}{
		{Usagef("bad %s", "flag"), Usage},
		{Inconclusivef("cannot observe %q", "x"), Inconclusive},
		{fmt.Errorf("wrapped: %w", Inconclusivef("no")), Inconclusive},
		{errors.New("plain"), Other},
		{nil, Other},
	} {
		if got := KindOf(c.err); got != c.want {
			t.Errorf("KindOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if e := Usagef("a %d", 1); e.Error() != "a 1" {
		t.Errorf("message %q", e.Error())
	}
}
