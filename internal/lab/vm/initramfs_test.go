// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCPIORoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewCPIOWriter(&buf)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.File("usr/bin/tool", 0o755, []byte("#!/bin/sh\necho hi\n")))
	must(w.Symlink("/bin/sh", "busybox"))
	must(w.Add(CPIOEntry{Name: "dev/console", Mode: modeCharDev | 0o600, DevMajor: 5, DevMinor: 1}))
	must(w.File("odd", 0o644, []byte("12345"))) // data needing padding
	must(w.Dir("usr"))                          // already made implicitly: not repeated
	if err := w.File("TRAILER!!!", 0o644, nil); err == nil {
		t.Error("an entry named TRAILER!!! was accepted")
	}
	must(w.Close())
	if buf.Len()%512 != 0 {
		t.Errorf("archive is %d bytes, not a multiple of 512", buf.Len())
	}
	es, err := ReadCPIO(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cpioNames(es), " ")
	if want := "bin bin/sh dev dev/console odd usr usr/bin usr/bin/tool"; got != want {
		t.Fatalf("names = %q, want %q", got, want)
	}
	byName := map[string]CPIOEntry{}
	for _, e := range es {
		byName[e.Name] = e
	}
	if e := byName["usr/bin/tool"]; !e.IsRegular() || e.Mode&0o777 != 0o755 || string(e.Data) != "#!/bin/sh\necho hi\n" {
		t.Errorf("tool = %+v", e)
	}
	if e := byName["bin/sh"]; !e.IsSymlink() || string(e.Data) != "busybox" {
		t.Errorf("bin/sh = %+v", e)
	}
	if e := byName["dev/console"]; e.Mode&0o170000 != modeCharDev || e.DevMajor != 5 || e.DevMinor != 1 {
		t.Errorf("dev/console = %+v", e)
	}
	if e := byName["odd"]; string(e.Data) != "12345" {
		t.Errorf("odd = %q", e.Data)
	}
	if e := byName["usr"]; !e.IsDir() {
		t.Errorf("usr = %+v", e)
	}
	// The system's cpio(1), when present, reads it too.
	if _, err := exec.LookPath("cpio"); err == nil {
		cmd := exec.Command("cpio", "-t", "--quiet")
		cmd.Stdin = bytes.NewReader(buf.Bytes())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("cpio -t: %v", err)
		}
		if !strings.Contains(string(out), "usr/bin/tool") {
			t.Errorf("cpio -t lists:\n%s", out)
		}
	}
}

func TestReadCPIORejectsGarbage(t *testing.T) {
	if _, err := ReadCPIO(strings.NewReader("070707" + strings.Repeat("0", 200))); err == nil {
		t.Error("an odc archive (070707) was read as newc")
	}
}

