// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
)

// The smoke tests boot Debian's kernel in QEMU. They need root, QEMU and
// apt access to the kernel packages (or the kernel already in the cache);
// they skip with the reason otherwise, and with -short. Together they take
// about 2-3 minutes with TCG on 2 host CPUs.

var smokeBin string

func smokeSetup(t *testing.T) (cache string, wirespeed string) {
	t.Helper()
	if testing.Short() {
		t.Skip("VM smoke test: skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("VM smoke test: needs root (run 'make test' as root)")
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("VM smoke test: the lab boots an amd64 kernel")
	}
	if err := CheckArch(""); err != nil {
		t.Skipf("VM smoke test: %v", err)
	}
	if _, err := FindTools("/dev/null"); err != nil && !strings.Contains(err.Error(), "wirespeed") {
		t.Skipf("VM smoke test: %v", err)
	}
	cache = os.Getenv("WIRESPEED_CACHE")
	if cache == "" {
		cache = DefaultCacheDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := FetchKernel(ctx, cache, os.Getenv("WIRESPEED_KERNEL"), "amd64", t.Logf); err != nil {
		if errors.Is(err, ErrNoKernelPackage) {
			t.Skipf("VM smoke test: cannot get the guest kernel: %v", err)
		}
		t.Fatal(err)
	}
	if smokeBin == "" {
		// The guest needs a static wirespeed: build one from this tree.
		dir, err := os.MkdirTemp("", "ws-smoke-bin")
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "wirespeed")
		cmd := exec.Command("go", "build", "-o", bin, "github.com/wirespeed/wirespeed/cmd/wirespeed")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build wirespeed: %v\n%s", err, out)
		}
		smokeBin = bin
	}
	return cache, smokeBin
}

func smokeRun(t *testing.T, cfg Config) (*Outcome, error) {
	t.Helper()
	cache, bin := smokeSetup(t)
	cfg.CacheDir, cfg.Wirespeed, cfg.OutDir = cache, bin, t.TempDir()
	// Multi-threaded TCG crashes a few stock boots in ten on text
	// patching ("Oops: int3"); CI must not fail on that.
	if cfg.Accel == "" {
		cfg.Accel = "tcg-single"
	}
	cfg.Logf = t.Logf
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := Run(ctx, cfg)
	if out != nil {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("console of the failed run:\n%s", tailFile(out.ConsoleLg, 60))
			}
		})
	}
	assertNothingLeft(t)
	return out, err
}

