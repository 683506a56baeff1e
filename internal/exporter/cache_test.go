// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/hostfs"
)

// writeIn rewrites a file of an unpacked snapshot, through its symlinks.
func writeIn(t *testing.T, fs *hostfs.FS, p, content string) {
	t.Helper()
	real, err := fs.RealPath(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fs.Root, real), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotCache: between full snapshots a scrape re-reads BQL and the
// interrupt counts, and a moved threaded switch or an old snapshot makes
// the next scrape take a new one.
func TestSnapshotCache(t *testing.T) {
	snap, err := hostfs.OpenSnapshot("../../testdata/snapshots/vm-usb-nic-ours.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	e := New(context.Background(), Options{FS: snap.FS, Refresh: 1 << 40})
	m := scrape(t, e)
	if e.colls.inspect.cache.gen != 1 {
		t.Fatalf("first scrape: %d full snapshots, want 1", e.colls.inspect.cache.gen)
	}
	const inflight = `wirespeed_bql_inflight_bytes{device="usb0",queue="tx-0"} `
	if !strings.Contains(m, inflight) {
		t.Fatalf("the fixture exports no BQL inflight for usb0:\n%s", m)
	}

	writeIn(t, snap.FS, "/sys/class/net/usb0/queues/tx-0/byte_queue_limits/inflight", "4242\n")
	b, err := snap.FS.ReadFile("/proc/interrupts")
	if err != nil {
		t.Fatal(err)
	}
	var irq string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "xhci") {
			irq = strings.TrimSpace(strings.SplitN(l, ":", 2)[0])
			f := strings.Fields(l)
			writeIn(t, snap.FS, "/proc/interrupts", strings.Replace(string(b), l, strings.Replace(l, " "+f[1]+" ", " 777777 ", 1), 1))
			break
		}
	}
	if irq == "" {
		t.Fatal("no xhci line in the fixture's /proc/interrupts")
	}
	m = scrape(t, e)
	if e.colls.inspect.cache.gen != 1 {
		t.Errorf("a scrape with nothing structural changed took a full snapshot (%d)", e.colls.inspect.cache.gen)
	}
	if !strings.Contains(m, inflight+"4242\n") {
		t.Errorf("BQL inflight not re-read from the cached snapshot:\n%s", grepLines(m, "bql_inflight"))
	}
	if !strings.Contains(m, `irq="`+irq+`"} 777777`) {
		t.Errorf("interrupt counts of IRQ %s not re-read:\n%s", irq, grepLines(m, "device_interrupts_total"))
	}

	want := e.colls.inspect.cache.gen
	for _, k := range []struct{ file, value string }{
		{"/sys/class/net/usb0/threaded", "1"},
		{"/sys/class/net/usb0/queues/rx-0/rps_cpus", "2"},
		{"/sys/class/net/usb0/gro_flush_timeout", "20000"},
		{"/proc/irq/24/smp_affinity", "2"},
	} {
		writeIn(t, snap.FS, k.file, k.value+"\n")
		scrape(t, e)
		if want++; e.colls.inspect.cache.gen != want {
			t.Errorf("%s moved: %d full snapshots, want %d", k.file, e.colls.inspect.cache.gen, want)
		}
		scrape(t, e)
		if e.colls.inspect.cache.gen != want {
			t.Errorf("after %s moved, the next scrape took a full snapshot again (%d)", k.file, e.colls.inspect.cache.gen)
		}
	}
	e.colls.inspect.cache.refresh = -1
	scrape(t, e)
	if want++; e.colls.inspect.cache.gen != want {
		t.Errorf("refresh < 0: %d full snapshots, want %d", e.colls.inspect.cache.gen, want)
	}
	// a partly read snapshot is not kept
	e.colls.inspect.cache.refresh = 1 << 40
	e.colls.inspect.cache.err = errors.New("partly read")
	scrape(t, e)
	if want++; e.colls.inspect.cache.gen != want {
		t.Errorf("after a partly read snapshot: %d full snapshots, want %d", e.colls.inspect.cache.gen, want)
	}
}

// TestSnapshotCacheKnobErrors: a device whose knobs answer errors (no
// gro_flush_timeout on an old kernel; threaded's EOPNOTSUPP on a device
// without NAPI) still reads as unchanged.
func TestSnapshotCacheKnobErrors(t *testing.T) {
	snap, err := hostfs.OpenSnapshot("../../testdata/snapshots/vm-usb-nic-stock.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	real, err := snap.FS.RealPath("/sys/class/net/usb0/gro_flush_timeout")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(snap.FS.Root, real)); err != nil {
		t.Fatal(err)
	}
	e := New(context.Background(), Options{FS: snap.FS, Refresh: 1 << 40})
	scrape(t, e)
	scrape(t, e)
	if e.colls.inspect.cache.gen != 1 {
		t.Errorf("two scrapes of an unchanged host: %d full snapshots, want 1", e.colls.inspect.cache.gen)
	}
	for _, d := range e.colls.inspect.cache.snap.Devices {
		if d.Name == "usb0" && !strings.HasPrefix(d.NAPISysfs.GROFlushTimeout, "error:") {
			t.Errorf("usb0's gro_flush_timeout reads %q; this test wants a knob that answers an error", d.NAPISysfs.GROFlushTimeout)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
