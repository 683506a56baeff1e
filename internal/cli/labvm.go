// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/lab/vm"
)

// runLabVM is reached as "wirespeed lab vm" (lab.go dispatches to it).
const labVMUsage = `wirespeed lab vm SCENARIO [flags] | wirespeed lab vm list

Boots Debian's own kernel in QEMU - the newest 6.12 by default,
--kernel-version 6.1 for bookworm's default 6.1, 7.x for Debian 13's
trixie-backports kernel (7.0-7.3, through apt lists of the lab's own) -
fetched with apt-get download into the cache (nothing installed on the
host), with an initramfs
holding busybox, iperf3, iproute2, this wirespeed binary and the modules the
scenario needs, and runs the scenario: 'wirespeed bench' (with observe)
inside the guest, both directions by default. The result files come back
into --out DIR: bench-send.json and bench-receive.json ('wirespeed show',
'wirespeed compare'), facts.txt, dmesg.txt, console.log, vm.json.

The console is watched for Kernel panic, BUG, WARNING, Oops, general
protection faults, KASAN, soft/hard lockups and RCU stalls: any of them fails
the run (exit 1) with the log excerpt. QEMU is killed on timeout and Ctrl-C;
the host namespace of usb-nic is removed; a killed run's leftovers are
reaped by the next. Needs root and qemu-system-x86 (apt-get install
qemu-system-x86 busybox-static kmod iperf3).

--arch arm64 boots Debian's arm64 kernel on a Raspberry Pi 3 B (--machine
raspi3b, the default: 4 Cortex-A53, 1 GiB, usb-net on the Pi's DWC2) or on
QEMU's virt board (--machine virt), with busybox, iperf3, iproute2 and the
rest unpacked from Debian's arm64 packages (apt lists of their own in the
cache; the host's dpkg is not touched) and dist/wirespeed-linux-arm64 from
make cross. Needs qemu-system-arm and qemu-user-static. Emulated, so
figures are TCG figures: compare stock and patched in one run, not with a
real board.

Scenarios (wirespeed lab vm list):
  usb-gadget  dummy_hcd + configfs NCM gadget looped back to cdc_ncm (usbnet)
  usb-nic     qemu-xhci + usb-net (cdc_ether on usbnet) to a tap in a host namespace
  bql         the NCM link (super speed) with a prio qdisc and an EF probe
  wireguard   --tunnels N WireGuard tunnels between two guest namespaces, --threaded on|off
  (usb-gadget, bql and usb-nic take --threaded on|off for the usbnet device)
  usbnet-stress  --cycles N of rebind, link flap, MTU, module reload, suspend/resume under traffic,
              and suspend with the link down (--steps picks some)
  boot        boot, --load modules, --exec CMD

Examples:
  wirespeed lab vm usb-gadget -t 10s
  wirespeed lab vm usb-nic --direction receive --out /tmp/nic
  wirespeed lab vm usb-gadget --modules-dir kernel/usbnet/out/KVER   (patched usbnet)
  wirespeed lab vm usb-gadget --modules-dir kernel/usbnet/out/KVER --ab --bench-args '--repeat 3'
                                               (stock, then patched; prints the compare commands)
  wirespeed lab vm usb-nic --accel tcg --tune '--direction receive --pairs 3 --duration 5s'
                                               (tune apply in the guest: tune-apply.json, re-plug)
  wirespeed lab vm boot --modules-dir ./mods --load mymod --exec 'dmesg | tail'
  make cross && wirespeed lab vm usb-nic --arch arm64 --wirespeed dist/wirespeed-linux-arm64
                                               (the Pi 3-class guest: dwc2 + cdc_ether)`

