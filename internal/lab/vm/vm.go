// Package vm is wirespeed's hardware-free lab: it boots Debian's own kernel
// in QEMU with an initramfs it assembles (busybox, iperf3, iproute2, the
// static wirespeed binary, the modules a scenario needs) and runs a
// scenario - a USB gadget looped back to usbnet, QEMU's emulated USB NIC, a
// slow USB link - with 'wirespeed bench' inside the guest. Results come back
// over a second serial port; the console is scanned for kernel trouble
// (panic, BUG, WARNING, Oops, lockups, RCU stalls) which fails the run.
//
// Without KVM the default is single-threaded TCG: the guest kernel patches
// its own text after boot (static keys, tracepoints, text_poke_bp's int3),
// and under QEMU 7.2's multi-threaded TCG (--accel tcg) another vCPU now
// and then runs a stale int3 and the guest dies ("Oops: int3"; the rates
// before and after are in docs/results.md). Whatever the accel, a
// background 'wirespeed observe' in the guest holds the perf probes of
// observe's tracepoints from boot on, so that the benches' own attaches
// patch no kernel text under load (which makes --accel tcg crash less
// often, not never).
//
// Everything the lab creates on the host is named "ws-<pid>-…": the host
// namespace of the usb-nic scenario and the QEMU process (-name). QEMU dies
// with wirespeed (PR_SET_PDEATHSIG), on timeout and on Ctrl-C; the next run
// reaps what a killed run left behind.
package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/lab"
)

// Config is one 'wirespeed lab vm' run.
type Config struct {
	Options
	// CacheDir holds kernels and initramfs images (DefaultCacheDir()).
	CacheDir string
	// KernelRelease picks a Debian kernel: a family ("6.1", "6.12") for its
	// newest, or a release ("6.12.117", "6.1.0-56"); "" = the newest 6.12.
	KernelRelease string
	// KernelImage and ModulesPath use a kernel of the user's instead.
	KernelImage, ModulesPath string
	// ModulesDir holds .ko files that replace the kernel's modules.
	ModulesDir string
	// Wirespeed is the static binary put into the guest.
	Wirespeed string
	// OutDir receives console.log, vm.json and the guest's result files.
	OutDir string
	// Timeout is the hard limit for the whole guest run (0 = estimated).
	Timeout time.Duration
	CPUs    int
	MemMB   int
	// Accel is auto (KVM when it works, else tcg-single), kvm, tcg,
	// tcg-single or tcg-icount. Multi-threaded TCG (tcg) now and then runs
	// kernel text that is being patched (an "Oops: int3" in a stock
	// kernel); single-threaded TCG does not.
	Accel string
	// Append is added to the kernel command line.
	Append string
	// Console, when set, gets a copy of the guest console as it runs.
	Console io.Writer
	// Logf reports progress.
	Logf func(format string, a ...any)
}

// Outcome is what a run found; it is saved as OUT/vm.json.
type Outcome struct {
	Schema    string            `json:"schema"`
	Scenario  string            `json:"scenario"`
	Options   Options           `json:"options"`
	Kernel    Kernel            `json:"kernel"`
	Accel     string            `json:"accel"`
	QEMU      []string          `json:"qemu_command"`
	Started   time.Time         `json:"started"`
	Elapsed   float64           `json:"elapsed_s"`
	BootS     float64           `json:"boot_s,omitempty"` // guest uptime when init started
	Stages    []string          `json:"stages"`
	OK        bool              `json:"ok"`
	Failure   string            `json:"failure,omitempty"`
	Hits      []Hit             `json:"guards,omitempty"`
	Files     []string          `json:"files"`
	Facts     map[string]string `json:"facts,omitempty"`
	RXPaths   map[string]string `json:"rx_paths,omitempty"` // from observe inside the guest
	Modules   []moduleLoad      `json:"modules"`
	Notes     []string          `json:"notes,omitempty"`
	OutDir    string            `json:"out_dir"`
	ConsoleLg string            `json:"console_log"`
}

// Failure kinds callers can test with errors.Is.
var (
	ErrGuard   = errors.New("kernel trouble on the guest console")
	ErrTimeout = errors.New("guest timed out")
	ErrNoQEMU  = errors.New("QEMU is not installed")
)

