// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/wirespeed/wirespeed/internal/ethtoolioctl"
	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/netdevnl"
	"github.com/wirespeed/wirespeed/internal/rtnl"
	"golang.org/x/sys/unix"
)

// Answers holds everything inspect learns from the kernel other than by
// reading files: netlink dumps, ethtool ioctls and the IRQ affinity probe.
// Live answers are asked once and kept, so a snapshot stores exactly what
// this run saw and --from replays it.
type Answers struct {
	Euid int `json:"euid"`

	NAPIs      []netdevnl.NAPI  `json:"napis"`
	NAPIsError string           `json:"napis_error,omitempty"`
	NAPIsNoSup bool             `json:"napis_unsupported,omitempty"`
	Queues     []netdevnl.Queue `json:"queues"`
	QueueError string           `json:"queues_error,omitempty"`
	Qdiscs     []rtnl.Qdisc     `json:"qdiscs"`
	QdiscError string           `json:"qdiscs_error,omitempty"`

	// Per interface name.
	Features      map[string]map[string]ethtoolioctl.Feature `json:"features"`
	FeatureErrors map[string]string                          `json:"feature_errors,omitempty"`
	Drivers       map[string]ethtoolioctl.DrvInfo            `json:"drivers"`
	DriverErrors  map[string]string                          `json:"driver_errors,omitempty"`
	// Per IRQ number (as a string): the result of the affinity probe, see
	// probeAffinity.
	AffinityProbes map[string]string `json:"affinity_probes"`
	// IRQBalance is "running" or "not running" (a process named
	// irqbalance); empty in snapshots taken before it was asked.
	IRQBalance string `json:"irqbalance,omitempty"`
	// Services are the knob owners (platform.go) that run; nil in
	// snapshots taken before inspect asked (format version 1).
	Services []string `json:"services"`

	live bool
	fs   *hostfs.FS
	mu   sync.Mutex
}

// Probe results stored in Answers.AffinityProbes.
const (
	probeAccepted = "accepted" // passed the kernel's user-affinity gate
	probeEIO      = "EIO"      // refused by the gate (kernels before 6.12)
	probeEPERM    = "EPERM"    // refused by the gate (6.12 on), asked as root
	probeNotRoot  = "not-root"
	probeNoFile   = "no-file"
)

// LiveAnswers asks the running kernel. Dumps that fail are recorded as
// errors, never fatal: inspect says what it could not learn.
func LiveAnswers(f *hostfs.FS) *Answers {
	a := &Answers{
		Euid:           os.Geteuid(),
		Features:       map[string]map[string]ethtoolioctl.Feature{},
		FeatureErrors:  map[string]string{},
		Drivers:        map[string]ethtoolioctl.DrvInfo{},
		DriverErrors:   map[string]string{},
		AffinityProbes: map[string]string{},
		live:           true,
		fs:             f,
	}
	a.IRQBalance = "not running"
	a.Services = liveServices(f)
	if procRunning(f, "irqbalance") {
		a.IRQBalance = "running"
	}
	if n, err := netdevnl.DumpNAPIs(); err != nil {
		a.NAPIsError = err.Error()
		a.NAPIsNoSup = errors.Is(err, netdevnl.ErrNotSupported)
	} else {
		a.NAPIs = n
	}
	if q, err := netdevnl.DumpQueues(); err != nil {
		a.QueueError = err.Error()
	} else {
		a.Queues = q
	}
	if q, err := rtnl.DumpQdiscs(); err != nil {
		a.QdiscError = err.Error()
	} else {
		a.Qdiscs = q
	}
	return a
}

// ReplayAnswers decodes answers stored in a snapshot.
func ReplayAnswers(raw json.RawMessage) (*Answers, error) {
	a := &Answers{}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		what := "empty"
		if len(t) > 0 {
			what = fmt.Sprintf("%.20s", t)
		}
		return nil, fmt.Errorf("the snapshot's answers.json (what inspect learnt from netlink, ethtool and the IRQ probe) is %s, not an object: the snapshot is damaged; take a new one with 'wirespeed inspect --save'", what)
	}
	if err := json.Unmarshal(raw, a); err != nil {
		return nil, fmt.Errorf("the snapshot's answers.json is damaged (%s): take a new snapshot with 'wirespeed inspect --save'", hostfs.JSONProblem(err))
	}
	if a.Features == nil {
		a.Features = map[string]map[string]ethtoolioctl.Feature{}
	}
	if a.FeatureErrors == nil {
		a.FeatureErrors = map[string]string{}
	}
	if a.AffinityProbes == nil {
		a.AffinityProbes = map[string]string{}
	}
	if a.Drivers == nil {
		a.Drivers = map[string]ethtoolioctl.DrvInfo{}
	}
	if a.DriverErrors == nil {
		a.DriverErrors = map[string]string{}
	}
	return a, nil
}

