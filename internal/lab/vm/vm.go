// SPDX-License-Identifier: Apache-2.0

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
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/lab"
	"github.com/wirespeed/wirespeed/internal/selfexe"
)

// Config is one 'wirespeed lab vm' run.
type Config struct {
	Options
	// CacheDir holds kernels and initramfs images (DefaultCacheDir()).
	CacheDir string
	// KernelRelease picks a Debian kernel: a family ("6.1", "6.12", "7.x") for its
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
	// disks are disk images QEMU opens with snapshot=on (the selftests
	// guest's Debian root).
	disks []string
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
	RXPaths   map[string]string `json:"rx_paths,omitempty"` // from observe inside the guest, the bench where the device received most
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

	r := &runState{c: &c, sc: sc, mach: mach}
	if err := r.kernel(ctx); err != nil {
		return nil, err
	}
	if err := r.programs(ctx); err != nil {
		return nil, err
	}
	if err := r.baseImage(ctx); err != nil {
		return nil, err
	}
	initrd, err := r.runDir(ctx)
	if err != nil {
		return nil, err
	}
	defer os.Remove(initrd)
	runErr := r.bootGuest(ctx, initrd)
	if sc.Collect != nil && !errors.Is(runErr, context.Canceled) {
		if err := sc.Collect(c.OutDir); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	r.save(runErr)
	return r.out, runErr
}

// runState carries one Run's state from step to step.
type runState struct {
	c    *Config
	sc   *Scenario
	mach *Machine
	k    *Kernel
	// loads are the modules the scenario loads, in order; image the
	// modules the cached base image carries.
	loads []moduleLoad
	image []ModuleFile
	// tools are the guest's programs, from root ("" for this host).
	tools Tools
	root  string
	base  string // the base initramfs
	out   *Outcome
}

// kernel gets the guest kernel and plans its modules: the scenario's
// loads, and the image's list of every scenario's modules (those this
// kernel has), --modules-dir's in place of the stock ones.
func (r *runState) kernel(ctx context.Context) error {
	c := r.c
	var err error
	if c.KernelImage != "" {
		r.k, err = UserKernel(c.KernelImage, c.ModulesPath)
	} else {
		r.k, err = FetchKernel(ctx, c.CacheDir, c.KernelRelease, c.Arch, c.logf)
	}
	if err != nil {
		return err
	}
	idx, err := LoadModuleIndex(r.k.ModulesDir)
	if err != nil {
		return err
	}
	over, overDeps, err := Overrides(c.ModulesDir, r.k.Release)
	if err != nil {
		return err
	}
	applyOverrides(idx, over, overDeps)
	if r.loads, err = planLoads(idx, r.sc, c.Options); err != nil {
		return err
	}
	// The cached image carries every scenario's modules (those this kernel has).
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
				p = filepath.Join(r.k.ModulesDir, p)
			}
			r.image = append(r.image, ModuleFile{Name: n, Source: p, Stock: !isOver})
		}
	}
	for _, m := range allModules(c.Arch, c.Machine) {
		if rs, err := idx.Resolve(m); err == nil {
			addMods(rs)
		}
	}
	var runMods []string
	for _, l := range r.loads {
		runMods = append(runMods, l.Name)
	}
	addMods(runMods)
	return nil
}

// programs finds the guest's programs: this host's for its own
// architecture, else Debian's packages' unpacked into a guest root; perf
// for --profile, wg for the wireguard scenario.
func (r *runState) programs(ctx context.Context) error {
	c := r.c
	wsBin := c.Wirespeed
	var err error
	if c.Arch == hostArch() {
		if wsBin == "" {
			if wsBin, err = selfexe.Path(); err != nil {
				return fmt.Errorf("find this wirespeed binary: %w (pass --wirespeed FILE)", err)
			}
		}
		if r.tools, err = FindTools(wsBin); err != nil {
			return err
		}
	} else {
		// a foreign architecture's programs come from Debian's packages
		if wsBin, err = guestWirespeed(wsBin, c.Arch); err != nil {
			return err
		}
		var extra []string
		if c.Profile {
			extra = perfPackages
		}
		if r.root, err = guestRoot(ctx, c.CacheDir, c.Arch, extra, c.logf); err != nil {
			return err
		}
		if r.tools, err = findTools(r.root, wsBin); err != nil {
			return err
		}
	}
	if c.Profile {
		if r.tools.Perf, err = findPerf(r.root); err != nil {
			return err
		}
	}
	if r.sc.Name == "wireguard" && r.tools.WG == "" {
		return fmt.Errorf("the wireguard scenario needs wg(8) in the guest: apt-get install wireguard-tools")
	}
	return nil
}