// Check says whether this host can run the VM lab's x86 guests.
func Check() error {
	return machines["pc"].checkQEMU()
}

// CheckArch says whether this host can run guests of arch ("" is amd64).
func CheckArch(arch string) error {
	m, err := lookupMachine(arch, "")
	if err != nil {
		return err
	}
	return m.checkQEMU()
}

func (c *Config) logf(f string, a ...any) {
	if c.Logf != nil {
		c.Logf(f, a...)
	}
}

// Validate checks the options before anything starts.
func (c *Config) Validate() error {
	s, err := Lookup(c.Scenario)
	if err != nil {
		return err
	}
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
	if c.Tune != "" && s.Name != "usb-nic" {
		return fmt.Errorf("--tune runs in the usb-nic scenario only, not in %s", s.Name)
	}
	if c.Streams < 1 || c.Streams > 128 {
		return fmt.Errorf("%d streams: want 1-128", c.Streams)
	}
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
	if c.Cycles < 0 || c.Cycles > 100000 {
		return fmt.Errorf("--cycles %d: want 1-100000 disruptions (0 for the default %d)", c.Cycles, defaultCycles)
	}
	if c.BusRate < 0 || c.BusRate > 100000 {
		return fmt.Errorf("--bus-rate %d: want 1-100000 Mbit/s (or 0 for none)", c.BusRate)
	}
	if c.BusRate > 0 && s.Name != "usb-gadget" && s.Name != "bql" && s.Name != "usbnet-stress" {
		return fmt.Errorf("--bus-rate is for the dummy_hcd scenarios (usb-gadget, bql, usbnet-stress), not %s: leave it out", s.Name)
	}
	if err := checkSteps(c.Steps); err != nil {
		return err
	}
	if s.Name == "boot" && c.Exec == "" && len(c.Load) == 0 {
		c.Exec = "true"
	}
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

// Run runs one scenario in a fresh VM. It returns the outcome (also on
// failure, when the VM ran) and an error when the scenario failed.
func Run(ctx context.Context, c Config) (*Outcome, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	mach := machineOf(c.Options)
	if err := CheckArch(c.Arch); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("the VM lab needs root (it creates a network namespace and a tap for usb-nic, and reaps leftovers); run it with sudo")
	}
	sc, _ := Lookup(c.Scenario)
	Reap(c.logf)

	// Kernel and modules.
	var k *Kernel
	var err error
	if c.KernelImage != "" {
		k, err = UserKernel(c.KernelImage, c.ModulesPath)
	} else {
		k, err = FetchKernel(ctx, c.CacheDir, c.KernelRelease, c.Arch, c.logf)
	}
	if err != nil {
		return nil, err
	}
	idx, err := LoadModuleIndex(k.ModulesDir)
	if err != nil {
		return nil, err
	}
	over, overDeps, err := Overrides(c.ModulesDir)
	if err != nil {
		return nil, err
	}
	applyOverrides(idx, over, overDeps)
	loads, err := planLoads(idx, sc, c.Options)
	if err != nil {
		return nil, err
	}
	// The cached image carries every scenario's modules (those this kernel has).
	var image []ModuleFile
	seen := map[string]bool{}
	addMods := func(names []string) {
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			p := idx.Path[n]
			_, isOver := over[n]
			if !filepath.IsAbs(p) {
				p = filepath.Join(k.ModulesDir, p)
			}
			image = append(image, ModuleFile{Name: n, Source: p, Stock: !isOver})
		}
	}
	for _, m := range allModules(c.Arch, c.Machine) {
		if r, err := idx.Resolve(m); err == nil {
			addMods(r)
		}
	}
	var runMods []string
	for _, l := range loads {
		runMods = append(runMods, l.Name)
	}
	addMods(runMods)

	wsBin := c.Wirespeed
	root := "" // where the guest's programs come from: this host
	var tools Tools
	if c.Arch == hostArch() {
		if wsBin == "" {
			if wsBin, err = os.Executable(); err != nil {
				return nil, fmt.Errorf("find this wirespeed binary: %w (pass --wirespeed FILE)", err)
			}
		}
		if tools, err = FindTools(wsBin); err != nil {
			return nil, err
		}
	} else {
		// a foreign architecture's programs come from Debian's packages
		if wsBin, err = guestWirespeed(wsBin, c.Arch); err != nil {
			return nil, err
		}
		if root, err = GuestRoot(ctx, c.CacheDir, c.Arch, c.logf); err != nil {
			return nil, err
		}
		if tools, err = findTools(root, wsBin); err != nil {
			return nil, err
		}
	}
	if sc.Name == "wireguard" && tools.WG == "" {
		return nil, fmt.Errorf("the wireguard scenario needs wg(8) in the guest: apt-get install wireguard-tools")
	}
	base, built, err := BaseImage(ctx, c.CacheDir, ImageSpec{Tools: tools, Modules: image, Root: root, Arch: c.Arch}, c.logf)
	if err != nil {
		return nil, fmt.Errorf("initramfs: %w", err)
	}
	if !built {
		c.logf("initramfs %s (cached)", filepath.Base(base))
	}

	// The run directory.
	if c.OutDir == "" {
		c.OutDir = fmt.Sprintf("wirespeed-vm-%s-%s", sc.Name, time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(c.OutDir, 0o755); err != nil {
		return nil, err
	}
	out := &Outcome{Schema: "wirespeed.labvm/v1", Scenario: sc.Name, Options: c.Options, Kernel: *k,
		Started: time.Now().UTC(), Modules: loads, OutDir: c.OutDir, ConsoleLg: filepath.Join(c.OutDir, "console.log")}
	runFiles, err := tuneFiles(c.Options, root)
	if err != nil {
		return nil, err
	}
	runFiles["ws/env.sh"] = []byte(envScript(mach))
	runFiles["ws/main.sh"] = []byte(initScript(sc, c.Options, loads))
	runFiles["ws/lib.sh"] = []byte(initLib)
	var runArc strings.Builder
	if err := RunArchive(&runArc, initWrapper, runFiles); err != nil {
		return nil, err
	}
	initrd := filepath.Join(c.OutDir, "initramfs.cpio")
	if err := JoinInitramfs(initrd, base, []byte(runArc.String())); err != nil {
		return nil, err
	}
	defer os.Remove(initrd)

	timeout := c.Timeout
	if timeout == 0 {
		timeout = time.Duration(mach.Slowdown) * (90*time.Second + sc.MaxTime(c.Options)*3/2)
	}

	accel := c.Accel
	if accel == "auto" {
		accel = machineOf(c.Options).AutoTCG
		if c.Arch == hostArch() && kvmUsable(c.CacheDir) {
			accel = "kvm"
		}
	}
	var runErr error
	for {
		out.Accel = accel
		runErr = c.boot(ctx, sc, k, initrd, accel, timeout, out)
		if errors.Is(runErr, errKVMBroken) && c.Accel == "auto" {
			c.logf("KVM does not boot this guest here; falling back to TCG (remembered in %s)", kvmVerdictFile(c.CacheDir))
			markKVM(c.CacheDir, false)
			accel = machineOf(c.Options).AutoTCG
			out.Notes = append(out.Notes, "KVM failed to boot the guest; used TCG")
			continue
		}
		if accel == "kvm" && c.Accel == "auto" && runErr == nil {
			markKVM(c.CacheDir, true)
		}
		break
	}
	out.Elapsed = time.Since(out.Started).Seconds()
	if runErr != nil && out.Failure == "" {
		out.Failure = runErr.Error()
	}
	out.OK = runErr == nil
	if b, err := json.MarshalIndent(out, "", "  "); err == nil {
		_ = os.WriteFile(filepath.Join(c.OutDir, "vm.json"), append(b, '\n'), 0o644)
	}
	return out, runErr
}

// applyOverrides makes the index use --modules-dir's files (absolute
// paths) and their own dependencies instead of the stock ones.
func applyOverrides(idx *ModuleIndex, files map[string]string, deps map[string][]string) {
	for n, p := range files {
		idx.Path[n] = p
		idx.Deps[n] = deps[n]
		delete(idx.Builtin, n)
	}
}

// planLoads resolves the scenario's modules (and --load ones) to insmod
// lines in dependency order.
func planLoads(idx *ModuleIndex, sc *Scenario, o Options) ([]moduleLoad, error) {
	params := map[string]string{}
	if sc.Params != nil {
		for k, v := range sc.Params(o) {
			params[ModuleName(k)] = v
		}
	}
	want := append(append([]string(nil), machineOf(o).Platform...), sc.Modules(o)...)
	for _, l := range o.Load {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		want = append(want, f[0])
		if len(f) > 1 {
			params[ModuleName(f[0])] = strings.Join(f[1:], " ")
		}
	}
	order, err := idx.Resolve(want...)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	var loads []moduleLoad
	for _, n := range order {
		src := "stock"
		if filepath.IsAbs(idx.Path[n]) {
			src = "modules-dir " + idx.Path[n]
		}
		loads = append(loads, moduleLoad{Name: n, Params: params[n], Source: src})
	}
	return loads, nil
}

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

// qemuArgs builds the QEMU command line.
func qemuArgs(name string, k *Kernel, initrd, accel string, cpus, memMB int, consoleArg, resultsFile string, usbnic bool, tap, extra string) []string {
	a := []string{"qemu-system-x86_64", "-name", name, "-nodefaults", "-display", "none", "-no-reboot",
		"-m", strconv.Itoa(memMB), "-smp", strconv.Itoa(cpus)}
	switch accel {
	case "kvm":
		a = append(a, "-accel", "kvm", "-cpu", "host")
	case "tcg-single":
		a = append(a, "-accel", "tcg,thread=single", "-cpu", "max")
	case "tcg-icount":
		// deterministic: one TCG thread, the guest's clock counts
		// instructions (shift=0: 1 ns each, so the emulated CPU is fast
		// in guest time and a capped bus, not the CPU, limits) and idle
		// time is skipped, so host load slows a run but does not change
		// what the guest measures
		a = append(a, "-accel", "tcg,thread=single", "-cpu", "max", "-icount", "shift=0,sleep=off")
	default:
		a = append(a, "-accel", "tcg,thread=multi", "-cpu", "max")
	}
	a = append(a, "-kernel", k.Image, "-initrd", initrd,
		"-append", strings.TrimSpace("console=ttyS0 panic=-1 loglevel=5 rdinit=/init net.ifnames=0 nokaslr tsc=reliable "+extra),
		"-serial", consoleArg, "-serial", "file:"+resultsFile)
	if usbnic {
		a = append(a, "-device", "qemu-xhci,id=xhci",
			"-netdev", "tap,id=n0,ifname="+tap+",script=no,downscript=no",
			"-device", "usb-net,netdev=n0,bus=xhci.0")
	}
	return a
}

var markerRe = regexp.MustCompile(`^` + markerPrefix + ` (\S+) ?(.*?) t=([0-9.]+)$`)

// boot runs one scenario in QEMU: the usb-nic host end if it needs one,
// the QEMU command, the console watched until the guest is done (or a
// guard, the timeout or ctx stops it), then the results collected into out.
func (c *Config) boot(ctx context.Context, sc *Scenario, k *Kernel, initrd, accel string, timeout time.Duration, out *Outcome) error {
	name := fmt.Sprintf("ws-%d-vm", os.Getpid())
	consolePath := filepath.Join(c.OutDir, "console.log")
	resultsPath := filepath.Join(c.OutDir, "results.txt")
	stderrPath := filepath.Join(c.OutDir, "qemu-stderr.txt")
	_ = os.Remove(resultsPath)
	out.Stages, out.Hits, out.Files, out.Facts, out.BootS, out.Failure = nil, nil, nil, nil, 0, ""

	// usb-nic: the host end lives in a namespace of its own.
	ns, tap := "", "ws-tap0"
	if sc.USBNIC {
		ns = name
		stop, err := c.startHostEnd(ctx, ns)
		if err != nil {
			return err
		}
		defer stop()
	}

	cmd, err := c.qemuCommand(name, k, initrd, accel, sc, ns, tap, resultsPath, out)
	if err != nil {
		return err
	}
	logf, err := os.Create(consolePath)
	if err != nil {
		return err
	}
	defer logf.Close()
	errf, err := os.Create(stderrPath)
	if err != nil {
		return err
	}
	defer errf.Close()
	bw := &bootWatch{bootSeen: make(chan struct{})}
	ws := append([]io.Writer{logf}, c.consoleWriters(bw, out)...)
	if c.Console != nil {
		ws = append(ws, c.Console)
	}
	cmd.Stdout = io.MultiWriter(ws...)
	cmd.Stderr = errf
	c.logf("booting %s (%s, %d vCPUs) for scenario %s, timeout %s", k.Release, accel, c.CPUs, sc.Name, timeout.Round(time.Second))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start QEMU: %w", err)
	}
	if ns != "" {
		go addressTap(ns, tap)
	}
	stopReason, err := waitQEMU(ctx, cmd, bw, accel, timeout, consolePath)
	if err != nil {
		return err
	}

	// Guards first: they are the most important news.
	if lf, err := os.Open(consolePath); err == nil {
		out.Hits, _ = ScanConsole(lf)
		lf.Close()
	}
	done, resErr := c.collectResults(sc, k, accel, resultsPath, out)
	_ = os.Remove(resultsPath)
	if b, err := os.ReadFile(stderrPath); err == nil && len(strings.TrimSpace(string(b))) == 0 {
		_ = os.Remove(stderrPath)
	}
	return c.bootError(sc, cmd, out, consolePath, stopReason, done, resErr)
}

