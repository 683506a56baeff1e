// SPDX-License-Identifier: Apache-2.0

// Command scrapeload measures what `wirespeed exporter` costs per scrape
// and how long scrapes take when many come at once. For each binary given
// (-bin 'NAME=PATH [ARGS]', several to compare, interleaved over -rounds),
// it starts `PATH exporter` on a free loopback port with -args (default
// --observe off: the observation's own cost is measured by the bench part
// of make self-bench) and the binary's own ARGS, then:
//   - idle: the exporter's CPU over -idle with no scrape;
//   - serial: -scrapes scrapes one after another: CPU per scrape (the idle
//     rate subtracted) and wall time per scrape;
//   - concurrent: -scrapers clients scraping back to back for -duration:
//     latency per scrape and the exporter's CPU over the phase.
//
// CPU is the sum over the exporter's threads of /proc/PID/task/*/schedstat
// (ns on CPU), with /proc/PID/stat's utime+stime (clock ticks) kept beside
// it for the serial phase. The JSON goes to -o.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type binFlag []string

func (b *binFlag) String() string     { return strings.Join(*b, ",") }
func (b *binFlag) Set(s string) error { *b = append(*b, s); return nil }

// Result is the file scrapeload writes.
type Result struct {
	Schema   string    `json:"schema"`
	Started  time.Time `json:"started"`
	Scrapes  int       `json:"serial_scrapes"`
	Scrapers int       `json:"scrapers"`
	Duration float64   `json:"concurrent_seconds"`
	Args     []string  `json:"exporter_args"`
	Runs     []Run     `json:"runs"`
}

// Run is one binary in one round.
type Run struct {
	Name  string `json:"name"`
	Round int    `json:"round"`
	// IdleCPUNsPerSec is the exporter's CPU with no scrape.
	IdleCPUNsPerSec float64 `json:"idle_cpu_ns_per_s"`
	// Serial scrapes: per scrape, the CPU (idle rate subtracted) and wall.
	SerialCPUNs     []int64   `json:"serial_cpu_ns"`
	SerialWallMs    []float64 `json:"serial_wall_ms"`
	SerialCPUTicks  int64     `json:"serial_cpu_ticks"`
	SerialTotalCPU  int64     `json:"serial_total_cpu_ns"`
	SerialTotalWall float64   `json:"serial_total_wall_s"`
	// Concurrent scrapes: latency of each, in the order they ended.
	ConcLatencyMs []float64 `json:"concurrent_latency_ms"`
	ConcCPUNs     int64     `json:"concurrent_cpu_ns"`
	ConcWallS     float64   `json:"concurrent_wall_s"`
	ConcErrors    int       `json:"concurrent_errors"`
	MetricsBytes  int       `json:"metrics_bytes"`
}

func main() {
	var bins binFlag
	flag.Var(&bins, "bin", "'NAME=PATH [ARGS]' of a wirespeed binary and its own exporter arguments (repeat to compare, interleaved)")
	rounds := flag.Int("rounds", 2, "rounds; each runs every binary once, order rotated")
	scrapes := flag.Int("scrapes", 200, "serial scrapes per run (100 or more)")
	scrapers := flag.Int("scrapers", 20, "concurrent scrapers")
	dur := flag.Duration("duration", 10*time.Second, "concurrent phase length")
	idle := flag.Duration("idle", 3*time.Second, "idle phase length")
	out := flag.String("o", "", "write the JSON here (default stdout)")
	extra := flag.String("args", "--observe off", "exporter arguments after --listen")
	flag.Parse()
	if len(bins) == 0 {
		fail("give at least one -bin NAME=PATH")
	}
	if *scrapes < 100 || *scrapers < 1 || *rounds < 1 {
		fail("-scrapes must be 100 or more, -scrapers and -rounds 1 or more")
	}
	res := Result{Schema: "wirespeed.scrapeload/v1", Started: time.Now().UTC(), Scrapes: *scrapes,
		Scrapers: *scrapers, Duration: dur.Seconds(), Args: strings.Fields(*extra)}
	for r := 0; r < *rounds; r++ {
		for i := range bins {
			nb := bins[(i+r)%len(bins)]
			name, path, ok := strings.Cut(nb, "=")
			if !ok {
				fail("-bin %q: want NAME=PATH", nb)
			}
			fmt.Fprintf(os.Stderr, "scrapeload: round %d/%d, %s\n", r+1, *rounds, name)
			path, own, _ := strings.Cut(path, " ")
			run, err := measure(name, path, append(res.Args, strings.Fields(own)...), *scrapes, *scrapers, *dur, *idle)
			if err != nil {
				fail("%s: %v", name, err)
			}
			run.Round = r
			res.Runs = append(res.Runs, run)
		}
	}
	b, _ := json.MarshalIndent(res, "", " ")
	b = append(b, '\n')
	if *out == "" {
		os.Stdout.Write(b)
		return
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fail("%v", err)
	}
}

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "scrapeload: "+f+"\n", a...)
	os.Exit(1)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// cpuNs sums the exporter's threads' time on CPU (schedstat, ns).
