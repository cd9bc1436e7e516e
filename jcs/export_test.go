package jcs

// SetParallelMin sets the size from which Parse uses several CPUs (a
// huge value: never) and returns a function that restores it; for the
// benchmarks of package jcs_test.
func SetParallelMin(n int) (restore func()) {
	old := parallelMin
	parallelMin = n
	return func() { parallelMin = old }
}
