// SPDX-License-Identifier: Apache-2.0

// Command dispatch measures what the kernel costs per event to run a BPF
// program on a tracepoint, apart from the program's own time (which
// kernel.bpf_stats_enabled measures): the classic tracepoint builds a trace
// record in a per-CPU buffer and runs the program on it; the raw one
// (tp_btf) calls the program with the arguments. It attaches an empty
// program (r0 = 0; exit) to task:task_rename either way and times a tight
// loop of prctl(PR_SET_NAME) calls, which fire it, against the same loop
// with nothing attached, in rounds with the three modes interleaved and
// rotated; and the perf event of sampled observe's gaps, open with no
// program. (Not a syscall tracepoint: enabling those moves every system
// call onto the slow entry path, a cost of its own.)
//
//	cd experiments && go run ./selfbench/dispatch [-rounds 10] [-calls 2000000] [-o FILE]
//
// task_rename's record copies two 16-byte names, like the network events'
// device name (netif_receive_skb, napi_poll), but it is not theirs: this
// gives the order of the classic record's cost, not each event's. Needs
// root and kernel BTF.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

type result struct {
	When   string               `json:"when"`
	Kernel string               `json:"kernel"`
	Calls  int                  `json:"calls_per_round"`
	Rounds int                  `json:"rounds"`
	Order  [][]string           `json:"order"`       // modes per round, in run order
	NsCall map[string][]float64 `json:"ns_per_call"` // per mode, per round
}

// modes: nothing attached; the classic program; the raw one; and what
// sampled observation leaves between windows - the tracepoint's perf
// event open (disabled) with no program linked, so its probe stays
// registered and returns at once.
var modes = []string{"none", "classic", "raw", "perf-idle"}

func main() {
	rounds := flag.Int("rounds", 10, "rounds (each times every mode once)")
	calls := flag.Int("calls", 2000000, "prctl(PR_SET_NAME) calls per mode per round")
	out := flag.String("o", "-", "JSON output file ('-': stdout)")
	flag.Parse()
	if *rounds < 2 || *calls < 1000 {
		fmt.Fprintln(os.Stderr, "dispatch: want -rounds >= 2 and -calls >= 1000")
		os.Exit(2)
	}
	if err := run(*rounds, *calls, *out); err != nil {
		fmt.Fprintln(os.Stderr, "dispatch:", err)
		os.Exit(1)
	}
}

func run(rounds, calls int, out string) error {
	if err := rlimit.RemoveMemlock(); err != nil {
		return err
	}
	empty := asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}
	classic, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.TracePoint, Instructions: empty, License: "GPL"})
	if err != nil {
		return fmt.Errorf("loading the classic program: %w", err)
	}
	defer classic.Close()
	raw, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp,
		AttachTo: "task_rename", Instructions: empty, License: "GPL"})
	if err != nil {
		return fmt.Errorf("loading the raw program (needs kernel BTF): %w", err)
	}
	defer raw.Close()
	attach := map[string]func() (io.Closer, error){
		"none":    func() (io.Closer, error) { return nil, nil },
		"classic": func() (io.Closer, error) { return link.Tracepoint("task", "task_rename", classic, nil) },
		"raw": func() (io.Closer, error) {
			return link.AttachTracing(link.TracingOptions{Program: raw, AttachType: ebpf.AttachTraceRawTp})
		},
		"perf-idle": openIdlePerfEvent,
	}
	var uts unix.Utsname
	unix.Uname(&uts)
	res := result{When: time.Now().UTC().Format(time.RFC3339), Kernel: unix.ByteSliceToString(uts.Release[:]),
		Calls: calls, Rounds: rounds, NsCall: map[string][]float64{}}
	runtime.LockOSThread()
	for r := 0; r < rounds; r++ {
		order := append(append([]string(nil), modes[r%len(modes):]...), modes[:r%len(modes)]...)
		res.Order = append(res.Order, order)
		for _, m := range order {
			l, err := attach[m]()
			if err != nil {
				return fmt.Errorf("attaching %s: %w", m, err)
			}
			loop(calls / 10) // warm up
			t0 := time.Now()
			loop(calls)
			ns := float64(time.Since(t0).Nanoseconds()) / float64(calls)
			if l != nil {
				l.Close()
			}
			res.NsCall[m] = append(res.NsCall[m], ns)
			fmt.Fprintf(os.Stderr, "dispatch: round %d/%d %-7s %.1f ns per call\n", r+1, rounds, m, ns)
		}
	}
	for _, m := range modes[1:] {
		var d []float64
		for i := range res.NsCall[m] {
			d = append(d, res.NsCall[m][i]-res.NsCall["none"][i])
		}
		sort.Float64s(d)
		fmt.Fprintf(os.Stderr, "dispatch: %s adds %.1f ns per event (median of %d rounds, range %.1f .. %.1f)\n",
			m, d[len(d)/2], len(d), d[0], d[len(d)-1])
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if out == "-" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

// openIdlePerfEvent opens task_rename's perf event disabled, as sampled
// observe keeps it between windows; closing the returned link closes it.
func openIdlePerfEvent() (io.Closer, error) {
	b, err := os.ReadFile("/sys/kernel/tracing/events/task/task_rename/id")
	if err != nil {
		return nil, err
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return nil, err
	}
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_TRACEPOINT, Config: id, Sample_type: unix.PERF_SAMPLE_RAW,
		Sample: 1, Wakeup: 1, Bits: unix.PerfBitDisabled}
	fd, err := unix.PerfEventOpen(&attr, -1, 0, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("perf_event_open: %w", err)
	}
	return fdCloser(fd), nil
}

// fdCloser closes a file descriptor.
type fdCloser int

func (f fdCloser) Close() error { return unix.Close(int(f)) }

var name = []byte("ws-dispatch\x00")

func loop(n int) {
	p := uintptr(unsafe.Pointer(&name[0]))
	for i := 0; i < n; i++ {
		unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_NAME, p, 0)
	}
}
