// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

// tree builds a directory standing in for / with the files the file-backed
// kinds touch: device eth9 and IRQ 42.
func tree(t *testing.T) *System {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"sys/class/net/eth9/ifindex":                  "7\n",
		"sys/class/net/eth9/address":                  "02:00:00:00:00:09\n",
		"sys/class/net/eth9/threaded":                 "0\n",
		"sys/class/net/eth9/queues/rx-0/rps_cpus":     "00000000\n",
		"sys/class/net/eth9/queues/rx-0/rps_flow_cnt": "0\n",
		"proc/irq/42/smp_affinity_list":               "0-3\n",
		"proc/irq/42/effective_affinity_list":         "0\n",
		"proc/sys/net/core/netdev_budget":             "300\n",
	}
	for p, v := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// eth9 is a USB NIC below xHCI's usb1, whose interrupt 42 is named
	// "xhci-hcd:usb1"; IRQ 43 is a disk controller's.
	usbIf := filepath.Join(root, "sys/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0")
	for _, d := range []string{usbIf, filepath.Join(root, "proc/irq/42/xhci-hcd:usb1"), filepath.Join(root, "proc/irq/43/ahci[0000:00:17.0]")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "proc/irq/43/smp_affinity_list"), []byte("0-3\n"), 0o644)
	if err := os.Symlink(usbIf, filepath.Join(root, "sys/class/net/eth9/device")); err != nil {
		t.Fatal(err)
	}
	return &System{Root: root}
}

