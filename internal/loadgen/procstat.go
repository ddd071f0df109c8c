package loadgen

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the kernel's USER_HZ, the unit of /proc/stat (100 on every
// Linux architecture Go supports).
const clockTick = 100

// processCPU returns the user + system CPU time of process pid (from
// /proc/<pid>/stat); ok is false where it cannot be read.
func processCPU(pid int) (cpu time.Duration, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis start with field 3 (state).
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 13 {
		return 0, false
	}
	var jiffies int64
	for _, f := range fields[11:13] { // utime, stime: fields 14 and 15
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, false
		}
		jiffies += v
	}
	return time.Duration(jiffies) * time.Second / clockTick, true
}

// machineBusy returns the CPU time every core of the machine spent busy (all
// of /proc/stat's first line but idle and iowait); ok is false where
// /proc/stat cannot be read (not Linux).
func machineBusy() (busy time.Duration, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, false
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, false
	}
	var jiffies int64
	for i, s := range fields[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 8 { // guest time is already counted in user time
			break
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false
		}
		jiffies += v
	}
	return time.Duration(jiffies) * time.Second / clockTick, true
}
