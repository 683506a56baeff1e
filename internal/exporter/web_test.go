// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/wirespeed/wirespeed/internal/hostfs"
)

// testTLS is a web configuration with a self-signed certificate for
// 127.0.0.1 and one basic-auth user.
type testTLS struct {
	Dir, Config, CertFile string
	User, Password        string
	Pool                  *x509.CertPool
}

// newTestTLS writes cert.pem, key.pem and web-config.yml (TLS and the user
// prom's bcrypt-hashed password; extra is appended to the YAML) into a
// new directory.
func newTestTLS(t *testing.T, extra string) *testTLS {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "wirespeed exporter test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // its own CA: the client trusts it as ca_file
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	tt := &testTLS{Dir: t.TempDir(), User: "prom", Password: "s3cret-scrape", Pool: x509.NewCertPool()}
	tt.Pool.AddCert(cert)
	tt.CertFile = filepath.Join(tt.Dir, "cert.pem")
	hash, err := bcrypt.GenerateFromPassword([]byte(tt.Password), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	tt.Config = filepath.Join(tt.Dir, "web-config.yml")
	for name, data := range map[string][]byte{
		tt.CertFile:                      pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		filepath.Join(tt.Dir, "key.pem"): pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		// relative paths: the toolkit reads them beside the file
		tt.Config: fmt.Appendf(nil, "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  %s: %s\n%s", tt.User, hash, extra),
	} {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return tt
}

// client trusts the test certificate; keep-alive off unless keep.
func (tt *testTLS) client(keep bool) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: tt.Pool},
		DisableKeepAlives: !keep,
	}}
}

// serveWeb runs Serve on a loopback port with w until the test ends, over
// an exporter of an empty root (every collector down: a scrape is cheap
// and still a real /metrics).
func serveWeb(t *testing.T, w Web) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := New(ctx, Options{FS: hostfs.Dir(t.TempDir())})
	errc := make(chan error, 1)
	go func() { errc <- Serve(ctx, l, Handler(e, DefaultMaxRequests), w) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Serve: %v", err)
		}
		e.Wait()
	})
	return l.Addr().String()
}

// getMetrics fetches url with c as user:pass (no auth when user is empty):
// the status and body.
func getMetrics(t *testing.T, c *http.Client, url, user, pass string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestWebTLSAndBasicAuth: with a web configuration of TLS and basic auth
// the metrics are served over HTTPS to the user with the password only; a
// wrong password, no password and a plain-HTTP client get no metrics.
func TestWebTLSAndBasicAuth(t *testing.T) {
	tt := newTestTLS(t, "")
	addr := serveWeb(t, Web{ConfigFile: tt.Config, MaxConnections: DefaultMaxConnections})
	c := tt.client(false)
	url := "https://" + addr + "/metrics"
	if code, body := getMetrics(t, c, url, tt.User, tt.Password); code != 200 || !strings.Contains(body, "wirespeed_collector_up") {
		t.Fatalf("right password: %d %q, want 200 and the metrics", code, firstLine(body))
	}
	for _, a := range []struct{ user, pass string }{{tt.User, "wrong"}, {"nobody", tt.Password}, {"", ""}} {
		code, body := getMetrics(t, c, url, a.user, a.pass)
		if code != http.StatusUnauthorized || strings.Contains(body, "wirespeed_") {
			t.Errorf("user %q password %q: %d %q, want 401 and no metrics", a.user, a.pass, code, firstLine(body))
		}
	}
	// A plain-HTTP client: Go's server answers 400 and serves nothing.
	code, body := getMetrics(t, &http.Client{Timeout: 10 * time.Second}, "http://"+addr+"/metrics", tt.User, tt.Password)
	if code == 200 || strings.Contains(body, "wirespeed_") {
		t.Errorf("plain HTTP: %d %q, want refused", code, firstLine(body))
	}
	// The certificate must be the one the file names: a client that trusts
	// only the system's CAs refuses it.
	if _, err := (&http.Client{Timeout: 10 * time.Second}).Get(url); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the test CA: %v, want a certificate error", err)
	}
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// TestIdleConnectionsClosed: a keep-alive connection idle after its request
// is closed after the idle timeout, and one that never sends a request
// after the header timeout (before both were set, 3000 idle connections
// were all still open after 23 s, issue 40).
func TestIdleConnectionsClosed(t *testing.T) {
	const idle, header = 1 * time.Second, 2 * time.Second
	addr := serveWeb(t, Web{IdleTimeout: idle, ReadHeaderTimeout: header})
	const n = 50
	start := time.Now()
	type result struct {
		kind string
		d    time.Duration
		err  error
	}
	res := make(chan result, 2*n)
	for i := 0; i < n; i++ {
		kept, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		silent, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer kept.Close()
			fmt.Fprintf(kept, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			br := bufio.NewReader(kept)
			resp, err := http.ReadResponse(br, nil)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			served := time.Now()
			kept.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err = br.ReadByte() // EOF when the server closes it
			res <- result{"idle keep-alive", time.Since(served), err}
		}()
		go func() {
			defer silent.Close()
			silent.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err := silent.Read(make([]byte, 1))
			res <- result{"silent", time.Since(start), err}
		}()
	}
	var worst = map[string]time.Duration{}
	for i := 0; i < 2*n; i++ {
		r := <-res
		if r.err != io.EOF {
			t.Errorf("%s connection: %v after %v, want closed by the server (EOF)", r.kind, r.err, r.d.Round(time.Millisecond))
		}
		worst[r.kind] = max(worst[r.kind], r.d)
	}
	t.Logf("closed within: idle keep-alive %v (idle timeout %v), silent %v (header timeout %v)",
		worst["idle keep-alive"].Round(time.Millisecond), idle, worst["silent"].Round(time.Millisecond), header)
	if worst["idle keep-alive"] > idle+time.Second || worst["silent"] > header+2*time.Second {
		t.Errorf("connections held too long: %v", worst)
	}
}

// holdConnections keeps n connections to addr that hold a slot without
// being served, a third of each kind: connected and silent (TCP, or a TLS
// handshake never started), a request header sent a byte a second
// (slowloris; over TLS when pool is set), and idle after a served request
// (keep-alive). A connection the server closes is opened again a second
// later, as a client that retries would. It returns once all n have
// connected; they stop when the test ends.
func holdConnections(t *testing.T, addr string, n int, pool *x509.CertPool) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(done); wg.Wait() })
	connected := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := true; ; first = false {
				c, err := holdOne(addr, i%3, pool, done)
				if first {
					connected <- err
				}
				if c != nil {
					<-c // until the server closes it, or the test ends
				}
				select {
				case <-done:
					return
				case <-time.After(time.Second):
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		// the server may close a TLS one mid-handshake to make room
		if err := <-connected; err != nil && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "reset") {
			t.Fatalf("holding connection %d: %v", i, err)
		}
	}
}

