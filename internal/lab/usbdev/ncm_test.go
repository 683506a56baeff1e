// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// strictNTB16 takes an NTB16 apart as a careful host must, from the CDC
// NCM 1.0 text, independently of the device's builder: one NDP16
// "NCM0", every datagram inside the block, after the headers it must not
// touch, in order, not overlapping, at least an Ethernet header long.
func strictNTB16(b []byte) ([][]byte, error) {
	u16 := func(o int) int { return int(binary.LittleEndian.Uint16(b[o:])) }
	if len(b) < 12 || string(b[:4]) != "NCMH" || u16(4) != 12 || u16(8) != len(b) {
		return nil, fmt.Errorf("NTH16")
	}
	ndp := u16(10)
	if ndp < 12 || ndp%4 != 0 || ndp+16 > len(b) || string(b[ndp:ndp+4]) != "NCM0" {
		return nil, fmt.Errorf("NDP16 at %d", ndp)
	}
	n := u16(ndp + 4)
	if n < 16 || n%4 != 0 || ndp+n > len(b) || u16(ndp+6) != 0 {
		return nil, fmt.Errorf("NDP16 length %d", n)
	}
	var out [][]byte
	end := ndp + n
	for p := ndp + 8; ; p += 4 {
		if p+4 > ndp+n {
			return nil, fmt.Errorf("no terminator")
		}
		idx, l := u16(p), u16(p+2)
		if idx == 0 && l == 0 {
			return out, nil
		}
		if idx < end || l < 14 || idx+l > len(b) {
			return nil, fmt.Errorf("datagram %d at %d+%d", len(out), idx, l)
		}
		out = append(out, b[idx:idx+l])
		end = idx + l
	}
}

// ourNTB16 builds an NTB16 the way a host does, for the bulk OUT test:
// NTH, datagrams, NDP at the end.
func ourNTB16(frames ...[]byte) []byte {
	b := make([]byte, 12)
	copy(b, "NCMH")
	var idx [][2]int
	for _, f := range frames {
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		idx = append(idx, [2]int{len(b), len(f)})
		b = append(b, f...)
	}
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	ndp := len(b)
	b = append(b, "NCM0"...)
	b = binary.LittleEndian.AppendUint16(b, uint16(8+4*(len(frames)+1)))
	b = binary.LittleEndian.AppendUint16(b, 0)
	for _, e := range idx {
		b = binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(b, uint16(e[0])), uint16(e[1]))
	}
	b = append(b, 0, 0, 0, 0)
	binary.LittleEndian.PutUint16(b[4:], 12)
	binary.LittleEndian.PutUint16(b[8:], uint16(len(b)))
	binary.LittleEndian.PutUint16(b[10:], uint16(ndp))
	return b
}

func frame(i, n int) []byte {
	f := bytes.Repeat([]byte{byte(i)}, n)
	copy(f, []byte{2, 0, 0, 0, 0, 1, 2, 0x77, 0x73, 0, 0, 1, 0x08, 0x00})
	return f
}

var testMAC = [6]byte{2, 0x77, 0x73, 0, 0, 1}

// TestNCMEnumerates: what cdc_ncm's probe reads - descriptors with the
// CDC union, Ethernet and NCM functional descriptors, the MAC string,
// the NTB parameters - and the configuration and alternate settings.
func TestNCMEnumerates(t *testing.T) {
	h := startHost(t, NewNCM(newMemLink(), 1000, testMAC, nil), nil)
	dc := h.plugged()
	if dc.Hdr[0] != usbredir.SpeedSuper || binary.LittleEndian.Uint16(dc.Hdr[4:]) != 0x1209 {
		t.Fatalf("device_connect % x", dc.Hdr)
	}
	st, dev := h.control(0x80, reqGetDescriptor, dtDevice<<8, 0, 64, nil)
	if st != usbredir.StatusSuccess || len(dev) != 18 || binary.LittleEndian.Uint16(dev[2:]) != 0x0320 || dev[7] != 9 {
		t.Fatalf("device descriptor: status %d % x", st, dev)
	}
	_, head := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, 9, nil)
	total := binary.LittleEndian.Uint16(head[2:])
	_, cfg := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, total, nil)
	if len(head) != 9 || len(cfg) != int(total) {
		t.Fatalf("configuration: %d then %d bytes of %d", len(head), len(cfg), total)
	}
	seen := map[string]bool{}
	for p := 0; p < len(cfg); p += int(cfg[p]) {
		if cfg[p] == 0 {
			t.Fatalf("zero-length descriptor at %d", p)
		}
		switch d := cfg[p : p+int(cfg[p])]; {
		case d[1] == dtCSInterface && d[2] == 0x06:
			seen[fmt.Sprintf("union %d %d", d[3], d[4])] = true
		case d[1] == dtCSInterface && d[2] == 0x0f:
			seen[fmt.Sprintf("ethernet mac string %d", d[3])] = true
		case d[1] == dtCSInterface && d[2] == 0x1a:
			seen["ncm"] = true
		case d[1] == dtEndpoint:
			if cfg[p+7+1] != dtSSCompanion {
				t.Errorf("endpoint %#x without a SuperSpeed companion", d[2])
			}
			seen[fmt.Sprintf("ep %#x type %d", d[2], d[3])] = true
		}
	}
	for _, w := range []string{"union 0 1", "ethernet mac string 4", "ncm", "ep 0x81 type 3", "ep 0x82 type 2", "ep 0x1 type 2"} {
		if !seen[w] {
			t.Errorf("configuration lacks %s (has %v)", w, seen)
		}
	}
	_, mac := h.control(0x80, reqGetDescriptor, dtString<<8|4, 0x409, 255, nil)
	if got := string(bytes.ReplaceAll(mac[2:], []byte{0}, nil)); got != "027773000001" {
		t.Errorf("MAC string %q", got)
	}
	st, params := h.control(0xa1, reqGetNTBParams, 0, 0, 28, nil)
	if st != usbredir.StatusSuccess || binary.LittleEndian.Uint16(params) != 28 || binary.LittleEndian.Uint16(params[2:]) != 1 {
		t.Errorf("NTB parameters: status %d % x", st, params)
	}
	if st, _ := h.control(0x21, reqSetNTBFormat, 1, 0, 0, nil); st != usbredir.StatusStall {
		t.Errorf("NTB32 accepted (status %d); the device offers NTB16 only", st)
	}
	if st, _ := h.control(0x80, reqGetDescriptor, 0x22<<8, 0, 64, nil); st != usbredir.StatusStall {
		t.Errorf("an unknown descriptor answered (status %d), not stalled", st)
	}
	if s := h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1); s[0] != 0 || s[1] != 1 {
		t.Errorf("set_configuration: % x", s)
	}
	if s := h.request(usbredir.TypeSetAltSetting, usbredir.TypeAltSettingStatus, 1, 1); s[0] != 0 || s[2] != 1 {
		t.Errorf("set_alt_setting: % x", s)
	}
	if s := h.request(usbredir.TypeGetAltSetting, usbredir.TypeAltSettingStatus, 1); s[2] != 1 {
		t.Errorf("get_alt_setting says %d after setting 1", s[2])
	}
}

