// SPDX-License-Identifier: Apache-2.0

package datapath

import (
	"encoding/json"
	"strings"
	"testing"
)

// The texts files have always carried, with the facts they must read back
// as. A change of wording here changes the JSON of inspect and observe.
var known = []struct {
	text  string
	class Class
	gro   State
	mode  Mode
}{
	{"NAPI + GRO (softirq)", NAPI, Yes, Softirq},
	{"NAPI + GRO (threaded)", NAPI, Yes, Threaded},
	{"NAPI, GRO off (softirq)", NAPI, No, Softirq},
	{"NAPI, GRO off (threaded)", NAPI, No, Threaded},
	{"NAPI (softirq)", NAPI, Unknown, Softirq},
	{"NAPI (threaded)", NAPI, Unknown, Threaded},
	{"NAPI + GRO", NAPI, Yes, ModeUnset},
	{"NAPI, no GRO", NAPI, No, ModeUnset},
	{"NAPI", NAPI, Unknown, ModeUnset},
	{"netif_rx backlog (loopback)", NetifRx, No, ModeUnset},
	{"netif_rx backlog (usbnet: no NAPI, no GRO)", NetifRx, No, ModeUnset},
	{"netif_rx backlog (no NAPI, no GRO)", NetifRx, No, ModeUnset},
	{"no NAPI registered", NoNAPI, No, ModeUnset},
	{"mt76 usb-rx worker (no NAPI, no GRO)", Worker, No, ModeUnset},
	{"unknown (napi-get unavailable)", Undetermined, Unknown, ModeUnset},
	{"unknown (mt76 USB: no RX kthread seen)", Undetermined, Unknown, ModeUnset},
	{"unknown (WiFi driver: NAPI not visible)", Undetermined, Unknown, ModeUnset},
	{"netif_receive_skb outside NAPI (no GRO)", Direct, No, ModeUnset},
	{"per-CPU backlog NAPIs (process_backlog: netif_rx and RPS queues)", Backlog, Unknown, ModeUnset},
	{"no RX seen", Idle, Unknown, ModeUnset},
	{"unclassified", Other, Unknown, ModeUnset},
	{"bridge: in its ports' NAPI poll (no RX path of its own)", Borrowed, Unknown, ModeUnset},
	{"DSA user port: gro_cells in the conduit's NAPI (per-CPU NAPI + GRO, no NAPI id)", Borrowed, Unknown, ModeUnset},
	{"tap fed by vhost-net (the guest's GSO frames, in the vhost worker)", Injected, Unknown, ModeUnset},
	{"tun fed by a userspace tunnel (coalesced GSO packets, in the writer's context)", Injected, Unknown, ModeUnset},
	{"tun/tap fed by a process (netif_receive_skb in the writer's context)", Injected, Unknown, ModeUnset},
	{"NAPI on the driver's internal netdev (not in napi-get)", NAPI, Unknown, ModeUnset},
}

func TestPathTexts(t *testing.T) {
	seen := map[Path]bool{}
	for _, k := range known {
		p := ParsePath(k.text)
		if p.Class() != k.class || p.GRO() != k.gro || p.Mode() != k.mode {
			t.Errorf("%q: class %v gro %v mode %v, want %v %v %v", k.text, p.Class(), p.GRO(), p.Mode(), k.class, k.gro, k.mode)
		}
		if p.String() != k.text {
			t.Errorf("%q renders as %q", k.text, p.String())
		}
		if seen[p] {
			t.Errorf("%q: a second text for one path", k.text)
		}
		seen[p] = true
	}
	// Every path the package knows is in the list above.
	if len(byText) != len(known) {
		t.Errorf("%d known texts, the test lists %d", len(byText), len(known))
	}
}

func TestPathJSONRoundTrip(t *testing.T) {
	type rec struct {
		RXPath Path  `json:"rx_path"`
		State  State `json:"state"`
	}
	for _, k := range known {
		in := `{"rx_path":"` + k.text + `","state":"yes"}`
		var r rec
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if r.RXPath.Class() != k.class || r.State != Yes {
			t.Errorf("%s: read %v %v", in, r.RXPath.Class(), r.State)
		}
		out, err := json.Marshal(r)
		if err != nil || string(out) != in {
			t.Errorf("%s: written back as %s (%v)", in, out, err)
		}
	}
}

// A text this version does not know keeps its words and gets no class: no
// rule may take "NAPI + XDP (busy-poll)" for NAPI, nor "no NAPI yet" for
// NoNAPI.
func TestPathUnrecognised(t *testing.T) {
	for _, s := range []string{"NAPI + XDP (busy-poll)", "no NAPI yet", "netif_rx backlog", "napi + gro", ""} {
		p := ParsePath(s)
		if p.Class() != Unrecognised || p.GRO() != Unknown || p.String() != s {
			t.Errorf("%q: class %v gro %v text %q", s, p.Class(), p.GRO(), p.String())
		}
		var q Path
		b, _ := json.Marshal(p)
		if err := json.Unmarshal(b, &q); err != nil || q != p {
			t.Errorf("%q: round trip %s -> %+v (%v)", s, b, q, err)
		}
	}
	if !ParsePath("").IsZero() || ParsePath("x").IsZero() {
		t.Error("IsZero")
	}
	if ParsePath("NAPI + XDP") == ParsePath("NAPI + GRO") {
		t.Error("an unrecognised path equals a known one")
	}
}

func TestState(t *testing.T) {
	for _, s := range []State{Unknown, Yes, No} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back State
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Errorf("%v: %s -> %v (%v)", s, b, back, err)
		}
	}
	var zero State
	if zero != Unknown || Of(true) != Yes || Of(false) != No {
		t.Error("zero value or Of")
	}
	for _, bad := range []string{`"maybe"`, `"YES"`, `""`, `1`} {
		var s State = Yes
		err := json.Unmarshal([]byte(bad), &s)
		if err == nil {
			t.Errorf("%s: accepted as %v", bad, s)
		} else if bad != `1` && !strings.Contains(err.Error(), "yes, no, unknown") {
			t.Errorf("%s: error %q does not say what is allowed", bad, err)
		}
		if s != Yes {
			t.Errorf("%s: a refused value changed the state to %v", bad, s)
		}
	}
	if _, err := State(9).MarshalText(); err == nil {
		t.Error("an invalid state marshalled")
	}
}