// baseImage finds or builds the cached base initramfs.
func (r *runState) baseImage(ctx context.Context) error {
	c := r.c
	base, built, err := BaseImage(ctx, c.CacheDir, ImageSpec{Tools: r.tools, Modules: r.image, Root: r.root, Arch: c.Arch}, c.logf)
	if err != nil {
		return fmt.Errorf("initramfs: %w", err)
	}
	if !built {
		c.logf("initramfs %s (cached)", filepath.Base(base))
	}
	r.base = base
	return nil
}

// runDir makes the run directory and the outcome, and writes the run's
// initramfs there: the base image and the run's own archive (/init and
// the scenario's scripts). It returns the initramfs's path.
func (r *runState) runDir(ctx context.Context) (string, error) {
	c, sc := r.c, r.sc
	if c.OutDir == "" {
		c.OutDir = fmt.Sprintf("wirespeed-vm-%s-%s", sc.Name, time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(c.OutDir, 0o755); err != nil {
		return "", err
	}
	r.out = &Outcome{Schema: "wirespeed.labvm/v1", Scenario: sc.Name, Options: c.Options, Kernel: *r.k,
		Started: time.Now().UTC(), Modules: r.loads, OutDir: c.OutDir, ConsoleLg: filepath.Join(c.OutDir, "console.log")}
	runFiles, err := tuneFiles(c.Options, r.root)
	if err != nil {
		return "", err
	}
	runFiles["ws/env.sh"] = []byte(envScript(r.mach))
	runFiles["ws/main.sh"] = []byte(initScript(sc, c.Options, r.loads))
	runFiles["ws/lib.sh"] = []byte(initLib)
	if sc.Selftests {
		if err := r.selftestsInputs(ctx, runFiles); err != nil {
			return "", err
		}
	}
	var runArc strings.Builder
	if err := RunArchive(&runArc, initWrapper, runFiles); err != nil {
		return "", err
	}
	initrd := filepath.Join(c.OutDir, "initramfs.cpio")
	if err := JoinInitramfs(initrd, r.base, []byte(runArc.String())); err != nil {
		return "", err
	}
	return initrd, nil
}

// bootGuest boots the guest with initrd and runs the scenario, under
// --accel auto on KVM where it works, falling back to TCG (and
// remembering so) when KVM does not boot the guest.
func (r *runState) bootGuest(ctx context.Context, initrd string) error {
	c, sc, out := r.c, r.sc, r.out
	timeout := c.Timeout
	if timeout == 0 {
		timeout = time.Duration(r.mach.Slowdown) * (90*time.Second + sc.MaxTime(c.Options)*3/2)
	}

	accel := c.Accel
	if accel == "auto" {
		accel = machineOf(c.Options).AutoTCG
		if c.Arch == hostArch() && kvmUsable(c.CacheDir) {
			accel = "kvm"
		}
	}
	for {
		out.Accel = accel
		runErr := c.boot(ctx, sc, r.k, initrd, accel, timeout, out)
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
		return runErr
	}
}

// save completes the outcome with the run's result and writes it to
// OUT/vm.json.
func (r *runState) save(runErr error) {
	out := r.out
	out.Elapsed = time.Since(out.Started).Seconds()
	if runErr != nil && out.Failure == "" {
		out.Failure = runErr.Error()
	}
	out.OK = runErr == nil
	if b, err := json.MarshalIndent(out, "", "  "); err == nil {
		_ = os.WriteFile(filepath.Join(r.c.OutDir, "vm.json"), append(b, '\n'), 0o644)
	}
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

// Reap removes what killed runs left behind: namespaces named
// ws-<pid>-… whose pid is dead (lab.Reap), the usbdev sockets of dead
// runs and QEMU processes named ws-<pid>-vm whose owner is dead.
func Reap(logf func(string, ...any)) {
	if gone, err := lab.Reap(); err == nil {
		for _, g := range gone {
			logf("reaped namespace %s of a dead run", g)
		}
	}
	for _, g := range reapSockets(socketDir) {
		logf("removed %s of a dead run", g)
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
