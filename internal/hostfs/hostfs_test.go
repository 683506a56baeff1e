// SPDX-License-Identifier: Apache-2.0

package hostfs

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildTree makes a small sysfs-like tree with the shapes that matter: a
// class symlink into devices, a relative link up the tree, a nested file.
func buildTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	mk := func(p, content string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(p, target string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	mk("sys/devices/pci0000:00/0000:00:14.0/usb2/2-2/2-2:1.0/net/eth1/mtu", "1500\n")
	mk("sys/devices/pci0000:00/0000:00:14.0/usb2/2-2/speed", "5000\n")
	mk("sys/devices/pci0000:00/0000:00:14.0/usb2/2-2/2-2:1.0/net/eth1/queues/rx-0/rps_cpus", "f\n")
	link("sys/class/net/eth1", "../../devices/pci0000:00/0000:00:14.0/usb2/2-2/2-2:1.0/net/eth1")
	link("sys/devices/pci0000:00/0000:00:14.0/usb2/2-2/2-2:1.0/net/eth1/device", "../../../2-2:1.0")
	mk("proc/4242/net/softnet_stat", "00000001 00000000 00000000\n")
	link("proc/self", "4242")
	link("proc/net", "self/net")
	mk("sys/unread/file", "x")
	return root
}

func TestResolveAndRead(t *testing.T) {
	f := Dir(buildTree(t))
	s, err := f.ReadString("/sys/class/net/eth1/mtu")
	if err != nil || s != "1500" {
		t.Fatalf("mtu = %q, %v", s, err)
	}
	s, err = f.ReadString("/sys/class/net/eth1/device/../speed")
	if err != nil || s != "5000" {
		t.Fatalf("speed through device/.. = %q, %v", s, err)
	}
	real, err := f.RealPath("/proc/net/softnet_stat")
	if err != nil || real != "/proc/4242/net/softnet_stat" {
		t.Fatalf("RealPath = %q, %v", real, err)
	}
	if _, err := f.ReadFile("/sys/class/net/nope/mtu"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v, want ErrNotExist", err)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	live := Dir(buildTree(t))
	rec := NewRecorder()
	live.Record(rec)
	var reads []string
	names, err := live.ReadDir("/sys/class/net")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/sys/class/net/eth1/mtu", "/sys/class/net/eth1/device/../speed", "/proc/net/softnet_stat", "/sys/class/net/eth1/queues/rx-0/rps_cpus"} {
		s, err := live.ReadString(p)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, s)
	}
	// A read error on an existing file is replayed (xps_cpus answers ENOENT
	// on a one-queue device although the file exists).
	rec.file(live, "/sys/class/net/eth1/queues/rx-0/rps_cpus", nil, &os.PathError{Op: "read", Path: "x", Err: syscall.EOPNOTSUPP})

	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, rec, Meta{Created: time.Unix(0, 0).UTC(), Hostname: "h"}, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.tar.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := OpenSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if snap.Meta.Hostname != "h" || string(bytes.TrimSpace(snap.Answers)) != "{\n  \"a\": 1\n}" {
		t.Errorf("meta/answers = %+v %s", snap.Meta, snap.Answers)
	}
	got, err := snap.FS.ReadDir("/sys/class/net")
	if err != nil || !reflect.DeepEqual(got, names) {
		t.Errorf("listing = %v, %v; want %v", got, err, names)
	}
	for i, p := range []string{"/sys/class/net/eth1/mtu", "/sys/class/net/eth1/device/../speed", "/proc/net/softnet_stat"} {
		s, err := snap.FS.ReadString(p)
		if err != nil || s != reads[i] {
			t.Errorf("%s = %q, %v; want %q", p, s, err, reads[i])
		}
	}
	if _, err := snap.FS.ReadFile("/sys/class/net/eth1/queues/rx-0/rps_cpus"); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("recorded read error not replayed: %v", err)
	}
	// Only what was read is captured.
	if snap.FS.Exists("/sys/unread/file") {
		t.Error("snapshot holds a file that was never read")
	}
	if err := snap.FS.WriteFile("/sys/class/net/eth1/mtu", []byte("9000")); err == nil {
		t.Error("a snapshot accepted a write")
	}
}

