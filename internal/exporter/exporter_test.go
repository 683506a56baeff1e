// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
	"github.com/wirespeed/wirespeed/internal/testnet"
)

func TestCheckListen(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		ok     bool
		want   string
	}{
		{"127.0.0.1:9977", false, true, ""},
		{"127.0.0.53:80", false, true, ""},
		{"[::1]:9977", false, true, ""},
		{"localhost:9977", false, true, ""},
		{"0.0.0.0:9977", false, false, "--allow-remote"},
		{":9977", false, false, "every interface"},
		{"198.18.0.1:9977", false, false, "not a loopback"},
		{"[::]:9977", false, false, "not a loopback"},
		{"example.org:9977", false, false, "not an IP"},
		{"0.0.0.0:9977", true, true, ""},
		{":9977", true, true, ""},
		{"127.0.0.1", false, false, "HOST:PORT"},
		{"127.0.0.1:http", false, false, "not a number"},
		{"127.0.0.1:70000", true, false, "not a number"},
	} {
		err := CheckListen(c.addr, c.remote)
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckListen(%q, %v) = %v, want ok=%v containing %q", c.addr, c.remote, err, c.ok, c.want)
		}
	}
}

func TestListenBusyPort(t *testing.T) {
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = Listen(l.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "the port is in use") || !strings.Contains(err.Error(), "--listen") {
		t.Fatalf("second Listen on %s: %v, want a clear 'in use' error", l.Addr(), err)
	}
}

// scrape gathers e's metrics in the text format.
func scrape(t *testing.T, e *Exporter) string {
	t.Helper()
	srv := httptest.NewServer(Handler(e, 0))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %s: %s", resp.Status, b)
	}
	return string(b)
}

