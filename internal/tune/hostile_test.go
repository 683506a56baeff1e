package tune

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

// hostileJournal writes a journal holding one applied entry for a into a
// new state directory.
func hostileJournal(t *testing.T, a doctor.Action, old string) string {
	t.Helper()
	dir := t.TempDir()
	j := Journal{Version: JournalVersion, Entries: []Entry{{Seq: 1, Action: a, Old: old, State: StateApplied, Netns: "", Time: "t"}}}
	b, _ := json.Marshal(j)
	if err := os.WriteFile(filepath.Join(dir, journalName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestJournalCannotWriteOutside: a hand-edited journal naming a file
// outside tune's targets is refused before anything is read or written,
// by revert and status alike; the files it names keep their contents.
func TestJournalCannotWriteOutside(t *testing.T) {
	s := tree(t)
	canaries := map[string]string{
		"/etc/passwd":                         "root:x:0:0\n",
		"/etc/shadow":                         "root:*:1\n",
		"/sys/kernel/mm/ksm/pages_to_scan":    "100\n",
		"/proc/sys/kernel/hostname":           "here\n",
		"/sys/class/net/eth9/ifalias":         "\n",
		"/sys/devices/system/cpu/cpu0/online": "1\n",
	}
	for p, v := range canaries {
		full := s.path(p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, a := range map[string]doctor.Action{
		"absolute":       {ID: "x", Kind: doctor.KindSysfs, Device: "eth9", Target: "/etc/passwd", Value: "1"},
		"dotdot":         {ID: "x", Kind: doctor.KindSysfs, Device: "eth9", Target: "../../etc/passwd", Value: "1"},
		"sys-dotdot":     {ID: "x", Kind: doctor.KindSysfs, Target: "/sys/../etc/shadow", Value: "1"},
		"dev-dotdot":     {ID: "x", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/../../../kernel/mm/ksm/pages_to_scan", Value: "1"},
		"other-sys":      {ID: "x", Kind: doctor.KindSysfs, Target: "/sys/kernel/mm/ksm/pages_to_scan", Value: "1"},
		"other-dev-file": {ID: "x", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/ifalias", Value: "1"},
		"cpu-online":     {ID: "x", Kind: doctor.KindSysfs, Target: "/sys/devices/system/cpu/cpu0/online", Value: "1"},
		"dev-is-path":    {ID: "x", Kind: doctor.KindSysfs, Device: "../../etc", Target: "/sys/class/net/../../etc/passwd", Value: "1"},
		"sysctl-kernel":  {ID: "x", Kind: doctor.KindSysctl, Target: "kernel.hostname", Value: "owned"},
		"sysctl-dotdot":  {ID: "x", Kind: doctor.KindSysctl, Target: "net/../../kernel/hostname", Value: "owned"},
		"governor-path":  {ID: "x", Kind: doctor.KindGovernor, Target: "0/../../../../etc/passwd", Value: "performance"},
		"irq-path":       {ID: "x", Kind: doctor.KindIRQAffinity, Target: "../../etc/passwd", Value: "1"},
		"ethtool-dev":    {ID: "x", Kind: doctor.KindEthtool, Device: "-s", Target: "rx-gro", Value: "on"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := hostileJournal(t, a, "owned\n")
			_, err := New(dir, s)
			var je *JournalError
			if !errors.As(err, &je) {
				t.Fatalf("revert would open a journal naming %s %q: %v", a.Kind, a.Target, err)
			}
			if _, err := Load(dir); !errors.As(err, &je) {
				t.Fatalf("status would read a journal naming %s %q: %v", a.Kind, a.Target, err)
			}
		})
	}
	for p, v := range canaries {
		if got := s.mustRead(t, p); got != v {
			t.Errorf("%s was changed to %q", p, got)
		}
	}
}

// TestWritesStayInKernelTrees: a target that passes the checks but whose
// file is a link leading out of /sys (as a test tree or a bind mount could
// make it) is not written through.
func TestWritesStayInKernelTrees(t *testing.T) {
	s := tree(t)
	canary := filepath.Join(s.Root, "etc", "passwd")
	os.MkdirAll(filepath.Dir(canary), 0o755)
	os.WriteFile(canary, []byte("root\n"), 0o644)
	th := s.path("/sys/class/net/eth9/threaded")
	os.Remove(th)
	if err := os.Symlink(canary, th); err != nil {
		t.Fatal(err)
	}
	tu := newTuner(t, s)
	a := doctor.Action{ID: "threaded/eth9", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/threaded", Value: "1"}
	if _, err := tu.Apply(context.Background(), a); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("apply through a link out of /sys: %v", err)
	}
	if b, _ := os.ReadFile(canary); string(b) != "root\n" {
		t.Fatalf("the link's target was written: %q", b)
	}
}

// TestRevertOnlyOnTheSameDeviceAndHost: an entry is put back only on the
// host and the device it was made on; a device that took the name (new
// MAC and ifindex) is left alone, another host's journal is refused.
func TestRevertOnlyOnTheSameDeviceAndHost(t *testing.T) {
	ctx := context.Background()
	s := tree(t)
	tu := newTuner(t, s)
	if _, err := tu.Apply(ctx, rpsAction("3")); err != nil {
		t.Fatal(err)
	}
	s.writeFile("/sys/class/net/eth9/ifindex", "12\n")
	s.writeFile("/sys/class/net/eth9/address", "02:00:00:00:00:77\n")
	if st := StatusOf(ctx, s, tu.Store.J); len(st) != 1 || !strings.Contains(st[0].Problem, "another device") {
		t.Fatalf("status with another device under the name: %+v", st)
	}
	outs, err := tu.Revert(ctx, nil, true)
	if err != nil || len(outs) != 1 || outs[0].State != StateGone || !strings.Contains(outs[0].Note, "another device") {
		t.Fatalf("revert onto another device: %+v %v", outs, err)
	}
	if got := s.mustRead(t, rps); got != "3" {
		t.Fatalf("revert wrote to another device: %q", got)
	}

	s2 := tree(t)
	tu2 := newTuner(t, s2)
	if _, err := tu2.Apply(ctx, rpsAction("3")); err != nil {
		t.Fatal(err)
	}
	tu2.Store.J.Entries[0].Host = "machine-id:elsewhere"
	if st := StatusOf(ctx, s2, tu2.Store.J); len(st) != 1 || !strings.Contains(st[0].Problem, "another machine") {
		t.Fatalf("status of another host's entry: %+v", st)
	}
	if _, err := tu2.Revert(ctx, nil, true); err == nil || !strings.Contains(err.Error(), "another machine") {
		t.Fatalf("revert of another host's entry: %v", err)
	}
	if got := s2.mustRead(t, rps); got != "3" {
		t.Fatalf("another host's entry was reverted here: %q", got)
	}
}

// TestStateMustBeTrusted: a state directory or journal others can write,
// a journal that is a link, a FIFO or huge is refused, quickly.
func TestStateMustBeTrusted(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("a world-writable state directory: %v", err)
	}
	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, journalName), []byte(`{"version":2,"entries":[]}`), 0o666)
	os.Chmod(filepath.Join(dir, journalName), 0o666)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("a world-writable journal: %v", err)
	}
	dir = t.TempDir()
	os.Symlink("/dev/zero", filepath.Join(dir, journalName))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a journal linked to /dev/zero: %v", err)
	}
	dir = t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, journalName), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Load(dir); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO journal: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load blocked on a FIFO journal")
	}
	dir = t.TempDir()
	f, _ := os.Create(filepath.Join(dir, journalName))
	f.Truncate(maxJournalSize + 1)
	f.Close()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("a huge journal: %v", err)
	}
	if os.Geteuid() == 0 {
		dir = t.TempDir()
		p := filepath.Join(dir, journalName)
		os.WriteFile(p, []byte(`{"version":2,"entries":[]}`), 0o644)
		os.Chown(p, 65534, 65534)
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Errorf("a journal of another user: %v", err)
		}
	}
}

