// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Validate checks the options before anything starts, and fills in the
// defaults. The steps run in this order, and each stops at its first
// error: which error a user sees first depends on it.
func (c *Config) Validate() error {
	s, err := Lookup(c.Scenario)
	if err != nil {
		return err
	}
	if err := c.validateBench(s); err != nil {
		return err
	}
	if err := c.validateMachine(); err != nil {
		return err
	}
	if err := c.validateAccel(); err != nil {
		return err
	}
	if err := c.validateRPS(s); err != nil {
		return err
	}
	if err := c.validateStress(s); err != nil {
		return err
	}
	if err := c.validateGadgetFunction(s); err != nil {
		return err
	}
	return c.validateKernel()
}

// validateBench checks the options of the benches in the guest: link
// speed, direction, load time, tunnels, threaded NAPI, --profile and
// --tune for scenario s, and streams.
func (c *Config) validateBench(s *Scenario) error {
	if c.Speed == "" {
		// bql too: at super speed stock usbnet queues 27 NTB URBs
		// (~445 KB), the deep driver queue BQL is for; at high speed
		// only 5.
		c.Speed = "super"
	}
	if err := ValidSpeed(c.Speed); err != nil {
		return err
	}
	switch c.Direction {
	case "":
		c.Direction = "both"
	case "send", "receive", "both":
	default:
		return fmt.Errorf("direction %q: want send, receive or both", c.Direction)
	}
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Duration < time.Second || c.Duration > time.Hour {
		return fmt.Errorf("-t %s: want 1s to 1h", c.Duration)
	}
	if c.Streams == 0 {
		c.Streams = 2
	}
	if c.Tunnels == 0 {
		c.Tunnels = 4
	}
	if c.Tunnels < 1 || c.Tunnels > 64 {
		return fmt.Errorf("%d tunnels: want 1-64", c.Tunnels)
	}
	switch c.Threaded {
	case "", "on", "off":
	default:
		return fmt.Errorf("threaded %q: want on or off (or leave it out for the kernel's default)", c.Threaded)
	}
	if c.Profile && s.NoBench {
		return fmt.Errorf("--profile samples the bench runs; the %s scenario runs none", s.Name)
	}
	if c.Tune != "" && !slices.Contains(tuneScenarios, s.Name) {
		return fmt.Errorf("--tune runs in the %s scenarios only, not in %s", strings.Join(tuneScenarios, " and "), s.Name)
	}
	if (c.Device != "" || len(c.DeviceArgs) > 0) && !s.USBDev {
		return fmt.Errorf("--device and --device-args are the usbdev scenario's, not %s's", s.Name)
	}
	if s.USBDev {
		if err := checkDevice(c.Device, c.Machine); err != nil {
			return err
		}
	}
	if c.Streams < 1 || c.Streams > 128 {
		return fmt.Errorf("%d streams: want 1-128", c.Streams)
	}
	return nil
}

// validateMachine checks the guest's architecture and board, and its vCPUs
// and memory against the board's (a fixed board's are its defaults).
func (c *Config) validateMachine() error {
	if c.Arch == "" {
		c.Arch = "amd64"
	}
	m, err := lookupMachine(c.Arch, c.Machine)
	if err != nil {
		return err
	}
	c.Machine = m.Name
	if c.CPUs == 0 {
		c.CPUs = 2
		if m.FixedCPUs > 0 {
			c.CPUs = m.FixedCPUs
		}
	}
	if c.CPUs < 1 || c.CPUs > 64 {
		return fmt.Errorf("%d vCPUs: want 1-64", c.CPUs)
	}
	if m.FixedCPUs > 0 && c.CPUs != m.FixedCPUs {
		return fmt.Errorf("%d vCPUs: the %s board has %d (use --machine virt for another count)", c.CPUs, m.Name, m.FixedCPUs)
	}
	if c.MemMB == 0 {
		c.MemMB = 1024
		if m.FixedMemMB > 0 {
			c.MemMB = m.FixedMemMB
		}
	}
	if c.MemMB < 256 {
		return fmt.Errorf("%d MB of guest memory: want at least 256", c.MemMB)
	}
	if m.FixedMemMB > 0 && c.MemMB != m.FixedMemMB {
		return fmt.Errorf("%d MB of guest memory: the %s board has %d MB", c.MemMB, m.Name, m.FixedMemMB)
	}
	return nil
}

// validateAccel checks the accelerator: KVM only for this host's
// architecture.
func (c *Config) validateAccel() error {
	switch c.Accel {
	case "":
		c.Accel = "auto"
	case "auto", "kvm", "tcg", "tcg-single", "tcg-icount":
	default:
		return fmt.Errorf("accel %q: want auto, kvm, tcg, tcg-single or tcg-icount", c.Accel)
	}
	if c.Accel == "kvm" && c.Arch != hostArch() {
		return fmt.Errorf("--accel kvm runs %s guests on an %s host only; this host is %s: use tcg", c.Arch, c.Arch, hostArch())
	}
	return nil
}

