// Package lab builds wirespeed's host lab: two network namespaces joined by
// a veth pair, addresses from the benchmarking range 198.18.0.0/15, an
// iperf3 server and a UDP echo in the receiver namespace, and the knobs the
// datapath experiments turn (receiver GRO, threaded NAPI, sender offloads,
// RPS, a shaping qdisc, CPU pinning).
//
// Every object is named "ws-" + owner pid + "-" + suffix. Down removes it;
// processes started in the lab die with their parent (PR_SET_PDEATHSIG);
// Reap removes what a run killed with SIGKILL left behind, telling dead
// owners from live ones by the pid in the name.
//
// The lab drives iproute2's ip(8), ethtool(8) and tc(8); it needs root.
package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/cpumask"
)

// Config chooses the lab's knobs. The zero value is an unshaped veth pair
// with the kernel's defaults (receiver GRO off, NAPI not threaded).
type Config struct {
	// Name is an optional suffix for the object names (letters, digits, '-').
	Name string `json:"name,omitempty"`
	// GRO turns rx-gro on at the receiver. On veth this also gives the
	// receiver a NAPI instance; without it veth delivers through the
	// per-CPU netif_rx backlog.
	GRO bool `json:"gro"`
	// Threaded sets /sys/class/net/RECEIVER/threaded (needs GRO for veth to
	// have a NAPI).
	Threaded bool `json:"threaded"`
	// SenderOffloadsOff turns tso, gso and gro off on the sender, so it
	// emits wire-sized segments as a real NIC would.
	SenderOffloadsOff bool `json:"sender_offloads_off"`
	// RPSMask is written to the receiver's rx-0/rps_cpus (hex mask, "" = leave).
	RPSMask string `json:"rps_mask,omitempty"`
	// RateMbit shapes the sender's egress with tbf (0 = unshaped).
	RateMbit float64 `json:"rate_mbit,omitempty"`
	// SenderQdisc is the sender's root qdisc (below tbf when RateMbit is
	// set): "" keeps veth's default noqueue, where a full receive ring drops
	// packets (counted as the sender's tx_dropped); with a qdisc veth stops
	// the queue instead (6.16+), as a real NIC's driver queue does.
	SenderQdisc string `json:"sender_qdisc,omitempty"`
	// PinSender, PinReceiver pin the iperf3 client and server to a CPU.
	PinSender   *int `json:"pin_sender,omitempty"`
	PinReceiver *int `json:"pin_receiver,omitempty"`

	// Servers is how many iperf3 servers to start in the receiver namespace,
	// on ports BasePort, BasePort+1, ... (0 = 1; -1 = none).
	Servers int `json:"servers,omitempty"`
	// BasePort is the first iperf3 server port (0 = 5201).
	BasePort int `json:"base_port,omitempty"`
	// Persistent builds a lab that outlives this process (wirespeed lab up):
	// named "ws-lab-NAME", not reaped, removed by DownNamed. It has no UDP
	// echo (that runs inside the owning process).
	Persistent bool `json:"persistent,omitempty"`
}

// Fixed addressing: each lab lives in its own namespaces, so every lab can use
// the same addresses.
var (
	SenderAddr   = netip.MustParseAddr("198.18.0.1")
	ReceiverAddr = netip.MustParseAddr("198.18.0.2")
)

const (
	prefixLen = 30
	// SenderIfName and ReceiverIfName are the veth ends' names inside their namespaces.
	SenderIfName   = "ws-snd"
	ReceiverIfName = "ws-rcv"
	// DefaultEchoPort is the UDP echo port in the receiver namespace.
	DefaultEchoPort = 7
	netnsDir        = "/run/netns"
)

// Lab is a running host lab.
type Lab struct {
	Config                   Config
	Base                     string // "ws-<pid>-<suffix>"
	SenderNS, ReceiverNS     string
	SenderIf, ReceiverIf     string
	SenderAddr, ReceiverAddr netip.Addr
	// ServerPorts are the iperf3 server ports in the receiver namespace.
	ServerPorts []int
	// EchoPort is the UDP echo port on ReceiverAddr (0 when there is none).
	EchoPort int

	mu      sync.Mutex
	procs   []*exec.Cmd
	echo    *echoServer
	down    bool
	downErr error
}

var seq atomic.Int32

