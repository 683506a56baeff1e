// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
	// Bound to this host, namespace and device, so that only the target
	// can be what makes the journal refused.
	ns, _ := os.Readlink("/proc/self/ns/net")
	j := Journal{Version: JournalVersion, Entries: []Entry{{Seq: 1, Action: a, Old: old, State: StateApplied, Netns: ns, Host: HostID(), Ifindex: 7, Time: "t"}}}
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
		"udev-quote":     {ID: "x", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/threaded", Value: `1", RUN+="/bin/sh -c id`},
		"value-space":    {ID: "x", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/threaded", Value: "1 2"},
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

// TestJournalEntryBoundToWhereItWasMade: an entry stripped of the
// namespace, the host (journal version 2) or its device's ifindex would
// pass every "is this where it was made" check; it is refused.
func TestJournalEntryBoundToWhereItWasMade(t *testing.T) {
	good := Entry{Seq: 1, Action: rpsAction("3"), Old: "0\n", State: StateApplied, Netns: "net:[1]", Host: "machine-id:x", Ifindex: 7, Time: "t"}
	for name, c := range map[string]struct {
		version int
		edit    func(e *Entry)
		ok      bool
	}{
		"complete":         {2, func(e *Entry) {}, true},
		"no netns":         {2, func(e *Entry) { e.Netns = "" }, false},
		"no host":          {2, func(e *Entry) { e.Host = "" }, false},
		"no ifindex":       {2, func(e *Entry) { e.Ifindex = 0 }, false},
		"negative ifindex": {2, func(e *Entry) { e.Ifindex = -3 }, false},
		"v1 has no host":   {1, func(e *Entry) { e.Host = "" }, true},
		"v1 without netns": {1, func(e *Entry) { e.Host, e.Netns = "", "" }, false},
		"no device, no idx": {2, func(e *Entry) {
			e.Action = doctor.Action{ID: "b", Kind: doctor.KindSysctl, Target: "net.core.netdev_budget", Value: "600"}
			e.Ifindex = 0
		}, true},
	} {
		e := good
		c.edit(&e)
		b, _ := json.Marshal(Journal{Version: c.version, Entries: []Entry{e}})
		_, err := ParseJournal(b, "j")
		var je *JournalError
		if c.ok && err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
		if !c.ok && !errors.As(err, &je) {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
}

// leftoverJournal: the namespace's last tune (journal first) left an
// applied change no run decided on; second is another state directory.
func leftoverJournal(t *testing.T) (s *System, first, second string) {
	t.Helper()
	old := HostLockDir
	HostLockDir = t.TempDir()
	t.Cleanup(func() { HostLockDir = old })
	s = tree(t)
	s.Root = "/" // the namespace lock is taken for the live host only
	first, second = t.TempDir(), t.TempDir()
	a, err := New(first, s)
	if err != nil {
		t.Fatal(err)
	}
	a.Store.add(Entry{Action: rpsAction("3"), Old: "0\n", State: StateApplied, Netns: a.Netns, Host: a.Host, Ifindex: 7})
	if err := a.Store.Save(); err != nil {
		t.Fatal(err)
	}
	a.Close()
	return s, first, second
}

// TestUnreadableLeftoverJournal: the last tune of the namespace wrote a
// journal that cannot be read now (damaged, or made writable by others);
// it may hold a killed trial's change, so the next tune does not start.
func TestUnreadableLeftoverJournal(t *testing.T) {
	s, first, second := leftoverJournal(t)
	os.Chmod(filepath.Join(first, journalName), 0o666)
	if _, err := New(second, s); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("a tune after one whose journal cannot be read now: %v", err)
	}
}

// TestStuckLeftoverCanBeCleared (issue 40): a change no run decided on in
// the last journal of the namespace - an interrupted trial's, or one a
// revert can never put back - blocks the next tune elsewhere; the message
// says both and how to clear it, and keeping the change (revert --keep)
// clears it without touching the system.
func TestStuckLeftoverCanBeCleared(t *testing.T) {
	s, first, second := leftoverJournal(t)
	_, err := New(second, s)
	if err == nil || !strings.Contains(err.Error(), "could not put back") || !strings.Contains(err.Error(), "revert --keep ID --state-dir "+first) {
		t.Fatalf("a tune after a stuck change: %v", err)
	}
	b, err := New(first, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Keep("rps/eth9/rx-0"); err != nil {
		t.Fatal(err)
	}
	b.Close()
	c, err := New(second, s)
	if err != nil {
		t.Fatalf("after revert --keep: %v", err)
	}
	c.Close()
}

// persistTuner is a tuner with one applied change ready to persist.
func persistTuner(t *testing.T) (*Tuner, string) {
	t.Helper()
	s := tree(t)
	tu := newTuner(t, s)
	if o, err := tu.Apply(context.Background(), rpsAction("3")); err != nil || o.State != StateApplied {
		t.Fatalf("%+v %v", o, err)
	}
	return tu, t.TempDir()
}

// TestPersistWritesOnlyItsFiles: persist and persist --remove write and
// remove only their own five files, below --root and through no link,
// whatever the journal and the manifest in the state directory say.
func TestPersistWritesOnlyItsFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "victim")
	mark := persistMark + "\nkeep me\n"
	reset := func() {
		if err := os.WriteFile(outside, []byte(mark), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string) {
		t.Helper()
		if b, err := os.ReadFile(outside); err != nil || string(b) != mark {
			t.Errorf("%s: the file outside was changed or removed: %q %v", what, b, err)
		}
	}

	// Another host's applied change is not made permanent here.
	tu, _ := persistTuner(t)
	tu.Store.J.Entries[0].Host = "machine-id:elsewhere"
	if p := PlanPersist(tu.Sys, tu.Store.J, tu.Netns); len(p.Files) != 0 || len(p.Skipped) != 1 || !strings.Contains(p.Skipped[0], "another machine") {
		t.Errorf("another host's change: %+v", p)
	}

	// A change of a device that is another one now (new MAC) is not made
	// permanent: the rules would set the newcomer at every boot.
	tu, _ = persistTuner(t)
	tu.Sys.writeFile("/sys/class/net/eth9/address", "02:00:00:00:00:77\n")
	if p := PlanPersist(tu.Sys, tu.Store.J, tu.Netns); len(p.Files) != 0 || len(p.Skipped) != 1 || !strings.Contains(p.Skipped[0], "another device") {
		t.Errorf("a change of a device that is gone: %+v", p)
	}

	// A manifest naming another file: --remove and a new persist refuse it.
	for _, name := range []string{outside, "../../../../../../../../" + outside, "/etc/passwd", PersistUdev + "/../../../../" + outside} {
		reset()
		tu, root := persistTuner(t)
		m, _ := json.Marshal(Manifest{Version: manifestFormat, RootDir: root, Files: []string{name}})
		os.WriteFile(filepath.Join(tu.Store.Dir, manifestName), m, 0o644)
		if _, err := RemovePersist(root, tu.Store.Dir); err == nil || !strings.Contains(err.Error(), "not a file persist writes") {
			t.Errorf("--remove with a manifest naming %s: %v", name, err)
		}
		check("--remove, manifest naming " + name)
		if _, err := WritePersist(root, tu.Store.Dir, PlanPersist(tu.Sys, tu.Store.J, tu.Netns)); err == nil {
			t.Errorf("persist with a manifest naming %s: no error", name)
		}
		check("persist, manifest naming " + name)
	}

	// A manifest that is a FIFO, a link to /dev/zero, huge, or in a
	// directory others can write: refused at once.
	for name, setup := range map[string]func(dir string){
		"fifo":     func(dir string) { syscall.Mkfifo(filepath.Join(dir, manifestName), 0o600) },
		"dev-zero": func(dir string) { os.Symlink("/dev/zero", filepath.Join(dir, manifestName)) },
		"huge": func(dir string) {
			f, _ := os.Create(filepath.Join(dir, manifestName))
			f.Truncate(maxManifest + 1)
			f.Close()
		},
		"world-writable dir": func(dir string) { os.Chmod(dir, 0o777) },
	} {
		tu, root := persistTuner(t)
		setup(tu.Store.Dir)
		done := make(chan error, 1)
		go func() { _, err := RemovePersist(root, tu.Store.Dir); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("--remove with a %s manifest: no error", name)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("--remove blocked on a %s manifest", name)
		}
		os.Chmod(tu.Store.Dir, 0o755)
	}

	// A link left where persist writes its temporary file, or a linked
	// directory below --root: nothing is written through it.
	reset()
	tu, root := persistTuner(t)
	full := filepath.Join(root, PersistUdev)
	os.MkdirAll(filepath.Dir(full), 0o755)
	os.Symlink(outside, full+".wirespeed-tmp")
	if _, err := WritePersist(root, tu.Store.Dir, PlanPersist(tu.Sys, tu.Store.J, tu.Netns)); err != nil {
		t.Errorf("persist over a stale temporary link: %v", err)
	}
	check("a link in place of the temporary file")
	if fi, err := os.Lstat(full); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s is not a regular file after persist: %v", full, err)
	}

	reset()
	tu, root = persistTuner(t)
	elsewhere := t.TempDir()
	os.MkdirAll(filepath.Join(root, "etc"), 0o755)
	os.Symlink(elsewhere, filepath.Join(root, "etc", "udev"))
	if _, err := WritePersist(root, tu.Store.Dir, PlanPersist(tu.Sys, tu.Store.J, tu.Netns)); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("persist through a linked directory below --root: %v", err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("persist wrote through the link: %v", ents)
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"version":1,"root":"/","files":["/etc/udev/rules.d/90-wirespeed-tune.rules"]}`))
	f.Add([]byte(`{"version":1,"root":"/","files":["../../etc/passwd"]}`))
	f.Add([]byte(`{"version":1,"files":["/etc/sysctl.d/90-wirespeed-tune.conf","/etc/shadow"]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b, "m")
		if err != nil {
			return
		}
		for _, p := range m.Files {
			if !slices.Contains(persistFiles, p) {
				t.Fatalf("accepted a manifest naming %q", p)
			}
		}
	})
}