// TestActionsNamingAbsentCPUs: a plan from a bigger host names CPUs this
// one lacks; it is refused before anything is written.
func TestActionsNamingAbsentCPUs(t *testing.T) {
	s := tree(t)
	full := s.path("/sys/devices/system/cpu/possible")
	os.MkdirAll(filepath.Dir(full), 0o755)
	os.WriteFile(full, []byte("0-1\n"), 0o644)
	tu := newTuner(t, s)
	for _, a := range []doctor.Action{
		{ID: "irq", Kind: doctor.KindIRQAffinity, Target: "42", Value: "3"},
		rpsAction("c"),
	} {
		if _, err := tu.Apply(context.Background(), a); err == nil || !strings.Contains(err.Error(), "CPUs 0-1 only") {
			t.Errorf("%s naming CPU 2 or 3 on a 2-CPU host: %v", a.ID, err)
		}
	}
	if got := s.mustRead(t, "/proc/irq/42/smp_affinity_list"); got != "0-3\n" {
		t.Errorf("smp_affinity_list changed: %q", got)
	}
	if len(tu.Store.J.Entries) != 0 {
		t.Errorf("refused actions were journaled: %+v", tu.Store.J.Entries)
	}
	if _, err := tu.Apply(context.Background(), rpsAction("2")); err != nil {
		t.Errorf("a mask within the host's CPUs: %v", err)
	}
}

