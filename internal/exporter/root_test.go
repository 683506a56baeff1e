// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/observe"
	"github.com/wirespeed/wirespeed/internal/testnet"
)

// binary: `ip netns exec` and the signal and not-root tests need a
// process of its own.
func binary(t *testing.T) string { return testnet.Binary(t) }

// freePort returns a loopback address nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startExporter runs the binary with args (prefix: a command to run it
// under, such as ip netns exec) and waits until it says it serves.
func startExporter(t *testing.T, prefix []string, cred *syscall.Credential, args ...string) (*exec.Cmd, *lockedBuffer, chan struct{}) {
	t.Helper()
	argv := append(append(append([]string{}, prefix...), binary(t), "exporter"), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "serving http") { // http:// or https://
		select {
		case <-exited:
			t.Fatalf("exporter %v exited before serving: %s", args, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("exporter %v did not start serving: %s", args, out.String())
		}
	}
	return cmd, out, exited
}

// get fetches /metrics over conn-less HTTP/1.0 from addr; dial, when set,
// opens the connection (in another network namespace).
func get(addr string, dial func() (net.Conn, error)) (string, error) {
	if dial == nil {
		dial = func() (net.Conn, error) { return net.Dial("tcp", addr) }
	}
	c, err := dial()
	if err != nil {
		return "", err
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /metrics HTTP/1.0\r\nHost: %s\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	return string(b), nil
}

// TestPrometheusScrapesExporter runs Debian's prometheus server against the
// exporter on loopback and asks its HTTP API for the series.
func TestPrometheusScrapesExporter(t *testing.T) {
	testnet.NeedRoot(t)
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("needs Debian's prometheus server (apt-get install --no-install-recommends prometheus, or make setup)")
	}
	target := freePort(t)
	_, _, _ = startExporter(t, nil, nil, "--listen", target, "--interval", "1", "--observe-sample", "20%")

	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n%sscrape_configs:\n  - job_name: wirespeed\n    static_configs:\n      - targets: ['%s']\n", rulesConfig(t), target)
	web, plog := startPrometheus(t, prom, cfg)
	query := func(q string) ([]map[string]any, error) { return promAPIQuery(web, q) }
	// Each query must return series once prometheus has scraped enough
	// (the observation folds in every second; a rate needs two scrapes).
	queries := []string{
		`up{job="wirespeed"} == 1`,
		`wirespeed_device_info{device="lo",driver="loopback"}`,
		`wirespeed_device_rx_path_info{device="lo"}`,
		`wirespeed_softnet_times_squeezed_total`,
		`wirespeed_collector_up{collector="observe"} == 1`,
		`wirespeed_collector_up{collector="inspect"} == 1`,
		`wirespeed_observe_attached_seconds_total > 0`,
		`rate(wirespeed_softirqs_total{type="NET_RX"}[10s])`,
		`wirespeed_doctor_rules`,
	}
	deadline := time.Now().Add(90 * time.Second)
	for _, q := range queries {
		for {
			res, err := query(q)
			if err == nil && len(res) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("prometheus has no series for %s (err %v)\nprometheus log:\n%s", q, err, lastLines(plog.String(), 15))
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	checkRulesEvaluate(t, web) // the alert rules run on the real series (rules_test.go)
	// Every query of the Grafana dashboard is one Prometheus accepts and
	// evaluates (label_values is Grafana's, not PromQL).
	for f, qs := range dashboardQueries(t) {
		for _, q := range qs {
			if strings.HasPrefix(q, "label_values(") {
				continue
			}
			if _, err := query(promQuery(q)); err != nil {
				t.Errorf("%s: prometheus refuses %q: %v", f, promQuery(q), err)
			}
		}
	}
}

// startPrometheus runs prom with the configuration cfg until the test
// ends: its web address and its log.
func startPrometheus(t *testing.T, prom, cfg string) (string, *lockedBuffer) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	web := freePort(t)
	pcmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+web,
		"--log.level=debug") // a failed scrape's error is logged at debug level
	plog := &lockedBuffer{}
	pcmd.Stdout, pcmd.Stderr = plog, plog
	if err := pcmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pcmd.Process.Signal(syscall.SIGTERM)
		pcmd.Wait()
	})
	return web, plog
}

