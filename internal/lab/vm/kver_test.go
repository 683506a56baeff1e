package vm

import (
	"os/exec"
	"testing"
)

// TestUsbnetKernelRule runs kernel/usbnet/test-kver.sh: build.sh and
// dkms.conf must accept Debian 12's 6.12.N+deb12 and backports'
// 6.12.N+bpo kernels, refuse the rest with a message that names what they
// accept, and agree on every name.
func TestUsbnetKernelRule(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	out, err := exec.Command("bash", "../../../kernel/usbnet/test-kver.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("test-kver.sh: %v\n%s", err, out)
	}
	t.Log(string(out))
}
