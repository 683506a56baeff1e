// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
)

// benchFlags are bench's flags; set says which were given.
type benchFlags struct {
	peer, iface, dur, omit, dir, bitrate, probeInt, tos, idle, out, obsMode, obsProgs *string

	port, streams, procs, repeat, prio *int

	udp, noUDP, asJSON, noInspect *bool

	obsSample sampleFlag
	knobs     *labFlags
	variants  []string
	set       map[string]bool
}

// addBenchFlags declares bench's flags on fs.
func addBenchFlags(fs *flag.FlagSet) *benchFlags {
	f := &benchFlags{obsSample: sampleFlag(0.1)}
	f.peer = fs.String("peer", "", "iperf3 server ADDR[:PORT] to measure against (default: the host lab)")
	f.port = fs.Int("port", 5201, "iperf3 server port (the first one with --procs)")
	f.iface = fs.String("iface", "", "local device to sample with --peer (default: the route's device)")
	f.streams = fs.Int("P", 4, "parallel TCP/UDP streams (iperf3 -P)")
	fs.IntVar(f.streams, "streams", 4, "same as -P")
	f.procs = fs.Int("procs", 0, "iperf3 client processes (0: automatic - several for iperf3 < 3.16 in the lab)")
	f.dur = fs.String("t", "10s", "measured duration, as iperf3 -t (e.g. 10s, 1m; a multiple of 0.5s); the load runs --omit longer")
	fs.StringVar(f.dur, "duration", "10s", "same as -t")
	f.omit = fs.String("omit", "1s", "seconds at the start of the load left out of the results (TCP ramp-up)")
	f.dir = fs.String("direction", "send", "send (local -> peer), receive (peer -> local, iperf3 -R) or both (--bidir)")
	f.udp = fs.Bool("udp", false, "UDP load instead of TCP (give --bitrate; default 1G)")
	f.bitrate = fs.String("bitrate", "", "cap the load at RATE over all streams (iperf3 -b), e.g. 50M (the throttled variant)")
	f.repeat = fs.Int("repeat", 1, "repetitions (mean, stdev and 95% CI over them)")
	f.probeInt = fs.String("probe-interval", "100ms", "latency probe interval (10ms-200ms)")
	f.tos = fs.String("tos", "0", "probe IP TOS byte (e.g. 0xb8), or DSCP name: ef, cs0-cs7, af11-af43")
	f.prio = fs.Int("priority", -1, "probe SO_PRIORITY (0-15; -1 leaves it)")
	f.idle = fs.String("idle", "2s", "idle latency measurement before the load")
	f.noUDP = fs.Bool("no-udp-probe", false, "lab: ICMP probe only")
	f.out = fs.String("out", "", "result file (default wirespeed-bench-YYYYMMDD-HHMMSS.json; '-' for none)")
	f.asJSON = fs.Bool("json", false, "print the result JSON on stdout instead of the summary")
	f.noInspect = fs.Bool("no-inspect", false, "do not embed inspect snapshots of the devices")
	f.obsMode = fs.String("observe", "light", "eBPF observation of each run: light (cheap; GRO estimated from NAPI work), full (counts every segment entering GRO) or off")
	fs.Var(&f.obsSample, "observe-sample", "attach the observation for `PCT` of every second, 10% or 0.1 (100%: continuous)")
	f.obsProgs = fs.String("observe-programs", "auto", "the observation's programs: auto, btf or classic (see 'wirespeed help observe')")
	f.knobs = addLabFlags(fs)
	fs.Func("variant", "'NAME: lab flags' - a lab configuration to measure (repeatable; measured interleaved)", func(s string) error {
		f.variants = append(f.variants, s)
		return nil
	})
	return f
}

// options checks the flags and turns them into bench's Options.
func (f *benchFlags) options(c *Command, env Env, fs *flag.FlagSet) (bench.Options, error) {
	if *f.port < 1 || *f.port > 65535 {
		return bench.Options{}, usageErrorf("bench: --port %d: want 1-65535 (the iperf3 server's port)", *f.port)
	}
	o := bench.Options{Peer: *f.peer, Port: *f.port, Iface: *f.iface, Streams: *f.streams, Procs: *f.procs,
		Direction: *f.dir, UDP: *f.udp, Repeat: *f.repeat, ProbePriority: *f.prio, NoUDPProbe: *f.noUDP,
		SampleInterval: 500 * time.Millisecond}
	var err error
	if o.Observer, err = f.observer(); err != nil {
		return o, err
	}
	if err := f.times(&o); err != nil {
		return o, err
	}
	for _, k := range []string{"peer", "iface", "out", "bitrate"} {
		if fl := fs.Lookup(k); f.set[k] && strings.TrimSpace(fl.Value.String()) == "" {
			return o, usageErrorf("bench: --%s is empty: give a value or leave the flag out", k)
		}
	}
	if o.Variants, err = f.variantsOrPeer(c, env); err != nil {
		return o, err
	}
	if err := o.Validate(); err != nil {
		return o, &UsageError{Err: err}
	}
	return o, nil
}

