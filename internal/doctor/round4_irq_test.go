// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"
	"testing"
)

// irqs-piled on OpenWrt: the frame engine's and the USB controller's
// interrupts both on CPU0 of an MT7621. The /proc/irq write is right, but
// it lasts until reboot: OpenWrt keeps it in /etc/rc.local, runs no
// irqbalance (a package, off until enabled in /etc/config/irqbalance), and
// its packet steering moves no interrupt. No Debian irqbalance settings,
// no systemd-based persist.
func TestIRQsPiledOpenWrt(t *testing.T) {
	_, rep := findings(t, "openwrt-mt7621-dsa", nil)
	var f *Finding
	for i := range rep.Findings {
		if rep.Findings[i].ID == "irqs-piled" {
			f = &rep.Findings[i]
		}
	}
	if f == nil || f.Fix == nil {
		t.Fatalf("no irqs-piled with a fix on openwrt-mt7621-dsa: %v", ids(byDevice(rep, "eth1")))
	}
	text := fixText(*f) + "\n" + f.Why
	mustSay(t, "openwrt irqs-piled", text,
		[]string{"/proc/irq/22/smp_affinity_list", "/etc/rc.local", "packet steering", "/etc/config/irqbalance"},
		[]string{"IRQBALANCE_BANNED_CPULIST", "tune persist", "systemctl"})
	if !strings.Contains(text, "reboot") {
		t.Errorf("irqs-piled on OpenWrt does not say the write is lost at reboot:\n%s", text)
	}
}
