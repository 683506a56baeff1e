// SPDX-License-Identifier: Apache-2.0

// Command canary measures how fast this host runs a fixed piece of work
// right now, to tell the host's speed apart from the lab's: self-bench runs
// it just before and just after each full-rate bench run, and the summary
// correlates bench's throughput with it (issue 20).
//
// It runs two single-threaded loops, one after the other, and prints one
// JSON object:
//
//   - hash: SHA-256 over a fixed 64 KiB buffer for -t (default 1 s);
//     iterations_per_s is buffers hashed per wall-clock second,
//     iterations_per_cpu_s per second of this process's CPU time (the two
//     differ when something else took the CPU away);
//   - copy: copying a 32 MiB buffer (bigger than this VM's caches) into
//     another for -copy (default 0.5 s, 0 skips it): memory bandwidth,
//     copy_mbyte_per_s.
//
// steal_ticks is the host's steal time (all CPUs, USER_HZ ticks from
// /proc/stat) while it ran.
package main

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Report is what canary prints.
type Report struct {
	Time              float64 `json:"time"` // Unix seconds at the start
	HashBufferBytes   int     `json:"hash_buffer_bytes"`
	HashSeconds       float64 `json:"hash_s"`
	Iterations        int     `json:"iterations"`
	IterationsPerS    float64 `json:"iterations_per_s"`
	IterationsPerCPUS float64 `json:"iterations_per_cpu_s"`
	CopyBufferBytes   int     `json:"copy_buffer_bytes,omitempty"`
	CopySeconds       float64 `json:"copy_s,omitempty"`
	CopyMbytePerS     float64 `json:"copy_mbyte_per_s,omitempty"`
	StealTicks        int64   `json:"steal_ticks"` // -1: /proc/stat unreadable
}

const (
	hashBuf = 64 << 10
	copyBuf = 32 << 20
)

func main() {
	hashFor := flag.Duration("t", time.Second, "how long to hash")
	copyFor := flag.Duration("copy", 500*time.Millisecond, "how long to copy memory (0: skip)")
	flag.Parse()
	if flag.NArg() > 0 || *hashFor <= 0 || *hashFor > time.Minute || *copyFor < 0 || *copyFor > time.Minute {
		fmt.Fprintln(os.Stderr, "usage: canary [-t DURATION] [-copy DURATION] (0 < t <= 1m, 0 <= copy <= 1m)")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	r := Report{Time: float64(time.Now().UnixNano()) / 1e9, HashBufferBytes: hashBuf}
	steal0 := steal()

	buf := make([]byte, hashBuf)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	cpu0 := cpuSeconds()
	start := time.Now()
	var sum [32]byte
	for time.Since(start) < *hashFor {
		for range 16 { // check the clock every 16 buffers (~1 MiB)
			sum = sha256.Sum256(buf)
			buf[0] = sum[0] // a chain: no iteration can be skipped
			r.Iterations++
		}
	}
	r.HashSeconds = time.Since(start).Seconds()
	cpu := cpuSeconds() - cpu0
	r.IterationsPerS = float64(r.Iterations) / r.HashSeconds
	if cpu > 0 {
		r.IterationsPerCPUS = float64(r.Iterations) / cpu
	}

	if *copyFor > 0 {
		src := make([]byte, copyBuf)
		dst := make([]byte, copyBuf)
		for i := range src {
			src[i] = byte(i)
		}
		copy(dst, src) // fault the pages in before timing
		n := 0
		start = time.Now()
		for time.Since(start) < *copyFor {
			copy(dst, src)
			src[n%copyBuf] = dst[(n+1)%copyBuf]
			n++
		}
		r.CopySeconds = time.Since(start).Seconds()
		r.CopyBufferBytes = copyBuf
		r.CopyMbytePerS = float64(n) * copyBuf / 1e6 / r.CopySeconds
	}

	r.StealTicks = -1
	if s0, s1 := steal0, steal(); s0 >= 0 && s1 >= 0 {
		r.StealTicks = s1 - s0
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fmt.Fprintln(os.Stderr, "canary:", err)
		os.Exit(1)
	}
}

// cpuSeconds is this process's user + system time.
func cpuSeconds() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(u.Utime) + tv(u.Stime)
}

// steal is the aggregate steal time in /proc/stat (the 9th field of the
// "cpu" line), or -1.
func steal() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return -1
	}
	v, err := strconv.ParseInt(f[8], 10, 64)
	if err != nil {
		return -1
	}
	return v
}