// fakeTools makes a busybox stand-in that answers --list, and uses a real
// dynamically linked program as "iperf3" so library resolution is exercised.
func fakeTools(t *testing.T) (Tools, string) {
	dir := t.TempDir()
	bb := filepath.Join(dir, "busybox")
	if err := os.WriteFile(bb, []byte("#!/bin/sh\nprintf 'sh\\nmount\\nip\\ninsmod\\n'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "wirespeed")
	if err := os.WriteFile(ws, []byte("#!/bin/sh\necho wirespeed\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dyn := ""
	for _, c := range []string{"/bin/ls", "/usr/bin/ls", "/bin/cat"} {
		if fileExists(c) && isELF(c) && !isStatic(c) {
			dyn = c
			break
		}
	}
	if dyn == "" {
		t.Skip("no dynamically linked /bin/ls to resolve libraries of")
	}
	// Stand in for iproute2's ip with a script, so the busybox "ip" applet must be left out.
	ip := filepath.Join(dir, "ip")
	if err := os.WriteFile(ip, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Tools{Busybox: bb, Iperf3: dyn, IP: ip, Wirespeed: ws}, dir
}

func TestBaseImage(t *testing.T) {
	tools, dir := fakeTools(t)
	ko := filepath.Join(dir, "plain.ko")
	if err := os.WriteFile(ko, []byte("ELF-plain"), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("ELF-gzipped"))
	zw.Close()
	kogz := filepath.Join(dir, "zipped.ko.gz")
	if err := os.WriteFile(kogz, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	spec := ImageSpec{Tools: tools, Modules: []ModuleFile{{Name: "plain", Source: ko}, {Name: "zipped", Source: kogz}}}
	logf := func(string, ...any) {}
	p1, built, err := BaseImage(context.Background(), cache, spec, logf)
	if err != nil {
		t.Fatal(err)
	}
	if !built {
		t.Error("first build reported as cached")
	}
	f, err := os.Open(p1)
	if err != nil {
		t.Fatal(err)
	}
	es, err := ReadCPIO(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]CPIOEntry{}
	for _, e := range es {
		by[e.Name] = e
	}
	libs, err := SharedLibs(tools.Iperf3)
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) < 2 {
		t.Fatalf("SharedLibs(%s) = %v: want the loader and libc at least", tools.Iperf3, libs)
	}
	for _, l := range libs {
		if _, ok := by[strings.TrimPrefix(l, "/")]; !ok {
			t.Errorf("library %s is missing from the image", l)
		}
	}
	for name, want := range map[string]string{
		"lib/modules/ws/plain.ko":  "ELF-plain",
		"lib/modules/ws/zipped.ko": "ELF-gzipped",
		"bin/sh":                   "busybox",
		"bin/mount":                "busybox",
	} {
		if e, ok := by[name]; !ok || string(e.Data) != want {
			t.Errorf("%s = %q (present %v), want %q", name, e.Data, ok, want)
		}
	}
	if _, ok := by["bin/ip"]; ok {
		t.Error("busybox's ip applet is linked although iproute2's ip is in /sbin")
	}
	for _, n := range []string{"sbin/ip", "usr/bin/iperf3", "usr/bin/wirespeed", "bin/busybox", "dev/console", "proc", "sys", "results"} {
		if _, ok := by[n]; !ok {
			t.Errorf("%s is missing", n)
		}
	}
	// Same inputs: cached. A changed input: a new image.
	p2, built, err := BaseImage(context.Background(), cache, spec, logf)
	if err != nil || built || p2 != p1 {
		t.Errorf("second build: %s built=%v err=%v, want the cached %s", p2, built, err, p1)
	}
	if err := os.WriteFile(ko, []byte("ELF-plain-v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	p3, built, err := BaseImage(context.Background(), cache, spec, logf)
	if err != nil || !built || p3 == p1 {
		t.Errorf("after changing a module: %s built=%v err=%v, want a new image", p3, built, err)
	}

	// The per-run archive lands on top of the base one.
	var run bytes.Buffer
	if err := RunArchive(&run, "#!/bin/sh\necho init\n", map[string][]byte{"ws/main.sh": []byte("echo main\n")}); err != nil {
		t.Fatal(err)
	}
	joined := filepath.Join(t.TempDir(), "initrd")
	if err := JoinInitramfs(joined, p3, run.Bytes()); err != nil {
		t.Fatal(err)
	}
	jf, _ := os.Open(joined)
	all, err := ReadCPIO(jf)
	jf.Close()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, e := range all {
		found[e.Name] = string(e.Data)
	}
	if found["init"] != "#!/bin/sh\necho init\n" || found["ws/main.sh"] != "echo main\n" || found["lib/modules/ws/plain.ko"] != "ELF-plain-v2" {
		t.Errorf("joined archive: init=%q main=%q plain=%q", found["init"], found["ws/main.sh"], found["lib/modules/ws/plain.ko"])
	}
}

func guestStream(files map[string]string, crlf bool) string {
	var b strings.Builder
	for _, n := range []string{"a.json", "b.txt"} {
		data, ok := files[n]
		if !ok {
			continue
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte(data))
		zw.Close()
		enc := base64.StdEncoding.EncodeToString(gz.Bytes())
		fmt.Fprintf(&b, "@@WS-FILE %s %d %s\n", n, len(data), sha([]byte(data)))
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\n@@WS-EOF " + n + "\n")
	}
	b.WriteString("@@WS-DONE\n")
	s := b.String()
	if crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

func TestParseResults(t *testing.T) {
	in := map[string]string{"a.json": `{"schema":"x"}` + strings.Repeat(" ", 300), "b.txt": "hello\n"}
	files, done, err := ParseResults(strings.NewReader(guestStream(in, true)))
	if err != nil || !done || len(files) != 2 {
		t.Fatalf("files=%d done=%v err=%v", len(files), done, err)
	}
	for _, f := range files {
		if string(f.Data) != in[f.Name] {
			t.Errorf("%s = %q", f.Name, f.Data)
		}
	}
	// A byte ahead of the first header (raspi3b's mini UART leaves one
	// when the kernel probes it) costs nothing.
	files, done, err = ParseResults(strings.NewReader("X" + guestStream(in, false)))
	if err != nil || !done || len(files) != 2 {
		t.Errorf("a stray byte first: files=%d done=%v err=%v", len(files), done, err)
	}
	// A flipped character fails the file, not the others.
	s := guestStream(in, false)
	i := strings.Index(s, "\n") + 5
	bad := s[:i] + string(rune(s[i]^1)) + s[i+1:]
	files, _, err = ParseResults(strings.NewReader(bad))
	if err == nil || !strings.Contains(err.Error(), "a.json") {
		t.Errorf("corrupted a.json: err = %v", err)
	}
	if len(files) != 1 || files[0].Name != "b.txt" {
		t.Errorf("corrupted a.json: kept %v", cpioNamesOf(files))
	}
	// A wrong checksum in the header (the data decodes fine) fails too.
	good := guestStream(in, false)
	sum := sha([]byte(in["b.txt"]))
	files, _, err = ParseResults(strings.NewReader(strings.Replace(good, sum, strings.Repeat("0", len(sum)), 1)))
	if err == nil || !strings.Contains(err.Error(), "b.txt: checksum") || len(files) != 1 {
		t.Errorf("wrong checksum: files=%v err=%v", cpioNamesOf(files), err)
	}
	// Cut off in the middle: not done, and an error naming the file.
	cut := s[:strings.Index(s, "@@WS-EOF a.json")]
	_, done, err = ParseResults(strings.NewReader(cut))
	if done || err == nil || !strings.Contains(err.Error(), "cut off") {
		t.Errorf("cut-off stream: done=%v err=%v", done, err)
	}
}

func cpioNamesOf(fs []ResultFile) []string {
	var n []string
	for _, f := range fs {
		n = append(n, f.Name)
	}
	return n
}

// The generated guest scripts must at least parse.
func TestInitScriptsParse(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	loads := []moduleLoad{{Name: "usbcore", Source: "stock"}, {Name: "dummy_hcd", Params: "is_super_speed=1", Source: "stock"}}
	for _, name := range ScenarioNames() {
		o := Options{Scenario: name, Duration: 3e9, Streams: 2, Direction: "both", Speed: "super", Exec: "echo 'quoted' \"x\""}
		for i, script := range []string{initWrapper, initLib, initScript(scenarios[name], o, loads)} {
			cmd := exec.Command(sh, "-n")
			cmd.Stdin = strings.NewReader(script)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s script %d does not parse: %v\n%s", name, i, err, out)
			}
		}
		// Every function main.sh calls is defined in lib.sh or main.sh.
		main := initScript(scenarios[name], o, loads)
		for _, fn := range []string{"ws", "fail", "finish", "ws_counters", "ws_wait_ping", "ws_wait_driver", "ws_pin_tracepoints"} {
			used := strings.Contains(main, "\n"+fn+" ") || strings.Contains(main, "\n"+fn+"\n") || strings.Contains(main, "|| "+fn+" ")
			if used && !strings.Contains(initLib+main, fn+"() {") {
				t.Errorf("%s: main.sh calls %s, which nothing defines", name, fn)
			}
		}
	}
}

// --threaded reaches the usbnet device of the usbnet scenarios, and every
// run records what the knob says.
func TestDUTThreadedKnob(t *testing.T) {
	for name, ifVar := range map[string]string{"usb-gadget": "HIF", "bql": "HIF", "usb-nic": "DIF"} {
		for threaded, want := range map[string]string{"off": "echo 0 > /sys/class/net/$" + ifVar + "/threaded", "on": "echo 1 > /sys/class/net/$" + ifVar + "/threaded", "": ""} {
			script := scenarios[name].Script(Options{Scenario: name, Duration: 3e9, Streams: 2, Direction: "send", Speed: "super", Threaded: threaded})
			if want != "" && !strings.Contains(script, want) {
				t.Errorf("%s --threaded %s: script lacks %q", name, threaded, want)
			}
			if threaded == "" && strings.Contains(script, "/threaded 2>/dev/null ||") {
				t.Errorf("%s without --threaded writes the knob", name)
			}
			if !strings.Contains(script, "dut_threaded=$(cat /sys/class/net/$"+ifVar+"/threaded") {
				t.Errorf("%s --threaded %q: the knob's value is not recorded", name, threaded)
			}
		}
	}
}

// --tune adds tune apply after usb-nic's bench against the host
// namespace's server, passes its flags through, and re-plugs twice.
func TestNICTuneStep(t *testing.T) {
	o := Options{Scenario: "usb-nic", Duration: 3e9, Streams: 2, Direction: "both", Tune: "--direction receive --pairs 4"}
	script := initScript(scenarios["usb-nic"], o, nil)
	for _, want := range []string{
		"'/usr/bin/wirespeed' 'tune' 'apply' '--peer' '" + nicHostAddr + "' '--json' '--direction' 'receive' '--pairs' '4' \"$DIF\" > /results/tune-apply.json",
		"wirespeed tune persist --json",
		"ws_replug no-udevd",
		"tune-apply-static.json",
		"ws_replug udevd",
		"/results/rps-replug-udevd.txt",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the tune step lacks %q", want)
		}
	}
	// The bench comes first: doctor needs the interrupt count it leaves.
	if b, a := strings.Index(script, "wirespeed' 'bench'"), strings.Index(script, "'tune' 'apply'"); b < 0 || a < b {
		t.Errorf("with --tune the bench (at %d) does not come before tune apply (at %d)", b, a)
	}
	if sh, err := exec.LookPath("sh"); err == nil {
		cmd := exec.Command(sh, "-n")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("the tune script does not parse: %v\n%s", err, out)
		}
	}
	o.Tune = ""
	if s := initScript(scenarios["usb-nic"], o, nil); strings.Contains(s, "tune apply") || !strings.Contains(s, "wirespeed' 'bench'") {
		t.Error("without --tune usb-nic does not run its bench alone")
	}
	// The hard timeout grows with the pairs and the duration asked for.
	base := tuneTime(Options{Tune: "--pairs 3"})
	if more := tuneTime(Options{Tune: "--pairs=6 --duration 10s"}); more <= base {
		t.Errorf("tuneTime: 6 pairs of 10s (%v) not longer than 3 of 5s (%v)", more, base)
	}
	if o := (Options{Tune: "--pairs 3", Direction: "receive", Duration: 5e9}); scenarios["usb-nic"].MaxTime(o) != benchTime(o)+base {
		t.Errorf("usb-nic MaxTime with --tune = %v, want the bench's and tuneTime's %v", scenarios["usb-nic"].MaxTime(o), benchTime(o)+base)
	}
}

// --tune is refused, naming the scenarios that take it, everywhere but on
// usb-nic and usbdev (usbdev-stress too: it runs no bench to tune against).
func TestTuneOnlyOnNICs(t *testing.T) {
	for _, name := range []string{"usb-gadget", "usbdev-stress", "wireguard"} {
		c := Config{Options: Options{Scenario: name, Duration: 3e9, Streams: 2, Direction: "send", Tunnels: 4, Tune: "--pairs 3"}}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "usb-nic and usbdev") {
			t.Errorf("--tune on %s: err %v, want one naming usb-nic and usbdev", name, err)
		}
	}
	for _, name := range []string{"usb-nic", "usbdev"} {
		c := Config{Options: Options{Scenario: name, Duration: 3e9, Streams: 2, Direction: "send", Tune: "--pairs 3"}}
		if name == "usbdev" {
			c.Device = "ax88179"
		}
		if err := c.Validate(); err != nil {
			t.Errorf("--tune on %s: %v", name, err)
		}
	}
}

// The tune step's run archive carries the host's udevadm and the libraries
// it needs, and nothing without --tune.
func TestTuneFilesCarryUdevd(t *testing.T) {
	if f, err := tuneFiles(Options{}, ""); err != nil || len(f) != 0 {
		t.Errorf("without --tune: %d files, err %v; want none", len(f), err)
	}
	if !fileExists(udevadmHost) {
		t.Skip("no " + udevadmHost + " on this host (apt-get install udev)")
	}
	f, err := tuneFiles(Options{Tune: "--pairs 3"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(f["usr/bin/udevadm"]) == 0 {
		t.Error("udevadm is not in the tune step's files")
	}
	libs, err := SharedLibs(udevadmHost)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		if _, ok := f[strings.TrimPrefix(l, "/")]; !ok {
			t.Errorf("udevadm needs %s, which is not in the files", l)
		}
	}
}

// FuzzParseResults: the results channel carries what the guest wrote;
// no stream makes the parser panic, and every file it keeps matches the
// size and checksum its header gave.
func FuzzParseResults(f *testing.F) {
	f.Add(guestStream(map[string]string{"a.json": "{}", "b.txt": "hello\n"}, true))
	f.Add("X@@WS-FILE a 3 abc\nZm9v\n@@WS-EOF a\n@@WS-DONE\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		files, _, _ := ParseResults(strings.NewReader(in))
		for _, r := range files {
			if strings.ContainsAny(r.Name, "/") {
				t.Errorf("a result file named %q", r.Name)
			}
		}
	})
}
