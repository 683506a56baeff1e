// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/shellquote"
)

// markerPrefix starts every line the guest's init prints for the host.
const markerPrefix = "@@WS"

// Options are a scenario run's settings.
type Options struct {
	Scenario string `json:"scenario"`
	// Arch is the guest's architecture: amd64 (default) or arm64.
	Arch string `json:"arch,omitempty"`
	// Machine is the board (machines): pc for amd64, raspi3b (default)
	// or virt for arm64.
	Machine string `json:"machine,omitempty"`
	// Duration is the load time of each bench run in the guest.
	Duration time.Duration `json:"duration_ns"`
	// Streams is iperf3 -P.
	Streams int `json:"streams"`
	// Directions: "send", "receive" or "both" (send, then receive, as two
	// bench runs). send means from the device under test to its peer.
	Direction string `json:"direction"`
	// Speed of the dummy_hcd link: super, high or full (usb-gadget, bql).
	Speed string `json:"speed,omitempty"`
	// GadgetFunction is the dummy_hcd loop's USB network function
	// (usb-gadget, bql, usbnet-stress): ncm ("" too), ecm, eem, rndis or
	// subset (gadgetfn.go).
	GadgetFunction string `json:"gadget_function,omitempty"`
	// Tunnels is the wireguard scenario's knob.
	Tunnels int `json:"tunnels,omitempty"`
	// Threaded: "on", "off" or "" (the kernel's default) for the NAPI of
	// the device under test (usb-gadget, bql, usb-nic, usbdev) or of the
	// WireGuard devices.
	Threaded string `json:"threaded,omitempty"`
	// RPS is a hex CPU mask written to every receive queue's rps_cpus of
	// the device under test (usb-gadget, bql, usb-nic, usbdev): its protocol
	// processing steered to those vCPUs. "" leaves RPS as the kernel has
	// it (off).
	RPS string `json:"rps_cpus,omitempty"`
	// BQLMin, when above 0, is written to every transmit queue's
	// byte_queue_limits/limit_min of the device under test (same
	// scenarios as RPS): BQL's limit then never falls below it.
	BQLMin int `json:"bql_limit_min,omitempty"`
	// BQLMax, when above 0, is written to limit_max the same way: BQL's
	// limit then never rises above it (not below --bql-min).
	BQLMax int `json:"bql_limit_max,omitempty"`
	// BenchArgs are extra 'wirespeed bench' flags (split on spaces).
	BenchArgs []string `json:"bench_args,omitempty"`
	// Load names extra modules (from the kernel or --modules-dir) to load
	// before the scenario, "name" or "name param=value ...".
	Load []string `json:"load,omitempty"`
	// Exec is a shell command the 'boot' scenario runs.
	Exec string `json:"exec,omitempty"`
	// RawIperf3 skips wirespeed bench and runs iperf3 -J directly.
	RawIperf3 bool `json:"raw_iperf3,omitempty"`
	// NoPin leaves the tracepoints observe uses off until it attaches (see
	// ws_pin_tracepoints in the guest's scripts).
	NoPin bool `json:"no_pin_tracepoints,omitempty"`
	// Cycles is the usbnet-stress scenario's number of disruptions.
	Cycles int `json:"cycles,omitempty"`
	// CycleTime is usbdev-stress's budget per cycle (0: 12 s); a KASAN
	// guest under TCG needs several times that.
	CycleTime time.Duration `json:"cycle_time_ns,omitempty"`
	// BusRate caps the dummy_hcd bus at this many Mbit/s (0: uncapped);
	// needs the lab build of dummy_hcd in --modules-dir (kernel/usbnet
	// build.sh --lab-bus), whose rate_mbit parameter does it.
	BusRate int `json:"bus_rate_mbit,omitempty"`
	// Steps are the usbnet-stress disruptions to take in turn (default
	// StressSteps).
	Steps []string `json:"steps,omitempty"`
	// Tune, when set, makes usb-nic or usbdev run 'wirespeed tune apply' with these
	// extra flags (split on spaces) after its bench, then persist and a
	// re-plug (see tune.go).
	Tune string `json:"tune,omitempty"`
	// Device is the usbdev scenario's device model (usbdev.Models).
	Device string `json:"device,omitempty"`
	// DeviceArgs are extra 'wirespeed lab usbdev' flags (split on
	// spaces): the link rate, the hostile mode.
	DeviceArgs []string `json:"device_args,omitempty"`
	// Profile samples every vCPU during each bench with perf record
	// (cpu-clock, call chains) and returns the folded stacks as
	// profile-DIRECTION.folded; the perf binary is the host's, or for a
	// foreign guest Debian's linux-perf of its architecture.
	Profile bool `json:"profile,omitempty"`
	// Tests are the selftests scenario's drivers/net tests (default
	// SelftestNames).
	Tests []string `json:"tests,omitempty"`
}

