// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

func TestJournalRefusesCorruptAndNewer(t *testing.T) {
	for name, content := range map[string]string{
		"corrupt":   `{"version":1,"entries":[{"seq":1,`,
		"newer":     `{"version":99,"entries":[]}`,
		"noversion": `{"entries":[]}`,
		"badstate":  `{"version":1,"entries":[{"seq":1,"action":{"id":"a","kind":"sysfs","target":"/sys/x","value":"1","command":""},"old":"0","state":"maybe","netns":"","time":""}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, journalName)
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := New(dir, Live())
			var je *JournalError
			if !errors.As(err, &je) {
				t.Fatalf("opening a %s journal: %v, want a JournalError", name, err)
			}
			if !strings.Contains(err.Error(), "mv ") && !strings.Contains(err.Error(), "newer") {
				t.Errorf("error does not say how to recover: %v", err)
			}
			b, _ := os.ReadFile(p)
			if !bytes.Equal(b, []byte(content)) {
				t.Fatalf("the %s journal was rewritten", name)
			}
			// The lock was released: a second attempt gets the same answer, not "busy".
			if _, err := New(dir, Live()); errors.Is(err, ErrBusy) {
				t.Fatal("a refused journal left the lock held")
			}
		})
	}
}

func TestLockKeepsTunesApart(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Open while the first holds the lock: %v", err)
	}
	a.Close()
	b, err := Open(dir)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	b.Close()
}

func TestJournalRoundTrip(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.add(Entry{Action: rpsAction("3"), Old: "0\n", State: StatePending, Netns: "net:[1]", Host: HostID(), Ifindex: 9})
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := os.Stat(filepath.Join(dir, journalName+".tmp")); !errors.Is(err, os.ErrNotExist) {
		t.Error("temporary journal left behind")
	}
	j, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Entries) != 1 || j.Entries[0].Old != "0\n" || !j.Entries[0].Active() {
		t.Fatalf("round trip: %+v", j.Entries)
	}
}

func FuzzParseJournal(f *testing.F) {
	f.Add([]byte(`{"version":1,"entries":[]}`))
	f.Add([]byte(`{"version":1,"entries":[{"seq":1,"action":{"id":"a","kind":"sysfs","target":"/sys/x","value":"1","command":""},"old":"0\n","state":"applied","netns":"net:[1]","time":"t"}]}`))
	f.Add([]byte(`{"version":2}`))
	for _, a := range []string{
		`{"id":"a","kind":"sysfs","device":"eth0","target":"/sys/class/net/eth0/queues/rx-0/rps_cpus","value":"3"}`,
		`{"id":"a","kind":"sysfs","device":"eth0","target":"/sys/class/net/eth0/../../../etc/passwd","value":"3"}`,
		`{"id":"a","kind":"sysfs","target":"/sys/kernel/mm/ksm/pages_to_scan","value":"3"}`,
		`{"id":"a","kind":"sysctl","target":"kernel.hostname","value":"x"}`,
		`{"id":"a","kind":"sysctl","target":"net.core.netdev_budget","value":"600"}`,
		`{"id":"a","kind":"governor","target":"0-1","value":"performance"}`,
		`{"id":"a","kind":"irq-affinity","target":"42","value":"1"}`,
	} {
		f.Add([]byte(`{"version":2,"entries":[{"seq":1,"action":` + a + `,"old":"0\n","state":"applied","netns":"net:[1]","host":"machine-id:x","time":"t"}]}`))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := ParseJournal(b, "j")
		if err != nil {
			var je *JournalError
			if !errors.As(err, &je) {
				t.Fatalf("error of another type: %v", err)
			}
			return
		}
		if j.Version < 1 || j.Version > JournalVersion {
			t.Fatalf("accepted version %d", j.Version)
		}
		for _, e := range j.Entries {
			if _, ok := knobs[e.Action.Kind]; !ok {
				t.Fatalf("accepted kind %q", e.Action.Kind)
			}
			if where := outsideTargets(e.Action); where != "" {
				t.Fatalf("accepted an entry that writes %s: %+v", where, e.Action)
			}
		}
	})
}

// outsideTargets says, independently of the knobs' own checks, where an
// action would write if that is outside what tune may change ("" if not).
func outsideTargets(a doctor.Action) string {
	bad := func(s string) bool { return strings.Contains(s, "..") || strings.ContainsAny(s, "\x00\n") }
	switch a.Kind {
	case doctor.KindSysfs:
		if bad(a.Target) || (!strings.HasPrefix(a.Target, "/sys/class/net/"+a.Device+"/") || a.Device == "" || strings.Contains(a.Device, "/")) &&
			!strings.HasPrefix(a.Target, "/sys/devices/system/cpu/cpu") {
			return a.Target
		}
	case doctor.KindSysctl:
		if bad(a.Target) || !strings.HasPrefix(a.Target, "net.") || strings.Contains(a.Target, "/") {
			return a.Target
		}
	case doctor.KindIRQAffinity, doctor.KindGovernor, doctor.KindNAPI:
		if bad(a.Target) || strings.Contains(a.Target, "/") {
			return a.Target
		}
	}
	if bad(a.Device) || strings.Contains(a.Device, "/") || strings.HasPrefix(a.Device, "-") {
		return "device " + a.Device
	}
	return ""
}

func FuzzParseFeature(f *testing.F) {
	f.Add("Features for x:\nrx-gro: on\ntx-lockless: on [fixed]\n", "rx-gro")
	f.Fuzz(func(t *testing.T, out, feat string) {
		st, _, err := ParseFeature(out, feat)
		if err == nil && st != "on" && st != "off" {
			t.Fatalf("state %q", st)
		}
	})
}

func FuzzRootQdisc(f *testing.F) {
	f.Add("qdisc noqueue 0: root refcnt 2\n")
	f.Add("qdisc mq 0: root\nqdisc fq_codel 0: parent :1 limit 10240p\n")
	f.Fuzz(func(t *testing.T, out string) {
		line, kind, handle, err := RootQdisc(out)
		if err == nil && (kind == "" || handle == "" || !strings.Contains(out, line)) {
			t.Fatalf("%q -> %q %q %q", out, line, kind, handle)
		}
	})
}

// TestNetnsLockAcrossStateDirs: two tunes of one network namespace are
// kept apart even when their journals live in different directories.
func TestNetnsLockAcrossStateDirs(t *testing.T) {
	old := HostLockDir
	HostLockDir = t.TempDir()
	defer func() { HostLockDir = old }()
	a, err := New(t.TempDir(), Live())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(t.TempDir(), Live()); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "network namespace") {
		t.Fatalf("a second tune with another state dir: %v", err)
	}
	a.Close()
	b, err := New(t.TempDir(), Live())
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	b.Close()
}

// TestLeftoversOfAnotherJournal: a tune killed mid-trial left a change in
// its journal; the next tune of the namespace, with another state dir,
// refuses to take it for the host's own state and names the revert.
func TestLeftoversOfAnotherJournal(t *testing.T) {
	old := HostLockDir
	HostLockDir = t.TempDir()
	defer func() { HostLockDir = old }()
	s := tree(t)
	s.Root = "/" // the namespace lock is taken for the live host only
	first, second := t.TempDir(), t.TempDir()
	a, err := New(first, s)
	if err != nil {
		t.Fatal(err)
	}
	a.Store.add(Entry{Action: rpsAction("3"), Old: "0\n", State: StateApplied, Netns: a.Netns, Host: a.Host, Ifindex: 9})
	if err := a.Store.Save(); err != nil {
		t.Fatal(err)
	}
	a.Close() // as a SIGKILL would: the entry stays, undecided
	if _, err := New(second, s); err == nil || !strings.Contains(err.Error(), "tune revert --all --state-dir "+first) {
		t.Fatalf("a tune with another journal while the first left a trial: %v", err)
	}
	b, err := New(first, s)
	if err != nil {
		t.Fatalf("the first journal's own tune: %v", err)
	}
	b.Store.J.Entries[0].State = StateReverted
	b.Store.Save()
	b.Close()
	c, err := New(second, s)
	if err != nil {
		t.Fatalf("after the leftover was put back: %v", err)
	}
	c.Close()
}

// TestBusyMessageBounded (issue 40): a lock file someone filled is not read
// whole into the "busy" message (2 GiB hung it, 300 MB took 1.25 GB); its
// first bytes are quoted, control characters escaped.
func TestBusyMessageBounded(t *testing.T) {
	old := HostLockDir
	HostLockDir = t.TempDir()
	defer func() { HostLockDir = old }()
	dir := t.TempDir()
	a, err := New(dir, Live())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	junk := append([]byte("\x1b[2J"), bytes.Repeat([]byte("A"), 32<<20)...)
	locks, _ := filepath.Glob(filepath.Join(HostLockDir, "*.lock"))
	for _, lp := range append(locks, filepath.Join(dir, lockName)) {
		if err := os.WriteFile(lp, junk, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(dir); !errors.Is(err, ErrBusy) || len(err.Error()) > 400 || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("Open of a held, filled lock: %d bytes: %.200q", len(err.Error()), err)
	}
	if _, err := New(t.TempDir(), Live()); !errors.Is(err, ErrBusy) || len(err.Error()) > 600 || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("New in a namespace whose lock is held and filled: %d bytes: %.200q", len(err.Error()), err)
	}
}
