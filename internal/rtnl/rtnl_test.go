// SPDX-License-Identifier: Apache-2.0

package rtnl

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"

	"github.com/wirespeed/wirespeed/internal/testnet"
)

// rtmNewQdisc builds an RTM_NEWQDISC payload: struct tcmsg + attributes.
func rtmNewQdisc(t *testing.T, ifindex int32, handle, parent uint32, attrs func(ae *netlink.AttributeEncoder)) []byte {
	t.Helper()
	b := make([]byte, tcmsgLen)
	b[0] = familyNone
	binary.NativeEndian.PutUint32(b[4:], uint32(ifindex))
	binary.NativeEndian.PutUint32(b[8:], handle)
	binary.NativeEndian.PutUint32(b[12:], parent)
	binary.NativeEndian.PutUint32(b[16:], 2) // tcm_info: refcnt
	if attrs != nil {
		ae := netlink.NewAttributeEncoder()
		attrs(ae)
		ab, err := ae.Encode()
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, ab...)
	}
	return b
}

func TestParseQdisc(t *testing.T) {
	kind := func(k string) func(ae *netlink.AttributeEncoder) {
		return func(ae *netlink.AttributeEncoder) {
			ae.String(tcaKind, k)
			ae.Bytes(2, []byte{1, 2, 3, 4}) // TCA_OPTIONS: ignored
		}
	}
	tests := []struct {
		name           string
		ifindex        int32
		handle, parent uint32
		want           Qdisc
	}{
		{"default noqueue", 1, 0, 0xFFFFFFFF, Qdisc{Ifindex: 1, Kind: "noqueue", Handle: "0:", Parent: "root", Root: true}},
		{"fq_codel root", 7, 0x80010000, 0xFFFFFFFF, Qdisc{Ifindex: 7, Kind: "fq_codel", Handle: "8001:", Parent: "root", Root: true}},
		{"mq child", 3, 0, 0x00010002, Qdisc{Ifindex: 3, Kind: "pfifo_fast", Handle: "0:", Parent: "1:2"}},
		{"clsact", 3, 0xFFFF0000, 0xFFFFFFF1, Qdisc{Ifindex: 3, Kind: "clsact", Handle: "ffff:", Parent: "ffff:fff1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseQdisc(rtmNewQdisc(t, tt.ifindex, tt.handle, tt.parent, kind(tt.want.Kind)))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if _, err := parseQdisc(make([]byte, 10)); err == nil {
		t.Error("short tcmsg accepted")
	}
	if _, err := parseQdisc(rtmNewQdisc(t, 1, 0, 0xFFFFFFFF, nil)); err == nil {
		t.Error("qdisc without TCA_KIND accepted")
	}
}

func TestFormatHandle(t *testing.T) {
	for h, want := range map[uint32]string{
		0xFFFFFFFF: "root",
		0:          "none",
		0x00010000: "1:",
		0x00010002: "1:2",
		0x0000000a: ":a",
		0xFFFFFFF1: "ffff:fff1",
		0x8001abcd: "8001:abcd",
	} {
		if got := FormatHandle(h); got != want {
			t.Errorf("FormatHandle(%#x) = %q, want %q", h, got, want)
		}
	}
}

func TestQdiscJSON(t *testing.T) {
	b, err := json.Marshal(Qdisc{Ifindex: 2, Kind: "fq_codel", Handle: "8001:", Parent: "root", Root: true})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"ifindex":2,"kind":"fq_codel","handle":"8001:","parent":"root","root":true}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}

// TestHostDump reads the caller's namespace (read only): every qdisc has
// a kind and a positive ifindex, and no device has two roots.
func TestHostDump(t *testing.T) {
	qs, err := DumpQdiscs()
	if err != nil {
		t.Fatal(err)
	}
	roots := map[int]int{}
	for _, q := range qs {
		if q.Kind == "" || q.Ifindex <= 0 {
			t.Errorf("bad qdisc %+v", q)
		}
		if q.Root {
			roots[q.Ifindex]++
		}
	}
	for ifi, n := range roots {
		if n != 1 {
			t.Errorf("ifindex %d has %d root qdiscs", ifi, n)
		}
	}
	t.Logf("%+v", qs)
}

// tcQdiscs parses `tc qdisc show` into "ifindex kind handle parent"
// strings, using ifindexes to map device names.
func tcQdiscs(t *testing.T, ns *testnet.NS, ifindexes map[string]string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(ns.Run(t, "tc", "qdisc", "show"), "\n") {
		f := strings.Fields(line)
		// qdisc KIND HANDLE dev DEV (root|parent P) ...
		if len(f) < 6 || f[0] != "qdisc" || f[3] != "dev" {
			continue
		}
		parent := f[5]
		if parent == "parent" && len(f) > 6 {
			parent = f[6]
		}
		ifi, ok := ifindexes[f[4]]
		if !ok {
			t.Fatalf("tc shows unknown device %q", f[4])
		}
		out = append(out, fmt.Sprintf("%s %s %s %s", ifi, f[1], f[2], parent))
	}
	slices.Sort(out)
	return out
}

func TestVethQdiscsMatchTc(t *testing.T) {
	ns := testnet.New(t)
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skipf("needs tc(8): %v", err)
	}
	a, b := testnet.VethNames(t)
	ns.Run(t, "ip", "link", "add", a, "numtxqueues", "2", "type", "veth", "peer", "name", b)
	ns.Run(t, "ip", "link", "set", a, "up")
	ns.Run(t, "ip", "link", "set", b, "up")
	ns.Run(t, "ip", "link", "set", "lo", "up")
	ifindexes := map[string]string{}
	for _, dev := range []string{"lo", a, b} {
		ifindexes[dev] = ns.Run(t, "cat", "/sys/class/net/"+dev+"/ifindex")
	}

	check := func(stage string) []Qdisc {
		t.Helper()
		var qs []Qdisc
		var err error
		ns.Do(t, func() { qs, err = DumpQdiscs() })
		if err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		var got []string
		for _, q := range qs {
			got = append(got, fmt.Sprintf("%d %s %s %s", q.Ifindex, q.Kind, q.Handle, q.Parent))
			if q.Root != (q.Parent == "root") {
				t.Errorf("%s: %+v: Root disagrees with Parent", stage, q)
			}
		}
		slices.Sort(got)
		want := tcQdiscs(t, ns, ifindexes)
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q (tc qdisc show)", stage, got, want)
		}
		return qs
	}
	root := func(qs []Qdisc, dev string) *Qdisc {
		for i := range qs {
			if fmt.Sprint(qs[i].Ifindex) == ifindexes[dev] && qs[i].Root {
				return &qs[i]
			}
		}
		return nil
	}

	qs := check("defaults")
	if r := root(qs, a); r == nil || r.Kind != "noqueue" {
		t.Errorf("default root qdisc of veth = %+v, want noqueue", r)
	}

	// fq_codel is the interesting one, but kernels may lack it
	// (CONFIG_NET_SCH_FQ_CODEL=n on the test VM); htb is the fallback.
	rootKind := "fq_codel"
	if out, err := exec.Command("ip", "netns", "exec", ns.Name, "tc", "qdisc", "add", "dev", a, "root", "handle", "8001:", rootKind).CombinedOutput(); err != nil {
		t.Logf("tc qdisc add fq_codel: %v: %s; using htb", err, out)
		rootKind = "htb"
		ns.Run(t, "tc", "qdisc", "add", "dev", a, "root", "handle", "8001:", rootKind)
	}
	ns.Run(t, "tc", "qdisc", "add", "dev", b, "root", "handle", "1:", "mq")
	ns.Run(t, "tc", "qdisc", "add", "dev", b, "clsact")
	qs = check(rootKind + ", mq, clsact")
	if r := root(qs, a); r == nil || r.Kind != rootKind || r.Handle != "8001:" || r.Parent != "root" {
		t.Errorf("root qdisc of %s = %+v, want %s 8001:", a, r, rootKind)
	}
	if r := root(qs, b); r == nil || r.Kind != "mq" || r.Handle != "1:" {
		t.Errorf("root qdisc of %s = %+v, want mq 1:", b, r)
	}
	t.Logf("%+v", qs)
}
