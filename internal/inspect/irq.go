// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"github.com/wirespeed/wirespeed/internal/datapath"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/procfs"
)

func (c *collector) readInterrupts() *procfs.Interrupts {
	b, err := c.fs.ReadFile("/proc/interrupts")
	if err != nil {
		return nil
	}
	in, err := procfs.ParseInterrupts(b)
	if err != nil {
		return nil
	}
	return in
}

// chipsRefusingAffinity are interrupt chips (as in /sys/kernel/irq/N/chip_name)
// whose affinity callback always fails, so the kernel's gate passes but
// every write to smp_affinity answers EINVAL.
var chipsRefusingAffinity = map[string]string{
	"BRCM STB PCIe MSI": "the Broadcom STB PCIe MSI controller (Raspberry Pi 4) cannot steer MSIs: writes to smp_affinity answer EINVAL",
	// This one has no affinity callback at all: the kernel's gate refuses
	// (EIO before 6.12, EPERM after); named here for snapshots taken
	// without root.
	"ARMCTRL-level": "the BCM2835 interrupt controller (Raspberry Pi 1-3) sends every peripheral interrupt to CPU0: writes to smp_affinity are refused",
}

// irqs finds the interrupts that serve the device: the MSI vectors or legacy
// line of the first device up its sysfs path that has any (for a USB NIC
// that is its host controller), the IRQs NAPI instances name, and lines whose
// handler is named after the interface.
func (c *collector) irqs(d *Device) []IRQ {
	type found struct {
		n   int
		via string
	}
	var list []found
	seen := map[int]bool{}
	add := func(n int, via string) {
		if n > 0 && !seen[n] {
			seen[n] = true
			list = append(list, found{n, via})
		}
	}
	if d.DevicePath != "" {
		if nums, owner, msi := DeviceIRQs(c.fs, d.DevicePath); len(nums) > 0 {
			what := path.Base(owner)
			if d.USB != nil && owner == d.USB.HostController.Path {
				what = "USB host controller " + what
				if d.USB.HostController.Driver != "" {
					what += " (" + d.USB.HostController.Driver + ")"
				}
			}
			kind := "IRQ line of "
			if msi {
				kind = "MSI of "
			}
			for _, n := range nums {
				add(n, kind+what)
			}
		}
	}
	if len(list) == 0 && d.DevicePath != "" && c.interrupts != nil {
		// A device-tree (platform) device has no irq file in sysfs: its
		// handler carries its device name (the Pi 3's DWC2:
		// "3f980000.usb, dwc2_hsotg:usb1"; MT7621's frame engine
		// "1e100000.ethernet" - the device itself, not only its parents).
		for dir := d.DevicePath; strings.HasPrefix(dir, "/sys/devices/") && len(list) == 0; dir = path.Dir(dir) {
			name := path.Base(dir)
			for _, l := range c.interrupts.Lines {
				for _, a := range l.Actions {
					if a == name {
						what := name
						if d.USB != nil && dir == d.USB.HostController.Path {
							what = "USB host controller " + name
							if d.USB.HostController.Driver != "" {
								what += " (" + d.USB.HostController.Driver + ")"
							}
						}
						add(l.Number, "handler named after "+what)
					}
				}
			}
		}
	}
	if len(list) == 0 && d.USB != nil && d.USB.HostController.Path != "" && c.interrupts != nil {
		for _, f := range c.hcdIRQs(d.USB.HostController) {
			add(f.n, f.via)
		}
	}
	for _, n := range d.NAPIs {
		if n.IRQ != nil {
			add(*n.IRQ, fmt.Sprintf("napi-get (NAPI %d)", n.ID))
		}
	}
	if c.interrupts != nil {
		for _, l := range c.interrupts.Lines {
			for _, a := range l.Actions {
				if a == d.Name || strings.HasPrefix(a, d.Name+"-") || strings.HasPrefix(a, d.Name+"@") {
					add(l.Number, "handler named "+a)
				}
			}
		}
	}
	out := []IRQ{}
	for _, f := range list {
		out = append(out, c.irq(f.n, f.via, d))
	}
	return out
}

// DeviceIRQs returns the interrupts of the first device at or above the
// sysfs path devicePath that has any - its MSI vectors (msi_irqs/), else its
// legacy line (irq) - with that device's path and whether they are MSIs.
// For a USB network device this is its host controller: a USB device has no
// interrupt of its own.
func DeviceIRQs(f *hostfs.FS, devicePath string) (irqs []int, owner string, msi bool) {
	for dir := devicePath; strings.HasPrefix(dir, "/sys/devices/"); dir = path.Dir(dir) {
		if ents, err := f.ReadDir(dir + "/msi_irqs"); err == nil {
			for _, e := range ents {
				if n, err := strconv.Atoi(e); err == nil {
					irqs = append(irqs, n)
				}
			}
			if len(irqs) > 0 {
				sort.Ints(irqs)
				return irqs, dir, true
			}
		}
		if s, err := f.ReadString(dir + "/irq"); err == nil {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				return []int{n}, dir, false
			}
		}
	}
	return nil, "", false
}

