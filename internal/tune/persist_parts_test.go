// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

// TestPersistLinesAdd: each kind lands in its file - a device's sysfs
// knob as a udev ATTR on its MAC, a sysfs file elsewhere and IRQ affinity
// in the boot script, sysctls in sysctl.d - and a NAPI change is refused
// with the reason.
func TestPersistLinesAdd(t *testing.T) {
	var l persistLines
	for _, e := range []Entry{
		{Action: doctor.Action{ID: "gft", Kind: doctor.KindSysfs, Device: "eth0", Target: "/sys/class/net/eth0/gro_flush_timeout", Value: "20000"}, MAC: "02:00:00:00:00:01"},
		{Action: doctor.Action{ID: "other", Kind: doctor.KindSysfs, Target: "/sys/kernel/x", Value: "1"}},
		{Action: doctor.Action{ID: "aff", Kind: doctor.KindIRQAffinity, Target: "30", Value: "2"}},
		{Action: doctor.Action{ID: "budget", Kind: doctor.KindSysctl, Target: "net.core.netdev_budget", Value: "600"}},
	} {
		if why := l.add(e); why != "" {
			t.Errorf("%s refused: %s", e.Action.ID, why)
		}
	}
	if len(l.udev) != 1 || !strings.Contains(l.udev[0], `ATTR{gro_flush_timeout}="20000"`) || !strings.Contains(l.udev[0], "02:00:00:00:00:01") {
		t.Errorf("udev %q", l.udev)
	}
	if strings.Join(l.boot, "\n") != "echo '1' > '/sys/kernel/x'\necho '2' > /proc/irq/30/smp_affinity_list" {
		t.Errorf("boot %q", l.boot)
	}
	if len(l.sysctl) != 1 || l.sysctl[0] != "net.core.netdev_budget = 600" {
		t.Errorf("sysctl %q", l.sysctl)
	}
	if why := l.add(Entry{Action: doctor.Action{ID: "napi", Kind: doctor.KindNAPI}}); !strings.Contains(why, "NAPI ids change") {
		t.Errorf("NAPI change: %q", why)
	}
}