// holdOne opens one connection of holdConnections' kind; the channel
// closes when it is closed.
func holdOne(addr string, kind int, pool *x509.CertPool, done chan struct{}) (chan struct{}, error) {
	var c net.Conn
	var err error
	if kind == 0 || pool == nil {
		c, err = net.DialTimeout("tcp", addr, 5*time.Second)
	} else {
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool})
	}
	if err != nil {
		return nil, err
	}
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, c) // a response, then EOF when the server closes it
		close(closed)
	}()
	go func() {
		defer c.Close()
		switch kind {
		case 1: // slowloris
			header := fmt.Sprintf("GET /metrics HTTP/1.1\r\nHost: %s\r\nX-Slow: %s", addr, strings.Repeat("a", 100))
			for j := 0; j < len(header); j++ {
				if _, err := c.Write([]byte{header[j]}); err != nil {
					return
				}
				select {
				case <-done:
					return
				case <-closed:
					return
				case <-time.After(time.Second):
				}
			}
		case 2: // keep-alive, idle after one request
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		}
		select {
		case <-done:
		case <-closed:
		}
	}()
	return closed, nil
}

// TestHeldConnectionsDoNotStopAScrape: 1000 connections held idle or slow,
// twice --web.max-connections, do not keep a scrape out: it is served in
// well under the header timeout (so not because the held ones timed out),
// over plain HTTP and over TLS with basic auth. A listener that made new
// connections wait for a slot (netutil.LimitListener) fails this: the
// scrape queues behind hundreds of them, 5 s a wave.
func TestHeldConnectionsDoNotStopAScrape(t *testing.T) {
	const held, bound = 1000, DefaultMaxConnections
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			w := Web{MaxConnections: bound}
			var tt *testTLS
			var pool *x509.CertPool
			scheme, user, pass := "http", "", ""
			if useTLS {
				tt = newTestTLS(t, "")
				w.ConfigFile, pool = tt.Config, tt.Pool
				scheme, user, pass = "https", tt.User, tt.Password
			}
			addr := serveWeb(t, w)
			start := time.Now()
			holdConnections(t, addr, held, pool)
			t.Logf("%d connections opened in %v", held, time.Since(start).Round(time.Millisecond))
			c := &http.Client{Timeout: 4 * time.Second}
			if tt != nil {
				c = tt.client(false)
				c.Timeout = 4 * time.Second
			}
			// over 7 s: past the header timeout, while held ones are
			// closed, time out and come back
			for i := 0; i < 10; i++ {
				time.Sleep(700 * time.Millisecond)
				t0 := time.Now()
				code, body := getMetrics(t, c, scheme+"://"+addr+"/metrics", user, pass)
				d := time.Since(t0)
				t.Logf("scrape %d with %d connections held: %d in %v", i, held, code, d.Round(time.Millisecond))
				if code != 200 || !strings.Contains(body, "wirespeed_collector_up") {
					t.Fatalf("scrape %d: %d %q", i, code, firstLine(body))
				}
				if d > 2*time.Second {
					t.Errorf("scrape %d took %v with %d connections held", i, d, held)
				}
			}
		})
	}
}

