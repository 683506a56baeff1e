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

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/lab"
	"github.com/wirespeed/wirespeed/internal/outfile"
)

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
	f := addBenchFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("bench: unexpected argument %q (give the peer with --peer ADDR)", pos[0])
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })

	// Everything is checked before anything starts.
	o, err := f.options(c, env, fs)
	if err != nil {
		return err
	}
	if err := prepareBench(ctx, &o, *f.peer == "", !*f.noInspect); err != nil {
		return err
	}
	file, err := benchResultFile(*f.out)
	if err != nil {
		return err
	}
	cmdline := append([]string{"wirespeed", "bench"}, args...)
	res, runErr := measureBench(ctx, env, o, file, cmdline, *f.asJSON)
	if res == nil {
		return runErr
	}
	return finishBench(ctx, env, res, runErr, file, *f.asJSON)
}

// prepareBench finds iperf3, checks the lab can be built (inLab) and takes
// the inspect snapshot of this host (withInspect).
func prepareBench(ctx context.Context, o *bench.Options, inLab, withInspect bool) error {
	var err error
	if o.Iperf3, err = bench.DetectIperf3(ctx); err != nil {
		return err
	}
	if inLab {
		if err := lab.Check(); err != nil {
			return err
		}
	}
	if withInspect {
		o.Inspect = bench.InspectSelf()
	}
	return nil
}

// benchResultFile is the file --out names (its default when empty; "-"
// for none), checked writable now rather than after the measurement.
func benchResultFile(out string) (string, error) {
	file := out
	if file == "" {
		file = "wirespeed-bench-" + time.Now().Format("20060102-150405") + ".json"
	}
	if file == "-" {
		return file, nil
	}
	if err := existingDir("--out", file); err != nil {
		return "", err
	}
	// before measuring: a directory, a socket or an unwritable place is
	// refused now, not after the run (outfile writes a device through)
	if err := outfile.Check(file); err != nil {
		return "", fmt.Errorf("cannot write the result: %w", err)
	}
	return file, nil
}

// measureBench runs the measurement, saving each checkpoint to file and
// drawing a progress bar on a terminal. It returns no result when the run
// failed before measuring anything, and then removes the checkpoint file
// if this run created it.
func measureBench(ctx context.Context, env Env, o bench.Options, file string, cmdline []string, asJSON bool) (*bench.Result, error) {
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
	if ansiOK(env.Stderr) && !asJSON {
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
		return nil, runErr
	}
	res.Command, res.Wirespeed = cmdline, Version
	return res, runErr
}

// finishBench saves the result, prints it (the summary, or its JSON) and
// says where a run that was interrupted left its partial result.
func finishBench(ctx context.Context, env Env, res *bench.Result, runErr error, file string, asJSON bool) error {
	if file != "-" {
		if err := res.Save(file); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if asJSON {
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