// promAPIQuery asks the Prometheus at web for q's instant vector.
func promAPIQuery(web, q string) ([]map[string]any, error) {
	resp, err := http.Get("http://" + web + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []map[string]any `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, r.Error)
	}
	return r.Data.Result, nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// TestDevicesComeAndGo runs the exporter inside a fresh namespace and
// creates and deletes a veth pair there between scrapes: the device's
// series appear and disappear and the exporter keeps serving. A scraper
// hammers it meanwhile, so scrapes also race the changes.
func TestDevicesComeAndGo(t *testing.T) {
	testnet.NeedRoot(t)
	ns := testnet.New(t)
	ns.Run(t, "ip", "link", "set", "lo", "up")
	addr := freePort(t) // free here; the namespace has no sockets yet
	_, out, exited := startExporter(t, []string{"ip", "netns", "exec", ns.Name}, nil, "--listen", addr, "--observe", "off")
	dial := func() (c net.Conn, err error) {
		ns.Do(t, func() { c, err = net.Dial("tcp", addr) })
		return c, err
	}
	scrapeNS := func() string {
		t.Helper()
		m, err := get(addr, dial)
		if err != nil {
			t.Fatalf("scrape in %s: %v\nexporter: %s", ns.Name, err, out.String())
		}
		return m
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var hammerErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var c net.Conn
			var err error
			// ns.Do needs t only for a failure to switch namespaces.
			ns.Do(t, func() { c, err = net.Dial("tcp", addr) })
			if err == nil {
				_, err = get(addr, func() (net.Conn, error) { return c, nil })
			}
			if err != nil {
				hammerErr = err
				return
			}
		}
	}()
	a, b := testnet.VethNames(t)
	info := func(dev string) string {
		return fmt.Sprintf(`wirespeed_device_info{bus="virtual",device=%q,driver="veth"} 1`, dev)
	}
	for round := 0; round < 3; round++ {
		if m := scrapeNS(); strings.Contains(m, `device="`+a+`"`) {
			t.Fatalf("round %d: %s exported before it exists", round, a)
		}
		ns.AddVeth(t)
		ns.Run(t, "ethtool", "-K", a, "gro", "on") // a NAPI for a
		ns.Run(t, "sh", "-c", "echo 1 > /sys/class/net/"+a+"/threaded")
		m := scrapeNS()
		for _, want := range []string{info(a), info(b), `wirespeed_device_offload_enabled{device="` + a + `",feature="rx-gro"} 1`,
			`wirespeed_device_napis{device="` + a + `"} 1`, `wirespeed_device_napi_threaded{device="` + a + `"} 1`,
			`wirespeed_device_napi_threaded{device="` + b + `"} 0`,
			`wirespeed_napi_thread_cpu{device="` + a + `",pid="`,
			`wirespeed_napi_thread_cpu_seconds_total{device="` + a + `",mode="system",pid="`,
			`wirespeed_device_rx_path_info{device="` + a + `",path="NAPI + GRO (threaded)"} 1`} {
			if !strings.Contains(m, want) {
				t.Errorf("round %d: after adding the veth pair the scrape lacks %s", round, want)
			}
		}
		// the knob read through the descriptor kept from the last scrape
		ns.Run(t, "sh", "-c", "echo 0 > /sys/class/net/"+a+"/threaded")
		if m := scrapeNS(); !strings.Contains(m, `wirespeed_device_napi_threaded{device="`+a+`"} 0`) {
			t.Errorf("round %d: threaded switched off, the scrape still says on", round)
		}
		ns.Run(t, "ip", "link", "del", a)
		if m := scrapeNS(); strings.Contains(m, `device="`+a+`"`) || strings.Contains(m, `device="`+b+`"`) {
			t.Errorf("round %d: the deleted veth pair is still exported", round)
		}
	}
	close(stop)
	wg.Wait()
	if hammerErr != nil {
		t.Errorf("a concurrent scrape failed: %v", hammerErr)
	}
	select {
	case <-exited:
		t.Fatalf("exporter exited: %s", out.String())
	default:
	}
}

// TestNotRootServesWhatItCan runs the exporter as nobody: no eBPF, but the
// rest is served, and the metric and the log say what is missing.
func TestNotRootServesWhatItCan(t *testing.T) {
	testnet.NeedRoot(t) // to become nobody
	addr := freePort(t)
	_, out, _ := startExporter(t, nil, &syscall.Credential{Uid: 65534, Gid: 65534}, "--listen", addr)
	m, err := get(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`wirespeed_collector_up{collector="observe"} 0`,
		`wirespeed_collector_up{collector="inspect"} 1`,
		`wirespeed_collector_up{collector="softnet"} 1`,
		`wirespeed_device_info{bus="virtual",device="lo",driver="loopback"} 1`,
		`wirespeed_softnet_processed_total{cpu="0"}`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("as nobody the scrape lacks %s", want)
		}
	}
	if strings.Contains(m, "wirespeed_gro_coalescing_ratio") {
		t.Errorf("as nobody a GRO ratio is exported")
	}
	if log := out.String(); !strings.Contains(log, "collector observe") || !strings.Contains(log, "root") {
		t.Errorf("the log does not say the observation needs root:\n%s", log)
	}
}