// TestScrapeLiveHost scrapes this host with the observation off: every
// collector but observe works as any user, the loopback device is there
// with its RX path, and softnet has a row per CPU.
func TestScrapeLiveHost(t *testing.T) {
	var logBuf strings.Builder
	e := New(context.Background(), Options{Version: "test", Log: log.New(&logBuf, "", 0)})
	out := scrape(t, e)
	for _, want := range []string{
		`wirespeed_device_info{bus="virtual",device="lo",driver="loopback"} 1`,
		`wirespeed_device_rx_path_info{device="lo",path="netif_rx backlog (loopback)"} 1`,
		`wirespeed_softnet_dropped_total{cpu="0"}`,
		`wirespeed_softirqs_total{cpu="0",type="NET_RX"}`,
		`wirespeed_collector_up{collector="inspect"} 1`,
		`wirespeed_collector_up{collector="softnet"} 1`,
		`wirespeed_collector_up{collector="softirqs"} 1`,
		`wirespeed_collector_up{collector="doctor"} 1`,
		`wirespeed_collector_up{collector="observe"} 0`,
		`wirespeed_exporter_build_info{version="test"} 1`,
		"# TYPE wirespeed_softnet_times_squeezed_total counter",
		"# TYPE wirespeed_bql_limit_bytes gauge",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if n := strings.Count(out, "wirespeed_softnet_processed_total{"); n != runtime.NumCPU() {
		t.Errorf("%d softnet_processed rows, want one per CPU (%d)", n, runtime.NumCPU())
	}
	// Every exposed name is one MetricNames knows (the dashboard test
	// relies on that list).
	known := map[string]bool{}
	for _, n := range MetricNames() {
		known[n] = true
	}
	for _, line := range strings.Split(out, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		if !known[name] {
			t.Errorf("exposed %s, not in MetricNames", name)
		}
	}
	// The series pass client_golang's lint (naming conventions).
	probs, err := testutil.CollectAndLint(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// mFake is the stand-in collectors' metric.
var mFake = gaugeMetric("fake", "A stand-in collector's sample.", "collector")

// fakeCollector sends one sample of mFake and fails while err is set.
type fakeCollector struct {
	name  string
	err   error
	sleep time.Duration
	runs  int
}

func (*fakeCollector) metrics() []*metric { return []*metric{mFake} }

func (f *fakeCollector) update(ch chan<- prometheus.Metric, _ *reading) error {
	f.runs++
	time.Sleep(f.sleep)
	mFake.send(ch, 1, f.name)
	return f.err
}

// uncheckedFunc is a collector client_golang does not check against a
// description (it describes nothing), so that only a Gather runs it.
type uncheckedFunc func(ch chan<- prometheus.Metric)

func (uncheckedFunc) Describe(chan<- *prometheus.Desc)      {}
func (f uncheckedFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

// TestRegistryReports runs the registry over two stand-in collectors: each
// runs once per reading and gets one up and one duration sample (a failing
// one too, its metrics still sent), its time is its own, and a failure is
// logged once until it changes or the collector recovers.
func TestRegistryReports(t *testing.T) {
	var logBuf strings.Builder
	slow := &fakeCollector{name: "slow", sleep: 20 * time.Millisecond}
	bad := &fakeCollector{name: "bad", err: errors.New("no such file")}
	r := newRegistry([]named{{"slow", slow}, {"bad", bad}}, log.New(&logBuf, "", 0))
	reg := prometheus.NewRegistry()
	reg.MustRegister(uncheckedFunc(r.run))
	read := func() map[string]float64 {
		mfs, err := reg.Gather() // fails on a series sent twice
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				k := mf.GetName()
				for _, l := range m.GetLabel() {
					k += "/" + l.GetValue()
				}
				out[k] = m.GetGauge().GetValue()
			}
		}
		return out
	}
	got := read()
	for k, v := range map[string]float64{"wirespeed_collector_up/slow": 1, "wirespeed_collector_up/bad": 0,
		"wirespeed_fake/slow": 1, "wirespeed_fake/bad": 1} {
		if w, ok := got[k]; !ok || w != v {
			t.Errorf("%s = %v (sent: %v), want %v", k, w, ok, v)
		}
	}
	if len(got) != 6 {
		t.Errorf("one reading sent %d series, want 6 (each collector's sample, up and duration): %v", len(got), got)
	}
	if d := got["wirespeed_collector_duration_seconds/slow"]; d < 0.02 || d > 5 {
		t.Errorf("slow collector's duration %v s, want its 20 ms sleep", d)
	}
	if d := got["wirespeed_collector_duration_seconds/bad"]; d >= 0.02 {
		t.Errorf("bad collector's duration %v s includes the slow one's", d)
	}
	read()
	if n := strings.Count(logBuf.String(), "collector bad: no such file"); n != 1 {
		t.Errorf("the failure logged %d times over two readings, want once:\n%s", n, logBuf.String())
	}
	bad.err = nil
	if got := read(); got["wirespeed_collector_up/bad"] != 1 {
		t.Errorf("bad collector recovered, up = %v", got["wirespeed_collector_up/bad"])
	}
	if !strings.Contains(logBuf.String(), "collector bad: works again") {
		t.Errorf("recovery not logged:\n%s", logBuf.String())
	}
	if slow.runs != 3 || bad.runs != 3 {
		t.Errorf("three readings ran the collectors %d and %d times", slow.runs, bad.runs)
	}
	if strings.Contains(logBuf.String(), "collector slow") {
		t.Errorf("a collector that never failed was logged:\n%s", logBuf.String())
	}
}

// TestMetricsDescribed: Describe sends exactly the exporter's metrics, each
// name once, every collector declares what it sends, and the collectors a
// reading runs are the ones Collectors names, in its order.
func TestMetricsDescribed(t *testing.T) {
	e := New(context.Background(), Options{FS: hostfs.Dir(t.TempDir())})
	ch := make(chan *prometheus.Desc, 256)
	e.Describe(ch)
	close(ch)
	descs := map[*prometheus.Desc]bool{}
	for d := range ch {
		descs[d] = true
	}
	names := map[string]bool{}
	for _, m := range allMetrics() {
		if names[m.name] {
			t.Errorf("%s declared twice", m.name)
		}
		names[m.name] = true
		if !descs[m.desc] {
			t.Errorf("Describe does not send %s", m.name)
		}
	}
	if len(descs) != len(names) {
		t.Errorf("Describe sent %d descriptors for %d metrics", len(descs), len(names))
	}
	var order []string
	for _, n := range e.colls.ordered() {
		order = append(order, n.name)
	}
	if strings.Join(order, " ") != strings.Join(Collectors, " ") {
		t.Errorf("a reading runs %v, Collectors lists %v", order, Collectors)
	}
}

func TestObserverFold(t *testing.T) {
	o := &observer{devs: map[string]*devTotals{}, napis: map[napiKey]*napiTotals{}, softirq: map[softirqKey]float64{}}
	ratio := 3.0
	obs := func(seg, del uint64) *observe.Observation {
		return &observe.Observation{DurationSec: 10, Sample: &observe.Sampling{Fraction: 0.1, AttachedSec: 1},
			Devices: []observe.Device{
				{Name: "veth0", GROSegments: seg, Delivered: del, GRORatio: &ratio, RXPath: observe.PathNAPIGRO,
					NAPIs: []observe.NAPI{{Contexts: []observe.PollContext{{Kind: "thread", Polls: 5}},
						CPUs: []observe.NAPICPU{{CPU: 1, Polls: 5, Work: 40}}}}},
				{Name: observe.BacklogDev, Delivered: 7},
			},
			CPUs: []observe.CPU{{CPU: 1, NetRXNs: 250e6, NetTXNs: 1e6}}}
	}
	t0 := time.Unix(1000, 0)
	o.fold(obs(30, 10), nil, t0)
	o.fold(obs(60, 20), nil, t0.Add(10*time.Second))
	s := o.snapshot()
	if d := s.devs["veth0"]; d.groSegments != 90 || d.delivered != 30 {
		t.Errorf("veth0 totals %+v, want 90 segments, 30 skbs", d)
	}
	if _, ok := s.devs[observe.BacklogDev]; ok {
		t.Errorf("the backlog pseudo-device is exported as a device")
	}
	if n := s.napis[napiKey{"veth0", "thread", 1}]; n.polls != 10 || n.work != 80 {
		t.Errorf("NAPI totals %+v, want 10 polls, 80 work", n)
	}
	if v := s.softirq[softirqKey{1, "NET_RX"}]; v != 0.5 {
		t.Errorf("NET_RX seconds on CPU 1 = %v, want 0.5", v)
	}
	if s.attached != 2 {
		t.Errorf("attached %v s, want 2 (two windows of 1 s)", s.attached)
	}
	// A read error marks the collector down and keeps the totals.
	o.fold(nil, errors.New("map gone"), t0.Add(20*time.Second))
	if s := o.snapshot(); s.err == nil || s.devs["veth0"].groSegments != 90 {
		t.Errorf("after a failed read: err %v, totals %+v", s.err, s.devs["veth0"])
	}
	// A device not seen for longer than forget is dropped.
	o.fold(&observe.Observation{DurationSec: 10}, nil, t0.Add(forget+15*time.Second))
	if s := o.snapshot(); len(s.devs) != 0 || len(s.napis) != 0 {
		t.Errorf("after %v idle: %d devices, %d NAPIs kept", forget, len(s.devs), len(s.napis))
	}
}

// TestObservedMetrics exports an observer's state and checks names and
// values, the GRO ratio of the last interval included.
func TestObservedMetrics(t *testing.T) {
	o := &observer{devs: map[string]*devTotals{}, napis: map[napiKey]*napiTotals{}, softirq: map[softirqKey]float64{}}
	ratio := 2.5
	o.fold(&observe.Observation{DurationSec: 10, Devices: []observe.Device{
		{Name: "eth9", GROSegments: 50, Delivered: 20, GRORatio: &ratio, RXPath: observe.PathNAPIGRO},
		{Name: "idle0", RXPath: observe.PathIdle},
	}}, nil, time.Now())
	c := &observeCollector{obs: o, sample: 0.1}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectorFunc(func(ch chan<- prometheus.Metric) {
		r := &reading{}
		if err := c.update(ch, r); err != nil {
			t.Error(err)
		}
		if r.obs == nil || r.obs.DurationSec != 10 {
			t.Errorf("the reading got observation %+v, want the last interval's", r.obs)
		}
	}))
	want := `
# HELP wirespeed_gro_coalescing_ratio Segments entering GRO per skb delivered, over the last observation interval (1: no coalescing).
# TYPE wirespeed_gro_coalescing_ratio gauge
wirespeed_gro_coalescing_ratio{device="eth9"} 2.5
# HELP wirespeed_observed_rx_path_info The RX path the observation saw in the last interval; 1.
# TYPE wirespeed_observed_rx_path_info gauge
wirespeed_observed_rx_path_info{device="eth9",path="NAPI + GRO"} 1
# HELP wirespeed_observe_attached_seconds_total Time the sampled eBPF observation was attached; the *_observed_* counters count during it only.
# TYPE wirespeed_observe_attached_seconds_total counter
wirespeed_observe_attached_seconds_total 10
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "wirespeed_gro_coalescing_ratio",
		"wirespeed_observed_rx_path_info", "wirespeed_observe_attached_seconds_total"); err != nil {
		t.Error(err)
	}
}

type collectorFunc func(ch chan<- prometheus.Metric)

func (f collectorFunc) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(f, ch) }
func (f collectorFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

// TestDoctorFindings stands in for doctor's rules (none are registered yet)
// and checks that each finding becomes one series per device.
func TestDoctorFindings(t *testing.T) {
	defer func(d func(*doctor.Input) (*doctor.Report, error)) { diagnose = d }(diagnose)
	diagnose = func(in *doctor.Input) (*doctor.Report, error) {
		return &doctor.Report{Rules: []doctor.RuleInfo{{ID: "a"}, {ID: "b"}}, Findings: []doctor.Finding{
			{ID: "usbnet-no-gro", Severity: doctor.Warn, Devices: []string{"usb0", "usb1"}},
			{ID: "usbnet-no-gro", Severity: doctor.Warn, Devices: []string{"usb0"}}, // same series
			{ID: "governor-powersave", Severity: doctor.Info},
		}}, nil
	}
	c := &doctorCollector{}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectorFunc(func(ch chan<- prometheus.Metric) {
		if err := c.update(ch, &reading{snap: &inspect.Snapshot{}, gen: 1}); err != nil {
			t.Error(err)
		}
	}))
	want := `
# HELP wirespeed_doctor_finding A finding of wirespeed doctor; 1 while it holds.
# TYPE wirespeed_doctor_finding gauge
wirespeed_doctor_finding{device="",id="governor-powersave",severity="info"} 1
wirespeed_doctor_finding{device="usb0",id="usbnet-no-gro",severity="warn"} 1
wirespeed_doctor_finding{device="usb1",id="usbnet-no-gro",severity="warn"} 1
# HELP wirespeed_doctor_rules Doctor rules that ran.
# TYPE wirespeed_doctor_rules gauge
wirespeed_doctor_rules 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// TestServeStops checks that Serve returns once its context ends.
func TestServeStops(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Serve(ctx, l, Handler(New(ctx, Options{}), 0), Web{}) }()
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Serve after cancel: %v", err)
	}
	if _, err := net.Dial("tcp", l.Addr().String()); err == nil {
		t.Errorf("still accepting on %s after Serve returned", l.Addr())
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	testnet.RemoveBinary()
	os.Exit(code)
}

// TestScrapeUnreadable scrapes an empty root: every collector reports down,
// the log names each once, and the scrape itself still succeeds.
func TestScrapeUnreadable(t *testing.T) {
	var logBuf strings.Builder
	e := New(context.Background(), Options{FS: hostfs.Dir(t.TempDir()), Log: log.New(&logBuf, "", 0)})
	out := scrape(t, e)
	scrape(t, e)
	for _, c := range Collectors {
		if want := `wirespeed_collector_up{collector="` + c + `"} 0`; !strings.Contains(out, want) {
			t.Errorf("scrape of an empty root lacks %s", want)
		}
		if n := strings.Count(logBuf.String(), "collector "+c+":"); n != 1 {
			t.Errorf("collector %s logged %d times over two scrapes, want once:\n%s", c, n, logBuf.String())
		}
	}
	if strings.Contains(out, "wirespeed_device_info") {
		t.Errorf("devices exported from an empty root")
	}
}
