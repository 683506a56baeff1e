// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/lab"
)

// newBenchObserver, when set (by bench_observe.go), gives the observer
// started for every bench run in a mode ("light", "full") sampling a share
// of the time (observe.Options.Sample), whose JSON is stored under
// "observe" in that run's result; an error says why the sampling share
// cannot be used.
var newBenchObserver func(mode string, sample float64, programs string) (bench.Observer, error)

func init() {
	register(&Command{
		Name:    "bench",
		Summary: "measure throughput (iperf3), latency under load and where the CPU went",
		Usage: `wirespeed bench [--peer ADDR[:PORT]] [flags]

Runs iperf3 load (bulk TCP over several streams by default) while a latency
probe (ICMP echo, plus UDP echo in the lab) measures idle and loaded RTT,
and samples per-CPU user/sys/irq/softirq, NET_RX/NET_TX softirqs, softnet
counters, device IRQs, napi/* kthreads, device counters and BQL every 0.5 s.

Without --peer, bench builds its host lab for each run (two namespaces joined
by a veth pair; needs root) with the knobs below. --variant measures several
lab configurations interleaved (A B C A B C ...), for fair ratios on a noisy
machine:
  wirespeed bench --sender-offloads off -t 10s --repeat 3 \
    --variant 'nogro: --gro off' --variant 'gro: --gro on' \
    --variant 'threaded: --gro on --threaded'

With --peer, an iperf3 server must run there (iperf3 -s, not -s -1: bench
checks the server with one control connection first); with --procs N,
servers on ports PORT..PORT+N-1. Without root, the ICMP probe needs
net.ipv4.ping_group_range to allow this user (or it is left out, with a note).

Each run is also observed with eBPF ('wirespeed observe', stored in the
result under "observe": RX path, GRO ratio, NAPI placement, softirq time):
--observe light (default; GRO input estimated from NAPI work), full, or off.
So that observing does not slow the run it explains, the programs are
attached for --observe-sample of every second only (default 10%; 100% is
continuous): counts are those of the attached windows, rates and shares
per attached second.

The result is saved as versioned JSON (--out); 'wirespeed show FILE' prints
it again, 'wirespeed compare A B' tells whether two results differ.
Ctrl-C stops, removes the lab and saves what was measured, marked incomplete.`,
		Run: runBench,
	})
}