func writeTar(t *testing.T, entries []tar.Header, gz bool) string {
	t.Helper()
	var buf bytes.Buffer
	var w interface {
		Write([]byte) (int, error)
		Close() error
	}
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = zw
	}
	tw := tar.NewWriter(w)
	for _, h := range entries {
		body := ""
		if h.Name == "meta.json" {
			body = `{"format":"wirespeed-snapshot","version":1}`
		}
		h.Size = int64(len(body))
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
			body = ""
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	w.Close()
	p := filepath.Join(t.TempDir(), "bad.tar.gz")
	os.WriteFile(p, buf.Bytes(), 0o644)
	return p
}

func TestSnapshotRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	notGzip := filepath.Join(dir, "plain.txt")
	os.WriteFile(notGzip, []byte("hello"), 0o644)
	if _, err := OpenSnapshot(notGzip); !errors.Is(err, ErrNotSnapshot) {
		t.Errorf("plain file: %v", err)
	}
	meta := tar.Header{Name: "meta.json", Typeflag: tar.TypeReg, Mode: 0o644}
	cases := map[string][]tar.Header{
		"foreign (no meta first)": {{Name: "etc/passwd", Typeflag: tar.TypeReg}},
		"path traversal":          {meta, {Name: "root/../../evil", Typeflag: tar.TypeReg}},
		"outside root/":           {meta, {Name: "evil", Typeflag: tar.TypeReg}},
		"write through symlink": {meta,
			{Name: "root/sys", Typeflag: tar.TypeSymlink, Linkname: "/tmp"},
			{Name: "root/sys/evil", Typeflag: tar.TypeReg}},
		"device node": {meta, {Name: "root/dev", Typeflag: tar.TypeChar}},
	}
	for name, ents := range cases {
		p := writeTar(t, ents, true)
		if s, err := OpenSnapshot(p); !errors.Is(err, ErrNotSnapshot) {
			if s != nil {
				s.Close()
			}
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
	if _, err := os.Stat("/tmp/evil"); err == nil {
		t.Error("a snapshot wrote outside its tree")
	}
}

// A symlink in a snapshot pointing outside the tree must not be followed to
// the host's files.
func TestSnapshotSymlinkStaysInside(t *testing.T) {
	p := writeTar(t, []tar.Header{
		{Name: "meta.json", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "root/sys/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "root/sys/hostname", Typeflag: tar.TypeSymlink, Linkname: "/etc/hostname"},
		{Name: "root/sys/up", Typeflag: tar.TypeSymlink, Linkname: "../../../../../../etc/hostname"},
	}, true)
	s, err := OpenSnapshot(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{"/sys/hostname", "/sys/up"} {
		if b, err := s.FS.ReadFile(q); err == nil {
			t.Errorf("%s read the host's file: %q", q, strings.TrimSpace(string(b)))
		}
	}
}

func TestLiveRecordsReadErrors(t *testing.T) {
	if _, err := os.Stat("/sys/class/net/lo/queues/tx-0/xps_cpus"); err != nil {
		t.Skip("no /sys/class/net/lo/queues/tx-0/xps_cpus here")
	}
	live := Live()
	rec := NewRecorder()
	live.Record(rec)
	_, err := live.ReadFile("/sys/class/net/lo/queues/tx-0/xps_cpus")
	if err == nil {
		t.Skip("lo has several TX queues here")
	}
	real, _ := live.RealPath("/sys/class/net/lo/queues/tx-0/xps_cpus")
	if rec.errs[real] != syscall.ENOENT {
		t.Errorf("ENOENT of xps_cpus not recorded: %v (errs %v)", err, rec.errs)
	}
}
