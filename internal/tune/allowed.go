// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/doctor"
)

// The one list of files below /sys that tune may write. Every sysfs action -
// from doctor, from --actions, from a journal being reverted, shown or made
// persistent - is held to it, after the path has been cleaned. The other
// kinds name their targets by a number or a name from which the path is
// built (sysctl: net.* only; irq: /proc/irq/N; governor: CPU numbers), so
// they cannot point anywhere else.
var sysfsAllowed = []*regexp.Regexp{
	// Device-wide NAPI knobs.
	regexp.MustCompile(`^/sys/class/net/(?P<dev>[^/]+)/(threaded|gro_flush_timeout|napi_defer_hard_irqs|tx_queue_len)$`),
	// RX queue steering.
	regexp.MustCompile(`^/sys/class/net/(?P<dev>[^/]+)/queues/rx-[0-9]+/(rps_cpus|rps_flow_cnt)$`),
	// TX queue steering, rate and BQL.
	regexp.MustCompile(`^/sys/class/net/(?P<dev>[^/]+)/queues/tx-[0-9]+/(xps_cpus|xps_rxqs|tx_maxrate)$`),
	regexp.MustCompile(`^/sys/class/net/(?P<dev>[^/]+)/queues/tx-[0-9]+/byte_queue_limits/(limit_min|limit_max|hold_time|stall_thrs)$`),
	// CPU frequency policy.
	regexp.MustCompile(`^/sys/devices/system/cpu/cpu[0-9]+/cpufreq/(energy_performance_preference|scaling_governor)$`),
}

// maxDevName is IFNAMSIZ less its terminating NUL.
const maxDevName = 15

// checkDevName refuses what cannot be a network device's name (the
// kernel's dev_valid_name), and a name beginning with "-", which ethtool
// and tc would take for an option.
func checkDevName(dev string) error {
	if dev == "" || len(dev) > maxDevName || dev == "." || dev == ".." || strings.HasPrefix(dev, "-") ||
		strings.ContainsFunc(dev, func(r rune) bool { return r == '/' || r == ':' || r <= ' ' || r >= 0x7f }) {
		return fmt.Errorf("device name %q is not a network device name", dev)
	}
	return nil
}

// checkSysfsTarget says whether tune may write the sysfs file target on
// behalf of device dev.
func checkSysfsTarget(target, dev string) error {
	if !strings.HasPrefix(target, "/sys/") || filepath.Clean(target) != target {
		return fmt.Errorf("sysfs target %q: want a clean absolute path below /sys", target)
	}
	for _, re := range sysfsAllowed {
		m := re.FindStringSubmatch(target)
		if m == nil {
			continue
		}
		i := re.SubexpIndex("dev")
		if i < 0 {
			if dev != "" {
				return fmt.Errorf("sysfs target %s is not a file of device %s", target, dev)
			}
			return nil
		}
		if dev == "" {
			return fmt.Errorf("sysfs target %s: the action names no device", target)
		}
		if err := checkDevName(dev); err != nil {
			return err
		}
		if m[i] != dev {
			return fmt.Errorf("sysfs target %s is not a file of device %s", target, dev)
		}
		return nil
	}
	return fmt.Errorf("sysfs target %s is not one tune changes (a network device's NAPI, queue or BQL file, or a CPU's cpufreq policy)", target)
}

// errEscapes is a write whose path leads out of the kernel's trees.
var errEscapes = errors.New("resolves outside /sys and /proc")

// containedIn resolves p's symbolic links and checks that the file is
// still below one of roots (sysfs links /sys/class/net/X into
// /sys/devices; nothing tune writes may lead out of /sys and /proc).
func containedIn(p string, roots ...string) error {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err
	}
	for _, r := range roots {
		if rr, err := filepath.EvalSymlinks(r); err == nil {
			r = rr
		}
		if strings.HasPrefix(real, strings.TrimSuffix(r, "/")+"/") {
			return nil
		}
	}
	return fmt.Errorf("%s %w (%s)", p, errEscapes, real)
}

// checkStateFile refuses a state directory or journal that someone other
// than this user (root, on a real host) could have written: the journal
// decides what revert writes, so it must be as trusted as the binary.
func checkStateFile(p string, fi os.FileInfo) error {
	st, ok := sysStat(fi)
	if !ok {
		return nil
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by uid %d, not by this user (uid %d): wirespeed trusts only its own state; check who wrote it, then fix the owner (chown) or use another --state-dir", p, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
		return fmt.Errorf("%s is writable by group or others (mode %v): wirespeed trusts only a state it alone can write; check its contents, then chmod go-w %s", p, fi.Mode().Perm(), p)
	}
	return nil
}

// cpusOf returns the CPUs an action names (IRQ affinity, governor CPUs,
// steering masks, a cpufreq file's CPU), or nil when it names none.
func cpusOf(a doctor.Action) []int {
	switch a.Kind {
	case doctor.KindIRQAffinity:
		c, _ := cpumask.ParseList(a.Value)
		return c
	case doctor.KindGovernor:
		c, _ := cpumask.ParseList(a.Target)
		return c
	case doctor.KindSysfs:
		if strings.HasSuffix(a.Target, "_cpus") {
			c, _ := cpumask.ParseMask(a.Value)
			return c
		}
		if m := cpufreqCPU.FindStringSubmatch(a.Target); m != nil {
			n, _ := strconv.Atoi(m[1])
			return []int{n}
		}
	}
	return nil
}

var cpufreqCPU = regexp.MustCompile(`^/sys/devices/system/cpu/cpu([0-9]+)/`)

// checkCPUs refuses an action that names a CPU this host does not have (a
// report or journal of a bigger host), before anything is written. A
// system without the possible-CPU file (a test tree) is not checked.
func (s *System) checkCPUs(a doctor.Action) error {
	cpus := cpusOf(a)
	if len(cpus) == 0 {
		return nil
	}
	b, err := s.readFile("/sys/devices/system/cpu/possible")
	if err != nil {
		return nil
	}
	have, err := cpumask.ParseList(strings.TrimSpace(b))
	if err != nil {
		return nil
	}
	ok := map[int]bool{}
	for _, c := range have {
		ok[c] = true
	}
	for _, c := range cpus {
		if !ok[c] {
			return fmt.Errorf("action %s names CPU %d, and this host has CPUs %s only: was it planned on another host? run 'wirespeed doctor' here", a.ID, c, strings.TrimSpace(b))
		}
	}
	return nil
}