func runBench(ctx context.Context, env Env, args []string) error {
	c := commands["bench"]
	fs := newFlagSet(c, env)
	peer := fs.String("peer", "", "iperf3 server ADDR[:PORT] to measure against (default: the host lab)")
	port := fs.Int("port", 5201, "iperf3 server port (the first one with --procs)")
	iface := fs.String("iface", "", "local device to sample with --peer (default: the route's device)")
	streams := fs.Int("P", 4, "parallel TCP/UDP streams (iperf3 -P)")
	fs.IntVar(streams, "streams", 4, "same as -P")
	procs := fs.Int("procs", 0, "iperf3 client processes (0: automatic - several for iperf3 < 3.16 in the lab)")
	dur := fs.String("t", "10s", "measured duration, as iperf3 -t (e.g. 10s, 1m; a multiple of 0.5s); the load runs --omit longer")
	fs.StringVar(dur, "duration", "10s", "same as -t")
	omit := fs.String("omit", "1s", "seconds at the start of the load left out of the results (TCP ramp-up)")
	dir := fs.String("direction", "send", "send (local -> peer), receive (peer -> local, iperf3 -R) or both (--bidir)")
	udp := fs.Bool("udp", false, "UDP load instead of TCP (give --bitrate; default 1G)")
	bitrate := fs.String("bitrate", "", "cap the load at RATE over all streams (iperf3 -b), e.g. 50M (the throttled variant)")
	repeat := fs.Int("repeat", 1, "repetitions (mean, stdev and 95% CI over them)")
	probeInt := fs.String("probe-interval", "100ms", "latency probe interval (10ms-200ms)")
	tos := fs.String("tos", "0", "probe IP TOS byte (e.g. 0xb8), or DSCP name: ef, cs0-cs7, af11-af43")
	prio := fs.Int("priority", -1, "probe SO_PRIORITY (0-15; -1 leaves it)")
	idle := fs.String("idle", "2s", "idle latency measurement before the load")
	noUDP := fs.Bool("no-udp-probe", false, "lab: ICMP probe only")
	out := fs.String("out", "", "result file (default wirespeed-bench-YYYYMMDD-HHMMSS.json; '-' for none)")
	asJSON := fs.Bool("json", false, "print the result JSON on stdout instead of the summary")
	noInspect := fs.Bool("no-inspect", false, "do not embed inspect snapshots of the devices")
	obsMode := fs.String("observe", "light", "eBPF observation of each run: light (cheap; GRO estimated from NAPI work), full (counts every segment entering GRO) or off")
	obsSample := sampleFlag(0.1)
	fs.Var(&obsSample, "observe-sample", "attach the observation for `PCT` of every second, 10% or 0.1 (100%: continuous)")
	obsProgs := fs.String("observe-programs", "auto", "the observation's programs: auto, btf or classic (see 'wirespeed help observe')")
	knobs := addLabFlags(fs)
	var variants []string
	fs.Func("variant", "'NAME: lab flags' - a lab configuration to measure (repeatable; measured interleaved)", func(s string) error {
		variants = append(variants, s)
		return nil
	})
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("bench: unexpected argument %q (give the peer with --peer ADDR)", pos[0])
	}

	// Everything is checked before anything starts.
	if *port < 1 || *port > 65535 {
		return usageErrorf("bench: --port %d: want 1-65535 (the iperf3 server's port)", *port)
	}
	o := bench.Options{Peer: *peer, Port: *port, Iface: *iface, Streams: *streams, Procs: *procs,
		Direction: *dir, UDP: *udp, Repeat: *repeat, ProbePriority: *prio, NoUDPProbe: *noUDP,
		SampleInterval: 500 * time.Millisecond}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch *obsMode {
	case "off":
		if set["observe-sample"] || set["observe-programs"] {
			return usageErrorf("--observe-sample and --observe-programs need --observe light or full")
		}
	case "light", "full":
		if newBenchObserver != nil {
			if o.Observer, err = newBenchObserver(*obsMode, float64(obsSample), *obsProgs); err != nil {
				return usageErrorf("%v", err)
			}
		}
	default:
		return usageErrorf("bench: --observe %q: want light, full or off", *obsMode)
	}
	if o.Duration, err = benchDuration("t", *dur); err != nil {
		return err
	}
	if o.Omit, err = benchDuration("omit", *omit); err != nil {
		return err
	}
	if o.Idle, err = benchDuration("idle", *idle); err != nil {
		return err
	}
	if o.ProbeInterval, err = benchDuration("probe-interval", *probeInt); err != nil {
		return err
	}
	if o.ProbeTOS, err = benchParseTOS(*tos); err != nil {
		return &UsageError{Err: err}
	}
	if *bitrate != "" {
		if o.RateMbit, err = benchParseRate(*bitrate); err != nil {
			return usageErrorf("--bitrate: %v", err)
		}
	}
	for _, k := range []string{"peer", "iface", "out", "bitrate"} {
		if f := fs.Lookup(k); set[k] && strings.TrimSpace(f.Value.String()) == "" {
			return usageErrorf("bench: --%s is empty: give a value or leave the flag out", k)
		}
	}
	if *iface != "" {
		if *peer == "" {
			return usageErrorf("bench: --iface samples a device on the way to --peer; the lab samples its own devices: give --peer or leave --iface out")
		}
		if err := checkIfaceExists(*iface); err != nil {
			return err
		}
	}
	if *peer != "" {
		for _, k := range []string{"gro", "threaded", "sender-offloads", "rps", "rate", "qdisc", "pin-sender", "pin-receiver", "variant"} {
			if set[k] {
				return usageErrorf("--%s is a lab knob; it does not apply with --peer", k)
			}
		}
	} else {
		base, err := knobs.config()
		if err != nil {
			return &UsageError{Err: err}
		}
		if len(variants) == 0 {
			b := base
			o.Variants = []bench.Variant{{Name: "lab", Lab: &b}}
		}
		for _, spec := range variants {
			v, err := parseVariant(c, env, spec, knobs)
			if err != nil {
				return err
			}
			o.Variants = append(o.Variants, v)
		}
	}
	if err := o.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	if o.Iperf3, err = bench.DetectIperf3(ctx); err != nil {
		return err
	}
	if *peer == "" {
		if err := lab.Check(); err != nil {
			return err
		}
	}
	if !*noInspect {
		o.Inspect = bench.InspectSelf()
	}
	file := *out
	if file == "" {
		file = "wirespeed-bench-" + time.Now().Format("20060102-150405") + ".json"
	}
	if file != "-" {
		// A result that cannot be written is found out now, not after
		// the measurement.
		if err := existingDir("--out", file); err != nil {
			return err
		}
		probe := file + ".tmp"
		f, err := os.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return fmt.Errorf("cannot write the result: %w", err)
		}
		f.Close()
		os.Remove(probe)
	}
	cmdline := append([]string{"wirespeed", "bench"}, args...)
	_, existed := os.Lstat(file)
	if file != "-" {
		o.Checkpoint = func(r *bench.Result) {
			r.Command, r.Wirespeed = cmdline, Version
			if !r.Complete && r.Incomplete == "" {
				r.Incomplete = "in progress (or the run was killed)"
			}
			_ = r.Save(file)
			r.Incomplete = ""
		}
	}
	if isTTY(env.Stderr) && !*asJSON {
		o.Progress = progressBar(env.Stderr)
	}
	res, runErr := bench.Bench(ctx, o)
	if o.Progress != nil {
		fmt.Fprint(env.Stderr, "\r\033[K")
	}
	if res == nil || (len(res.Runs) == 0 && runErr != nil && ctx.Err() == nil) {
		// Failed before measuring anything: nothing to save, and no
		// checkpoint left behind that this run created.
		if file != "-" && existed != nil {
			os.Remove(file)
		}
		return runErr
	}
	res.Command, res.Wirespeed = cmdline, Version
	if file != "-" {
		if err := res.Save(file); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if *asJSON {
		b, err := res.Marshal()
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, string(b))
	} else {
		bench.WriteText(env.Stdout, res, file == "-")
		if file != "-" {
			fmt.Fprintf(env.Stdout, "\nsaved %s (every metric: wirespeed show --all %s; plots: wirespeed report %s)\n", file, file, file)
		}
	}
	if runErr != nil && ctx.Err() != nil {
		if file == "-" {
			return fmt.Errorf("interrupted; the partial result above is marked incomplete")
		}
		return fmt.Errorf("interrupted; the partial result is in %s, marked incomplete", file)
	}
	return runErr
}

func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func progressBar(w io.Writer) func(bench.Progress) {
	return func(p bench.Progress) {
		const width = 30
		frac := 0.0
		if p.Duration > 0 {
			frac = float64(p.Elapsed) / float64(p.Duration)
		}
		frac = min(max(frac, 0), 1)
		n := int(frac * width)
		fmt.Fprintf(w, "\r\033[Krun %d/%d %s %-5s [%s%s] %4.0fs/%.0fs",
			p.Run, p.Runs, p.Variant, p.Phase, strings.Repeat("#", n), strings.Repeat(".", width-n), p.Elapsed.Seconds(), p.Duration.Seconds())
	}
}