func (c *collector) irq(n int, via string, d *Device) IRQ {
	q := IRQ{Number: n, Via: via, Counts: []uint64{}, CountCPUs: []int{}}
	sk := fmt.Sprintf("/sys/kernel/irq/%d", n)
	q.Chip, _ = c.str(sk + "/chip_name")
	if acts, e := c.str(sk + "/actions"); e == "" && acts != "" {
		q.Actions = strings.Split(acts, ",")
	}
	if c.interrupts != nil {
		if l := c.interrupts.Find(n); l != nil {
			q.Counts = append(q.Counts, l.Counts...)
			q.CountCPUs = append(q.CountCPUs, c.interrupts.CPUs[:len(l.Counts)]...)
			if q.Actions == nil {
				q.Actions = l.Actions
			}
			if q.Chip == "" {
				q.Chip = l.Desc
			}
		}
	}
	for _, v := range q.Counts {
		q.Total += v
	}
	pi := fmt.Sprintf("/proc/irq/%d", n)
	q.SMPAffinity, _ = c.str(pi + "/smp_affinity")
	q.SMPAffinityList, _ = c.str(pi + "/smp_affinity_list")
	q.EffectiveAffinity, _ = c.str(pi + "/effective_affinity_list")
	q.Changeable = c.changeable(n, q.Chip)
	for _, a := range q.Actions {
		// the host controller's own handlers: its driver's name (xhci_hcd;
		// dwc2_hsotg:usb1) or its device's (3f980000.usb)
		hcd := d.USB != nil && d.USB.HostController.Driver != "" && (strings.HasPrefix(a, d.USB.HostController.Driver) ||
			a == path.Base(d.USB.HostController.Path))
		// a driver that names its vectors after itself ("iwlwifi:queue_1")
		own := d.Driver != "" && strings.HasPrefix(a, d.Driver+":") && d.USB == nil
		if !strings.Contains(a, d.Name) && (d.BusID == "" || !strings.Contains(a, d.BusID)) && !hcd && !own {
			q.SharedWith = append(q.SharedWith, "handler "+a)
		}
	}
	if d.USB != nil && strings.Contains(via, "host controller") {
		if len(d.USB.Neighbours) == 0 {
			q.SharedWith = append(q.SharedWith, "every USB device on this controller (none other attached now)")
		}
		for _, nb := range d.USB.Neighbours {
			s := "USB " + nb.Path
			if nb.Product != "" {
				s += " " + nb.Product
			}
			if len(nb.Drivers) > 0 {
				s += " (" + strings.Join(nb.Drivers, ", ") + ")"
			}
			q.SharedWith = append(q.SharedWith, s)
		}
	}
	return q
}

func (c *collector) changeable(n int, chip string) Tri {
	known, refuses := chipsRefusingAffinity[chip]
	r := c.a.probeAffinity(n)
	switch {
	case r == probeNoFile:
		return Tri{datapath.No, fmt.Sprintf("no /proc/irq/%d/smp_affinity", n)}
	case r == probeEIO || r == probeEPERM:
		why := "kernel refuses user affinity (per-CPU, managed, or chip cannot move it): probe write answered " + r
		if known != "" {
			why = known + "; probe write answered " + r
		}
		return Tri{datapath.No, why}
	case refuses:
		return Tri{datapath.No, known}
	case r == probeAccepted:
		return Tri{datapath.Yes, "passes the kernel's user-affinity check (probe write, nothing changed)"}
	case r == probeNotRoot:
		return Tri{datapath.Unknown, "needs root to probe"}
	case r == "":
		return Tri{datapath.Unknown, "not probed in this snapshot"}
	}
	return Tri{datapath.Unknown, "probe: " + r}
}

type hcdIRQ struct {
	n   int
	via string
}

// hcdIRQs finds a USB host controller's interrupt by the name the USB core
// gives it when the controller's device has neither msi_irqs/ nor an irq
// file and no handler carries its device name - a platform controller
// described by a device tree behind another chip (the Raspberry Pi 5's
// xHCI on RP1, SoC DWC3/EHCI controllers): usb_hcd_request_irqs() names
// the handler "<hcd description>:usb<bus number>" after the controller's
// (first) root hub, so "xhci-hcd:usb1" on the controller whose root hubs
// are usb1 and usb2. Failing that, a single handler named after the
// controller's driver.
func (c *collector) hcdIRQs(hc HostController) []hcdIRQ {
	buses := map[string]bool{}
	if ents, err := c.fs.ReadDir(hc.Path); err == nil {
		for _, e := range ents {
			if n, ok := strings.CutPrefix(e, "usb"); ok {
				if _, err := strconv.Atoi(n); err == nil {
					buses[e] = true
				}
			}
		}
	}
	what := "USB host controller " + path.Base(hc.Path)
	if hc.Driver != "" {
		what += " (" + hc.Driver + ")"
	}
	var out []hcdIRQ
	for _, l := range c.interrupts.Lines {
		for _, a := range l.Actions {
			if i := strings.LastIndex(a, ":"); i > 0 && buses[a[i+1:]] {
				out = append(out, hcdIRQ{l.Number, "handler " + a + " (the USB core's name for the interrupt of root hub " + a[i+1:] + ") of " + what})
				break
			}
		}
	}
	if len(out) > 0 || hc.Driver == "" {
		return out
	}
	for _, l := range c.interrupts.Lines {
		for _, a := range l.Actions {
			if a == hc.Driver || strings.HasPrefix(a, hc.Driver+":") {
				out = append(out, hcdIRQ{l.Number, "handler named after the driver of " + what})
				break
			}
		}
	}
	if len(out) != 1 {
		return nil // several controllers of that driver: which one is not known
	}
	return out
}
