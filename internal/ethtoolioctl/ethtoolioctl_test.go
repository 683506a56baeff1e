// SPDX-License-Identifier: Apache-2.0

package ethtoolioctl

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/testnet"
)

// gstrings builds a struct ethtool_gstrings answer for names.
func gstrings(names []string) []byte {
	b := make([]byte, 12+len(names)*ethGStringLen)
	binary.NativeEndian.PutUint32(b[0:], ethtoolGSTRINGS)
	binary.NativeEndian.PutUint32(b[4:], ethSSFeatures)
	binary.NativeEndian.PutUint32(b[8:], uint32(len(names)))
	for i, n := range names {
		copy(b[12+i*ethGStringLen:], n)
	}
	return b
}

// gfeatures builds a struct ethtool_gfeatures answer; blocks[i] is
// {available, requested, active, never_changed}.
func gfeatures(size uint32, blocks ...[4]uint32) []byte {
	b := make([]byte, 8+16*len(blocks))
	binary.NativeEndian.PutUint32(b[0:], ethtoolGFeatures)
	binary.NativeEndian.PutUint32(b[4:], size)
	for i, blk := range blocks {
		for j, w := range blk {
			binary.NativeEndian.PutUint32(b[8+16*i+4*j:], w)
		}
	}
	return b
}

func TestParseSSetInfo(t *testing.T) {
	b := make([]byte, 20)
	binary.NativeEndian.PutUint64(b[8:], 1<<ethSSFeatures)
	binary.NativeEndian.PutUint32(b[16:], 66)
	if n, err := parseSSetInfo(b); err != nil || n != 66 {
		t.Fatalf("got %d, %v; want 66", n, err)
	}
	binary.NativeEndian.PutUint64(b[8:], 0) // kernel cleared the bit: no such set
	if _, err := parseSSetInfo(b); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("err = %v, want ErrNotSupported", err)
	}
	if _, err := parseSSetInfo(b[:10]); err == nil {
		t.Fatal("short buffer accepted")
	}
}

func TestParseGStrings(t *testing.T) {
	long := strings.Repeat("x", ethGStringLen) // no NUL terminator
	got, err := parseGStrings(gstrings([]string{"tx-scatter-gather", "", long}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "tx-scatter-gather" || got[1] != "" || got[2] != long {
		t.Fatalf("got %q", got)
	}
	bad := gstrings([]string{"a"})
	binary.NativeEndian.PutUint32(bad[8:], 2) // claims 2 strings, holds 1
	if _, err := parseGStrings(bad); err == nil {
		t.Fatal("overlong count accepted")
	}
}

func TestDecodeFeatures(t *testing.T) {
	// 40 names: bits 0..31 in block 0, 32..39 in block 1.
	names := make([]string, 40)
	for i := range names {
		names[i] = fmt.Sprintf("f%d", i)
	}
	names[0] = RxGRO
	names[1] = TxTSO
	names[2] = RxLRO
	names[5] = "" // unnamed bit is skipped
	names[33] = TxGSO
	const (
		avail  = 0
		req    = 1
		active = 2
		never  = 3
	)
	var b0, b1 [4]uint32
	// rx-gro: changeable, on.
	b0[avail] |= 1 << 0
	b0[req] |= 1 << 0
	b0[active] |= 1 << 0
	// tso: changeable, requested on but inactive (e.g. SG off).
	b0[avail] |= 1 << 1
	b0[req] |= 1 << 1
	// rx-lro: not changeable (not available), off -> fixed.
	// gso (bit 33): available but never_changed, active -> fixed on.
	b1[avail] |= 1 << 1
	b1[active] |= 1 << 1
	b1[never] |= 1 << 1

	got, err := decodeFeatures(names, gfeatures(2, b0, b1))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Feature{
		RxGRO: {Name: RxGRO, Active: true, Requested: true},
		TxTSO: {Name: TxTSO, Requested: true},
		RxLRO: {Name: RxLRO, Fixed: true},
		TxGSO: {Name: TxGSO, Active: true, Fixed: true},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s = %+v, want %+v", name, got[name], w)
		}
	}
	if len(got) != 39 {
		t.Errorf("got %d features, want 39 (40 names, one unnamed)", len(got))
	}
	if _, ok := got[""]; ok {
		t.Error("unnamed feature reported")
	}

	// The kernel reporting fewer blocks than we asked for: bits beyond
	// them are not invented.
	got, err = decodeFeatures(names, gfeatures(1, b0, b1))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[TxGSO]; ok || len(got) != 31 {
		t.Errorf("with size 1: got %d features (gso present: %v), want 31", len(got), ok)
	}
}

func TestFeatureJSON(t *testing.T) {
	b, err := json.Marshal(map[string]Feature{RxGRO: {Name: RxGRO, Active: true, Requested: true}})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"rx-gro":{"name":"rx-gro","active":true,"fixed":false,"requested":true}}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}

