// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Machine is a board QEMU emulates for the guest.
type Machine struct {
	Name string
	// Arch is the Debian architecture of its kernels ("amd64", "arm64").
	Arch    string
	Summary string
	// QEMU is the emulator program, QEMUPkg the Debian package that has it.
	QEMU, QEMUPkg string
	// Console is the kernel's console device (the first -serial).
	Console string
	// ResultsTTY is the guest's device of the results channel (see ws_send).
	ResultsTTY string
	// FixedCPUs and FixedMemMB are what the board has, when it cannot
	// have anything else (raspi3b: 4 Cortex-A53, 1 GiB).
	FixedCPUs, FixedMemMB int
	// USBHost are the modules of the host controller usb-nic's usb-net
	// sits on.
	USBHost []string
	// Platform modules load before the scenario's (raspi3b's watchdog,
	// through which the kernel restarts the board: QEMU then exits).
	Platform []string
	// PowerOff ends the guest's run (QEMU runs with -no-reboot).
	PowerOff string
	// DTB is the device tree in the kernel package's DTBDir ("" for none).
	DTB string
	// Slowdown scales the scenario's time estimate for the hard timeout
	// (an emulated foreign CPU under TCG).
	Slowdown int
	// AutoTCG is what --accel auto runs without KVM: tcg-single for x86
	// guests (autoTCG: their run-time text patching crashes under
	// multi-threaded TCG), multi-threaded tcg for arm64 ones (0 guard hits
	// in 35 multi-threaded raspi3b boots, docs/results.md).
	AutoTCG string
}

// machines are the boards the lab boots. The Pi-class boards are arm64:
// raspi3b is a Raspberry Pi 3 Model B - four Cortex-A53, the BCM2836/7
// interrupt controllers (the ARM local controller and the ARMCTRL one,
// which cannot route a peripheral interrupt to any CPU but CPU0) and the
// Pi's DWC2 USB host controller, through which the real board's built-in
// Ethernet is a usbnet device; virt stands in for a Pi 4-class host -
// Cortex-A72, a GICv2, an xHCI on PCIe (the Pi 4's VL805) - where
// interrupts can move.
var machines = map[string]*Machine{
	"pc": {
		Name: "pc", Arch: "amd64", QEMU: "qemu-system-x86_64", QEMUPkg: "qemu-system-x86",
		Summary: "x86-64 PC: qemu-xhci + usb-net for usb-nic",
		Console: "ttyS0", ResultsTTY: "/dev/ttyS1",
		USBHost: []string{"xhci_pci"}, PowerOff: "poweroff -f", Slowdown: 1, AutoTCG: autoTCG,
	},
	"raspi3b": {
		Name: "raspi3b", Arch: "arm64", QEMU: "qemu-system-aarch64", QEMUPkg: "qemu-system-arm",
		Summary: "Raspberry Pi 3 B: 4x Cortex-A53, the Pi's interrupt controllers, usb-net on the Pi's DWC2 USB (dwc2 + cdc_ether)",
		// PL011 first, the mini UART (8250 bcm2835aux: ttyS1) second
		Console: "ttyAMA0", ResultsTTY: "/dev/ttyS1",
		FixedCPUs: 4, FixedMemMB: 1024,
		// dwc2 finds its PHY (usb-nop-xceiv) through phy_generic
		USBHost:  []string{"phy_generic", "dwc2"},
		Platform: []string{"bcm2835_wdt"},
		// the board has no power-off: the watchdog restarts it, and
		// -no-reboot makes that QEMU's exit
		PowerOff: "reboot -f",
		DTB:      "broadcom/bcm2837-rpi-3-b.dtb",
		Slowdown: 3,
		AutoTCG:  "tcg",
	},
	"virt": {
		Name: "virt", Arch: "arm64", QEMU: "qemu-system-aarch64", QEMUPkg: "qemu-system-arm",
		Summary: "QEMU's arm64 virt board as a Pi 4-class host: Cortex-A72, GICv2, qemu-xhci + usb-net on PCIe",
		// virt has one UART: the results go over a virtio console
		Console: "ttyAMA0", ResultsTTY: "/dev/hvc0",
		USBHost: []string{"xhci_pci"}, PowerOff: "poweroff -f", Slowdown: 3, AutoTCG: "tcg",
	},
}

// DefaultMachine is the board of an architecture when --machine is not given.
func DefaultMachine(arch string) string {
	if arch == "arm64" {
		return "raspi3b"
	}
	return "pc"
}