// TestWebConfigRefused: a web configuration that cannot serve is refused by
// CheckWebConfig, naming the file and what is wrong; one with TLS and
// basic auth is Protected, one without either is not.
func TestWebConfigRefused(t *testing.T) {
	tt := newTestTLS(t, "")
	write := func(name, content string) string {
		p := filepath.Join(tt.Dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		path string
		want []string
	}{
		{filepath.Join(tt.Dir, "missing.yml"), []string{"missing.yml", "no such file"}},
		{tt.Dir, []string{"is a directory, not a regular file"}},
		{write("bad.yml", "tls_server_config: [\n"), []string{"bad.yml", "not a web configuration"}},
		{write("typo.yml", "tls_server_confg:\n  cert_file: cert.pem\n"), []string{"typo.yml", "tls_server_confg"}},
		{write("nokey.yml", "tls_server_config:\n  cert_file: cert.pem\n"), []string{"nokey.yml", "missing one of key or key_file"}},
		{write("badcert.yml", "tls_server_config:\n  cert_file: web-config.yml\n  key_file: key.pem\n"), []string{"badcert.yml", "X509KeyPair"}},
		{write("nocert.yml", "tls_server_config:\n  cert_file: gone.pem\n  key_file: key.pem\n"), []string{"nocert.yml", "gone.pem"}},
		{write("plainpw.yml", "basic_auth_users:\n  prom: hunter2\n"), []string{"plainpw.yml", `"prom"`, "not a bcrypt hash", "htpasswd"}},
	} {
		_, err := CheckWebConfig(c.path)
		if err == nil {
			t.Errorf("%s: accepted", c.path)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", c.path, err, w)
			}
		}
	}
	for _, c := range []struct {
		path      string
		protected bool
		says      string
	}{
		{tt.Config, true, "TLS and basic auth"},
		{write("tlsonly.yml", "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"), false, "TLS without authentication"},
		{write("authonly.yml", "basic_auth_users:\n  prom: $2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi\n"), false, "basic auth over plain HTTP"},
		{write("empty.yml", ""), false, "plain HTTP"},
	} {
		wc, err := CheckWebConfig(c.path)
		if err != nil || wc.Protected() != c.protected || wc.String() != c.says {
			t.Errorf("%s: %+v %q %v, want protected %v, %q", filepath.Base(c.path), wc, wc, err, c.protected, c.says)
		}
	}
}

// TestFleetDocWebConfig: docs/fleet.md's example web-config.yml is one the
// exporter takes as TLS and basic auth (with a certificate and key under
// the names it gives), and its hash is that of the password its comment
// names.
func TestFleetDocWebConfig(t *testing.T) {
	doc, err := os.ReadFile("../../docs/fleet.md")
	if err != nil {
		t.Fatal(err)
	}
	const mark = "```yaml\n# /etc/wirespeed/web-config.yml"
	_, block, ok := strings.Cut(string(doc), mark)
	if !ok {
		t.Fatalf("docs/fleet.md has no block starting %q", mark)
	}
	block, _, _ = strings.Cut(block, "```")
	block = "#" + block // the rest of the comment line the mark began
	tt := newTestTLS(t, "")
	for from, to := range map[string]string{"cert.pem": "gw1.crt", "key.pem": "gw1.key"} {
		if err := os.Rename(filepath.Join(tt.Dir, from), filepath.Join(tt.Dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(tt.Dir, "doc.yml")
	if err := os.WriteFile(path, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	wc, err := CheckWebConfig(path)
	if err != nil || !wc.Protected() {
		t.Fatalf("fleet.md's web-config.yml: %v %v, want TLS and basic auth", wc, err)
	}
	pass := regexp.MustCompile(`hash of "([^"]+)"`).FindStringSubmatch(block)
	hash := regexp.MustCompile(`prometheus: (\S+)`).FindStringSubmatch(block)
	if pass == nil || hash == nil || bcrypt.CompareHashAndPassword([]byte(hash[1]), []byte(pass[1])) != nil {
		t.Errorf("fleet.md's web-config.yml: the hash is not that of the password its comment names:\n%s", block)
	}
}