// Check says whether this host can build a lab, and why not.
func Check() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("the host lab needs root: it creates network namespaces and a veth pair and changes their settings; run it with sudo, or use --peer ADDR to measure against an existing iperf3 server")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("the host lab needs ip(8) from iproute2: apt-get install iproute2: %w", err)
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return fmt.Errorf("this kernel has no network namespaces (CONFIG_NET_NS): %w", err)
	}
	return nil
}

// Validate rejects a bad configuration before anything is created.
func (c Config) Validate() error {
	for _, r := range c.Name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("lab name %q: use letters, digits and '-'", c.Name)
		}
	}
	if len(c.Name) > 32 {
		return fmt.Errorf("lab name %q: at most 32 characters", c.Name)
	}
	if c.Threaded && !c.GRO {
		return fmt.Errorf("threaded NAPI needs receiver GRO on: a veth has a NAPI instance only with GRO (or XDP)")
	}
	if c.RPSMask != "" {
		cpus, err := cpumask.ParseMask(c.RPSMask)
		if err != nil {
			return fmt.Errorf("--rps %q: want a hex CPU mask such as 3 (CPUs 0 and 1): %w", c.RPSMask, err)
		}
		for _, cpu := range cpus {
			if cpu >= numCPU() {
				return fmt.Errorf("RPS mask %s names CPU %d, this host has %d CPUs", c.RPSMask, cpu, numCPU())
			}
		}
	}
	switch c.SenderQdisc {
	case "", "pfifo_fast", "pfifo", "fq_codel", "fq", "sfq":
	case "noqueue":
		if c.RateMbit > 0 {
			return fmt.Errorf("qdisc noqueue cannot sit below the tbf of --rate")
		}
	default:
		return fmt.Errorf("sender qdisc %q: want noqueue, pfifo_fast, pfifo, fq_codel, fq or sfq", c.SenderQdisc)
	}
	if c.RateMbit < 0 || c.RateMbit > 1e6 {
		return fmt.Errorf("rate %g Mbit/s: want 0 (unshaped) up to 1000000", c.RateMbit)
	}
	for i, p := range []*int{c.PinSender, c.PinReceiver} {
		if p != nil && (*p < 0 || *p >= numCPU()) {
			return fmt.Errorf("--%s %d: this host has CPUs 0-%d; give one of them", []string{"pin-sender", "pin-receiver"}[i], *p, numCPU()-1)
		}
	}
	if c.Servers < -1 || c.Servers > 64 {
		return fmt.Errorf("%d iperf3 servers: want 1-64", c.Servers)
	}
	if c.BasePort < 0 || c.BasePort+c.Servers > 65535 {
		return fmt.Errorf("base port %d: want 1-65535", c.BasePort)
	}
	return nil
}

func numCPU() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err == nil {
		if cpus, err := cpumask.ParseList(strings.TrimSpace(string(b))); err == nil && len(cpus) > 0 {
			return cpus[len(cpus)-1] + 1
		}
	}
	return 1
}

// Up builds a lab. On error everything created so far is removed again.
// Up first reaps labs whose owner is dead.
func Up(ctx context.Context, cfg Config) (*Lab, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := Check(); err != nil {
		return nil, err
	}
	_, _ = Reap()
	suffix := cfg.Name
	if suffix == "" {
		suffix = strconv.Itoa(int(seq.Add(1)))
	}
	base := fmt.Sprintf("ws-%d-%s", os.Getpid(), suffix)
	if cfg.Persistent {
		if cfg.Name == "" {
			suffix = "0"
		}
		base = "ws-lab-" + suffix
	}
	l := &Lab{
		Config: cfg, Base: base,
		SenderNS: base + "-s", ReceiverNS: base + "-r",
		SenderIf: SenderIfName, ReceiverIf: ReceiverIfName,
		SenderAddr: SenderAddr, ReceiverAddr: ReceiverAddr,
	}
	if err := l.build(ctx); err != nil {
		if derr := l.Down(); derr != nil {
			err = fmt.Errorf("%w (and cleaning up: %v)", err, derr)
		}
		return nil, err
	}
	return l, nil
}