// TestReportOfAnotherHost: a doctor report made elsewhere is not applied.
func TestReportOfAnotherHost(t *testing.T) {
	p := filepath.Join(t.TempDir(), "report.json")
	os.WriteFile(p, []byte(`{"schema":"wirespeed-doctor/1","host":"pi-in-the-attic","kernel":"6.18.20+rpt-rpi-v8","findings":[{"fix":{"actions":[{"id":"irq","kind":"irq-affinity","target":"42","value":"3"}]}}]}`), 0o644)
	_, err := LoadActions(p)
	var fe *ActionsFileError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "pi-in-the-attic") {
		t.Fatalf("a report of another host: %v", err)
	}
	zero := filepath.Join(t.TempDir(), "zero")
	os.Symlink("/dev/zero", zero)
	if _, err := LoadActions(zero); !errors.As(err, &fe) || !strings.Contains(err.Error(), "character device") {
		t.Fatalf("--actions linked to /dev/zero: %v", err)
	}
}

// TestIRQMustServeTheDevice: an IRQ action moves only an interrupt of the
// named device (or of its USB host controller), on apply and on revert.
func TestIRQMustServeTheDevice(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	for _, a := range []doctor.Action{
		{ID: "irq:43", Kind: doctor.KindIRQAffinity, Device: "eth9", Target: "43", Value: "1"},
		{ID: "irq:42", Kind: doctor.KindIRQAffinity, Target: "42", Value: "1"},
	} {
		if _, err := tu.Apply(context.Background(), a); err == nil {
			t.Errorf("%s on %q was applied", a.ID, a.Device)
		}
	}
	if got := s.mustRead(t, "/proc/irq/43/smp_affinity_list"); got != "0-3\n" {
		t.Fatalf("the disk's IRQ moved: %q", got)
	}
	s.writeFile("/proc/irq/42/effective_affinity_list", "1\n")
	if o, err := tu.Apply(context.Background(), doctor.Action{ID: "irq:42", Kind: doctor.KindIRQAffinity, Device: "eth9", Target: "42", Value: "1"}); err != nil || o.State != StateApplied {
		t.Fatalf("the NIC's controller IRQ: %+v %v", o, err)
	}
	// A journal entry retargeted at IRQ 43 is not reverted there.
	tu.Store.J.Entries[0].Action.Target = "43"
	if _, err := tu.Revert(context.Background(), nil, true); err == nil || !strings.Contains(err.Error(), "does not serve") {
		t.Fatalf("revert onto another device's IRQ: %v", err)
	}
	if got := s.mustRead(t, "/proc/irq/43/smp_affinity_list"); got != "0-3\n" {
		t.Fatalf("revert wrote the disk's IRQ: %q", got)
	}
}
