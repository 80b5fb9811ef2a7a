package measure

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/stat's counters (USER_HZ, 100 on Linux).
const userHZ = 100

// BusyCPU returns the CPU time all cores have spent busy since boot
// (user, nice, system, irq, softirq, steal: everything but idle and
// iowait), from the "cpu" line of /proc/stat. Taken before and after a
// timed run, less the child's own CPU, it says how much other work (other
// processes, or a hypervisor's steal) competed with the run.
func BusyCPU() (time.Duration, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("reading /proc/stat: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, fmt.Errorf("reading /proc/stat: %w", sc.Err())
	}
	return ParseBusy(sc.Text())
}

// ParseBusy parses the aggregate "cpu ..." line of /proc/stat.
func ParseBusy(line string) (time.Duration, error) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("unexpected /proc/stat line %q", line)
	}
	var ticks int64
	// user nice system idle iowait irq softirq steal
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat field %d: %w", i, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