func TestUnknownInterface(t *testing.T) {
	for _, name := range []string{fmt.Sprintf("ws-nx%d", os.Getpid()), "", "this-name-is-too-long"} {
		_, err := Features(name)
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Features(%q) err = %v, want os.ErrNotExist", name, err)
		}
	}
}

// TestLoopbackHost reads the host's lo (exists in every namespace; read
// only, no privileges needed).
func TestLoopbackHost(t *testing.T) {
	f, err := Features("lo")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{RxGRO, TxGSO, TxTSO, RxLRO} {
		if _, ok := f[name]; !ok {
			t.Errorf("lo: feature %s missing", name)
		}
	}
	if !f["loopback"].Fixed {
		t.Errorf(`lo: "loopback" feature not fixed: %+v`, f["loopback"])
	}
}

// legacyNames maps names `ethtool -k` prints instead of the kernel's
// feature name (ethtool's off_flag_def table, single-feature entries).
var legacyNames = map[string]string{
	"rx-checksumming":              "rx-checksum",
	"generic-segmentation-offload": TxGSO,
	"generic-receive-offload":      RxGRO,
	"large-receive-offload":        RxLRO,
	"rx-vlan-offload":              "rx-vlan-hw-parse",
	"tx-vlan-offload":              "tx-vlan-hw-insert",
	"ntuple-filters":               "rx-ntuple-filter",
	"receive-hashing":              "rx-hashing",
}

type ethtoolLine struct {
	active, fixed bool
	requested     *bool // from "[requested on|off]"
}

// parseEthtoolK parses `ethtool -k DEV` output.
func parseEthtoolK(t *testing.T, out string) map[string]ethtoolLine {
	t.Helper()
	m := make(map[string]ethtoolLine)
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ": ")
		if !ok || strings.HasPrefix(line, "Features for") {
			continue
		}
		var l ethtoolLine
		fields := strings.Fields(rest)
		l.active = fields[0] == "on"
		if fields[0] != "on" && fields[0] != "off" {
			t.Fatalf("cannot parse ethtool line %q", line)
		}
		l.fixed = strings.Contains(rest, "[fixed]")
		if on := strings.Contains(rest, "[requested on]"); on || strings.Contains(rest, "[requested off]") {
			l.requested = &on // not new(on): that needs go 1.26, go.mod asks for 1.25
		}
		m[name] = l
	}
	return m
}

