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