// assertNothingLeft checks that no QEMU or namespace of this process is left.
func assertNothingLeft(t *testing.T) {
	t.Helper()
	me := "ws-" + strconv.Itoa(os.Getpid()) + "-"
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), me) {
			t.Errorf("namespace %s left behind", e.Name())
		}
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		b, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), "qemu-system") && strings.Contains(string(b), me+"vm") {
			t.Errorf("QEMU %s left running: %s", p.Name(), strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}

// lightRawEvents is how many of observe's light events have a raw BTF
// tracepoint program (softirq_entry/exit, napi_poll, netif_receive_skb,
// netif_rx, irq_handler_entry/exit: internal/observe's event table).
const lightRawEvents = 7

// checkRawPrograms asserts the guest's Debian kernel, which has BTF, loaded
// every raw program of observe's light mode (ws_pin_tracepoints' 1 s run):
// the CO-RE relocations and attach points resolve on it.
func checkRawPrograms(t *testing.T, out *Outcome) {
	t.Helper()
	if got := out.Facts["raw_programs"]; got != strconv.Itoa(lightRawEvents) {
		t.Errorf("kernel %s: %q of %d raw programs attached; observe said:\n%s\n%s",
			out.Facts["kernel"], got, lightRawEvents,
			tailFile(filepath.Join(out.OutDir, "observe-raw.json"), 40),
			tailFile(filepath.Join(out.OutDir, "observe-raw.err"), 5))
	}
}

// checkTraffic asserts traffic went through the usbnet driver both ways,
// observe classified its RX path, and the results read as bench results.
func checkTraffic(t *testing.T, out *Outcome, driver string) {
	t.Helper()
	if len(out.Hits) > 0 {
		t.Fatalf("guards fired: %v", out.Hits)
	}
	f := out.Facts
	if f["dut_driver"] != driver || f["dut_if"] == "" {
		t.Fatalf("device under test: %q driver %q, want a %s device", f["dut_if"], f["dut_driver"], driver)
	}
	delta := func(dir, c string) float64 {
		a, _ := strconv.ParseFloat(f["before-"+dir+"."+c], 64)
		b, _ := strconv.ParseFloat(f["after-"+dir+"."+c], 64)
		return b - a
	}
	if d := delta("send", "tx_bytes"); d < 1e6 {
		t.Errorf("send: %s sent %.0f bytes, want > 1 MB", f["dut_if"], d)
	}
	if d := delta("receive", "rx_bytes"); d < 1e6 {
		t.Errorf("receive: %s received %.0f bytes, want > 1 MB", f["dut_if"], d)
	}
	checkRawPrograms(t, out)
	// usbnet hands packets up with netif_rx(): no NAPI, no GRO (6.12).
	if got, want := out.RXPaths[f["dut_if"]], "netif_rx backlog (no NAPI, no GRO)"; got != want {
		t.Errorf("observe's RX path class of %s = %q, want %q (all: %v)", f["dut_if"], got, want, out.RXPaths)
	}
	for _, d := range []string{"send", "receive"} {
		r, err := bench.Load(filepath.Join(out.OutDir, "bench-"+d+".json"))
		if err != nil {
			t.Errorf("bench result %s: %v", d, err)
			continue
		}
		if !r.Complete {
			t.Errorf("bench %s incomplete: %s", d, r.Incomplete)
		}
		if !strings.Contains(strings.Join(r.Notes, " "), out.Kernel.Release) {
			t.Errorf("bench %s result does not name the guest kernel %s in its notes: %v", d, out.Kernel.Release, r.Notes)
		}
	}
}

func TestSmokeUSBGadget(t *testing.T) {
	out, err := smokeRun(t, Config{Options: Options{Scenario: "usb-gadget", Duration: 3 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	checkTraffic(t, out, "cdc_ncm")
}

func TestSmokeUSBNIC(t *testing.T) {
	out, err := smokeRun(t, Config{Options: Options{Scenario: "usb-nic", Duration: 3 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	checkTraffic(t, out, "cdc_ether")
}

// A deliberately broken module (testdata/wsbroken, built against the
// fetched headers) must fail the run through the WARNING guard.
func TestSmokeGuardCatchesBrokenModule(t *testing.T) {
	cache, _ := smokeSetup(t)
	if _, err := exec.LookPath("gcc-12"); err != nil {
		t.Skip("building the test module needs gcc-12 and make (the compiler of Debian's 6.12)")
	}
	mods := t.TempDir()
	cmd := exec.Command("sh", "../../../scripts/vm-build-module.sh", "testdata/wsbroken", mods)
	cmd.Env = append(os.Environ(), "WIRESPEED_CACHE="+cache)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building ws_broken: %v\n%s", err, out)
	}
	out, err := smokeRun(t, Config{Options: Options{Scenario: "boot", Load: []string{"ws_broken mode=warn"}}, ModulesDir: mods})
	if !errors.Is(err, ErrGuard) {
		t.Fatalf("err = %v, want the guard error", err)
	}
	if out == nil || len(out.Hits) == 0 || out.Hits[0].Guard != "WARNING" || !strings.Contains(out.Hits[0].Excerpt, "ws_broken") {
		t.Fatalf("hits = %+v, want a WARNING from ws_broken", out)
	}
	if _, err := os.Stat(out.ConsoleLg); err != nil {
		t.Errorf("console log not kept: %v", err)
	}
}

// A guest that hangs is killed at the timeout, with the console tail.
func TestSmokeTimeout(t *testing.T) {
	start := time.Now()
	_, err := smokeRun(t, Config{Options: Options{Scenario: "boot", Exec: "sleep 600"}, Timeout: 25 * time.Second})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "@@WS stage exec") {
		t.Fatalf("err = %v, want a timeout showing the console tail", err)
	}
	if d := time.Since(start); d > 90*time.Second {
		t.Errorf("the timeout of 25 s took %s", d)
	}
}
