//go:build !unix

package cli

import "os"

// maxRSSKiB is not known here: 0.
func maxRSSKiB(*os.ProcessState) int64 { return 0 }
