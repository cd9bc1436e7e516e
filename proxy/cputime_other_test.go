//go:build !unix

package proxy_test

import "time"

// cpuTime is not measured here (0): no CPU figures are reported.
func cpuTime() time.Duration { return 0 }