// TestSIGTERMLeavesNothingAttached stops a root exporter with SIGTERM and
// checks that bpftool lists none of the programs it had loaded.
func TestSIGTERMLeavesNothingAttached(t *testing.T) {
	testnet.NeedRoot(t)
	if _, err := exec.LookPath("bpftool"); err != nil {
		t.Skip("needs bpftool (apt-get install bpftool, or make setup)")
	}
	addr := freePort(t)
	cmd, out, exited := startExporter(t, nil, nil, "--listen", addr, "--observe-sample", "20%", "--interval", "1")
	var progs []uint64
	deadline := time.Now().Add(20 * time.Second)
	for len(progs) == 0 && time.Now().Before(deadline) {
		progs = progIDs(cmd.Process.Pid)
		time.Sleep(100 * time.Millisecond)
	}
	if len(progs) == 0 {
		t.Fatalf("no BPF programs among the exporter's fds: %s", out.String())
	}
	if _, err := get(addr, nil); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("exporter did not stop on SIGTERM: %s", out.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0: %s", code, out.String())
	}
	if !strings.Contains(out.String(), "stopped; nothing left attached") {
		t.Errorf("no clean-stop line in the log: %s", out.String())
	}
	bt, err := exec.Command("bpftool", "prog", "show").CombinedOutput()
	if err != nil {
		t.Fatalf("bpftool prog show: %v: %s", err, bt)
	}
	for _, id := range progs {
		if bytes.HasPrefix(bt, []byte(fmt.Sprintf("%d: ", id))) || bytes.Contains(bt, []byte(fmt.Sprintf("\n%d: ", id))) {
			t.Errorf("bpftool still lists program %d after the exporter exited", id)
		}
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Errorf("%s still accepts connections", addr)
	}
}

// progIDs reads the prog_id of a process's BPF program fds.
func progIDs(pid int) []uint64 {
	var ids []uint64
	infos, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fdinfo/*", pid))
	for _, p := range infos {
		b, err := os.ReadFile(p)
		if err != nil || bytes.Contains(b, []byte("link_type")) {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "prog_id:"); ok {
				if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
					ids = append(ids, n)
				}
			}
		}
	}
	return ids
}

// TestObservationInProcess runs the exporter in this process with the
// observation on, drives traffic over a veth pair with GRO, and checks
// that the observed series for that device appear.
func TestObservationInProcess(t *testing.T) {
	testnet.NeedRoot(t)
	ns, peer := testnet.New(t), testnet.New(t)
	a, b := ns.AddVeth(t)
	ns.Run(t, "ip", "link", "set", b, "netns", peer.Name)
	ns.Run(t, "ip", "addr", "add", "198.18.0.1/30", "dev", a)
	peer.Run(t, "ip", "addr", "add", "198.18.0.2/30", "dev", b)
	peer.Run(t, "ip", "link", "set", b, "up")
	// veth then receives through a NAPI with GRO (for packets from a
	// sender without TSO: veth_skb_is_eligible_for_gro).
	peer.Run(t, "ethtool", "-K", b, "gro", "on")
	ns.Run(t, "ethtool", "-K", a, "tso", "off", "gso", "off")
	ctx, cancel := context.WithCancel(context.Background())
	e := New(ctx, Options{Observe: &observe.Options{Light: true, Sample: 0.5}, Interval: time.Second})
	defer func() { cancel(); e.Wait() }()
	if e.colls.observe.obs == nil {
		t.Fatalf("observation did not start: %v", e.colls.observe.err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ns.Run(t, "ping", "-c", "20", "-i", "0.01", "-q", "198.18.0.2")
		m := scrape(t, e)
		if strings.Contains(m, `wirespeed_rx_delivered_skbs_observed_total{device="`+b+`"}`) &&
			strings.Contains(m, `wirespeed_gro_coalescing_ratio{device="`+b+`"}`) {
			for _, want := range []string{
				`wirespeed_collector_up{collector="observe"} 1`,
				`wirespeed_observed_rx_path_info{device="` + b + `",path="NAPI`,
			} {
				if !strings.Contains(m, want) {
					t.Errorf("scrape lacks %s:\n%s", want, m)
				}
			}
			if !regexp.MustCompile(`(?m)^wirespeed_napi_polls_observed_total\{context="softirq",cpu="\d+",device="` + b + `"\} [1-9]`).MatchString(m) {
				t.Errorf("no NAPI polls in softirq observed for %s:\n%s", b, m)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no observed delivery and GRO ratio for %s:\n%s", b, m)
		}
	}
}