func (l *Lab) build(ctx context.Context) error {
	cfg := l.Config
	for _, ns := range []string{l.SenderNS, l.ReceiverNS} {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); err == nil {
			return fmt.Errorf("network namespace %s exists already: run 'wirespeed lab down %s' or pick another name", ns, strings.TrimSuffix(strings.TrimPrefix(ns, "ws-lab-"), "-s"))
		}
	}
	steps := [][]string{
		{"ip", "netns", "add", l.SenderNS},
		{"ip", "netns", "add", l.ReceiverNS},
		{"ip", "link", "add", l.SenderIf, "netns", l.SenderNS, "type", "veth", "peer", "name", l.ReceiverIf, "netns", l.ReceiverNS},
		{"ip", "-n", l.SenderNS, "addr", "add", fmt.Sprintf("%s/%d", l.SenderAddr, prefixLen), "dev", l.SenderIf},
		{"ip", "-n", l.ReceiverNS, "addr", "add", fmt.Sprintf("%s/%d", l.ReceiverAddr, prefixLen), "dev", l.ReceiverIf},
		{"ip", "-n", l.SenderNS, "link", "set", "lo", "up"},
		{"ip", "-n", l.ReceiverNS, "link", "set", "lo", "up"},
		{"ip", "-n", l.SenderNS, "link", "set", l.SenderIf, "up"},
		{"ip", "-n", l.ReceiverNS, "link", "set", l.ReceiverIf, "up"},
	}
	for _, s := range steps {
		if err := run(ctx, s...); err != nil {
			return err
		}
	}
	if cfg.SenderOffloadsOff || cfg.GRO {
		if _, err := exec.LookPath("ethtool"); err != nil {
			return fmt.Errorf("lab offload knobs need ethtool(8): apt-get install ethtool: %w", err)
		}
	}
	if cfg.SenderOffloadsOff {
		if err := run(ctx, "ip", "netns", "exec", l.SenderNS, "ethtool", "-K", l.SenderIf, "tso", "off", "gso", "off", "gro", "off"); err != nil {
			return err
		}
	}
	gro := "off"
	if cfg.GRO {
		gro = "on"
	}
	if err := run(ctx, "ip", "netns", "exec", l.ReceiverNS, "ethtool", "-K", l.ReceiverIf, "gro", gro); err != nil {
		if cfg.GRO {
			return err
		}
	}
	if cfg.Threaded {
		if err := l.WriteSysfs(ctx, l.ReceiverNS, fmt.Sprintf("/sys/class/net/%s/threaded", l.ReceiverIf), "1"); err != nil {
			return err
		}
	}
	if cfg.RPSMask != "" {
		if err := l.WriteSysfs(ctx, l.ReceiverNS, fmt.Sprintf("/sys/class/net/%s/queues/rx-0/rps_cpus", l.ReceiverIf), cfg.RPSMask); err != nil {
			return err
		}
	}
	if cfg.RateMbit > 0 {
		if _, err := exec.LookPath("tc"); err != nil {
			return fmt.Errorf("--rate needs tc(8) from iproute2: %w", err)
		}
		if err := run(ctx, append([]string{"ip", "netns", "exec", l.SenderNS}, TBFArgs(l.SenderIf, cfg.RateMbit)...)...); err != nil {
			return err
		}
	}
	if cfg.SenderQdisc != "" {
		argv := []string{"ip", "netns", "exec", l.SenderNS, "tc", "qdisc", "replace", "dev", l.SenderIf, "root", cfg.SenderQdisc}
		if cfg.RateMbit > 0 {
			argv = []string{"ip", "netns", "exec", l.SenderNS, "tc", "qdisc", "add", "dev", l.SenderIf, "parent", "1:1", cfg.SenderQdisc}
		}
		if err := run(ctx, argv...); err != nil {
			return err
		}
	}
	if cfg.Servers >= 0 {
		if err := l.startServers(ctx); err != nil {
			return err
		}
	}
	if !cfg.Persistent {
		e, err := startEcho(l.ReceiverNS, netip.AddrPortFrom(l.ReceiverAddr, DefaultEchoPort))
		if err != nil {
			return err
		}
		l.echo = e
		l.EchoPort = DefaultEchoPort
	}
	return nil
}

// TBFArgs is the tc command that shapes dev to rate Mbit/s: a token bucket
// with a burst of 4 ms at that rate (at least 32 KB) and up to 100 ms of
// queue, which is roughly what a slow link with a deep driver queue holds.
func TBFArgs(dev string, rateMbit float64) []string {
	bytesPerSec := rateMbit * 1e6 / 8
	burst := int(bytesPerSec * 0.004)
	if burst < 32*1024 {
		burst = 32 * 1024
	}
	return []string{"tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "tbf",
		"rate", fmt.Sprintf("%dkbit", int(rateMbit*1000)), "burst", strconv.Itoa(burst), "latency", "100ms"}
}