func cpuNs(pid int) (int64, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no schedstat for pid %d (a kernel without CONFIG_SCHED_INFO?)", pid)
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			sum += n
		}
	}
	return sum, nil
}

// ticks is utime+stime from /proc/PID/stat.
func ticks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

func get(c *http.Client, url string) (int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", url, resp.Status)
	}
	return int(n), err
}

// measure runs one binary's exporter on a free loopback port and takes
// its three phases - idle, serial, concurrent - one after the other.
func measure(name, path string, args []string, scrapes, scrapers int, dur, idle time.Duration) (Run, error) {
	run := Run{Name: name}
	addr, err := freePort()
	if err != nil {
		return run, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd, err := startExporter(ctx, path, addr, args)
	if err != nil {
		return run, err
	}
	defer func() { cancel(); cmd.Wait() }()
	pid := cmd.Process.Pid
	url := "http://" + addr + "/metrics"
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: scrapers + 1}}
	if err := waitServing(client, addr); err != nil {
		return run, err
	}
	for i := 0; i < 5; i++ { // warm-up: the first full snapshot, the IRQ probes
		if run.MetricsBytes, err = get(client, url); err != nil {
			return run, err
		}
	}
	if err := measureIdle(&run, pid, idle); err != nil {
		return run, err
	}
	if err := measureSerial(&run, client, url, pid, scrapes); err != nil {
		return run, err
	}
	measureConcurrent(&run, client, url, pid, scrapers, dur)
	return run, nil
}

// startExporter starts `path exporter --listen addr args...`; cancelling
// ctx sends it SIGTERM (SIGKILL 10 s later).
func startExporter(ctx context.Context, path, addr string, args []string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, path, append([]string{"exporter", "--listen", addr}, args...)...)
	cmd.Stderr = os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// waitServing polls the exporter's / every 100 ms until it answers, for
// at most 20 s.
func waitServing(client *http.Client, addr string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := get(client, "http://"+addr+"/"); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the exporter did not serve on %s within 20 s", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// measureIdle: the exporter's CPU rate over idle, with no scrape.
func measureIdle(run *Run, pid int, idle time.Duration) error {
	c0, err := cpuNs(pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	time.Sleep(idle)
	c1, _ := cpuNs(pid)
	run.IdleCPUNsPerSec = float64(c1-c0) / time.Since(t0).Seconds()
	return nil
}

// measureSerial: scrapes scrapes one after another, each one's wall time
// and CPU (the idle rate over its wall time subtracted), and the totals.
func measureSerial(run *Run, client *http.Client, url string, pid, scrapes int) error {
	k0 := ticks(pid)
	s0, _ := cpuNs(pid)
	start := time.Now()
	for i := 0; i < scrapes; i++ {
		a, _ := cpuNs(pid)
		w := time.Now()
		if _, err := get(client, url); err != nil {
			return err
		}
		el := time.Since(w)
		b, _ := cpuNs(pid)
		run.SerialWallMs = append(run.SerialWallMs, float64(el.Microseconds())/1000)
		run.SerialCPUNs = append(run.SerialCPUNs, b-a-int64(run.IdleCPUNsPerSec*el.Seconds()))
	}
	run.SerialTotalWall = time.Since(start).Seconds()
	s1, _ := cpuNs(pid)
	run.SerialTotalCPU = s1 - s0
	run.SerialCPUTicks = ticks(pid) - k0
	return nil
}

// measureConcurrent: scrapers clients scrape back to back for dur; each
// scrape's latency (or an error count) and the exporter's CPU over the
// phase.
func measureConcurrent(run *Run, client *http.Client, url string, pid, scrapers int, dur time.Duration) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	cc0, _ := cpuNs(pid)
	cstart := time.Now()
	stop := cstart.Add(dur)
	for i := 0; i < scrapers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				w := time.Now()
				_, err := get(client, url)
				ms := float64(time.Since(w).Microseconds()) / 1000
				mu.Lock()
				if err != nil {
					run.ConcErrors++
				} else {
					run.ConcLatencyMs = append(run.ConcLatencyMs, ms)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	run.ConcWallS = time.Since(cstart).Seconds()
	cc1, _ := cpuNs(pid)
	run.ConcCPUNs = cc1 - cc0
}
