// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/lab/vm"
)

// labVMFlags are 'lab vm's flags; set holds the names given.
type labVMFlags struct {
	dur, dir, steps, speed, threaded, rps, out, timeout          *string
	gadgetFn                                                     *string
	kver, kimg, kmods, mdir, exe, wsBin, cache                   *string
	arch, machine, accel, appendArgs                             *string
	tuneArgs, benchArgs, tests, device, deviceArgs               *string
	streams, cycles, busRate, tunnels, cpus, mem, bqlMin, bqlMax *int
	cycleTime                                                    *time.Duration
	raw, profile, noPin, ab, console, asJSON                     *bool
	loads                                                        []string
	set                                                          map[string]bool
}

func addLabVMFlags(fs *flag.FlagSet) *labVMFlags {
	f := &labVMFlags{}
	f.dur = fs.String("t", "10s", "load time of each bench run in the guest")
	fs.StringVar(f.dur, "duration", "10s", "same as -t")
	f.streams = fs.Int("P", 2, "parallel streams (iperf3 -P)")
	f.dir = fs.String("direction", "both", "send (guest device -> peer), receive, or both (two bench runs)")
	f.cycles = fs.Int("cycles", 30, "usbnet-stress: disruptions to run")
	f.cycleTime = fs.Duration("cycle-time", 0, "usbdev-stress: time `BUDGET` per cycle (default 12s; a KASAN guest needs more)")
	f.busRate = fs.Int("bus-rate", 0, "usb-gadget, bql, usbnet-stress: cap the dummy_hcd bus at MBIT Mbit/s (needs the lab dummy_hcd in --modules-dir: kernel/usbnet/build.sh --lab-bus)")
	f.steps = fs.String("steps", "", "usbnet-stress: comma list of disruptions to take in turn (default "+strings.Join(vm.StressSteps, ",")+"); usbdev-stress: of "+strings.Join(vm.DevStressSteps, ",")+" (default all but loadflap)")
	f.speed = fs.String("speed", "", "dummy_hcd link speed for usb-gadget and bql: super (default), high or full")
	f.gadgetFn = fs.String("gadget-function", "", "usb-gadget, bql, usbnet-stress: the dummy_hcd loop's USB network function, "+strings.Join(vm.GadgetFunctionNames(), ", ")+
		" (default ncm; the host drivers cdc_ncm, cdc_ether, cdc_eem, rndis_host, cdc_subset bind them)")
	f.tunnels = fs.Int("tunnels", 4, "wireguard: tunnels (one iperf3 flow each)")
	f.threaded = fs.String("threaded", "", "threaded NAPI on or off for the device under test (usb-gadget, bql, usb-nic, usbdev) or the WireGuard devices (default: the kernel's)")
	f.bqlMax = fs.Int("bql-max", 0, "BQL's limit_max in `BYTES` for the device under test's transmit queues (same scenarios as --bql-min; default: the kernel's)")
	f.bqlMin = fs.Int("bql-min", 0, "BQL's limit_min in `BYTES` for the device under test's transmit queues (usb-gadget, bql, usb-nic, usbdev; default: the kernel's)")
	f.rps = fs.String("rps", "", "RPS CPU `MASK` (hex) for the device under test's receive queues (usb-gadget, bql, usb-nic, usbdev), e.g. d for vCPUs 0, 2, 3 (default: off)")
	f.out = fs.String("out", "", "directory for the results (default wirespeed-vm-SCENARIO-DATE-TIME)")
	f.kver = fs.String("kernel-version", "", "Debian kernel: a family, 6.1 (bookworm's default), 6.12 or 7.x (Debian 13's trixie-backports, 7.0-7.3), for its newest, or a release, e.g. 6.12.117, 6.1.0-56 or 7.3.4 (default: the newest 6.12 apt knows)")
	f.kimg = fs.String("kernel", "", "boot this kernel image instead of Debian's (needs --modules)")
	f.kmods = fs.String("modules", "", "the lib/modules/RELEASE tree of --kernel (with modules.dep)")
	f.mdir = fs.String("modules-dir", "", "directory of .ko files that replace the kernel's modules of the same name")
	fs.Func("load", "load a module before the scenario: 'NAME [param=value ...]' (repeatable)", func(s string) error {
		f.loads = append(f.loads, s)
		return nil
	})
	f.exe = fs.String("exec", "", "boot scenario: shell command to run in the guest")
	f.tests = fs.String("tests", "", "selftests: comma list of tools/testing/selftests/drivers/net tests to run (default all of: "+strings.Join(vm.SelftestNames, ", ")+")")
	f.wsBin = fs.String("wirespeed", "", "static wirespeed binary for the guest (default: this one)")
	f.cache = fs.String("cache", vm.DefaultCacheDir(), "cache for kernels and initramfs images")
	f.timeout = fs.String("timeout", "0", "hard limit for the guest (0: estimated from the scenario)")
	f.arch = fs.String("arch", "amd64", "guest architecture: amd64, or arm64 (Debian's arm64 kernel and packages, the arm64 binary of make cross)")
	f.machine = fs.String("machine", "", "board: pc (amd64); raspi3b (arm64 default: a Raspberry Pi 3 B, the Pi's interrupt controllers and DWC2 USB) or virt (a Pi 4-class Cortex-A72 with a GICv2 and xHCI on PCIe)")
	f.cpus = fs.Int("cpus", 0, "vCPUs (default 2; raspi3b has 4)")
	f.mem = fs.Int("mem", 0, "guest memory in MB (default 1024, which raspi3b has)")
	f.accel = fs.String("accel", "auto", "auto (KVM when it works, else tcg-single for x86 guests and tcg for arm64 ones), kvm, tcg (multi-threaded; an x86 guest's text patching crashes some boots with Oops: int3), tcg-single or tcg-icount (tcg-single with -icount shift=0,sleep=off: host load does not skew the guest's clock; an x86 guest's spinlocks can starve there - RCU stalls - unless --append clearcpuid=hypervisor)")
	f.appendArgs = fs.String("append", "", "extra kernel command line, e.g. 'watchdog_thresh=2', or 'clearcpuid=hypervisor' (fair spinlocks under tcg-icount)")
	f.raw = fs.Bool("raw-iperf3", false, "run iperf3 -J in the guest instead of wirespeed bench")
	f.profile = fs.Bool("profile", false, "sample every vCPU during each bench with perf (this host's, or Debian's linux-perf for an arm64 guest) into OUT/profile-DIRECTION.folded")
	f.noPin = fs.Bool("no-pin-tracepoints", false, "do not enable observe's tracepoints at boot (they are, to avoid kernel text patching under load; see docs)")
	f.tuneArgs = fs.String("tune", "", "usb-nic, usbdev: run 'wirespeed tune apply DEV --peer 198.18.3.1 ARGS' on the adapter after the bench, then tune persist and a USB re-plug, e.g. '--direction receive --pairs 3'")
	f.device = fs.String("device", "", "usbdev: the emulated adapter's model: "+strings.Join(vm.DeviceModels(), ", ")+" (default ncm)")
	f.deviceArgs = fs.String("device-args", "", "usbdev: extra 'wirespeed lab usbdev' flags, e.g. '--mbit 1000' or the hostile mode's '--bad 20 --seed 7'")
	f.benchArgs = fs.String("bench-args", "", "extra 'wirespeed bench' flags for the guest, e.g. '--repeat 3'")
	f.ab = fs.Bool("ab", false, "A/B: run the scenario twice, stock modules into OUT/stock, then --modules-dir's into OUT/modules (add --bench-args '--repeat 3' for compare's t-test)")
	f.console = fs.Bool("console", false, "copy the guest console to stderr while it runs")
	f.asJSON = fs.Bool("json", false, "print vm.json (the run's outcome) on stdout")
	return f
}