func runLabVM(ctx context.Context, env Env, args []string) error {
	// Its own usage text for -h.
	c := &Command{Name: "lab vm", Usage: labVMUsage}
	if len(args) > 0 && args[0] == "list" {
		for _, n := range vm.ScenarioNames() {
			fmt.Fprintf(env.Stdout, "%-11s %s\n", n, vm.ScenarioSummary(n))
		}
		return nil
	}
	fs := newFlagSet(c, env)
	dur := fs.String("t", "10s", "load time of each bench run in the guest")
	fs.StringVar(dur, "duration", "10s", "same as -t")
	streams := fs.Int("P", 2, "parallel streams (iperf3 -P)")
	dir := fs.String("direction", "both", "send (guest device -> peer), receive, or both (two bench runs)")
	cycles := fs.Int("cycles", 30, "usbnet-stress: disruptions to run")
	busRate := fs.Int("bus-rate", 0, "usb-gadget, bql, usbnet-stress: cap the dummy_hcd bus at MBIT Mbit/s (needs the lab dummy_hcd in --modules-dir: kernel/usbnet/build.sh --lab-bus)")
	steps := fs.String("steps", "", "usbnet-stress: comma list of disruptions to take in turn (default "+strings.Join(vm.StressSteps, ",")+")")
	speed := fs.String("speed", "", "dummy_hcd link speed for usb-gadget and bql: super (default), high or full")
	tunnels := fs.Int("tunnels", 4, "wireguard: tunnels (one iperf3 flow each)")
	threaded := fs.String("threaded", "", "threaded NAPI on or off for the device under test (usb-gadget, bql, usb-nic) or the WireGuard devices (default: the kernel's)")
	out := fs.String("out", "", "directory for the results (default wirespeed-vm-SCENARIO-DATE-TIME)")
	kver := fs.String("kernel-version", "", "Debian kernel: a family, 6.1 (bookworm's default), 6.12 or 7.x (Debian 13's trixie-backports, 7.0-7.3), for its newest, or a release, e.g. 6.12.117, 6.1.0-56 or 7.3.4 (default: the newest 6.12 apt knows)")
	kimg := fs.String("kernel", "", "boot this kernel image instead of Debian's (needs --modules)")
	kmods := fs.String("modules", "", "the lib/modules/RELEASE tree of --kernel (with modules.dep)")
	mdir := fs.String("modules-dir", "", "directory of .ko files that replace the kernel's modules of the same name")
	var loads []string
	fs.Func("load", "load a module before the scenario: 'NAME [param=value ...]' (repeatable)", func(s string) error {
		loads = append(loads, s)
		return nil
	})
	exe := fs.String("exec", "", "boot scenario: shell command to run in the guest")
	wsBin := fs.String("wirespeed", "", "static wirespeed binary for the guest (default: this one)")
	cache := fs.String("cache", vm.DefaultCacheDir(), "cache for kernels and initramfs images")
	timeout := fs.String("timeout", "0", "hard limit for the guest (0: estimated from the scenario)")
	arch := fs.String("arch", "amd64", "guest architecture: amd64, or arm64 (Debian's arm64 kernel and packages, the arm64 binary of make cross)")
	machine := fs.String("machine", "", "board: pc (amd64); raspi3b (arm64 default: a Raspberry Pi 3 B, the Pi's interrupt controllers and DWC2 USB) or virt (a Pi 4-class Cortex-A72 with a GICv2 and xHCI on PCIe)")
	cpus := fs.Int("cpus", 0, "vCPUs (default 2; raspi3b has 4)")
	mem := fs.Int("mem", 0, "guest memory in MB (default 1024, which raspi3b has)")
	accel := fs.String("accel", "auto", "auto (KVM when it works, else tcg-single for x86 guests and tcg for arm64 ones), kvm, tcg (multi-threaded; an x86 guest's text patching crashes some boots with Oops: int3), tcg-single or tcg-icount (tcg-single with -icount shift=0,sleep=off: host load does not skew the guest's clock)")
	appendArgs := fs.String("append", "", "extra kernel command line, e.g. 'watchdog_thresh=2'")
	raw := fs.Bool("raw-iperf3", false, "run iperf3 -J in the guest instead of wirespeed bench")
	profile := fs.Bool("profile", false, "sample every vCPU during each bench with this host's perf (amd64 guests) into OUT/profile-DIRECTION.folded")
	noPin := fs.Bool("no-pin-tracepoints", false, "do not enable observe's tracepoints at boot (they are, to avoid kernel text patching under load; see docs)")
	tuneArgs := fs.String("tune", "", "usb-nic: run 'wirespeed tune apply usb0 --peer 198.18.3.1 ARGS' after the bench, then tune persist and a USB re-plug, e.g. '--direction receive --pairs 3'")
	benchArgs := fs.String("bench-args", "", "extra 'wirespeed bench' flags for the guest, e.g. '--repeat 3'")
	ab := fs.Bool("ab", false, "A/B: run the scenario twice, stock modules into OUT/stock, then --modules-dir's into OUT/modules (add --bench-args '--repeat 3' for compare's t-test)")
	console := fs.Bool("console", false, "copy the guest console to stderr while it runs")
	asJSON := fs.Bool("json", false, "print vm.json (the run's outcome) on stdout")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := existingDir("--out", strings.TrimSuffix(*out, "/")); err != nil {
			return err
		}
	}
	if len(pos) != 1 {
		return usageErrorf("lab vm: want one scenario: %s (or 'list')", strings.Join(vm.ScenarioNames(), ", "))
	}
	if _, err := vm.Lookup(pos[0]); err != nil {
		return &UsageError{Err: err}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// Every number is checked before anything is started, so a bad one
	// costs no boot and is not replaced by the guest script's default.
	for _, n := range []struct {
		flag      string
		v, lo, hi int
		what      string
	}{{"cycles", *cycles, 1, 100000, "disruptions"}, {"P", *streams, 1, 128, "streams"}, {"tunnels", *tunnels, 1, 64, "tunnels"},
		{"cpus", *cpus, 1, 64, "vCPUs"}, {"mem", *mem, 256, 1 << 20, "MB"}} {
		if set[n.flag] && (n.v < n.lo || n.v > n.hi) {
			return usageErrorf("lab vm: %s %d: want %d-%d %s", dashed(n.flag), n.v, n.lo, n.hi, n.what)
		}
	}
	d, err := parseDurationFlag("t", *dur)
	if err != nil {
		return err
	}
	to, err := parseDurationFlag("timeout", *timeout)
	if err != nil {
		return err
	}
	if set["t"] || set["duration"] {
		if d < time.Second || d > time.Hour {
			return usageErrorf("lab vm: -t %v: want 1s to 1h", d)
		}
	}
	if to != 0 && to < 10*time.Second {
		return usageErrorf("lab vm: --timeout %v: want 0 (estimated from the scenario) or 10s or more: a guest boots in seconds to minutes", to)
	}
	cfg := vm.Config{
		Options: vm.Options{Scenario: pos[0], Arch: *arch, Machine: *machine, Duration: d, Streams: *streams, Direction: *dir, Speed: *speed, Cycles: *cycles, Steps: splitList(*steps), BusRate: *busRate, Tunnels: *tunnels, Threaded: *threaded,
			Load: loads, Exec: *exe, RawIperf3: *raw, NoPin: *noPin, BenchArgs: strings.Fields(*benchArgs), Tune: *tuneArgs, Profile: *profile},
		CacheDir: *cache, KernelRelease: *kver, KernelImage: *kimg, ModulesPath: *kmods, ModulesDir: *mdir,
		Wirespeed: *wsBin, OutDir: *out, Timeout: to, CPUs: *cpus, MemMB: *mem, Accel: *accel, Append: *appendArgs,
		Logf: func(f string, a ...any) { fmt.Fprintf(env.Stderr, "lab vm: "+f+"\n", a...) },
	}
	if *console {
		cfg.Console = env.Stderr
	}
	if err := cfg.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	if *ab {
		return runLabVMAB(ctx, env, cfg, *asJSON)
	}
	res, runErr := vm.Run(ctx, cfg)
	if res == nil {
		return runErr
	}
	if *asJSON {
		if err := writeJSON(env, res); err != nil {
			return err
		}
	} else {
		printLabVM(env, res)
	}
	if runErr != nil {
		if errors.Is(runErr, vm.ErrGuard) {
			return fmt.Errorf("scenario %s FAILED: %w", res.Scenario, runErr)
		}
		return fmt.Errorf("scenario %s failed: %w", res.Scenario, runErr)
	}
	return nil
}

