// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The Raspberry Pi 4 file comes from the seed article: the xHCI interrupt
// (46) whose chip name has spaces, shared actions ("mmc1, mmc0").
func TestInterruptsRPi4(t *testing.T) {
	in, err := ParseInterrupts(read(t, "interrupts.rpi4"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in.CPUs, []int{0, 1, 2, 3}) {
		t.Fatalf("cpus = %v", in.CPUs)
	}
	x := in.Find(46)
	if x == nil {
		t.Fatal("irq 46 missing")
	}
	if !reflect.DeepEqual(x.Counts, []uint64{668625, 0, 0, 0}) {
		t.Errorf("irq 46 counts = %v", x.Counts)
	}
	if !reflect.DeepEqual(x.Actions, []string{"xhci_hcd"}) || x.Desc != "BRCM STB PCIe MSI 524288 Edge" {
		t.Errorf("irq 46 = %+v", x)
	}
	mmc := in.Find(32)
	if !reflect.DeepEqual(mmc.Actions, []string{"mmc1", "mmc0"}) {
		t.Errorf("irq 32 actions = %q", mmc.Actions)
	}
	if in.Find(9).Actions[0] != "vgic" {
		t.Errorf("irq 9 = %+v", in.Find(9))
	}
	var ipi0 *Interrupt
	for i := range in.Lines {
		if in.Lines[i].IRQ == "IPI0" {
			ipi0 = &in.Lines[i]
		}
	}
	if ipi0 == nil || ipi0.Number != -1 || ipi0.Counts[3] != 547 || ipi0.Desc != "Rescheduling interrupts" {
		t.Errorf("IPI0 = %+v", ipi0)
	}
}

func TestInterruptsFirecracker(t *testing.T) {
	in, err := ParseInterrupts(read(t, "interrupts.firecracker"))
	if err != nil {
		t.Fatal(err)
	}
	x := in.Find(38)
	if x == nil || len(x.Counts) != 2 || x.Actions[0] != "virtio2-input.0" || x.Desc != "PCI-MSIX-0000:00:03.0 1-edge" {
		t.Errorf("irq 38 = %+v", x)
	}
}

func TestSoftnet(t *testing.T) {
	rows, err := ParseSoftnetStat([]byte("0000000e 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000005 00000000 00000003 00000000 00000007 00000008\n" +
		"00000c52 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000000 00000000\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []SoftnetCPU{
		{CPU: 0, Processed: 14, Dropped: 1, TimeSqueeze: 2, ReceivedRPS: 5, BacklogLen: 3, InputQlen: 7, ProcessQlen: 8},
		{CPU: 1, Processed: 0xc52},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("got %+v", rows)
	}
	// An old kernel's three columns still parse, numbered by position.
	rows, err = ParseSoftnetStat([]byte("00000001 00000002 00000003\n00000004 00000005 00000006\n"))
	if err != nil || rows[1].CPU != 1 || rows[1].TimeSqueeze != 6 {
		t.Errorf("old format: %+v %v", rows, err)
	}
	if _, err := ParseSoftnetStat([]byte("zz 00 00\n")); err == nil {
		t.Error("accepted garbage")
	}
	if _, err := ParseSoftnetStat(read(t, "softnet_stat.firecracker")); err != nil {
		t.Error(err)
	}
}

func TestStatAndSoftirqs(t *testing.T) {
	st, err := ParseStat(read(t, "stat.firecracker"))
	if err != nil {
		t.Fatal(err)
	}
	if st[0].CPU != -1 || len(st) != 3 || st[2].CPU != 1 {
		t.Fatalf("stat = %+v", st)
	}
	var sum uint64
	for _, c := range st[1:] {
		sum += c.User
	}
	if d := int64(sum) - int64(st[0].User); d < -2 || d > 2 {
		t.Errorf("per-CPU user %d does not add up to total %d", sum, st[0].User)
	}
	si, err := ParseSoftirqs(read(t, "softirqs.firecracker"))
	if err != nil {
		t.Fatal(err)
	}
	if len(si.Counts["NET_RX"]) != 2 || len(si.CPUs) != 2 {
		t.Errorf("softirqs = %+v", si)
	}
}

func TestPidStat(t *testing.T) {
	p, err := ParsePidStat([]byte("4242 (napi/veth0-8) S 2 0 0 0 -1 2129984 0 0 0 0 3 17 0 0 20 0 1 0 100 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != 4242 || p.Comm != "napi/veth0-8" || p.UTime != 3 || p.STime != 17 || p.Processor != 1 {
		t.Errorf("got %+v", p)
	}
	f := make([]string, 50)
	for i := range f {
		f[i] = "0"
	}
	f[0], f[36] = "R", "3" // state and processor (fields 3 and 39)
	p, err = ParsePidStat([]byte("7 (a) b) c) " + strings.Join(f, " ") + "\n"))
	if err != nil || p.Comm != "a) b) c" || p.Processor != 3 {
		t.Errorf("comm with parens: %+v %v", p, err)
	}
	if _, err := ParsePidStat(read(t, "pid_stat.self")); err != nil {
		t.Error(err)
	}
	if got := StatusField([]byte("Name:\tx\nCpus_allowed_list:\t0-1\n"), "Cpus_allowed_list"); got != "0-1" {
		t.Errorf("StatusField = %q", got)
	}
}