// startHostEnd creates the namespace ns and starts the iperf3 server the
// usb-nic guest measures against; stop kills the server and removes ns.
func (c *Config) startHostEnd(ctx context.Context, ns string) (stop func(), err error) {
	var undo []func()
	undoAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			undoAll()
		}
	}()
	if out, err := exec.CommandContext(ctx, "ip", "netns", "add", ns).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ip netns add %s: %w: %s", ns, err, strings.TrimSpace(string(out)))
	}
	undo = append(undo, func() {
		if err := lab.RemoveNamespace(ns); err != nil {
			c.logf("removing %s: %v", ns, err)
		}
	})
	_ = exec.Command("ip", "-n", ns, "link", "set", "lo", "up").Run()
	srv := lab.NetnsCommand(context.Background(), ns, "iperf3", "-s", "-p", "5201")
	srvLog, err := os.Create(filepath.Join(c.OutDir, "host-iperf3.log"))
	if err != nil {
		return nil, fmt.Errorf("iperf3 server log: %w", err)
	}
	srv.Stdout, srv.Stderr = srvLog, srvLog
	if err := srv.Start(); err != nil {
		srvLog.Close()
		return nil, fmt.Errorf("iperf3 -s in %s: %w (apt-get install iperf3)", ns, err)
	}
	undo = append(undo, func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
		srvLog.Close()
	})
	return undoAll, nil
}