// MachineNames lists the boards of arch ("" for all), sorted.
func MachineNames(arch string) []string {
	var n []string
	for k, m := range machines {
		if arch == "" || m.Arch == arch {
			n = append(n, k)
		}
	}
	sort.Strings(n)
	return n
}

// lookupMachine returns the board of o (its architecture's default when
// o.Machine is empty).
func lookupMachine(arch, name string) (*Machine, error) {
	if arch == "" {
		arch = "amd64"
	}
	if arch != "amd64" && arch != "arm64" {
		return nil, fmt.Errorf("--arch %q: want amd64 or arm64", arch)
	}
	if name == "" {
		name = DefaultMachine(arch)
	}
	m, ok := machines[name]
	if !ok {
		return nil, fmt.Errorf("--machine %q: want one of %s", name, strings.Join(MachineNames(""), ", "))
	}
	if m.Arch != arch {
		return nil, fmt.Errorf("--machine %s is an %s board, not %s (the %s boards: %s)", name, m.Arch, arch, arch, strings.Join(MachineNames(arch), ", "))
	}
	return m, nil
}

// machineOf is the board of a validated run's options.
func machineOf(o Options) *Machine {
	m, err := lookupMachine(o.Arch, o.Machine)
	if err != nil {
		return machines["pc"]
	}
	return m
}

// elfMachine is the ELF machine of an architecture's programs.
func elfMachine(arch string) elf.Machine {
	if arch == "arm64" {
		return elf.EM_AARCH64
	}
	return elf.EM_X86_64
}

// checkELFArch fails when p is not a program of arch.
func checkELFArch(p, arch, what string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, p, err)
	}
	defer f.Close()
	if f.Machine != elfMachine(arch) {
		return fmt.Errorf("%s %s is built for %s, and the guest is %s", what, p, f.Machine, arch)
	}
	return nil
}

// checkQEMU says whether the board's QEMU is installed.
func (m *Machine) checkQEMU() error {
	if _, err := exec.LookPath(m.QEMU); err != nil {
		return fmt.Errorf("%w: no %s (apt-get install %s, for the %s board)", ErrNoQEMU, m.QEMU, m.QEMUPkg, m.Name)
	}
	return nil
}

// kernelArgs is the kernel command line of a board (extra appended).
func (m *Machine) kernelArgs(extra string) string {
	a := "console=" + m.Console + " panic=-1 loglevel=5 rdinit=/init net.ifnames=0 nokaslr"
	return strings.TrimSpace(a + " " + extra)
}

// armArgs builds the QEMU command line of an arm64 board (pc's is qemuArgs).
func (m *Machine) armArgs(name string, k *Kernel, initrd, accel string, cpus, memMB int, consoleArg, resultsFile string, usb usbAttach, extra string) ([]string, error) {
	a := []string{m.QEMU, "-name", name, "-nodefaults", "-display", "none", "-no-reboot"}
	switch m.Name {
	case "raspi3b":
		a = append(a, "-M", "raspi3b")
	default:
		a = append(a, "-M", "virt,gic-version=2", "-cpu", "cortex-a72")
	}
	a = append(a, "-m", strconv.Itoa(memMB), "-smp", strconv.Itoa(cpus))
	switch accel {
	case "tcg-single":
		a = append(a, "-accel", "tcg,thread=single")
	case "tcg-icount":
		a = append(a, "-accel", "tcg,thread=single", "-icount", "shift=0,sleep=off")
	case "kvm":
		a = append(a, "-accel", "kvm")
	default:
		a = append(a, "-accel", "tcg,thread=multi")
	}
	a = append(a, "-kernel", k.Image, "-initrd", initrd, "-append", m.kernelArgs(extra))
	if m.DTB != "" {
		if k.DTBDir == "" {
			return nil, fmt.Errorf("the %s board needs the kernel's device tree %s: give a Debian arm64 kernel (--kernel-version), not --kernel", m.Name, m.DTB)
		}
		dtb := filepath.Join(k.DTBDir, m.DTB)
		if !fileExists(dtb) {
			return nil, fmt.Errorf("the kernel package has no %s (looked in %s)", m.DTB, k.DTBDir)
		}
		a = append(a, "-dtb", dtb)
	}
	a = append(a, "-serial", consoleArg)
	if m.ResultsTTY == "/dev/hvc0" {
		a = append(a, "-device", "virtio-serial-pci", "-chardev", "file,id=wsres,path="+resultsFile, "-device", "virtconsole,chardev=wsres")
	} else {
		a = append(a, "-serial", "file:"+resultsFile)
	}
	return append(a, usb.args(m.Name)...), nil
}