// observer is the observer --observe asks for (nil: off).
func (f *benchFlags) observer() (bench.Observer, error) {
	switch *f.obsMode {
	case "off":
		if f.set["observe-sample"] || f.set["observe-programs"] {
			return nil, usageErrorf("--observe-sample and --observe-programs need --observe light or full")
		}
		return nil, nil
	case "light", "full":
		obs, err := benchObserver(*f.obsMode, float64(f.obsSample), *f.obsProgs)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		return obs, nil
	}
	return nil, usageErrorf("bench: --observe %q: want light, full or off", *f.obsMode)
}

// times parses the durations, the probe's TOS and the rate cap into o.
func (f *benchFlags) times(o *bench.Options) error {
	var err error
	if o.Duration, err = parseDurationFlag("t", *f.dur); err != nil {
		return err
	}
	if o.Omit, err = parseDurationFlag("omit", *f.omit); err != nil {
		return err
	}
	if o.Idle, err = parseDurationFlag("idle", *f.idle); err != nil {
		return err
	}
	if o.ProbeInterval, err = parseDurationFlag("probe-interval", *f.probeInt); err != nil {
		return err
	}
	if o.ProbeTOS, err = parseTOS(*f.tos); err != nil {
		return &UsageError{Err: err}
	}
	if *f.bitrate != "" {
		if o.RateMbit, err = parseRate(*f.bitrate); err != nil {
			return usageErrorf("--bitrate: %v", err)
		}
	}
	return nil
}

// variantsOrPeer checks what is measured: with --peer, the device --iface
// names and that no lab knob is given (no variants); in the lab, the lab
// configuration of each variant (one, "lab", without --variant).
func (f *benchFlags) variantsOrPeer(c *Command, env Env) ([]bench.Variant, error) {
	if *f.iface != "" {
		if *f.peer == "" {
			return nil, usageErrorf("bench: --iface samples a device on the way to --peer; the lab samples its own devices: give --peer or leave --iface out")
		}
		if err := checkIfaceExists(*f.iface); err != nil {
			return nil, err
		}
	}
	if *f.peer != "" {
		for _, k := range []string{"gro", "threaded", "sender-offloads", "rps", "rate", "qdisc", "pin-sender", "pin-receiver", "variant"} {
			if f.set[k] {
				return nil, usageErrorf("--%s is a lab knob; it does not apply with --peer", k)
			}
		}
		return nil, nil
	}
	base, err := f.knobs.config()
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	var vs []bench.Variant
	if len(f.variants) == 0 {
		vs = []bench.Variant{{Name: "lab", Lab: &base}}
	}
	for _, spec := range f.variants {
		v, err := parseVariant(c, env, spec, f.knobs)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// The parsers of bench's flag values.

// parseVariant parses "NAME: --gro on --threaded" with the lab flags; the
// lab flags given outside the variants are every variant's defaults.
func parseVariant(c *Command, env Env, spec string, outer *labFlags) (bench.Variant, error) {
	name, flags, ok := strings.Cut(spec, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return bench.Variant{}, usageErrorf("--variant %q: want 'NAME: lab flags', e.g. 'gro: --gro on'", spec)
	}
	fs := newFlagSet(c, env)
	knobs := addLabFlagsFrom(fs, *outer)
	pos, err := parseFlags(fs, strings.Fields(flags))
	if err != nil {
		return bench.Variant{}, usageErrorf("--variant %q: %v", spec, err)
	}
	if len(pos) > 0 {
		return bench.Variant{}, usageErrorf("--variant %q: unexpected %q", spec, pos[0])
	}
	cfg, err := knobs.config()
	if err != nil {
		return bench.Variant{}, usageErrorf("--variant %q: %v", spec, err)
	}
	return bench.Variant{Name: name, Lab: &cfg}, nil
}

var dscpNames = map[string]int{"ef": 46, "cs0": 0, "cs1": 8, "cs2": 16, "cs3": 24, "cs4": 32, "cs5": 40, "cs6": 48, "cs7": 56,
	"af11": 10, "af12": 12, "af13": 14, "af21": 18, "af22": 20, "af23": 22, "af31": 26, "af32": 28, "af33": 30,
	"af41": 34, "af42": 36, "af43": 38, "le": 1}

// parseTOS takes a TOS byte (decimal or 0x hex) or a DSCP name.
func parseTOS(s string) (int, error) {
	if d, ok := dscpNames[strings.ToLower(s)]; ok {
		return d << 2, nil
	}
	v, err := strconv.ParseInt(s, 0, 32)
	if err != nil || v < 0 || v > 255 {
		return 0, fmt.Errorf("--tos %q: want a TOS byte 0-255 (0xb8 = DSCP EF) or a DSCP name (ef, cs1, af41, ...)", s)
	}
	return int(v), nil
}
