// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStallAddresses: the argument registers' kernel addresses, in a
// report after its first line and in the monitor's register dump, each
// once.
func TestStallAddresses(t *testing.T) {
	log := filepath.Join(t.TempDir(), "console.log")
	lines := []string{
		"[ 1.0] RDI: ff11000000000001 before the stall: not taken",
		"[40.7] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
		"[40.7] RAX: 0000000000000001 RBX: ff1100003c4218c0 RCX: 0000000000000001",
		"[40.7] RDX: 0000000000000001 RSI: 0000000000000001 RDI: ff1100003c4218c0",
	}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(stallAddresses(log, 2), " "); got != "0xff1100003c4218c0" {
		t.Fatalf("addresses %q, want only the lock's", got)
	}
	regs := "RAX=ffffffff81323820 RBX=ff1100003b71c8c0 RCX=0000000000000020\nRSI=0000000000006198 RDI=0000000000000380\n" +
		"X00=FFFF800081234560 X01=0000000000000003 X19=ffff00000a1b2c30\n"
	got := strings.Join(kernelAddresses([]string{"0xff1100003b71c8c0"}, regs), " ")
	if got != "0xff1100003b71c8c0 0xffff800081234560 0xffff00000a1b2c30" {
		t.Fatalf("register addresses %q", got)
	}
}

// TestStallDumpRealQEMU: a real QEMU (two vCPUs, stopped before its
// first instruction, no kernel) answers the dump's commands on its
// monitor socket: both vCPUs' registers and stacks, and the memory at the
// report's addresses; a guard that is not a stall starts nothing.
func TestStallDumpRealQEMU(t *testing.T) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("needs qemu-system-x86_64 (make setup-lab)")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "mon.sock")
	q := exec.Command("qemu-system-x86_64", "-nodefaults", "-display", "none", "-S", "-smp", "2", "-m", "64",
		"-monitor", "unix:"+sock+",server=on,wait=off")
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = q.Process.Kill(); _ = q.Wait() }()
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	console := filepath.Join(dir, "console.log")
	report := "[40.7] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n[40.7] RDI: ffffffff81000000\n"
	if err := os.WriteFile(console, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, stallDumpFile)
	d := newStallDump(sock, console, out, "amd64", 2)
	d.trigger(Hit{Guard: "WARNING", Line: 1})
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a WARNING started a dump")
	}
	d.trigger(Hit{Guard: "RCU stall", Line: 1, Text: "rcu: INFO: rcu_preempt detected stalls"})
	d.wait(30 * time.Second)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{"## sample 1", "## sample 2", "CPU#0", "CPU#1", "IP=", "(qemu) x /48gx $esp",
		"(qemu) x /8wx 0xffffffff81000000", "(qemu) info cpus", "sysrq l sent", "(qemu) stop", "(qemu) cont"} {
		if !strings.Contains(s, want) {
			t.Errorf("dump lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "monitor dump at") || strings.Contains(s, "[monitor:") || strings.Contains(s, "unknown") || strings.Contains(s, "Try \"help") {
		t.Errorf("the dump failed:\n%s", s)
	}
	if strings.Count(s, "(qemu) x /48gx $esp") != 4 {
		t.Errorf("want a stack per vCPU per sample:\n%s", s)
	}
	// the dump leaves the guest running
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	m := &hmp{conn: conn, r: bufio.NewReader(conn)}
	if _, err := m.readPrompt(); err != nil {
		t.Fatal(err)
	}
	if st, err := m.do("info status"); err != nil || !strings.Contains(st, "running") {
		t.Fatalf("after the dump: %q, %v; want the guest running", st, err)
	}
}

// FuzzKernelAddresses: whatever a guest console or the monitor prints,
// the addresses taken are at most 8 distinct "0x" + 16 hex digits with the
// top bit set - the only strings the dump puts into an "x" command.
func FuzzKernelAddresses(f *testing.F) {
	f.Add("RDX: 0000000000000001 RSI: 0000000000000001 RDI: ff1100003c4218c0")
	f.Add("RBX=ff1100003b71c8c0 X00=FFFF800081234560 x19: ffff00000a1b2c30")
	f.Add("RDI: zzzz RSI=ffffffffffffffffff x0 :8000000000000000")
	f.Fuzz(func(t *testing.T, text string) {
		got := kernelAddresses(nil, text)
		if len(got) > 8 {
			t.Fatalf("%d addresses", len(got))
		}
		seen := map[string]bool{}
		for _, a := range got {
			if len(a) != 18 || a[:2] != "0x" || a[2] < '8' || seen[a] {
				t.Fatalf("address %q of %q", a, text)
			}
			for _, c := range a[2:] {
				if !strings.ContainsRune("0123456789abcdef", c) {
					t.Fatalf("address %q of %q", a, text)
				}
			}
			seen[a] = true
		}
	})
}
