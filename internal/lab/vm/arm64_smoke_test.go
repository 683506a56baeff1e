// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// The arm64 smoke test boots the Raspberry Pi 3-class guest (raspi3b:
// Debian's arm64 kernel, usb-net on the Pi's DWC2) with the arm64 binary
// built from this tree. It needs root, qemu-system-aarch64 and
// qemu-aarch64-static (sudo make setup-lab), and apt access to Debian's
// arm64 packages or a cache that has them; it skips with the reason
// otherwise. About a minute with TCG on 2 host CPUs, more the first time
// (the kernel, 93 MB, and the guest's packages are fetched).
func TestSmokeArm64PiUSBNIC(t *testing.T) {
	if testing.Short() {
		t.Skip("VM smoke test: skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("VM smoke test: needs root (run 'make test' as root)")
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("the arm64 smoke test runs on an amd64 host (a foreign architecture's apt)")
	}
	if err := CheckArch("arm64"); err != nil {
		t.Skipf("arm64 VM smoke test: %v (sudo make setup-lab)", err)
	}
	if _, err := userEmulator("arm64"); err != nil {
		t.Skipf("arm64 VM smoke test: %v", err)
	}
	cache := os.Getenv("WIRESPEED_CACHE")
	if cache == "" {
		cache = DefaultCacheDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := FetchKernel(ctx, cache, "", "arm64", t.Logf); err != nil {
		if errors.Is(err, ErrNoKernelPackage) {
			t.Skipf("arm64 VM smoke test: cannot get the guest kernel: %v", err)
		}
		t.Fatal(err)
	}
	if _, err := GuestRoot(ctx, cache, "arm64", t.Logf); err != nil {
		if errors.Is(err, ErrNoKernelPackage) {
			t.Skipf("arm64 VM smoke test: cannot get the guest's packages: %v", err)
		}
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "wirespeed-linux-arm64")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/wirespeed/wirespeed/cmd/wirespeed")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOARCH=arm64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build (arm64): %v\n%s", err, out)
	}
	cfg := Config{Options: Options{Scenario: "usb-nic", Arch: "arm64", Duration: 3 * time.Second, Direction: "receive"},
		CacheDir: cache, Wirespeed: bin, OutDir: t.TempDir(), Logf: t.Logf}
	out, err := Run(ctx, cfg)
	assertNothingLeft(t)
	if err != nil {
		if out != nil {
			t.Logf("console:\n%s", tailFile(out.ConsoleLg, 60))
		}
		t.Fatal(err)
	}
	f := out.Facts
	if f["machine"] != "raspi3b" || f["cpus"] != "4" || !strings.HasSuffix(f["kernel"], "-arm64") {
		t.Errorf("guest facts %v: want raspi3b, 4 CPUs, an arm64 kernel", f)
	}
	if f["dut_driver"] != "cdc_ether" {
		t.Fatalf("device under test: %q driver %q, want cdc_ether (usb-net on the DWC2)", f["dut_if"], f["dut_driver"])
	}
	checkRawPrograms(t, out)
	// observe's eBPF ran on the arm64 kernel and classified the device
	if got := out.RXPaths[f["dut_if"]]; got != "netif_rx backlog (no NAPI, no GRO)" {
		t.Errorf("observe's RX path of %s = %q (all: %v)", f["dut_if"], got, out.RXPaths)
	}
	// The guest's own snapshot: the DWC2's interrupt, found by its
	// handler's name, on the ARMCTRL chip that cannot move it.
	s, err := hostfs.OpenSnapshot(filepath.Join(out.OutDir, "inspect.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	answers, err := inspect.ReplayAnswers(s.Answers)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := inspect.Collect(ctx, inspect.Options{FS: s.FS, Answers: answers})
	if err != nil {
		t.Fatal(err)
	}
	var dev *inspect.Device
	for i := range snap.Devices {
		if snap.Devices[i].Name == f["dut_if"] {
			dev = &snap.Devices[i]
		}
	}
	if dev == nil || len(dev.IRQs) == 0 {
		t.Fatalf("inspect in the guest found no interrupt for %s", f["dut_if"])
	}
	if q := dev.IRQs[0]; q.Chip != "ARMCTRL-level" || q.Changeable.State.String() != "no" {
		t.Errorf("the DWC2 interrupt: chip %q changeable %q (%s); want ARMCTRL-level, no", q.Chip, q.Changeable.State, q.Changeable.Evidence)
	}
	var rep struct {
		Findings []struct {
			ID string `json:"id"`
		} `json:"findings"`
	}
	b, err := os.ReadFile(filepath.Join(out.OutDir, "doctor.json"))
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		t.Fatalf("doctor.json from the guest: %v", err)
	}
	var ids []string
	for _, x := range rep.Findings {
		ids = append(ids, x.ID)
	}
	if !strings.Contains(strings.Join(ids, " "), "irq-stuck-rps-off") {
		t.Errorf("doctor in the guest: findings %v, want irq-stuck-rps-off", ids)
	}
}