func (a *Answers) features(ifname string) (map[string]ethtoolioctl.Feature, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if f, ok := a.Features[ifname]; ok {
		return f, ""
	}
	if e, ok := a.FeatureErrors[ifname]; ok {
		return nil, e
	}
	if !a.live {
		return nil, "not in snapshot"
	}
	f, err := ethtoolioctl.Features(ifname)
	if err != nil {
		a.FeatureErrors[ifname] = err.Error()
		return nil, err.Error()
	}
	a.Features[ifname] = f
	return f, ""
}

func (a *Answers) driver(ifname string) (ethtoolioctl.DrvInfo, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if d, ok := a.Drivers[ifname]; ok {
		return d, ""
	}
	if e, ok := a.DriverErrors[ifname]; ok {
		return ethtoolioctl.DrvInfo{}, e
	}
	if !a.live {
		return ethtoolioctl.DrvInfo{}, "not in snapshot"
	}
	d, err := ethtoolioctl.DriverInfo(ifname)
	if err != nil {
		a.DriverErrors[ifname] = err.Error()
		return d, err.Error()
	}
	a.Drivers[ifname] = d
	return d, ""
}

// probeAffinity finds out whether the kernel lets a user set the affinity
// of irq, without changing it: it writes a mask that cannot parse. The
// kernel checks whether the IRQ's affinity can be set from user space
// (not per-CPU, not managed, a chip with an affinity callback) before it
// parses the mask and answers EIO if not (EPERM from 6.12 on: Debian's
// 6.1 answers EIO, its 6.12 EPERM, which is why a root probe's EPERM is
// the gate and not a permission); past that check the bad mask is
// rejected with EINVAL and nothing happens. A chip whose callback itself
// refuses (the Raspberry Pi 4's PCIe MSI) passes the gate; collect.go knows
// those chips by name.
func (a *Answers) probeAffinity(irq int) string {
	key := fmt.Sprint(irq)
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.AffinityProbes[key]; ok || !a.live {
		return r
	}
	r := a.doProbe(irq)
	a.AffinityProbes[key] = r
	return r
}

func (a *Answers) doProbe(irq int) string {
	p := fmt.Sprintf("/proc/irq/%d/smp_affinity", irq)
	if !a.fs.Exists(p) {
		return probeNoFile
	}
	if a.Euid != 0 {
		return probeNotRoot
	}
	err := a.fs.WriteFile(p, []byte("wirespeed-probe\n"))
	var errno syscall.Errno
	switch {
	case err == nil:
		// Cannot happen for a mask that does not parse; say so rather
		// than guess.
		return "unexpected: probe write accepted"
	case errors.As(err, &errno) && errno == syscall.EIO:
		return probeEIO
	case errors.As(err, &errno) && (errno == syscall.EINVAL || errno == syscall.ERANGE || errno == syscall.EOVERFLOW):
		return probeAccepted
	case errors.As(err, &errno) && errno == syscall.EPERM:
		// root opened the file (a permission failure is EACCES at open)
		return probeEPERM
	case errors.Is(err, fs.ErrPermission):
		return probeNotRoot
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	}
	return "error: " + err.Error()
}

// procRunning says whether a process named comm runs, looking at every
// /proc/PID/comm without recording any (a snapshot keeps only the answer).
func procRunning(f *hostfs.FS, comm string) bool {
	pids, _ := f.Quiet().ReadDir("/proc")
	for _, p := range pids {
		if p == "" || p[0] < '0' || p[0] > '9' {
			continue
		}
		if c, err := f.Quiet().ReadString("/proc/" + p + "/comm"); err == nil && c == comm {
			return true
		}
	}
	return false
}
