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
  (usb-gadget, bql, usb-nic and usbdev take --threaded on|off and --rps MASK for the usbnet device)
  usbnet-stress  --cycles N of rebind, link flap, MTU, module reload, suspend/resume under traffic,
              and suspend with the link down (--steps picks some)
  usbdev      --device ncm|mbim|rndis|eem|ax88179|aqc111|rtl8153: a USB adapter emulated on the host ('wirespeed lab
              usbdev'), on the guest's xHCI through QEMU's usb-redir; --device-args for its link
              rate (--mbit), batching (--batch N --batch-wait D) and hostile mode (--bad, --stall,
              --slow, --slow-out, --seed)
  usbdev-stress  the usbdev adapter unplugged by the device under traffic, --cycles N new devices
  selftests   the kernel's tools/testing/selftests/drivers/net on the NCM loop (--tests LIST)
  boot        boot, --load modules, --exec CMD

Examples:
  wirespeed lab vm usb-gadget -t 10s
  wirespeed lab vm usbdev --device rndis --device-args '--bad 150 --seed 7' --kernel-version 7.3.4
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
		if len(args) > 1 {
			return usageErrorf("lab vm list takes no arguments (got %q)", args[1])
		}
		for _, n := range vm.ScenarioNames() {
			fmt.Fprintf(env.Stdout, "%-11s %s\n", n, vm.ScenarioSummary(n))
		}
		return nil
	}
	fs := newFlagSet(c, env)
	f := addLabVMFlags(fs) // labvm_flags.go
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if err := refuseEmptyOf(fs, "lab vm: ", "out", "kernel", "modules", "modules-dir", "wirespeed", "cache", "exec", "kernel-version"); err != nil {
		return err
	}
	cfg, err := f.config(env, pos)
	if err != nil {
		return err
	}
	if *f.ab {
		return runLabVMAB(ctx, env, cfg, *f.asJSON)
	}
	res, runErr := vm.Run(ctx, cfg)
	if res == nil {
		return runErr
	}
	return finishLabVM(env, res, runErr, *f.asJSON)
}

// finishLabVM prints the outcome (vm.json with asJSON) and says whether
// the scenario failed, and how: a guard (a panic, an Oops, ...) is FAILED.
func finishLabVM(env Env, res *vm.Outcome, runErr error, asJSON bool) error {
	if asJSON {
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