func (l *Lab) startServers(ctx context.Context) error {
	if _, err := exec.LookPath("iperf3"); err != nil {
		return fmt.Errorf("iperf3 is not installed: apt-get install iperf3: %w", err)
	}
	n := l.Config.Servers
	if n == 0 {
		n = 1
	}
	base := l.Config.BasePort
	if base == 0 {
		base = 5201
	}
	for i := 0; i < n; i++ {
		port := base + i
		argv := []string{"iperf3", "-s", "-p", strconv.Itoa(port), "-B", l.ReceiverAddr.String()}
		if l.Config.PinReceiver != nil {
			argv = append(argv, "-A", strconv.Itoa(*l.Config.PinReceiver))
		}
		if l.Config.Persistent {
			argv = append(argv, "-D")
			if err := run(ctx, append([]string{"ip", "netns", "exec", l.ReceiverNS}, argv...)...); err != nil {
				return err
			}
		} else {
			cmd := l.Command(context.Background(), l.ReceiverNS, argv...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				return fmt.Errorf("start iperf3 server in %s: %w", l.ReceiverNS, err)
			}
			l.mu.Lock()
			l.procs = append(l.procs, cmd)
			l.mu.Unlock()
		}
		l.ServerPorts = append(l.ServerPorts, port)
	}
	// Wait until every port listens in the receiver namespace.
	deadline := time.Now().Add(5 * time.Second)
	for {
		missing, err := l.notListening(ctx)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("iperf3 server in %s does not listen on port(s) %v after 5 s; is another program using them?", l.ReceiverNS, missing)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (l *Lab) notListening(ctx context.Context) ([]int, error) {
	var missing []int
	var tables []byte
	err := InNetns(l.ReceiverNS, func() error {
		for _, f := range []string{"tcp", "tcp6"} {
			b, err := os.ReadFile("/proc/thread-self/net/" + f)
			if err == nil {
				tables = append(tables, b...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	listening := map[int]bool{}
	for _, line := range strings.Split(string(tables), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != "0A" {
			continue
		}
		_, portHex, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseUint(portHex, 16, 16); err == nil {
			listening[int(p)] = true
		}
	}
	for _, p := range l.ServerPorts {
		if !listening[p] {
			missing = append(missing, p)
		}
	}
	// A server that died (port in use, bad option) will never listen.
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.procs {
		if c.ProcessState != nil {
			return nil, fmt.Errorf("iperf3 server in %s exited: %v", l.ReceiverNS, c.ProcessState)
		}
	}
	_ = ctx
	return missing, nil
}

// Command returns a command that runs argv inside namespace ns. It is killed
// when this process dies (PR_SET_PDEATHSIG) and, when ctx ends, first asked to
// stop with SIGINT (iperf3 then still prints its JSON) and killed 3 s later.
func (l *Lab) Command(ctx context.Context, ns string, argv ...string) *exec.Cmd {
	return NetnsCommand(ctx, ns, argv...)
}

// NetnsCommand is Lab.Command for any named namespace.
func NetnsCommand(ctx context.Context, ns string, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns}, argv...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 3 * time.Second
	return cmd
}

// WriteSysfs writes value to a sysfs path as seen inside ns (sysfs shows the
// devices of the namespace it was mounted in; ip netns exec mounts one).
func (l *Lab) WriteSysfs(ctx context.Context, ns, path, value string) error {
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "sh", "-c", `printf '%s\n' "$1" > "$2"`, "sh", value, path)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("write %q to %s in %s: %w: %s", value, path, ns, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Down stops the lab's processes and removes its namespaces (and with them
// the veth pair and qdiscs). It is safe to call more than once.
func (l *Lab) Down() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return l.downErr
	}
	l.down = true
	if l.echo != nil {
		l.echo.close()
	}
	for _, c := range l.procs {
		if c.Process != nil && c.ProcessState == nil {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	l.downErr = removeNetns(l.SenderNS, l.ReceiverNS)
	return l.downErr
}

// DownNamed removes a persistent lab made by 'wirespeed lab up --name NAME'.
func DownNamed(name string) error {
	if name == "" {
		name = "0"
	}
	base := "ws-lab-" + name
	found := false
	for _, ns := range []string{base + "-s", base + "-r"} {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); err == nil {
			found = true
		}
	}
	if !found {
		return fmt.Errorf("no lab %q (namespaces %s-s, %s-r): %w; see 'wirespeed lab status' for the labs there are", name, base, base, os.ErrNotExist)
	}
	return removeNetns(base+"-s", base+"-r")
}

// removeNetns kills every process inside the namespaces and deletes them.
func removeNetns(names ...string) error {
	var errs []error
	for _, ns := range names {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); err != nil {
			continue
		}
		killNetnsPids(ns)
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip netns del %s: %w: %s", ns, err, strings.TrimSpace(string(out))))
		}
	}
	return errors.Join(errs...)
}

func killNetnsPids(ns string) {
	for attempt := 0; attempt < 20; attempt++ {
		out, err := exec.Command("ip", "netns", "pids", ns).Output()
		if err != nil {
			return
		}
		pids := strings.Fields(string(out))
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Info describes a lab namespace found on the host.
type Info struct {
	Namespace string `json:"namespace"`
	Base      string `json:"base"`
	// Kind is "bench" (ws-PID-..., removed when its owner ends), "persistent"
	// (ws-lab-NAME from 'wirespeed lab up') or "other" (a ws- name wirespeed's
	// lab did not make, e.g. another test's; never touched).
	Kind  string `json:"kind"`
	Owner int    `json:"owner_pid,omitempty"`
	Alive bool   `json:"owner_alive"`
	Pids  []int  `json:"pids,omitempty"`
}

// List returns the lab namespaces on this host (all "ws-" namespaces).
func List() ([]Info, error) {
	ents, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", netnsDir, err)
	}
	var out []Info
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "ws-") {
			continue
		}
		in := Info{Namespace: name, Base: strings.TrimSuffix(strings.TrimSuffix(name, "-s"), "-r")}
		if pid, ok := ownerPid(name); ok {
			in.Kind, in.Owner, in.Alive = "bench", pid, ownerAlive(pid, filepath.Join(netnsDir, name))
		} else if strings.HasPrefix(name, "ws-lab-") {
			in.Kind = "persistent"
		} else {
			in.Kind = "other"
		}
		if b, err := exec.Command("ip", "netns", "pids", name).Output(); err == nil {
			for _, f := range strings.Fields(string(b)) {
				if p, err := strconv.Atoi(f); err == nil {
					in.Pids = append(in.Pids, p)
				}
			}
		}
		out = append(out, in)
	}
	return out, nil
}

// ownerPid extracts the owner from "ws-<pid>-...".
func ownerPid(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "ws-")
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok || digits == "" {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// ownerAlive reports whether the process pid that created the namespace
// file nsFile still runs: it exists, is not a zombie (a killed process its
// parent has not waited for), and started before the namespace was made (a
// later process with the same pid is someone else).
func ownerAlive(pid int, nsFile string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return true
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return false
	}
	start, err1 := strconv.ParseUint(f[19], 10, 64) // field 22: starttime, ticks since boot
	fi, err2 := os.Stat(nsFile)
	boot, err3 := bootTime()
	if err1 != nil || err2 != nil || err3 != nil {
		return true
	}
	started := boot.Add(time.Duration(start) * time.Second / 100)
	return !started.After(fi.ModTime().Add(2 * time.Second))
}

func bootTime() (time.Time, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, err
			}
			return time.Unix(n, 0), nil
		}
	}
	return time.Time{}, fmt.Errorf("/proc/stat: no btime")
}

// Reap removes the namespaces (and the processes in them) of labs whose
// owner process is gone, and returns their names. Labs of live owners and
// persistent labs are left alone.
func Reap() ([]string, error) {
	labs, err := List()
	if err != nil {
		return nil, err
	}
	var reaped []string
	var errs []error
	for _, in := range labs {
		if in.Kind != "bench" || in.Alive {
			continue
		}
		if err := removeNetns(in.Namespace); err != nil {
			errs = append(errs, err)
			continue
		}
		reaped = append(reaped, in.Namespace)
	}
	return reaped, errors.Join(errs...)
}

func run(ctx context.Context, argv ...string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// RemoveNamespace kills the processes in one lab namespace and deletes it.
// It refuses names that are not wirespeed's.
func RemoveNamespace(ns string) error {
	if !strings.HasPrefix(ns, "ws-") || strings.ContainsAny(ns, "/.") {
		return fmt.Errorf("%q is not a wirespeed lab namespace", ns)
	}
	return removeNetns(ns)
}