// runLabVMAB boots the scenario with the stock modules, then with
// --modules-dir's, one after the other, into OUT/stock and OUT/modules.
func runLabVMAB(ctx context.Context, env Env, cfg vm.Config, asJSON bool) error {
	if cfg.ModulesDir == "" {
		return usageErrorf("--ab needs --modules-dir DIR (the modules to compare against the stock ones)")
	}
	if cfg.OutDir == "" {
		cfg.OutDir = fmt.Sprintf("wirespeed-vm-%s-ab-%s", cfg.Scenario, time.Now().Format("20060102-150405"))
	}
	base := cfg.OutDir
	var outs []*vm.Outcome
	var errs []error
	for _, side := range []string{"stock", "modules"} {
		c := cfg
		c.OutDir = filepath.Join(base, side)
		if side == "stock" {
			c.ModulesDir = ""
		}
		c.Logf = func(f string, a ...any) { fmt.Fprintf(env.Stderr, "lab vm ["+side+"]: "+f+"\n", a...) }
		res, err := vm.Run(ctx, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", side, err))
		}
		if res == nil {
			return errors.Join(errs...)
		}
		outs = append(outs, res)
		if !asJSON {
			fmt.Fprintf(env.Stdout, "[%s] ", side)
			printLabVM(env, res)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if asJSON {
		if err := writeJSON(env, outs); err != nil {
			return err
		}
	} else if len(outs) == 2 {
		have := map[string]bool{}
		for _, f := range outs[1].Files {
			have[f] = true
		}
		for _, f := range outs[0].Files {
			if strings.HasPrefix(f, "bench-") && strings.HasSuffix(f, ".json") && have[f] {
				fmt.Fprintf(env.Stdout, "compare: wirespeed compare %s %s\n", filepath.Join(base, "stock", f), filepath.Join(base, "modules", f))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("A/B run of %s failed: %w", cfg.Scenario, errors.Join(errs...))
	}
	return nil
}

// splitList splits a comma list, dropping empty items ("" -> nil).
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