// qemuCommand builds the QEMU command for the configured machine (inside
// ns when there is one) and records its argv in out.
func (c *Config) qemuCommand(name string, k *Kernel, initrd, accel string, sc *Scenario, ns, tap, resultsPath string, out *Outcome) (*exec.Cmd, error) {
	var argv []string
	if m := machineOf(c.Options); m.Arch == "amd64" {
		argv = qemuArgs(name, k, initrd, accel, c.CPUs, c.MemMB, "stdio", resultsPath, sc.USBNIC, tap, c.Append)
	} else {
		var err error
		if argv, err = m.armArgs(name, k, initrd, accel, c.CPUs, c.MemMB, "stdio", resultsPath, sc.USBNIC, tap, c.Append); err != nil {
			return nil, err
		}
	}
	out.QEMU = argv
	var cmd *exec.Cmd
	if ns != "" {
		cmd = exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...)
	} else {
		cmd = exec.Command(argv[0], argv[1:]...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd, nil
}

// bootWatch is what the console has shown so far: when a fatal guard hit
// appeared, and whether the guest's init reported the boot stage.
type bootWatch struct {
	mu       sync.Mutex
	fatalAt  time.Time
	bootSeen chan struct{}
	bootOnce sync.Once
}

// consoleWriters are the console's readers: the guard watch and the
// guest's stage/note/fail markers, recorded in out.
func (c *Config) consoleWriters(bw *bootWatch, out *Outcome) []io.Writer {
	watch := &consoleWatch{onHit: func(h Hit) {
		bw.mu.Lock()
		defer bw.mu.Unlock()
		if h.Fatal && bw.fatalAt.IsZero() {
			bw.fatalAt = time.Now()
		}
	}}
	markers := &lineFunc{fn: func(l string) {
		m := markerRe.FindStringSubmatch(strings.TrimRight(l, "\r"))
		if m == nil {
			return
		}
		bw.mu.Lock()
		defer bw.mu.Unlock()
		if m[1] == "stage" {
			out.Stages = append(out.Stages, m[2])
			if m[2] == "boot" {
				out.BootS, _ = strconv.ParseFloat(m[3], 64)
				bw.bootOnce.Do(func() { close(bw.bootSeen) })
			}
			c.logf("guest: %s (t=%ss)", m[2], m[3])
		} else if m[1] == "note" || m[1] == "fail" {
			out.Notes = append(out.Notes, m[1]+": "+m[2])
			c.logf("guest: %s %s", m[1], m[2])
		}
	}}
	return []io.Writer{watch, markers}
}

// addressTap gives the tap QEMU creates in ns an address as soon as it
// exists.
func addressTap(ns, tap string) {
	for i := 0; i < 200; i++ {
		if exec.Command("ip", "-n", ns, "link", "show", tap).Run() == nil {
			_ = exec.Command("ip", "-n", ns, "addr", "add", nicHostAddr+"/30", "dev", tap).Run()
			_ = exec.Command("ip", "-n", ns, "link", "set", tap, "up").Run()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitQEMU waits for the started QEMU to exit, killing it on ctx, at the
// timeout, 3 s after a fatal guard hit, or (under KVM) when the guest has
// not booted in 45 s. stopReason says why it was stopped, when that is news
// to the caller; err is errKVMBroken when KVM never booted the guest.
func waitQEMU(ctx context.Context, cmd *exec.Cmd, bw *bootWatch, accel string, timeout time.Duration, consolePath string) (stopReason, err error) {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	kill := func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Process.Kill()
		}
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-ctx.Done():
			kill()
			<-exited
			stopReason = fmt.Errorf("interrupted: QEMU stopped; console log kept in %s", consolePath)
			break wait
		case <-deadline.C:
			kill()
			<-exited
			stopReason = fmt.Errorf("%w after %s; the last console lines:\n%s\n(full log: %s)", ErrTimeout, timeout.Round(time.Second), tailFile(consolePath, 25), consolePath)
			break wait
		case <-tick.C:
			bw.mu.Lock()
			fa := bw.fatalAt
			bw.mu.Unlock()
			if !fa.IsZero() && time.Since(fa) > 3*time.Second {
				kill()
				<-exited
				break wait
			}
			if accel == "kvm" && time.Since(start) > 45*time.Second {
				select {
				case <-bw.bootSeen:
				default:
					kill()
					<-exited
					return nil, errKVMBroken
				}
			}
		}
	}
	if accel == "kvm" {
		select {
		case <-bw.bootSeen:
		default:
			if stopReason == nil {
				return nil, errKVMBroken
			}
		}
	}
	return stopReason, nil
}

// collectResults writes the files the guest sent over its results serial
// port into c.OutDir and records them in out; done says the guest sent
// its end marker.
func (c *Config) collectResults(sc *Scenario, k *Kernel, accel, resultsPath string, out *Outcome) (done bool, resErr error) {
	rf, err := os.Open(resultsPath)
	if err != nil {
		return false, nil
	}
	var files []ResultFile
	files, done, resErr = ParseResults(rf)
	rf.Close()
	for _, f := range files {
		p := filepath.Join(c.OutDir, f.Name)
		if werr := os.WriteFile(p, f.Data, 0o644); werr != nil {
			resErr = errors.Join(resErr, werr)
			continue
		}
		out.Files = append(out.Files, f.Name)
		if f.Name == "facts.txt" {
			out.Facts = parseFacts(f.Data)
		}
		if strings.HasPrefix(f.Name, "bench-") && strings.HasSuffix(f.Name, ".json") {
			if out.RXPaths == nil {
				out.RXPaths = map[string]string{}
			}
			for d, pc := range RXPaths(f.Data) {
				out.RXPaths[d] = pc
			}
			_ = annotateBench(p, c.benchNotes(sc, k, accel))
		}
	}
	return done, resErr
}

// benchNotes say where a bench result made in the guest came from.
func (c *Config) benchNotes(sc *Scenario, k *Kernel, accel string) []string {
	src := "package " + k.Package + " " + k.PackageVersion
	if k.Package == "" {
		src = "image " + k.Image
	}
	notes := []string{fmt.Sprintf("wirespeed lab vm %s: guest kernel %s (%s), QEMU %s, %d vCPUs", sc.Name, k.Release, src, accel, c.CPUs)}
	if sc.Name == "usb-gadget" || sc.Name == "bql" {
		notes = append(notes, "dummy_hcd speed "+c.Speed)
	}
	if c.BusRate > 0 {
		notes = append(notes, fmt.Sprintf("bus capped at %d Mbit/s", c.BusRate))
	}
	if c.ModulesDir != "" {
		notes = append(notes, "modules from "+c.ModulesDir)
	}
	return notes
}

// bootError is the run's error: guard hits first, then why QEMU was
// stopped, then - when neither - a guest that stopped early or reported
// a failure, and any trouble writing the results.
func (c *Config) bootError(sc *Scenario, cmd *exec.Cmd, out *Outcome, consolePath string, stopReason error, done bool, resErr error) error {
	var errs []error
	if len(out.Hits) > 0 {
		var parts []string
		for _, h := range out.Hits {
			parts = append(parts, h.String())
		}
		errs = append(errs, fmt.Errorf("%w: %s\n%s\n(full log: %s)", ErrGuard, strings.Join(parts, "; "), out.Hits[0].Excerpt, consolePath))
	}
	if stopReason != nil {
		errs = append(errs, stopReason)
	}
	if len(out.Hits) == 0 && stopReason == nil {
		if !done {
			errs = append(errs, fmt.Errorf("the guest stopped before sending its results (QEMU: %s); the last console lines:\n%s\n(full log: %s)", exitText(cmd), tailFile(consolePath, 25), consolePath))
		}
		if e := out.Facts["error"]; e != "" {
			errs = append(errs, errors.New(e))
		}
		if b, err := os.ReadFile(filepath.Join(c.OutDir, "error.txt")); err == nil {
			errs = append(errs, fmt.Errorf("scenario %s failed in the guest: %s", sc.Name, strings.TrimSpace(string(b))))
		}
	}
	if resErr != nil {
		errs = append(errs, resErr)
	}
	return errors.Join(errs...)
}

func exitText(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil {
		return "not started"
	}
	return cmd.ProcessState.String()
}

// lineFunc calls fn for every complete line written to it.
type lineFunc struct {
	buf []byte
	fn  func(string)
}

func (l *lineFunc) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := indexNL(l.buf)
		if i < 0 {
			return len(p), nil
		}
		l.fn(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}

func indexNL(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

func tailFile(p string, n int) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "(no console output)"
	}
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(b), "\r", ""), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Reap removes what killed runs left behind: namespaces named
// ws-<pid>-… whose pid is dead (lab.Reap) and QEMU processes named
// ws-<pid>-vm whose owner is dead.
func Reap(logf func(string, ...any)) {
	if gone, err := lab.Reap(); err == nil {
		for _, g := range gone {
			logf("reaped namespace %s of a dead run", g)
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) == 0 || !strings.Contains(filepath.Base(args[0]), "qemu-system") {
			continue
		}
		for i := 0; i+1 < len(args); i++ {
			if args[i] != "-name" {
				continue
			}
			m := regexp.MustCompile(`^ws-(\d+)-vm$`).FindStringSubmatch(args[i+1])
			if m == nil {
				continue
			}
			owner, _ := strconv.Atoi(m[1])
			if owner != os.Getpid() && syscall.Kill(owner, 0) == syscall.ESRCH {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				logf("killed QEMU %d (%s) of a dead run", pid, args[i+1])
			}
		}
	}
}