// validateStress checks the options of the disruptions and the dummy_hcd
// bus (--cycles, --bus-rate for scenario s, --steps), and gives the boot
// scenario its default command.
func (c *Config) validateStress(s *Scenario) error {
	if c.Cycles < 0 || c.Cycles > 100000 {
		return fmt.Errorf("--cycles %d: want 1-100000 disruptions (0 for the default %d)", c.Cycles, defaultCycles)
	}
	if c.CycleTime != 0 && s.Name != "usbdev-stress" {
		return fmt.Errorf("--cycle-time is usbdev-stress's budget per cycle, not %s's: leave it out", s.Name)
	}
	if c.CycleTime < 0 || c.CycleTime != 0 && (c.CycleTime < time.Second || c.CycleTime > 10*time.Minute) {
		return fmt.Errorf("--cycle-time %s: want 1s-10m per cycle (default 12s)", c.CycleTime)
	}
	if c.BusRate < 0 || c.BusRate > 100000 {
		return fmt.Errorf("--bus-rate %d: want 1-100000 Mbit/s (or 0 for none)", c.BusRate)
	}
	if c.BusRate > 0 && s.Name != "usb-gadget" && s.Name != "bql" && s.Name != "usbnet-stress" && s.Name != "selftests" {
		return fmt.Errorf("--bus-rate is for the dummy_hcd scenarios (usb-gadget, bql, usbnet-stress, selftests), not %s: leave it out", s.Name)
	}
	if err := checkSteps(s.Name, c.Steps); err != nil {
		return err
	}
	if len(c.Tests) > 0 && !s.Selftests {
		return fmt.Errorf("--tests picks the selftests scenario's tests, not %s's: leave it out", s.Name)
	}
	if err := checkTests(c.Tests); err != nil {
		return err
	}
	if s.Selftests && c.Arch == "arm64" && c.Machine != "virt" {
		return fmt.Errorf("the selftests scenario's Debian root is a virtio disk on PCI: on arm64 it runs on --machine virt, not %s", c.Machine)
	}
	if s.Name == "boot" && c.Exec == "" && len(c.Load) == 0 {
		c.Exec = "true"
	}
	return nil
}

// validateKernel checks the kernel choice (a Debian release or --kernel,
// and what the accelerator boots) and fills in the cache directory.
func (c *Config) validateKernel() error {
	if c.KernelImage != "" && c.KernelRelease != "" {
		return fmt.Errorf("give --kernel-version or --kernel, not both")
	}
	family, _, err := normalizeRelease(c.KernelRelease, c.Arch)
	if err != nil {
		return err
	}
	if family == "6.1" && c.KernelImage == "" && c.Accel == "tcg-icount" {
		// Seen with QEMU 7.2 and 6.1.0-56: with RDRAND the decompressor
		// never returns from "Poking KASLR"; without it (-cpu max,-rdrand)
		// the boot stops at "x86: Booting SMP configuration" (any -cpu,
		// shift 0 or 3). 6.12 boots there.
		return fmt.Errorf("--accel tcg-icount does not boot Debian's 6.1 kernels (QEMU's -icount hangs their early boot); use --accel tcg-single (real time: keep the host otherwise idle) or a 6.12 kernel")
	}
	if c.CacheDir == "" {
		c.CacheDir = DefaultCacheDir()
	}
	return nil
}

// validateRPS checks --rps: a hex mask (commas between 32-bit groups, as
// sysfs writes it) naming at least one of the guest's vCPUs, for the
// scenarios with one device under test.
func (c *Config) validateRPS(s *Scenario) error {
	if c.BQLMin < 0 || c.BQLMin > 0 && !hasDUT(s) {
		return fmt.Errorf("--bql-min %d: want a byte count above 0 for the device under test of usb-gadget, bql, usb-nic or usbdev (not %s)", c.BQLMin, s.Name)
	}
	if c.BQLMax < 0 || c.BQLMax > 0 && !hasDUT(s) {
		return fmt.Errorf("--bql-max %d: want a byte count above 0 for the device under test of usb-gadget, bql, usb-nic or usbdev (not %s)", c.BQLMax, s.Name)
	}
	if c.BQLMax > 0 && c.BQLMax < c.BQLMin {
		return fmt.Errorf("--bql-max %d is below --bql-min %d: BQL's limit cannot stay in that range", c.BQLMax, c.BQLMin)
	}
	if c.RPS == "" {
		return nil
	}
	if !hasDUT(s) {
		return fmt.Errorf("--rps steers the device under test of usb-gadget, bql, usb-nic or usbdev, not %s: leave it out", s.Name)
	}
	hex := strings.ReplaceAll(c.RPS, ",", "")
	m, err := strconv.ParseUint(hex, 16, 64)
	if err != nil || len(hex) > 16 {
		return fmt.Errorf("--rps %q: want a hex CPU mask such as d (vCPUs 0, 2 and 3)", c.RPS)
	}
	if m&(1<<uint(c.CPUs)-1) == 0 {
		return fmt.Errorf("--rps %q names none of the guest's %d vCPUs (mask bits 0-%d)", c.RPS, c.CPUs, c.CPUs-1)
	}
	return nil
}

// hasDUT says whether the scenario has one usbnet device under test, which
// --rps, --bql-min, --bql-max and --threaded set.
func hasDUT(s *Scenario) bool {
	switch s.Name {
	case "usb-gadget", "bql", "usb-nic", "usbdev":
		return true
	}
	return false
}