// Scenario is one guest topology and what runs in it.
type Scenario struct {
	Name    string
	Summary string
	// Modules the scenario loads, in the order given (each resolved with its
	// dependencies). params gives a module's parameters.
	Modules func(o Options) []string
	Params  func(o Options) map[string]string
	// Script is the shell body run by the guest's init after the modules load.
	Script func(o Options) string
	// USBNIC adds QEMU's xHCI + usb-net on a tap in a host namespace.
	USBNIC bool
	// USBDev adds QEMU's xHCI + usb-redir to a device process ('wirespeed
	// lab usbdev', --device) whose tap is in a host namespace.
	USBDev bool
	// MaxTime estimates the guest's run time for the hard timeout.
	MaxTime func(o Options) time.Duration
	// NoBench: the scenario runs no bench, so observe's tracepoints need
	// not be pinned before it.
	NoBench bool
	// Selftests: the guest gets the Debian root disk (debroot.go) and the
	// kernel's selftests in its run archive (selftests_build.go).
	Selftests bool
	// Collect, when set, reads the run's result files in the output
	// directory after the guest is done (selftests: selftests.json).
	Collect func(dir string) error
}

// Addresses (RFC 2544 benchmarking range; only inside the guest or in the
// host namespace wirespeed creates).
const (
	gadgetHostAddr = "198.18.2.1" // guest, cdc_ncm side (usbnet)
	gadgetPeerAddr = "198.18.2.2" // guest, gadget namespace (u_ether / f_ncm)
	nicGuestAddr   = "198.18.3.2" // guest, cdc_ether (usbnet)
	nicHostAddr    = "198.18.3.1" // host namespace, tap
)

func benchTime(o Options) time.Duration {
	runs := 1
	if o.Direction == "both" {
		runs = 2
	}
	// idle 1s + load + omit + inspect and observe setup, per run
	return time.Duration(runs) * (o.Duration + 15*time.Second)
}

var scenarios = map[string]*Scenario{
	"usb-gadget": {
		Name:    "usb-gadget",
		Summary: "dummy_hcd + configfs NCM gadget (or --gadget-function's) looped back to cdc_ncm (or its host driver, on usbnet); the gadget side in its own namespace",
		Modules: func(o Options) []string { return gadgetModules(o) },
		Params:  func(o Options) map[string]string { return map[string]string{"dummy_hcd": busParams(o, o.Speed)} },
		Script:  func(o Options) string { return gadgetScript(o, false) },
		MaxTime: benchTime,
	},
	"bql": {
		Name:    "bql",
		Summary: "the NCM gadget link (super speed by default), slower than the host, so usbnet's TX queue fills; prio qdisc + prioritized probe under load",
		Modules: func(o Options) []string { return gadgetModules(o, "sch_prio") },
		Params:  func(o Options) map[string]string { return map[string]string{"dummy_hcd": busParams(o, o.Speed)} },
		Script:  func(o Options) string { return gadgetScript(o, true) },
		MaxTime: benchTime,
	},
	"usb-nic": {
		Name:    "usb-nic",
		Summary: "QEMU's USB NIC (usb-net, CDC-ECM -> cdc_ether on usbnet; on qemu-xhci, or the Pi's DWC2 on raspi3b) on a tap in a host namespace running iperf3 natively",
		Modules: func(o Options) []string { return append(append([]string(nil), machineOf(o).USBHost...), "cdc_ether") },
		Script:  nicScript,
		USBNIC:  true,
		MaxTime: tuneMaxTime,
	},
	"wireguard": {
		Name:    "wireguard",
		Summary: "N WireGuard tunnels between two guest namespaces over a veth, one flow per tunnel (policy routing by port), threaded NAPI on or off",
		Modules: func(o Options) []string { return []string{"wireguard", "veth"} },
		Script:  wireguardScript,
		MaxTime: benchTime,
	},
	"boot": {
		Name:    "boot",
		NoBench: true,
		Summary: "boot, load the --load modules, run --exec CMD, return dmesg (for checking a kernel or a module)",
		Modules: func(o Options) []string { return nil },
		Script: func(o Options) string {
			cmd := o.Exec
			if strings.TrimSpace(cmd) == "" {
				cmd = "true"
			}
			return "ws stage exec\n/bin/sh -c " + shellquote.Quote(cmd) + " > /results/exec.txt 2>&1; echo \"exit=$?\" >> /results/exec.txt\n"
		},
		MaxTime: func(o Options) time.Duration { return 30 * time.Second },
	},
}

