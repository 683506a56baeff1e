// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Choosing the accelerator: KVM where it boots guests on this host kernel, else TCG.

var errKVMBroken = errors.New("KVM did not boot the guest")

// autoTCG is what accel auto uses without KVM: single-threaded TCG. The
// guest patches its own text after SMP bring-up (sched_clock's stable key
// at late_initcall, every tracepoint observe enables, networking's static
// keys), and QEMU 7.2's multi-threaded TCG lets another vCPU run a stale
// int3 of text_poke_bp() after the patch is done ("Oops: int3"); with one
// TCG thread no vCPU runs while another writes code.
const autoTCG = "tcg-single"

func kvmVerdictFile(cache string) string { return filepath.Join(cache, "kvm-verdict") }

func hostRelease() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return ""
	}
	var b []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// kvmUsable: /dev/kvm opens, and KVM has not failed to boot a guest on
// this host kernel before.
func kvmUsable(cache string) bool {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	b, err := os.ReadFile(kvmVerdictFile(cache))
	if err == nil {
		v, rel, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		if rel == hostRelease() {
			return v == "ok"
		}
	}
	return true
}

func markKVM(cache string, ok bool) {
	v := "broken"
	if ok {
		v = "ok"
	}
	_ = os.MkdirAll(cache, 0o755)
	_ = os.WriteFile(kvmVerdictFile(cache), []byte(v+" "+hostRelease()+"\n"), 0o644)
}
