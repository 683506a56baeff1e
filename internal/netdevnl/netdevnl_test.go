// SPDX-License-Identifier: Apache-2.0

package netdevnl

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"

	"github.com/wirespeed/wirespeed/internal/testnet"
)

func ptr[T any](v T) *T { return &v }

func encode(t *testing.T, fn func(ae *netlink.AttributeEncoder)) []byte {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	fn(ae)
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonEq(t *testing.T, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("got  %s\nwant %s", g, w)
	}
}

func TestParseNAPI(t *testing.T) {
	tests := []struct {
		name string
		in   func(ae *netlink.AttributeEncoder)
		want NAPI
	}{
		{
			// What a 6.8-6.12 kernel sends for a NAPI without IRQ/thread.
			name: "minimal",
			in: func(ae *netlink.AttributeEncoder) {
				ae.Uint32(attrNAPIIfindex, 4)
				ae.Uint32(attrNAPIID, 257)
			},
			want: NAPI{ID: 257, Ifindex: 4},
		},
		{
			name: "all attributes, 4-byte uints, zero values kept",
			in: func(ae *netlink.AttributeEncoder) {
				ae.Uint32(attrNAPIIfindex, 7)
				ae.Uint32(attrNAPIID, 8193)
				ae.Uint32(attrNAPIIRQ, 42)
				ae.Uint32(attrNAPIPID, 1234)
				ae.Uint32(attrNAPIDeferHardIRQs, 0)
				ae.Uint32(attrNAPIGROFlushTimeout, 20000)
				ae.Uint32(attrNAPIIRQSuspendTimeout, 0)
				ae.Uint32(attrNAPIThreaded, ThreadedEnabled)
				ae.Uint32(99, 1) // unknown future attribute: ignored
			},
			want: NAPI{ID: 8193, Ifindex: 7, IRQ: ptr(42), PID: ptr(1234), DeferHardIRQs: ptr(uint32(0)),
				GROFlushTimeoutNS: ptr(uint64(20000)), IRQSuspendTimeoutNS: ptr(uint64(0)), Threaded: ptr(uint32(1))},
		},
		{
			name: "8-byte uints",
			in: func(ae *netlink.AttributeEncoder) {
				ae.Uint32(attrNAPIIfindex, 7)
				ae.Uint32(attrNAPIID, 1)
				ae.Uint64(attrNAPIGROFlushTimeout, 5_000_000_000)
				ae.Uint64(attrNAPIIRQSuspendTimeout, 1<<40)
				ae.Uint32(attrNAPIThreaded, ThreadedBusyPoll)
			},
			want: NAPI{ID: 1, Ifindex: 7, GROFlushTimeoutNS: ptr(uint64(5_000_000_000)),
				IRQSuspendTimeoutNS: ptr(uint64(1 << 40)), Threaded: ptr(uint32(2))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseNAPI(encode(t, tt.in))
			if err != nil {
				t.Fatal(err)
			}
			jsonEq(t, got, tt.want)
		})
	}
}

func TestNAPIJSONAbsentVsZero(t *testing.T) {
	b, err := json.Marshal(NAPI{ID: 1, Ifindex: 2, DeferHardIRQs: ptr(uint32(0))})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":1,"ifindex":2,"defer_hard_irqs":0}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
	var back NAPI
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.IRQ != nil || back.DeferHardIRQs == nil || *back.DeferHardIRQs != 0 {
		t.Fatalf("round trip lost absent/zero distinction: %+v", back)
	}
}

func TestParseQueue(t *testing.T) {
	got, err := parseQueue(encode(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(attrQueueID, 3)
		ae.Uint32(attrQueueIfindex, 4)
		ae.Uint32(attrQueueType, queueTypeRX)
		ae.Uint32(attrQueueNAPIID, 257)
	}))
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, got, Queue{ID: 3, Ifindex: 4, Type: "rx", NAPIID: ptr(uint32(257))})

	got, err = parseQueue(encode(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(attrQueueID, 0)
		ae.Uint32(attrQueueIfindex, 1)
		ae.Uint32(attrQueueType, queueTypeTX)
	}))
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, got, Queue{ID: 0, Ifindex: 1, Type: "tx"})
	if queueTypeString(5) != "type-5" {
		t.Errorf("unknown type: %q", queueTypeString(5))
	}
}

var fakeFamily = genetlink.Family{ID: 0x1c, Version: 1, Name: familyName}

