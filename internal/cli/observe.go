// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"time"

	"github.com/wirespeed/wirespeed/internal/observe"
)

func init() {
	register(&Command{
		Name:    "observe",
		Summary: "watch the datapath at work with eBPF: who polls where, GRO coalescing, softirq time",
		Usage: `wirespeed observe [--duration D] [--light] [--sample PCT] [--programs P] [IFACE...] [--json]

Attaches eBPF programs to the tracepoints napi:napi_poll,
net:napi_gro_receive_entry, net:netif_receive_skb*, net:netif_rx,
irq:softirq_*, irq:irq_handler_* and napi:dql_stall_detected for the given
duration (or until Ctrl-C) and prints, per device: how received packets
reach the stack ("NAPI + GRO", "NAPI, no GRO", "netif_rx backlog (no NAPI,
no GRO)"), the GRO ratio (segments entering GRO per skb delivered - the
kernel keeps no counter for software GRO), each NAPI instance's polls per
CPU and context (softirq or its napi/<dev>-<id> thread), work per poll and
full-budget polls; and per CPU the time spent in NET_RX/NET_TX softirqs.

Devices are named as the tracepoints name them, in whatever network
namespace they live. Needs root (CAP_BPF and CAP_PERFMON). Tracepoints
missing from the kernel or with an unexpected record layout are skipped
and reported. Nothing stays attached after exit.

--programs auto (default) attaches to the raw tracepoints (tp_btf) where
the kernel has BTF (/sys/kernel/btf/vmlinux) and --sample is 100%; sampled,
to the classic ones, whose perf events stay open between windows (a raw
one would register its probe again every window, patching kernel text
each time). Raw programs get the
tracepoint's arguments directly and the kernel builds no trace record per
event, which costs a fraction of a classic tracepoint on the per-packet
events; napi_gro_receive_entry, netif_receive_skb_entry/_list_entry and
dql_stall_detected stay classic. An event whose raw program does not load
falls back to its classic one (the event's detail says why). btf insists
on the raw ones; classic uses tracepoint records only, as kernels without
BTF (Raspberry Pi OS) always do. Both count the same events.

--light leaves out napi_gro_receive_entry and netif_receive_skb{,_list}_entry,
which fire for every packet before GRO (the bulk of the cost on a fast
link); the GRO ratio is then estimated as NAPI work per delivered skb.

--sample PCT (10% or 0.1) attaches the programs for that share of every
second only and detaches them in between: on a busy link nearly all of
observe's cost is paid per event while attached, so this cuts it to about
PCT of the continuous cost. Counts are then those of the attached windows;
rates (/s) and time shares are per attached second, ratios are unaffected.
The output says how long the programs were attached. Default: 100%
(continuous).`,
		Run: runObserve,
	})
}

func runObserve(ctx context.Context, env Env, args []string) error {
	c := commands["observe"]
	fs := newFlagSet(c, env)
	dur := secondsOrDuration(5 * time.Second)
	fs.Var(&dur, "duration", "how long to observe, 10s or 10 (seconds); Ctrl-C ends early")
	asJSON := fs.Bool("json", false, "print the observation as JSON")
	light := fs.Bool("light", false, "leave out the per-packet pre-GRO events (cheaper; GRO input estimated from NAPI work)")
	sample := sampleFlag(1)
	fs.Var(&sample, "sample", "attach for `PCT` of every second, 10% or 0.1 (cheaper; rates per attached second)")
	progs := fs.String("programs", "auto", "auto, btf (raw tracepoints, needs kernel BTF) or classic (tracepoint records)")
	ifaces, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkLocalIfaces(ifaces); err != nil {
		return err
	}
	if dur < secondsOrDuration(100*time.Millisecond) {
		return usageErrorf("--duration %v: want 100ms or more, such as 10s", time.Duration(dur))
	}
	if err := observe.CheckSample(float64(sample), 0); err != nil {
		return usageErrorf("--sample: %v", err)
	}
	if err := observe.CheckProgramsFlag(*progs); err != nil {
		return usageErrorf("--programs: %v", err)
	}
	o, err := observe.Run(ctx, observe.Options{Ifaces: ifaces, Light: *light, Sample: float64(sample), Programs: *progs,
		DevIRQs: deviceIRQs(ctx, ifaces)}, time.Duration(dur))
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env, o)
	}
	observe.WriteText(env.Stdout, o)
	return nil
}
