// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"strings"
	"testing"
)

// TestAutoTCGIsSingleThreaded: without KVM, accel auto must boot
// single-threaded TCG - under multi-threaded TCG the guest's own text
// patching crashes boots ("Oops: int3"), see docs/results.md.
func TestAutoTCGIsSingleThreaded(t *testing.T) {
	a := qemuArgs("ws-1-vm", &Kernel{Image: "vmlinuz"}, "initrd", autoTCG, 2, 1024, "stdio", "results.txt", usbAttach{}, "")
	got := ""
	for i := 0; i+1 < len(a); i++ {
		if a[i] == "-accel" {
			got = a[i+1]
		}
	}
	if got != "tcg,thread=single" {
		t.Errorf("accel auto without KVM runs -accel %q, want tcg,thread=single (%s)", got, strings.Join(a, " "))
	}
	if strings.Contains(strings.Join(a, " "), "-icount") {
		t.Errorf("accel auto without KVM must run in real time, not -icount: %s", strings.Join(a, " "))
	}
}
