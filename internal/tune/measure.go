// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/selfexe"
)

// VerifyMeasurer runs the user's command with sh -c and reads its output
// with ParseVerifyOutput; a bare number is the goal metric.
func VerifyMeasurer(cmd, goal string, timeout time.Duration) Measurer {
	return func(ctx context.Context) (Metrics, error) {
		tctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		c, err := groupCommand(tctx, "sh", "-c", cmd)
		if err != nil {
			return nil, err
		}
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("verify command %q did not finish within %s: killed with everything it started; make it shorter or give a longer --verify-timeout", cmd, timeout)
		}
		if err != nil {
			return nil, fmt.Errorf("verify command %q: %w: %s", cmd, err, strings.TrimSpace(stderr.String()))
		}
		return ParseVerifyOutput(out, goal)
	}
}

// Bench is one measurement with 'wirespeed bench --peer'.
type Bench struct {
	Prefix    []string // run bench under this command (ip netns exec NS), or nothing
	Peer      string   // the iperf3 server, ADDR[:PORT]
	Duration  string   // bench -t
	Direction string   // bench.DirSend or bench.DirReceive
	Streams   int      // bench -P
	Extra     []string // the user's bench flags, checked by CheckBenchArgs
}

// benchOwned are the bench flags Bench sets itself: CheckBenchArgs refuses
// them in the user's extra flags, or a measurement would not be the one the
// loop reads.
var benchOwned = map[string]bool{"peer": true, "t": true, "time": true, "omit": true, "idle": true,
	"observe": true, "no-inspect": true, "out": true, "json": true, "direction": true, "P": true, "repeat": true}

// CheckBenchArgs refuses extra bench flags that name a flag Bench owns or
// that are not flags at all.
func CheckBenchArgs(args []string) error {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			if i == 0 || strings.Contains(args[i-1], "=") || !strings.HasPrefix(args[i-1], "-") {
				return fmt.Errorf("%q is not a flag", a)
			}
			continue
		}
		name := strings.TrimLeft(a, "-")
		if k := strings.IndexByte(name, '='); k >= 0 {
			name = name[:k]
		}
		if benchOwned[name] {
			return fmt.Errorf("-%s is set by tune apply itself (use tune apply's own flags)", name)
		}
	}
	return nil
}

// argv is the command line of one measurement: bench (the binary self)
// against the peer for the duration, in the direction, with the streams,
// then the user's extra flags (checked by CheckBenchArgs not to override
// these).
func (b Bench) argv(self string) []string {
	argv := append(append([]string{}, b.Prefix...), self, "bench", "--peer", b.Peer, "-t", b.Duration, "--omit", "1s",
		"--idle", "0s", "--observe", "off", "--no-inspect", "--out", "-", "--json", "--direction", b.Direction,
		"-P", strconv.Itoa(b.Streams))
	return append(argv, b.Extra...)
}

// Measurer runs the bench and takes throughput, loaded p99 and CPU per
// Mbit from its result.
func (b Bench) Measurer() Measurer {
	return func(ctx context.Context) (Metrics, error) {
		self, err := selfexe.Path()
		if err != nil {
			return nil, err
		}
		argv := b.argv(self)
		var out []byte
		for try := 0; ; try++ {
			c, err := groupCommand(ctx, argv...)
			if err != nil {
				return nil, err
			}
			var stderr bytes.Buffer
			c.Stderr = &stderr
			out, err = c.Output()
			if err == nil {
				break
			}
			// iperf3 -s now and then resets a connection that comes right
			// after bench's server check: try again, up to three times.
			if try == 2 || ctx.Err() != nil {
				return nil, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
			}
			time.Sleep(time.Duration(try+1) * time.Second)
		}
		r, err := bench.Decode(out, "bench")
		if err != nil {
			return nil, err
		}
		if len(r.Runs) == 0 {
			return nil, fmt.Errorf("bench measured nothing")
		}
		return benchMetrics(&r.Runs[0], b.Direction), nil
	}
}

// benchMetrics takes tune's metrics from one bench run in direction dir:
// its throughput, loaded p99 (UDP probe, else ICMP) and CPU per Mbit as
// bench defines it (bench.CPUMsPerMbit), so tune's cpu goal and bench's
// headline are the same number.
func benchMetrics(run *bench.Run, dir string) Metrics {
	m := Metrics{}
	mbit, ok := run.Metrics[dir+"_mbit"]
	if !ok {
		return m
	}
	m[MetricThroughput] = mbit
	for _, k := range []string{"udp_load_p99_ms", "icmp_load_p99_ms"} {
		if v, ok := run.Metrics[k]; ok {
			m[MetricLatencyP99] = v
			break
		}
	}
	if busy, ok := run.BusyCPUs(); ok && mbit > 0 {
		m[MetricCPU] = bench.CPUMsPerMbit(busy, mbit)
	}
	return m
}

// GroupCommandName is the hidden wirespeed command groupCommand runs: a
// supervisor that leads a process group of its own, runs argv in it, and
// kills the whole group when the process that started it dies (the CLI
// registers it).
//
// PR_SET_PDEATHSIG alone does not do this: it reaches only the direct child
// (sh for --verify-cmd, bench for --peer), and the kernel clears it in that
// child's own children (the load the shell started, iperf3), which then run
// on as orphans after a kill -9 of tune. The supervisor gets SIGTERM when
// its parent dies, and SIGTERM can be caught: it answers with SIGKILL to
// the group - itself, the command and everything the command started.
const GroupCommandName = "__group"

// groupCommand returns a command that runs argv in a process group of its
// own, led by the supervisor: when this process dies, even by SIGKILL, the
// whole group is killed; when ctx ends, the group is killed.
func groupCommand(ctx context.Context, argv ...string) (*exec.Cmd, error) {
	self, err := selfexe.Path()
	if err != nil {
		return nil, fmt.Errorf("cannot supervise %s: %w", argv[0], err)
	}
	cmd := exec.CommandContext(ctx, self, append([]string{GroupCommandName, strconv.Itoa(os.Getpid()), "--"}, argv...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 3 * time.Second
	return cmd, nil
}