// TestNCMDataPath: the link comes up by notification; frames waiting are
// aggregated into NTBs within what the host set; an NTB from the host
// reaches the link frame by frame.
func TestNCMDataPath(t *testing.T) {
	l := newMemLink()
	h := startHost(t, NewNCM(l, 0, testMAC, nil), nil)
	h.plugged()
	h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
	h.request(usbredir.TypeSetAltSetting, usbredir.TypeAltSettingStatus, 1, 1)
	h.request(usbredir.TypeStartInterruptReceiving, usbredir.TypeInterruptReceivingStatus, epNotify)
	if n := h.next(usbredir.TypeInterruptPacket); n.Data[1] != notifyConnection || n.Data[2] != 1 {
		t.Fatalf("first notification % x, want a connection (unpaced: no speed)", n.Data)
	}
	var want [][]byte
	for i := 0; i < 5; i++ {
		want = append(want, frame(i, 100+i*300))
		l.toDev <- want[i]
	}
	time.Sleep(100 * time.Millisecond) // all five read from the link
	b, ntb := h.bulkIn(epBulkIn, 32768)
	got, err := strictNTB16(ntb)
	if err != nil || b.Status != 0 || len(got) != 5 {
		t.Fatalf("NTB: status %d, %v, %d datagrams", b.Status, err, len(got))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("datagram %d differs", i)
		}
	}
	size := binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint32(nil, 2048), 2) // dwNtbInMaxSize, wNtbInMaxDatagrams
	if st, _ := h.control(0x21, reqSetNTBInSize, 0, 0, 8, append(size, 0, 0)); st != 0 {
		t.Fatalf("SET_NTB_INPUT_SIZE: status %d", st)
	}
	for i := 0; i < 6; i++ {
		l.toDev <- frame(10+i, 600)
	}
	time.Sleep(100 * time.Millisecond)
	for n := 0; n < 6; {
		_, ntb := h.bulkIn(epBulkIn, 32768)
		got, err := strictNTB16(ntb)
		if err != nil || len(ntb) > 2048 || len(got) > 2 {
			t.Fatalf("NTB of %d bytes, %d datagrams (%v): over the host's 2048 bytes, 2 datagrams", len(ntb), len(got), err)
		}
		n += len(got)
	}
	h.id++
	out := ourNTB16(frame(20, 60), frame(21, 1514), frame(22, 900))
	if err := h.c.SendBulkOut(h.id, epBulkOut, out); err != nil {
		t.Fatal(err)
	}
	if a := usbredir.ParseBulk(h.next(usbredir.TypeBulkPacket).Hdr); a.Status != 0 || a.Length != uint32(len(out)) {
		t.Errorf("bulk OUT answer: status %d length %d", a.Status, a.Length)
	}
	for i, n := range []int{60, 1514, 900} {
		if f := <-l.fromDev; !bytes.Equal(f, frame(20+i, n)) {
			t.Errorf("frame %d to the link: %d bytes", i, len(f))
		}
	}
	// one request at a time was waiting at each answer: the sum is the count
	if st := h.s.Stats(); st.InRequestMax != 32768 || st.InWaitingSum != st.InTransfers || st.InWaitingMax != 1 {
		t.Errorf("requests waiting: sum %d over %d answers, max %d; largest request %d", st.InWaitingSum, st.InTransfers, st.InWaitingMax, st.InRequestMax)
	}
}