// config checks the arguments (one scenario) and every flag, before
// anything is started, and returns the VM lab's configuration.
func (f *labVMFlags) config(env Env, pos []string) (vm.Config, error) {
	if *f.out != "" {
		if err := existingDir("--out", strings.TrimSuffix(*f.out, "/")); err != nil {
			return vm.Config{}, err
		}
	}
	if len(pos) != 1 {
		return vm.Config{}, usageErrorf("lab vm: want one scenario: %s (or 'list')", strings.Join(vm.ScenarioNames(), ", "))
	}
	if _, err := vm.Lookup(pos[0]); err != nil {
		return vm.Config{}, &UsageError{Err: err}
	}
	d, to, err := f.checkNumbers()
	if err != nil {
		return vm.Config{}, err
	}
	cfg := vm.Config{
		Options: vm.Options{Scenario: pos[0], Arch: *f.arch, Machine: *f.machine, Duration: d, Streams: *f.streams, Direction: *f.dir, Speed: *f.speed, GadgetFunction: *f.gadgetFn, Cycles: *f.cycles, CycleTime: *f.cycleTime, Steps: splitList(*f.steps), BusRate: *f.busRate, Tunnels: *f.tunnels, Threaded: *f.threaded, RPS: *f.rps, BQLMin: *f.bqlMin, BQLMax: *f.bqlMax,
			Load: f.loads, Exec: *f.exe, RawIperf3: *f.raw, NoPin: *f.noPin, BenchArgs: strings.Fields(*f.benchArgs), Tune: *f.tuneArgs, Profile: *f.profile,
			Tests: splitList(*f.tests), Device: *f.device, DeviceArgs: strings.Fields(*f.deviceArgs)},
		CacheDir: *f.cache, KernelRelease: *f.kver, KernelImage: *f.kimg, ModulesPath: *f.kmods, ModulesDir: *f.mdir,
		Wirespeed: *f.wsBin, OutDir: *f.out, Timeout: to, CPUs: *f.cpus, MemMB: *f.mem, Accel: *f.accel, Append: *f.appendArgs,
		Logf: func(format string, a ...any) { fmt.Fprintf(env.Stderr, "lab vm: "+format+"\n", a...) },
	}
	if *f.console {
		cfg.Console = env.Stderr
	}
	if err := cfg.Validate(); err != nil {
		return vm.Config{}, &UsageError{Err: err}
	}
	return cfg, nil
}