func TestDumpFake(t *testing.T) {
	var cmds []uint8
	c := genltest.Dial(genltest.ServeFamily(fakeFamily, func(greq genetlink.Message, nreq netlink.Message) ([]genetlink.Message, error) {
		cmds = append(cmds, greq.Header.Command)
		if nreq.Header.Type != netlink.HeaderType(fakeFamily.ID) {
			t.Errorf("request to family %d, want %d", nreq.Header.Type, fakeFamily.ID)
		}
		if nreq.Header.Flags&netlink.Dump != netlink.Dump {
			t.Errorf("request flags %v: not a dump", nreq.Header.Flags)
		}
		if len(greq.Data) != 0 {
			t.Errorf("unexpected request attributes %x", greq.Data)
		}
		switch greq.Header.Command {
		case cmdNAPIGet:
			return []genetlink.Message{
				{Data: encode(t, func(ae *netlink.AttributeEncoder) { ae.Uint32(attrNAPIIfindex, 4); ae.Uint32(attrNAPIID, 257) })},
				{Data: encode(t, func(ae *netlink.AttributeEncoder) {
					ae.Uint32(attrNAPIIfindex, 5)
					ae.Uint32(attrNAPIID, 258)
					ae.Uint32(attrNAPIPID, 99)
				})},
			}, nil
		case cmdQueueGet:
			return []genetlink.Message{{Data: encode(t, func(ae *netlink.AttributeEncoder) {
				ae.Uint32(attrQueueIfindex, 4)
				ae.Uint32(attrQueueType, queueTypeTX)
			})}}, nil
		}
		return nil, genltest.Error(int(unix.EOPNOTSUPP))
	}))
	defer c.Close()

	napis, err := dumpNAPIs(c)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, napis, []NAPI{{ID: 257, Ifindex: 4}, {ID: 258, Ifindex: 5, PID: ptr(99)}})
	queues, err := dumpQueues(c)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, queues, []Queue{{Ifindex: 4, Type: "tx"}})
	if len(cmds) != 2 || cmds[0] != 11 || cmds[1] != 10 {
		t.Errorf("commands sent %v, want [11 10] (napi-get, queue-get)", cmds)
	}
}

func TestNotSupported(t *testing.T) {
	t.Run("family missing", func(t *testing.T) {
		c := genltest.Dial(func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
			return nil, genltest.Error(int(unix.ENOENT))
		})
		defer c.Close()
		_, err := dumpNAPIs(c)
		if !errors.Is(err, ErrNotSupported) || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want ErrNotSupported and os.ErrNotExist", err)
		}
	})
	t.Run("command missing", func(t *testing.T) {
		c := errnoConn(t, unix.EOPNOTSUPP)
		defer c.Close()
		_, err := dumpQueues(c)
		if !errors.Is(err, ErrNotSupported) || !errors.Is(err, unix.EOPNOTSUPP) {
			t.Fatalf("err = %v, want ErrNotSupported", err)
		}
	})
	t.Run("other errors are not ErrNotSupported", func(t *testing.T) {
		c := errnoConn(t, unix.EPERM)
		defer c.Close()
		_, err := dumpNAPIs(c)
		if err == nil || errors.Is(err, ErrNotSupported) || !errors.Is(err, unix.EPERM) {
			t.Fatalf("err = %v, want EPERM only", err)
		}
	})
}

// errnoConn fakes a kernel that has the netdev family but answers every
// request to it with errno, the way the genetlink core answers a dump of an
// unknown command (EOPNOTSUPP). genltest.Error cannot be used for dumps:
// it echoes the request flags, which the netlink package then reads as
// NLM_F_CAPPED|NLM_F_ACK_TLVS.
func errnoConn(t *testing.T, errno unix.Errno) *genetlink.Conn {
	return genetlink.NewConn(nltest.Dial(func(reqs []netlink.Message) ([]netlink.Message, error) {
		req := reqs[0]
		if req.Header.Type == unix.GENL_ID_CTRL {
			ae := netlink.NewAttributeEncoder()
			ae.Uint16(unix.CTRL_ATTR_FAMILY_ID, fakeFamily.ID)
			ae.String(unix.CTRL_ATTR_FAMILY_NAME, fakeFamily.Name)
			ae.Uint32(unix.CTRL_ATTR_VERSION, uint32(fakeFamily.Version))
			attrs, err := ae.Encode()
			if err != nil {
				return nil, err
			}
			gm, err := (genetlink.Message{Header: genetlink.Header{Command: unix.CTRL_CMD_NEWFAMILY, Version: 2}, Data: attrs}).MarshalBinary()
			if err != nil {
				return nil, err
			}
			return []netlink.Message{{Header: netlink.Header{Sequence: req.Header.Sequence, PID: req.Header.PID}, Data: gm}}, nil
		}
		if req.Header.Type != netlink.HeaderType(fakeFamily.ID) {
			t.Errorf("request to family %d", req.Header.Type)
		}
		// struct nlmsgerr: negative errno, then the request's nlmsghdr.
		data := binary.NativeEndian.AppendUint32(nil, uint32(-int32(errno)))
		data = append(data, make([]byte, 16)...)
		return []netlink.Message{{
			Header: netlink.Header{Type: netlink.Error, Sequence: req.Header.Sequence, PID: req.Header.PID},
			Data:   data,
		}}, nil
	}))
}