// FuzzParseActions: whatever an --actions file holds, no action it yields
// passes Check and writes outside tune's targets.
func FuzzParseActions(f *testing.F) {
	f.Add([]byte(`[{"id":"a","kind":"sysfs","device":"eth0","target":"/sys/class/net/eth0/queues/rx-0/rps_cpus","value":"3"}]`))
	f.Add([]byte(`[{"id":"a","kind":"sysfs","target":"/sys/kernel/mm/ksm/pages_to_scan","value":"3"},{"id":"a","kind":"sysctl","target":"net.core.somaxconn","value":"1"}]`))
	f.Add([]byte(`{"actions":[{"id":"a","kind":"sysctl","target":"kernel.hostname","value":"x"}]}`))
	f.Add([]byte(`{"host":"h","findings":[{"fix":{"actions":[{"id":"i","kind":"irq-affinity","device":"eth0","target":"42","value":"1"}]}}]}`))
	f.Add([]byte(`{"findings":null}`))
	f.Add([]byte(`[{"id":"t","kind":"sysfs","device":"eth0","target":"/sys/class/net/eth0/threaded","value":"1\", RUN+=\"x"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := ParseActions(b, "a.json")
		if err != nil {
			var fe *ActionsFileError
			if !errors.As(err, &fe) {
				t.Fatalf("error of another type: %v", err)
			}
			return
		}
		for _, a := range list {
			if Check(a) != nil {
				continue
			}
			if where := outsideTargets(a); where != "" {
				t.Fatalf("Check passes an action that writes %s: %+v", where, a)
			}
			if a.Kind == doctor.KindSysfs && strings.ContainsAny(a.Value, "\" \n") {
				t.Fatalf("Check passes a sysfs value a udev rule cannot hold: %q", a.Value)
			}
		}
	})
}
