// SPDX-License-Identifier: Apache-2.0

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
	"context"
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
	if strings.HasPrefix(c.Name, "-") {
		return fmt.Errorf("lab name %q: begin with a letter or digit ('%s' reads as an option to ip and to 'wirespeed lab down')", c.Name, c.Name)
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
	// A lab of that name is the user's: say so and leave it, before
	// anything is built (a failed build below removes what it made).
	for _, ns := range []string{l.SenderNS, l.ReceiverNS} {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); err == nil {
			return nil, fmt.Errorf("network namespace %s exists already: run 'wirespeed lab down %s' or pick another name; it was left as it is", ns, strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(ns, "ws-lab-"), "-s"), "-r"))
		}
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
			return QdiscError(cfg.SenderQdisc, err)
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

func run(ctx context.Context, argv ...string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// QdiscError turns tc's "Specified qdisc kind is unknown" into what it
// means: this kernel has no such qdisc (not built, or its sch_ module
// cannot be loaded). Other errors pass through.
func QdiscError(kind string, err error) error {
	if err == nil || !strings.Contains(err.Error(), "qdisc kind is unknown") {
		return err
	}
	return fmt.Errorf("this kernel has no qdisc %q (its sch_%s module is not built or cannot be loaded here): pick another qdisc (pfifo_fast and pfifo are built in everywhere), or load sch_%s first", kind, kind, kind)
}