// TestHostDump only checks that the running kernel answers (or cleanly
// reports ErrNotSupported); it needs no privileges and changes nothing.
func TestHostDump(t *testing.T) {
	napis, err := DumpNAPIs()
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("kernel without netdev napi-get: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	queues, err := DumpQueues()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(napis)
	t.Logf("napis: %s", b)
	b, _ = json.Marshal(queues)
	t.Logf("queues: %s", b)
}

func findNAPI(napis []NAPI, ifindex int) *NAPI {
	for i := range napis {
		if napis[i].Ifindex == ifindex {
			return &napis[i]
		}
	}
	return nil
}

func TestVethNAPI(t *testing.T) {
	ns := testnet.New(t)
	a, _ := ns.AddVeth(t)
	ifindex, err := strconv.Atoi(ns.Run(t, "cat", "/sys/class/net/"+a+"/ifindex"))
	if err != nil {
		t.Fatal(err)
	}

	dump := func() ([]NAPI, []Queue, error) {
		var napis []NAPI
		var queues []Queue
		var err error
		ns.Do(t, func() {
			napis, err = DumpNAPIs()
			if err == nil {
				queues, err = DumpQueues()
			}
		})
		return napis, queues, err
	}

	// Before GRO is enabled a veth (without XDP) has no NAPI.
	napis, _, err := dump()
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("kernel without netdev napi-get: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := findNAPI(napis, ifindex); n != nil {
		t.Logf("note: veth has a NAPI before GRO is enabled: %+v", *n)
	}

	// GRO on: veth adds one NAPI per rx queue.
	setGRO(t, ns, a)
	napis, queues, err := dump()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(napis)
	t.Logf("napis with gro on: %s", b)
	b, _ = json.Marshal(queues)
	t.Logf("queues with gro on: %s", b)
	n := findNAPI(napis, ifindex)
	if n == nil {
		t.Fatalf("no NAPI for %s (ifindex %d) after enabling GRO: %+v", a, ifindex, napis)
	}
	if n.ID == 0 {
		t.Errorf("NAPI id 0")
	}
	if n.PID != nil {
		t.Errorf("NAPI has pid %d before threaded mode was enabled", *n.PID)
	}
	if n.Threaded != nil && *n.Threaded != ThreadedDisabled {
		t.Errorf("threaded = %d before enabling, want 0", *n.Threaded)
	}
	var rx *Queue
	for i := range queues {
		if queues[i].Ifindex == ifindex && queues[i].Type == "rx" && queues[i].ID == 0 {
			rx = &queues[i]
		}
	}
	if rx == nil {
		t.Fatalf("no rx queue 0 for ifindex %d in %+v", ifindex, queues)
	}
	// veth (6.18) does not call netif_queue_set_napi(), so its queues carry
	// no napi-id; drivers that do must point at the NAPI we found.
	if rx.NAPIID == nil {
		t.Logf("rx queue of %s has no napi_id (veth does not report it)", a)
	} else if *rx.NAPIID != n.ID {
		t.Errorf("rx queue napi_id = %d, want %d", *rx.NAPIID, n.ID)
	}

	// Device-wide sysfs knobs are copied into each NAPI's config (6.13+);
	// a value above 2^32 makes the kernel send gro-flush-timeout as 8 bytes.
	if n.GROFlushTimeoutNS != nil {
		ns.Run(t, "sh", "-c", "echo 5000000000 > /sys/class/net/"+a+"/gro_flush_timeout")
		ns.Run(t, "sh", "-c", "echo 3 > /sys/class/net/"+a+"/napi_defer_hard_irqs")
		napis, _, err = dump()
		if err != nil {
			t.Fatal(err)
		}
		n = findNAPI(napis, ifindex)
		if n == nil {
			t.Fatal("NAPI vanished")
		}
		if n.GROFlushTimeoutNS == nil || *n.GROFlushTimeoutNS != 5_000_000_000 {
			t.Errorf("gro_flush_timeout_ns = %v, want 5000000000", n.GROFlushTimeoutNS)
		}
		if n.DeferHardIRQs == nil || *n.DeferHardIRQs != 3 {
			t.Errorf("defer_hard_irqs = %v, want 3", n.DeferHardIRQs)
		}
	}

	// Threaded NAPI: a kthread "napi/<dev>-<id>" serves it.
	ns.Run(t, "sh", "-c", "echo 1 > /sys/class/net/"+a+"/threaded")
	napis, _, err = dump()
	if err != nil {
		t.Fatal(err)
	}
	n = findNAPI(napis, ifindex)
	if n == nil {
		t.Fatal("NAPI vanished after enabling threaded mode")
	}
	b, _ = json.Marshal(n)
	t.Logf("threaded napi: %s", b)
	if n.PID == nil {
		t.Fatalf("threaded NAPI without pid: %+v", *n)
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(*n.PID) + "/comm")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(comm), "napi/") {
		t.Errorf("pid %d comm = %q, want napi/...", *n.PID, comm)
	}
	if n.Threaded != nil && *n.Threaded != ThreadedEnabled {
		t.Errorf("threaded = %d, want 1", *n.Threaded)
	}
}

// setGRO enables GRO on dev with ethtool(8) and waits until the kernel
// reports it active.
func setGRO(t *testing.T, ns *testnet.NS, dev string) {
	t.Helper()
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skipf("needs ethtool(8): %v", err)
	}
	ns.Run(t, "ethtool", "-K", dev, "gro", "on")
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(ns.Run(t, "ethtool", "-k", dev), "generic-receive-offload: on") {
		if time.Now().After(deadline) {
			t.Fatalf("GRO did not turn on for %s", dev)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
