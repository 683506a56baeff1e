// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The web configuration through the binary: a real Prometheus scraping it
// over TLS with basic auth, and what the command line refuses.

// TestPrometheusScrapesOverTLS: Debian's prometheus scrapes the exporter
// binary over TLS with basic auth (the test's CA as ca_file) while 1000
// idle or slow connections are held against it; every scrape succeeds, the
// alert rules evaluate on the series, and WirespeedExporterDown stays
// quiet. Two more jobs, a wrong password and plain HTTP, are down.
func TestPrometheusScrapesOverTLS(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("needs Debian's prometheus server (apt-get install --no-install-recommends prometheus, or make setup-test)")
	}
	tt := newTestTLS(t, "")
	target := freePort(t)
	_, out, _ := startExporter(t, nil, nil, "--listen", target, "--web.config.file", tt.Config, "--observe", "off")
	if !strings.Contains(out.String(), "serving https://"+target+"/metrics (TLS and basic auth)") {
		t.Errorf("the exporter's log does not say it serves HTTPS with basic auth:\n%s", out.String())
	}
	holdConnections(t, target, 1000, tt.Pool)

	job := func(name, scheme, pass string) string {
		return fmt.Sprintf("  - job_name: %s\n    scheme: %s\n    tls_config:\n      ca_file: '%s'\n    basic_auth:\n      username: %s\n      password: '%s'\n    static_configs:\n      - targets: ['%s']\n",
			name, scheme, tt.CertFile, tt.User, pass, target)
	}
	cfg := "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n" + rulesConfig(t) + "scrape_configs:\n" +
		job("wirespeed", "https", tt.Password) + job("wrong-password", "https", "wrong") + job("plain-http", "http", tt.Password)
	web, plog := startPrometheus(t, prom, cfg)
	deadline := time.Now().Add(60 * time.Second)
	for _, q := range []string{
		`count_over_time(up{job="wirespeed"}[1m]) >= 8`,
		`wirespeed_exporter_build_info{job="wirespeed"}`,
		`up{job="wrong-password"} == 0`,
		`up{job="plain-http"} == 0`,
	} {
		for {
			res, err := promAPIQuery(web, q)
			if err == nil && len(res) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("prometheus has no series for %s (err %v)\nprometheus log:\n%s\nexporter log:\n%s", q, err, lastLines(plog.String(), 15), lastLines(out.String(), 15))
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	// Every scrape since the first succeeded (so within the 1 s
	// scrape_timeout; the first, a cold full snapshot, is the slowest),
	// most of them in a fraction of that.
	for q, want := range map[string]func(float64) bool{
		`min_over_time(up{job="wirespeed"}[1m])`:                                        func(v float64) bool { return v == 1 },
		`max_over_time(scrape_duration_seconds{job="wirespeed"}[1m])`:                   func(v float64) bool { return v < 1 },
		`quantile_over_time(0.5, scrape_duration_seconds{job="wirespeed"}[1m])`:         func(v float64) bool { return v < 0.25 },
		`count(ALERTS{alertname="WirespeedExporterDown",job="wirespeed"}) or vector(0)`: func(v float64) bool { return v == 0 },
	} {
		res, err := promAPIQuery(web, q)
		if err != nil || len(res) != 1 {
			t.Errorf("%s: %v %v", q, res, err)
			continue
		}
		v, _ := res[0]["value"].([]any)
		s, _ := v[1].(string)
		f, err := strconv.ParseFloat(s, 64)
		t.Logf("%s = %s", q, s)
		if err != nil || !want(f) {
			t.Errorf("%s = %s", q, s)
			if strings.HasPrefix(q, "min_over_time(up") {
				t.Errorf("the failed scrapes, as prometheus logged them:\n%s", grepLines(plog.String(), "Scrape failed"))
			}
		}
	}
	checkRulesEvaluate(t, web)
}

// TestWebConfigExits: the binary refuses a bad web configuration file with
// exit 1 and the file's name before it listens (the port stays free), and
// the listen address rules: a non-loopback address needs TLS and
// authentication, or --allow-remote.
func TestWebConfigExits(t *testing.T) {
	tt := newTestTLS(t, "")
	write := func(name, content string) string {
		p := filepath.Join(tt.Dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tlsOnly := write("tlsonly.yml", "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n")
	addr := freePort(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--web.config.file", filepath.Join(tt.Dir, "missing.yml")}, 1, "--web.config.file " + filepath.Join(tt.Dir, "missing.yml") + ": open"},
		{[]string{"--web.config.file", write("bad.yml", "basic_auth_users: [\n")}, 1, "bad.yml: not a web configuration"},
		{[]string{"--web.config.file", write("badcert.yml", "tls_server_config:\n  cert_file: key.pem\n  key_file: key.pem\n")}, 1, "failed to load X509KeyPair"},
		{[]string{"--web.max-connections", "-1"}, 2, "--web.max-connections -1: want 0"},
		// beyond loopback: TLS without authentication is not enough ...
		{[]string{"--listen", "198.19.255.254:9977", "--web.config.file", tlsOnly}, 2, "sets TLS without authentication"},
		// ... TLS and basic auth are: the address passes, the host has none such
		{[]string{"--listen", "198.19.255.254:9977", "--web.config.file", tt.Config}, 1, "no interface of this host has that address"},
	} {
		args := append([]string{"exporter", "--observe", "off"}, c.args...)
		if !slices.Contains(c.args, "--listen") {
			args = append(args, "--listen", addr)
		}
		cmd := exec.Command(binary(t), args...)
		outb, err := cmd.CombinedOutput()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(string(outb), c.want) || strings.Contains(string(outb), "serving") {
			t.Errorf("exporter %v: exit %d, %q; want exit %d and %q, before serving", c.args, code, outb, c.code, c.want)
		}
	}
}
