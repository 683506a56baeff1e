// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

func TestPersistWritesAndRemoves(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	ctx := context.Background()
	s.writeFile("/proc/irq/42/effective_affinity_list", "2\n")
	for _, a := range []doctor.Action{
		rpsAction("3"),
		{ID: "budget/host", Kind: doctor.KindSysctl, Target: "net.core.netdev_budget", Value: "600"},
		{ID: "irq/eth9/42", Kind: doctor.KindIRQAffinity, Device: "eth9", Target: "42", Value: "2"},
	} {
		if o, err := tu.Apply(ctx, a); err != nil || o.State != StateApplied {
			t.Fatalf("%s: %+v %v", a.ID, o, err)
		}
	}
	// A reverted change is not made permanent.
	thr := doctor.Action{ID: "threaded/eth9", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/threaded", Value: "1"}
	tu.Apply(ctx, thr)
	tu.Revert(ctx, []string{thr.ID}, false)

	root := t.TempDir()
	plan := PlanPersist(tu.Sys, tu.Store.J, tu.Netns)
	files, err := WritePersist(root, tu.Store.Dir, plan)
	if err != nil {
		t.Fatal(err)
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	udev := read(PersistUdev)
	if !strings.Contains(udev, `ATTR{address}=="02:00:00:00:00:09", ATTR{queues/rx-0/rps_cpus}="3"`) || strings.Contains(udev, "threaded") {
		t.Errorf("udev rules:\n%s", udev)
	}
	if got := read(PersistSysctl); !strings.Contains(got, "net.core.netdev_budget = 600") {
		t.Errorf("sysctl.d:\n%s", got)
	}
	if got := read(PersistScript); !strings.Contains(got, "echo '2' > /proc/irq/42/smp_affinity_list") {
		t.Errorf("boot script:\n%s", got)
	}
	if l, err := os.Readlink(filepath.Join(root, PersistWants)); err != nil || l != "../wirespeed-tune.service" {
		t.Errorf("unit not enabled: %q %v", l, err)
	}
	removed, err := RemovePersist(root, tu.Store.Dir)
	if err != nil || len(removed) != len(files) {
		t.Fatalf("remove: %v %v (wrote %v)", removed, err, files)
	}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(tu.Store.Dir, manifestName)); !os.IsNotExist(err) {
		t.Error("manifest left behind")
	}
}

func TestPersistLeavesForeignFiles(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	if _, err := tu.Apply(context.Background(), rpsAction("3")); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	foreign := filepath.Join(root, PersistUdev)
	os.MkdirAll(filepath.Dir(foreign), 0o755)
	os.WriteFile(foreign, []byte("# mine\n"), 0o644)
	if _, err := WritePersist(root, tu.Store.Dir, PlanPersist(tu.Sys, tu.Store.J, tu.Netns)); err == nil {
		t.Fatal("persist overwrote a file that is not wirespeed's")
	}
	if b, _ := os.ReadFile(foreign); string(b) != "# mine\n" {
		t.Fatalf("foreign file changed: %q", b)
	}
}

// TestPersistOnlyThisNamespace: a change made in another network namespace
// is not written as a rule for this one's devices (revert refuses the same).
func TestPersistOnlyThisNamespace(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	tu.Netns = "net:[111]"
	if o, err := tu.Apply(context.Background(), rpsAction("3")); err != nil || o.State != StateApplied {
		t.Fatalf("%+v %v", o, err)
	}
	plan := PlanPersist(tu.Sys, tu.Store.J, "net:[222]")
	if len(plan.Files) != 0 || len(plan.Skipped) != 1 || !strings.Contains(plan.Skipped[0], "net:[111]") {
		t.Fatalf("plan from another namespace: %+v", plan)
	}
	if plan := PlanPersist(tu.Sys, tu.Store.J, "net:[111]"); len(plan.Files) != 1 || len(plan.Skipped) != 0 {
		t.Fatalf("plan from the same namespace: %+v", plan)
	}
}

// TestPersistRefusesInjection (issue 40): what goes into files other
// programs parse is validated first. A sysctl name with a newline wrote its
// second line into sysctl.d as a setting of its own; a device named t*
// (legal for tun) gave KERNEL=="t*", matching every device starting with
// t at each boot; a MAC from a journal went into a rule unchecked.
func TestPersistRefusesInjection(t *testing.T) {
	for _, target := range []string{"net.core.netdev_budget\nkernel.hostname", "net.core.x=1", "net.core.a b", "net.core.\x1b[2J"} {
		a := doctor.Action{ID: "s", Kind: doctor.KindSysctl, Target: target, Value: "600"}
		if err := Check(a); err == nil || !strings.Contains(err.Error(), "not a sysctl name") {
			t.Errorf("sysctl %q: %v, want refused as not a sysctl name", target, err)
		}
	}
	for _, v := range []string{"600\nkernel.hostname=x", "600\r", "6\x1b0"} {
		a := doctor.Action{ID: "s", Kind: doctor.KindSysctl, Target: "net.core.netdev_budget", Value: v}
		if err := Check(a); err == nil {
			t.Errorf("sysctl value %q accepted", v)
		}
	}
	if err := Check(doctor.Action{ID: "s", Kind: doctor.KindSysctl, Target: "net.ipv4.tcp_rmem", Value: "4096\t87380 6291456"}); err != nil {
		t.Errorf("a legal sysctl refused: %v", err)
	}
	eth := doctor.Action{ID: "g", Kind: doctor.KindEthtool, Target: "rx-gro", Value: "on"}
	for name, c := range map[string]struct {
		dev, mac, want string
	}{
		"glob name":      {"t*", "", "udev pattern"},
		"bracket name":   {"e[th]0", "", "udev pattern"},
		"alternatives":   {"a|b", "", "udev pattern"},
		"quote in name":  {`x"y`, "", "udev pattern"},
		"bad MAC":        {"eth1", `aa:bb", RUN+="/bin/evil`, "not one"},
		"upper-case MAC": {"eth1", "AA:BB:CC:DD:EE:FF", "not one"},
	} {
		var l persistLines
		a := eth
		a.Device = c.dev
		why := l.add(Entry{Action: a, MAC: c.mac})
		if !strings.Contains(why, c.want) || len(l.udev) != 0 {
			t.Errorf("%s: %q and rules %q; want it refused (%q) and no rule", name, why, l.udev, c.want)
		}
	}
	var l persistLines
	a := eth
	a.Device = "eth1"
	if why := l.add(Entry{Action: a, MAC: "02:00:00:aa:bb:cc"}); why != "" || len(l.udev) != 1 || !strings.Contains(l.udev[0], `ATTR{address}=="02:00:00:aa:bb:cc"`) {
		t.Errorf("a good MAC: %q %q", why, l.udev)
	}
	a.Device = "usb0"
	if why := l.add(Entry{Action: a}); why != "" || !strings.Contains(l.udev[1], `KERNEL=="usb0"`) {
		t.Errorf("a plain name: %q %q", why, l.udev)
	}
}

// TestRemovePersistOtherRoot (issue 40): persist --root A, then persist
// --remove --root B said "Nothing to remove.", deleted the manifest and
// orphaned A's files. It is refused, naming A, and nothing changes.
func TestRemovePersistOtherRoot(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	if o, err := tu.Apply(context.Background(), doctor.Action{ID: "budget/host", Kind: doctor.KindSysctl, Target: "net.core.netdev_budget", Value: "600"}); err != nil || o.State != StateApplied {
		t.Fatalf("%+v %v", o, err)
	}
	a, b := t.TempDir(), t.TempDir()
	files, err := WritePersist(a, tu.Store.Dir, PlanPersist(tu.Sys, tu.Store.J, tu.Netns))
	if err != nil || len(files) == 0 {
		t.Fatalf("%v %v", files, err)
	}
	removed, err := RemovePersist(b, tu.Store.Dir)
	if err == nil || len(removed) != 0 || !strings.Contains(err.Error(), "--root "+a) {
		t.Fatalf("remove with another root: %v, %v; want refused, naming --root %s", removed, err, a)
	}
	if _, err := os.Stat(filepath.Join(tu.Store.Dir, manifestName)); err != nil {
		t.Fatalf("the manifest went: %v", err)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(a, f)); err != nil {
			t.Fatalf("%s went: %v", f, err)
		}
	}
	if removed, err := RemovePersist(a, tu.Store.Dir); err != nil || len(removed) != len(files) {
		t.Fatalf("remove with the right root: %v %v", removed, err)
	}
}
