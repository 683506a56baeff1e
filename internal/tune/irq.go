// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/doctor"
)

// irqKnob sets /proc/irq/N/smp_affinity_list. Some interrupt controllers
// (the Raspberry Pi 4's) accept the write and keep the interrupt where it
// was: the read-back looks at effective_affinity_list, where the kernel
// says where the interrupt really goes.
type irqKnob struct{}

func init() { registerKnob(doctor.KindIRQAffinity, irqKnob{}) }

func (irqKnob) check(a doctor.Action) error {
	if n, err := strconv.Atoi(a.Target); err != nil || n < 0 || strconv.Itoa(n) != a.Target {
		return fmt.Errorf("irq %q: want an IRQ number", a.Target)
	}
	if cpus, err := cpumask.ParseList(a.Value); err != nil || len(cpus) == 0 {
		return fmt.Errorf("irq affinity %q: want a CPU list such as 1 or 0-3", a.Value)
	}
	return nil
}

func irqDir(a doctor.Action) string { return "/proc/irq/" + a.Target + "/" }

// The recorded state is smp_affinity_list; the read-back state adds the
// effective list after a tab when the kernel has one.
func (irqKnob) read(_ context.Context, s *System, a doctor.Action) (string, error) {
	v, err := s.readFile(irqDir(a) + "smp_affinity_list")
	if errors.Is(err, os.ErrNotExist) {
		return "", &goneError{fmt.Sprintf("there is no IRQ %s here (see /proc/interrupts): was the plan made on another host or boot? run 'wirespeed doctor' here", a.Target)}
	}
	return v, err
}

func (irqKnob) apply(_ context.Context, s *System, a doctor.Action) error {
	return s.writeFile(irqDir(a)+"smp_affinity_list", a.Value)
}

func (k irqKnob) took(a doctor.Action, state string) (bool, string) {
	want, _ := cpumask.ParseList(a.Value)
	got, err := cpumask.ParseList(strings.TrimSpace(state))
	if err != nil || cpumask.FormatList(got) != cpumask.FormatList(want) {
		return false, fmt.Sprintf("smp_affinity_list reads %q after writing %q", strings.TrimSpace(state), a.Value)
	}
	return true, ""
}

func (irqKnob) restore(_ context.Context, s *System, a doctor.Action, old string) error {
	return s.writeFile(irqDir(a)+"smp_affinity_list", old)
}

// verify checks where the interrupt really goes after an apply: every
// CPU of effective_affinity_list must be one the action asked for.
func (irqKnob) verify(s *System, a doctor.Action) (bool, string) {
	eff, err := s.readFile(irqDir(a) + "effective_affinity_list")
	if err != nil {
		return true, "" // older kernels: smp_affinity_list is all there is
	}
	want, _ := cpumask.ParseList(a.Value)
	got, err := cpumask.ParseList(strings.TrimSpace(eff))
	if err != nil || len(got) == 0 {
		return false, fmt.Sprintf("effective_affinity_list reads %q", strings.TrimSpace(eff))
	}
	in := map[int]bool{}
	for _, c := range want {
		in[c] = true
	}
	for _, c := range got {
		if !in[c] {
			return false, fmt.Sprintf("the kernel accepted smp_affinity_list %s but the interrupt still goes to CPU %s (effective_affinity_list): this interrupt controller cannot move it", a.Value, strings.TrimSpace(eff))
		}
	}
	return true, ""
}

// belongs refuses an IRQ that does not serve the action's device: tune
// moves a NIC's interrupts (or its USB host controller's), not a timer's
// or a disk's. The IRQ serves the device when, on the device's sysfs
// path or above it (a USB NIC's controller), an `irq` file names it or
// `msi_irqs/N` exists; or when one of its handlers (/proc/irq/N/NAME) is
// named after the device or a component of its path ("xhci-hcd:usb1" for
// a NIC below usb1: platform controllers such as the Pi 5's have no irq
// file to find it by).
func (irqKnob) belongs(s *System, a doctor.Action) error {
	if a.Device == "" {
		return fmt.Errorf("action %s moves IRQ %s but names no device: tune moves only a network device's interrupts", a.ID, a.Target)
	}
	dev, err := filepath.EvalSymlinks(s.path("/sys/class/net/" + a.Device + "/device"))
	names := map[string]bool{a.Device: true}
	if err == nil {
		top := s.path("/sys")
		for d := dev; strings.HasPrefix(d, top+"/"); d = filepath.Dir(d) {
			names[filepath.Base(d)] = true
			if b, err := os.ReadFile(filepath.Join(d, "irq")); err == nil && strings.TrimSpace(string(b)) == a.Target {
				return nil
			}
			if _, err := os.Stat(filepath.Join(d, "msi_irqs", a.Target)); err == nil {
				return nil
			}
		}
	}
	handlers, _ := os.ReadDir(s.path(irqDir(a)))
	for _, h := range handlers {
		if !h.IsDir() {
			continue
		}
		for _, part := range strings.FieldsFunc(h.Name(), func(r rune) bool { return r == ':' || r == ' ' }) {
			if names[part] {
				return nil
			}
		}
	}
	return fmt.Errorf("IRQ %s does not serve %s (not on its device's path in sysfs, no handler named after it): was the plan made on another host or boot? run 'wirespeed doctor' here", a.Target, a.Device)
}
