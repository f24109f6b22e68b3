//go:build unix

package nn

import "syscall"

// cpuSeconds is the user + system CPU time of the whole process (all
// threads), for benchmark figures that depend less on other processes'
// load than the wall time does.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + 1e-6*float64(ru.Utime.Usec+ru.Stime.Usec)
}