// checkNumbers checks every number given and returns the load time (-t)
// and the guest's time limit (--timeout).
func (f *labVMFlags) checkNumbers() (d, to time.Duration, err error) {
	// Every number is checked before anything is started, so a bad one
	// costs no boot and is not replaced by the guest script's default.
	for _, n := range []struct {
		flag      string
		v, lo, hi int
		what      string
	}{{"cycles", *f.cycles, 1, 100000, "disruptions"}, {"P", *f.streams, 1, 128, "streams"}, {"tunnels", *f.tunnels, 1, 64, "tunnels"},
		{"cpus", *f.cpus, 1, 64, "vCPUs"}, {"mem", *f.mem, 256, 1 << 20, "MB"}} {
		if f.set[n.flag] && (n.v < n.lo || n.v > n.hi) {
			return 0, 0, usageErrorf("lab vm: %s %d: want %d-%d %s", dashed(n.flag), n.v, n.lo, n.hi, n.what)
		}
	}
	if d, err = parseDurationFlag("t", *f.dur); err != nil {
		return 0, 0, err
	}
	if to, err = parseDurationFlag("timeout", *f.timeout); err != nil {
		return 0, 0, err
	}
	if f.set["t"] || f.set["duration"] {
		if d < time.Second || d > time.Hour {
			return 0, 0, usageErrorf("lab vm: -t %v: want 1s to 1h", d)
		}
	}
	if to != 0 && to < 10*time.Second {
		return 0, 0, usageErrorf("lab vm: --timeout %v: want 0 (estimated from the scenario) or 10s or more: a guest boots in seconds to minutes", to)
	}
	return d, to, nil
}
