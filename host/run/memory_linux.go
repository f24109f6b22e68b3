package run

import (
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// physicalMemory is the memory this process may use, in bytes, 0 if
// unknown: the machine's RAM (sysinfo(2)), lowered to the process's
// address-space and data limits (RLIMIT_AS, RLIMIT_DATA: `prlimit`,
// `ulimit -v`) and its cgroup's memory limit (a container's, a CI job's),
// so that the default budget's refusals come before the limit's kill.
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	mem := int64(si.Totalram) * int64(si.Unit)
	for _, res := range []int{unix.RLIMIT_AS, unix.RLIMIT_DATA} {
		var rl unix.Rlimit
		if unix.Getrlimit(res, &rl) == nil && rl.Cur != unix.RLIM_INFINITY && rl.Cur > 0 && rl.Cur < uint64(mem) {
			mem = int64(rl.Cur)
		}
	}
	if c := cgroupLimit(); c > 0 && c < mem {
		mem = c
	}
	return mem
}

// cgroupLimit is the memory limit of this process's cgroup (v2
// memory.max, else v1 memory.limit_in_bytes), 0 when none is set or it
// cannot be read.
func cgroupLimit() int64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil || len(b) > 1<<16 {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var root, file string
		switch {
		case f[0] == "0" && f[1] == "": // v2
			root, file = "/sys/fs/cgroup", "memory.max"
		case strings.Contains(","+f[1]+",", ",memory,"): // v1
			root, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		// The least limit of the cgroup and its ancestors (a systemd
		// slice's MemoryMax bounds every cgroup under it).
		least := int64(0)
		for dir := path.Clean("/" + f[2]); ; dir = path.Dir(dir) {
			if v := readLimit(root + dir + "/" + file); v > 0 && (least == 0 || v < least) {
				least = v
			}
			if dir == "/" {
				break
			}
		}
		if least > 0 {
			return least
		}
	}
	return 0
}

// readLimit reads a cgroup limit file: a number of bytes, or "max" (none).
func readLimit(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 64 {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	// v1 writes "no limit" as a page-rounded maximum, 2^63 − 4096.
	if err != nil || v <= 0 || v >= 1<<62 {
		return 0
	}
	return v
}