func (s *System) mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(s.path(p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newTuner(t *testing.T, s *System) *Tuner {
	t.Helper()
	tu, err := New(t.TempDir(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tu.Close() })
	return tu
}

const rps = "/sys/class/net/eth9/queues/rx-0/rps_cpus"

func rpsAction(v string) doctor.Action {
	return doctor.Action{ID: "rps/eth9/rx-0", Kind: doctor.KindSysfs, Device: "eth9", Target: rps, Value: v}
}

func TestApplyRevertByteForByte(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	ctx := context.Background()
	acts := []doctor.Action{
		rpsAction("3"),
		{ID: "budget/host", Kind: doctor.KindSysctl, Target: "net.core.netdev_budget", Value: "600"},
		{ID: "threaded/eth9", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/threaded", Value: "1"},
	}
	for _, a := range acts {
		o, err := tu.Apply(ctx, a)
		if err != nil || o.State != StateApplied {
			t.Fatalf("apply %s: %+v %v", a.ID, o, err)
		}
	}
	if got := s.mustRead(t, rps); got != "3" {
		t.Fatalf("rps_cpus after apply: %q", got)
	}
	// A second change of the same file keeps the value from before the first.
	if o, err := tu.Apply(ctx, rpsAction("1")); err != nil || o.Old != "00000000\n" {
		t.Fatalf("second apply: %+v %v", o, err)
	}
	// Applying what is already there changes nothing and journals nothing.
	n := len(tu.Store.J.Entries)
	if o, err := tu.Apply(ctx, rpsAction("1")); err != nil || o.State != "already" || len(tu.Store.J.Entries) != n {
		t.Fatalf("apply of the current value: %+v %v (%d entries, was %d)", o, err, len(tu.Store.J.Entries), n)
	}
	outs, err := tu.Revert(ctx, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 3 {
		t.Fatalf("reverted %d entries, want 3: %+v", len(outs), outs)
	}
	for p, want := range map[string]string{rps: "00000000\n", "/proc/sys/net/core/netdev_budget": "300\n", "/sys/class/net/eth9/threaded": "0\n"} {
		if got := s.mustRead(t, p); got != want {
			t.Errorf("%s after revert: %q, want %q", p, got, want)
		}
	}
	// The journal on disk agrees: nothing active.
	j, err := Load(tu.Store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range j.Entries {
		if e.Active() {
			t.Errorf("entry still active after revert --all: %+v", e)
		}
	}
}

func TestJournalHasOldValueBeforeWrite(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	called := false
	tu.BeforeWrite = func(a doctor.Action) {
		called = true
		j, err := Load(tu.Store.Dir)
		if err != nil {
			t.Errorf("journal at write time: %v", err)
			return
		}
		if len(j.Entries) != 1 || j.Entries[0].Old != "00000000\n" || j.Entries[0].State != StatePending {
			t.Errorf("journal at write time: %+v", j.Entries)
		}
		if got := s.mustRead(t, rps); got != "00000000\n" {
			t.Errorf("the file changed before the journal was written: %q", got)
		}
	}
	if _, err := tu.Apply(context.Background(), rpsAction("2")); err != nil {
		t.Fatal(err)
	}
	if !called {
		t.Fatal("BeforeWrite never ran")
	}
}

// A crash between journal and write leaves a pending entry; a fresh tuner
// reverts it.
func TestRevertAfterCrash(t *testing.T) {
	s := tree(t)
	dir := t.TempDir()
	tu, err := New(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	tu.BeforeWrite = func(doctor.Action) { s.writeFile(rps, "f") } // the write lands, then "crash"
	tu.Apply(context.Background(), rpsAction("f"))
	tu.Store.J.Entries[0].State = StatePending
	if err := tu.Store.Save(); err != nil {
		t.Fatal(err)
	}
	tu.Close()
	tu2, err := New(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	defer tu2.Close()
	if _, err := tu2.Revert(context.Background(), nil, true); err != nil {
		t.Fatal(err)
	}
	if got := s.mustRead(t, rps); got != "00000000\n" {
		t.Fatalf("after revert: %q", got)
	}
}

func TestIRQRefusedIsNotApplied(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	a := doctor.Action{ID: "irq/eth9/42", Kind: doctor.KindIRQAffinity, Device: "eth9", Target: "42", Value: "2"}
	o, err := tu.Apply(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if o.State != StateRefused || !strings.Contains(o.Note, "effective_affinity_list") {
		t.Fatalf("outcome %+v, want refused naming the effective affinity", o)
	}
	if got := s.mustRead(t, "/proc/irq/42/smp_affinity_list"); got != "0-3\n" {
		t.Fatalf("smp_affinity_list after a refusal: %q, want the old 0-3 back", got)
	}
	if st := StatusOf(context.Background(), s, tu.Store.J); len(st) != 0 {
		t.Fatalf("a refused change shows in status: %+v", st)
	}
	// Where the controller follows, the same action applies.
	s.writeFile("/proc/irq/42/effective_affinity_list", "2\n")
	if o, err := tu.Apply(context.Background(), a); err != nil || o.State != StateApplied {
		t.Fatalf("apply with a following controller: %+v %v", o, err)
	}
}

func TestRevertGoneAndReplugged(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	ctx := context.Background()
	if _, err := tu.Apply(ctx, rpsAction("3")); err != nil {
		t.Fatal(err)
	}
	s.writeFile("/sys/class/net/eth9/ifindex", "8\n")
	st := StatusOf(ctx, s, tu.Store.J)
	if len(st) != 1 || !strings.Contains(st[0].Problem, "re-plugged") {
		t.Fatalf("status after a re-plug: %+v", st)
	}
	outs, err := tu.Revert(ctx, nil, true)
	if err != nil || len(outs) != 1 || !strings.Contains(outs[0].Note, "re-plugged") || s.mustRead(t, rps) != "00000000\n" {
		t.Fatalf("revert after a re-plug: %+v %v", outs, err)
	}
	if _, err := tu.Apply(ctx, rpsAction("3")); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(s.path("/sys/class/net/eth9"))
	outs, err = tu.Revert(ctx, nil, true)
	if err != nil || len(outs) != 1 || outs[0].State != StateGone || !strings.Contains(outs[0].Note, "02:00:00:00:00:09") {
		t.Fatalf("revert of a vanished device: %+v %v", outs, err)
	}
	if _, err := tu.Apply(ctx, rpsAction("3")); !errors.Is(err, ErrGone) {
		t.Fatalf("apply on a vanished device: %v, want ErrGone", err)
	}
}

func TestRevertUnknownIDChangesNothing(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	ctx := context.Background()
	if _, err := tu.Apply(ctx, rpsAction("3")); err != nil {
		t.Fatal(err)
	}
	_, err := tu.Revert(ctx, []string{"rps/eth9/rx-0", "no-such"}, false)
	var ue *UnknownIDError
	if !errors.As(err, &ue) || ue.IDs[0] != "no-such" {
		t.Fatalf("revert with an unknown id: %v", err)
	}
	if got := s.mustRead(t, rps); got != "3" {
		t.Fatalf("an unknown id still reverted the known one: %q", got)
	}
}

func TestCheckRejects(t *testing.T) {
	for _, a := range []doctor.Action{
		{ID: "x", Kind: doctor.KindSysfs, Target: "/sys/../etc/passwd", Value: "1"},
		{ID: "x", Kind: doctor.KindSysfs, Target: "/etc/passwd", Value: "1"},
		{ID: "x", Kind: doctor.KindSysfs, Device: "eth0", Target: "/sys/class/net/eth1/threaded", Value: "1"},
		{ID: "x", Kind: doctor.KindSysctl, Target: "kernel.panic", Value: "1"},
		{ID: "x", Kind: doctor.KindSysctl, Target: "net.core..x", Value: "1"},
		{ID: "x", Kind: doctor.KindIRQAffinity, Target: "4a", Value: "1"},
		{ID: "x", Kind: doctor.KindEthtool, Device: "eth0", Target: "rx-gro", Value: "yes"},
		{ID: "x", Kind: doctor.KindQdisc, Device: "eth0", Target: "root", Value: "fq;reboot"},
		{ID: "x", Kind: doctor.KindGovernor, Target: "0-1", Value: "../x"},
		{ID: "x", Kind: doctor.KindNAPI, Target: "12:bogus", Value: "1"},
		{ID: "x", Kind: "bogus"},
		{Kind: doctor.KindSysctl, Target: "net.core.netdev_budget", Value: "1"},
	} {
		if err := Check(a); err == nil {
			t.Errorf("Check accepted %+v", a)
		}
	}
}

func TestSysfsMaskReadBack(t *testing.T) {
	k := sysfsKnob{}
	a := rpsAction("3")
	if ok, _ := k.took(a, "00000000,00000003\n"); !ok {
		t.Error("mask 00000000,00000003 not seen as 3")
	}
	if ok, _ := k.took(a, "00000001\n"); ok {
		t.Error("mask 1 seen as 3")
	}
}