// ScenarioNames lists the scenarios, sorted.
func ScenarioNames() []string {
	var n []string
	for k := range scenarios {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Lookup returns a scenario or an error listing the known ones.
func Lookup(name string) (*Scenario, error) {
	if s, ok := scenarios[name]; ok {
		return s, nil
	}
	var lines []string
	for _, n := range ScenarioNames() {
		lines = append(lines, fmt.Sprintf("  %-11s %s", n, scenarios[n].Summary))
	}
	return nil, fmt.Errorf("unknown scenario %q; give one of these ('wirespeed lab vm list'):\n%s", name, strings.Join(lines, "\n"))
}

// ScenarioSummary returns a scenario's one-line description.
func ScenarioSummary(name string) string {
	if s, ok := scenarios[name]; ok {
		return s.Summary
	}
	return ""
}

// allModules is every module any scenario loads on a board: the base
// image holds them all, so one cached image serves every scenario.
func allModules(arch, machine string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range ScenarioNames() {
		o := Options{Speed: "super", Arch: arch, Machine: machine}
		mods := append(append([]string(nil), machineOf(o).Platform...), scenarios[n].Modules(o)...)
		if gadgetScenario(n) {
			for _, f := range gadgetFunctions {
				o.GadgetFunction = f.Name
				mods = append(mods, scenarios[n].Modules(o)...)
			}
		}
		for _, m := range mods {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// busParams are dummy_hcd's parameters for a speed and --bus-rate.
func busParams(o Options, speed string) string {
	p := dummyParams(speed)
	if o.BusRate > 0 {
		p += " rate_mbit=" + strconv.Itoa(o.BusRate)
	}
	return p
}

// busRateCheck fails the guest when --bus-rate was asked for and the
// dummy_hcd loaded does not apply it (the stock one has no rate_mbit and
// would only warn about the unknown parameter).
func busRateCheck(o Options) string {
	if o.BusRate <= 0 {
		return ""
	}
	return fmt.Sprintf(`[ "$(cat /sys/module/dummy_hcd/parameters/rate_mbit 2>/dev/null)" = %d ] || fail "--bus-rate %d: dummy_hcd has no rate_mbit=%d (give --modules-dir with the lab dummy_hcd: kernel/usbnet/build.sh --lab-bus)"
echo "bus_rate_mbit=%d" >> /results/facts.txt
`, o.BusRate, o.BusRate, o.BusRate, o.BusRate)
}

func dummyParams(speed string) string {
	switch speed {
	case "high":
		return "is_super_speed=0 is_high_speed=1"
	case "full":
		return "is_super_speed=0 is_high_speed=0"
	}
	return "is_super_speed=1 is_high_speed=1"
}

// ValidSpeed checks a --speed value.
func ValidSpeed(s string) error {
	switch s {
	case "super", "high", "full":
		return nil
	}
	return fmt.Errorf("speed %q: want super, high or full (dummy_hcd is_super_speed/is_high_speed)", s)
}
