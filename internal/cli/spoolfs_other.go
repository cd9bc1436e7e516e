//go:build !linux

package cli

// inMemoryFS reports whether dir is on a file system held in memory; it
// is known on Linux only.
func inMemoryFS(string) bool { return false }