// compareWithEthtool checks Features(dev) against `ethtool -k dev` run in
// the same namespace (ns, or the caller's own if ns is nil) and returns our
// result.
func compareWithEthtool(t *testing.T, ns *testnet.NS, dev string) map[string]Feature {
	t.Helper()
	var got map[string]Feature
	var err error
	var out string
	if ns == nil { // the caller's own namespace, read only
		// Other programs may remove devices from this namespace meanwhile.
		got, err = Features(dev)
		if errors.Is(err, os.ErrNotExist) {
			t.Skipf("%s vanished: %v", dev, err)
		}
		b, err2 := exec.Command("ethtool", "-k", dev).Output()
		if err2 != nil {
			t.Skipf("ethtool -k %s: %v (device gone?)", dev, err2)
		}
		out = string(b)
	} else {
		ns.Do(t, func() { got, err = Features(dev) })
		out = ns.Run(t, "ethtool", "-k", dev)
	}
	if err != nil {
		t.Fatal(err)
	}
	lines := parseEthtoolK(t, out)
	compared := 0
	for name, l := range lines {
		kname := name
		if k, ok := legacyNames[name]; ok {
			kname = k
		}
		f, ok := got[kname]
		if !ok {
			continue // group headings such as tcp-segmentation-offload
		}
		compared++
		if f.Active != l.active || f.Fixed != l.fixed {
			t.Errorf("%s %s: got active=%v fixed=%v, ethtool says %q active=%v fixed=%v",
				dev, kname, f.Active, f.Fixed, name, l.active, l.fixed)
		}
		if l.requested != nil && f.Requested != *l.requested {
			t.Errorf("%s %s: requested=%v, ethtool says %v", dev, kname, f.Requested, *l.requested)
		}
		if l.requested == nil && !f.Fixed && f.Requested != f.Active {
			t.Errorf("%s %s: requested=%v active=%v but ethtool shows no [requested]", dev, kname, f.Requested, f.Active)
		}
	}
	for _, must := range []string{RxGRO, RxGROHW, RxGROList, RxLRO, RxUDPGROForwarding, TxGSO, TxTSO, TxTSO6, TxTSOECN, TxTSOMangleID} {
		if _, ok := got[must]; !ok {
			t.Errorf("%s: feature %s missing", dev, must)
		}
	}
	t.Logf("%s: %d features compared with ethtool -k", dev, compared)
	if compared < 40 {
		t.Errorf("%s: only %d features compared with ethtool -k (of %d ours, %d lines)", dev, compared, len(got), len(lines))
	}
	return got
}

func TestVethFeaturesMatchEthtool(t *testing.T) {
	ns := testnet.New(t)
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skipf("needs ethtool(8): %v", err)
	}
	a, b := ns.AddVeth(t)

	for _, dev := range []string{"lo", a, b} {
		compareWithEthtool(t, ns, dev)
	}

	ns.Run(t, "ethtool", "-K", a, "gro", "on", "rx-gro-list", "on", "gso", "off")
	f := compareWithEthtool(t, ns, a)
	if !f[RxGRO].Active || !f[RxGROList].Active || f[TxGSO].Active {
		t.Errorf("after -K gro on rx-gro-list on gso off: %+v %+v %+v", f[RxGRO], f[RxGROList], f[TxGSO])
	}

	// TSO depends on scatter-gather: with sg off, tso stays requested but
	// becomes inactive.
	ns.Run(t, "ethtool", "-K", a, "tso", "on", "sg", "off")
	f = compareWithEthtool(t, ns, a)
	if tso := f[TxTSO]; tso.Active || !tso.Requested || tso.Fixed {
		t.Errorf("tso with sg off = %+v, want requested, inactive, not fixed", tso)
	}
}

// TestHostDevicesMatchEthtool compares every device of the caller's
// namespace with `ethtool -k` (read only; no privileges needed).
func TestHostDevicesMatchEthtool(t *testing.T) {
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skipf("needs ethtool(8): %v", err)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifi := range ifs {
		t.Run(ifi.Name, func(t *testing.T) { compareWithEthtool(t, nil, ifi.Name) })
	}
}

func TestParseDrvInfo(t *testing.T) {
	b := make([]byte, drvInfoSize)
	copy(b[4:], "veth")
	copy(b[36:], "1.0")
	copy(b[100:], "0000:00:03.0")
	got := parseDrvInfo(b)
	if got != (DrvInfo{Driver: "veth", Version: "1.0", BusInfo: "0000:00:03.0"}) {
		t.Errorf("parseDrvInfo = %+v", got)
	}
	if d, err := DriverInfo("lo"); err != nil {
		t.Logf("lo: %v", err)
	} else if d.Driver == "" {
		t.Errorf("lo has no driver name: %+v", d)
	}
	if _, err := DriverInfo("ws-no-such-if"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unknown interface: %v", err)
	}
}
