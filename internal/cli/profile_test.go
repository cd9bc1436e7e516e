package cli

import (
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"time"
)

// Profiles of a run of the test binary as the mcpdrift command (envAsCLI),
// for studying what a large run costs:
//
//	MCPDRIFT_TEST_CPUPROFILE=cpu.out MCPDRIFT_TEST_MEMPROFILE=mem.out MCPDRIFT_TEST_AS_CLI=1 ./cli.test pin ...
//
// The heap profile is written at exit; with MCPDRIFT_TEST_MEMPROFILE_RATE
// unset it records one sample per 512 KiB allocated (the runtime default).
const (
	envCPUProfile = "MCPDRIFT_TEST_CPUPROFILE"
	envMemProfile = "MCPDRIFT_TEST_MEMPROFILE"
)

// startProfiles starts the profiles the environment asks for and returns
// the function that writes them.
func startProfiles() func() {
	var stops []func()
	if p := os.Getenv(envCPUProfile); p != "" {
		if f, err := os.Create(p); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
			}
		}
	}
	if p := os.Getenv(envMemProfile); p != "" {
		// The heap profile at the largest live heap seen (as the last
		// garbage collection measured it): sampled every 10 ms, written
		// again whenever the live heap is larger than before.
		runtime.MemProfileRate = 64 << 10
		done := make(chan struct{})
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			var peak uint64
			sample := make([]metrics.Sample, 1)
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
				}
				sample[0].Name = "/gc/heap/live:bytes"
				metrics.Read(sample)
				if live := sample[0].Value.Uint64(); live > peak+peak/50 {
					peak = live
					if f, err := os.Create(p); err == nil {
						_ = pprof.Lookup("heap").WriteTo(f, 0)
						f.Close()
					}
					_ = os.WriteFile(p+".peak", []byte(strconv.FormatUint(peak, 10)), 0o644)
				}
			}
		}()
		stops = append(stops, func() { close(done); <-finished })
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}
