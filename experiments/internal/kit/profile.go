// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The profile's categories: each sample of a guest's profile (one folded
// stack, "cpu;comm;outermost;...;innermost count", written by the lab's
// --profile) goes into the first category whose rule matches, frames
// taken innermost first; a stack no frame of which matches is "other
// kernel" (or "user space" when its innermost frame is not the kernel's).
// The rules were written before the profiled boots (PLAN.md).

// Category names, in the tables' order.
const (
	catIdle      = "idle"
	catCopy      = "copy in rx_fixup"
	catDUTRX     = "usbnet/cdc_ncm RX"
	catDUTTX     = "usbnet/cdc_ncm TX"
	catGRO       = "GRO"
	catTCPRX     = "IP/TCP receive"
	catTCPTX     = "IP/TCP transmit"
	catRecvApp   = "receiving app (copy to user)"
	catSendApp   = "sending app (copy from user)"
	catGadget    = "gadget side (f_ncm, u_ether)"
	catBus       = "USB core + dummy_hcd"
	catXHCI      = "xhci host controller"
	catMemory    = "memory (skb, slab, pages)"
	catZero      = "page zeroing (init_on_alloc)"
	catHardIRQ   = "hard interrupts (unattributed)"
	catTracing   = "tracing (observe, perf)"
	catUser      = "user space"
	catOtherKern = "other kernel"
)

var categoryOrder = []string{catIdle, catCopy, catDUTRX, catDUTTX, catGRO, catTCPRX, catRecvApp,
	catTCPTX, catSendApp, catGadget, catBus, catXHCI, catMemory, catZero, catHardIRQ, catTracing, catUser, catOtherKern}

// sender lists the categories of the loop's other half: the gadget's
// sending side and the emulated bus between the two.
var sender = map[string]bool{catTCPTX: true, catSendApp: true, catGadget: true, catBus: true}

// frame is one folded frame: "sym_(dso)".
type frame struct{ sym, dso string }

func parseFrame(s string) frame {
	i := strings.LastIndex(s, "_(")
	if i < 0 || !strings.HasSuffix(s, ")") {
		return frame{sym: s}
	}
	return frame{sym: s[:i], dso: s[i+2 : len(s)-1]}
}

// kernel: the frame is the kernel's (its image, a module, a BPF program).
func (f frame) kernel() bool {
	return strings.HasPrefix(f.dso, "[") || strings.HasPrefix(f.dso, "bpf_prog_")
}

// module is the kernel module of a frame ("" for the kernel image). perf
// names a module's frames by the module when it finds the .ko, else
// [kernel.kallsyms]; then the module is taken from the function's name,
// for the names only one of the loop's modules has.
func (f frame) module() string {
	if f.dso != "[kernel.kallsyms]" {
		if !f.kernel() {
			return ""
		}
		return strings.Trim(f.dso, "[]")
	}
	s := f.sym
	switch {
	case strings.HasPrefix(s, "usbnet_") || oneOf(s, "rx_process", "defer_bh", "usb_free_skb"):
		return "usbnet"
	case strings.HasPrefix(s, "cdc_ncm_"):
		return "cdc_ncm"
	case strings.HasPrefix(s, "ncm_"):
		return "usb_f_ncm"
	case strings.HasPrefix(s, "gether_") || oneOf(s, "eth_start_xmit", "process_rx_w", "rx_fill", "alloc_requests"):
		return "u_ether"
	case strings.HasPrefix(s, "dummy_") || strings.HasPrefix(s, "dummy_hcd"):
		return "dummy_hcd"
	case strings.HasPrefix(s, "xhci_"):
		return "xhci_hcd"
	case strings.HasPrefix(s, "usb_hcd_") || strings.HasPrefix(s, "__usb_hcd_") || strings.HasPrefix(s, "usb_submit_urb") || s == "usb_giveback_urb_bh":
		return "usbcore"
	case strings.HasPrefix(s, "usb_gadget_") || strings.HasPrefix(s, "usb_ep_"):
		return "udc_core"
	}
	return ""
}

func hasAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func oneOf(s string, names ...string) bool {
	for _, x := range names {
		if s == x {
			return true
		}
	}
	return false
}

// isIdle: where an idle vCPU waits (only as the innermost frame: an
// interrupt taken while idle has the idle loop outside it).
func isIdle(sym string) bool {
	return oneOf(sym, "default_idle", "pv_native_safe_halt", "native_safe_halt", "acpi_idle_do_entry", "cpu_idle_poll", "mwait_idle", "intel_idle", "default_idle_call", "arch_cpu_idle", "cpu_do_idle")
}

// isCopy: the kernel's memory copy routines.
func isCopy(sym string) bool {
	return oneOf(sym, "memcpy", "__memcpy", "memcpy_orig", "memmove", "__memmove", "memcpy_erms", "fast_string_memcpy", "__pi_memcpy", "__pi_memmove", "__pi_memcpy_generic", "__memcpy_generic")
}

// frameCategory is a frame's category, or "" when the frame says nothing.
func frameCategory(f frame) string {
	s := f.sym
	switch mod := f.module(); {
	case mod == "usbnet" || mod == "cdc_ncm" || mod == "cdc_ether":
		if hasAny(s, "tx", "xmit") {
			return catDUTTX
		}
		return catDUTRX
	case oneOf(mod, "u_ether", "usb_f_ncm", "libcomposite", "udc_core"):
		return catGadget
	case mod == "dummy_hcd" || mod == "usbcore":
		return catBus
	case mod == "xhci_hcd" || mod == "xhci_pci":
		return catXHCI
	case strings.HasPrefix(s, "bpf_prog_") || hasAny(s, "bpf_trace", "perf_trace_", "__bpf_", "bpf_ringbuf", "perf_event_output", "perf_output"):
		return catTracing
	case hasAny(s, "gro_receive", "gro_complete", "napi_gro_", "dev_gro_", "skb_gro_", "gro_normal", "gro_flush"):
		return catGRO
	case oneOf(s, "tcp_recvmsg", "tcp_recvmsg_locked", "skb_copy_datagram_iter", "__skb_datagram_iter"):
		return catRecvApp
	case oneOf(s, "tcp_sendmsg", "tcp_sendmsg_locked", "skb_copy_to_page_nocache", "_copy_from_iter"):
		return catSendApp
	case strings.HasPrefix(s, "tcp_v4_rcv") || strings.HasPrefix(s, "ip_rcv") || strings.HasPrefix(s, "ip_list_rcv") ||
		strings.HasPrefix(s, "ip_local_deliver") || strings.HasPrefix(s, "ip_sublist_rcv") || strings.HasPrefix(s, "tcp_rcv_") ||
		oneOf(s, "tcp_ack", "tcp_data_queue", "tcp_event_data_recv", "tcp_queue_rcv", "__netif_receive_skb_core", "__netif_receive_skb_one_core", "netif_receive_skb_list_internal", "__netif_receive_skb_list_core", "eth_type_trans"):
		return catTCPRX
	case strings.HasPrefix(s, "tcp_write_xmit") || strings.HasPrefix(s, "__tcp_transmit_skb") || strings.HasPrefix(s, "ip_queue_xmit") ||
		strings.HasPrefix(s, "__ip_queue_xmit") || strings.HasPrefix(s, "ip_finish_output") || strings.HasPrefix(s, "__dev_queue_xmit") ||
		oneOf(s, "dev_hard_start_xmit", "sch_direct_xmit", "__qdisc_run", "tcp_send_ack", "__tcp_send_ack", "ip_output", "tcp_tso_segment", "tcp_gso_segment", "skb_segment"):
		return catTCPTX
	case hasAny(s, "kmem_cache_", "kmalloc", "kfree", "__alloc_skb", "alloc_skb", "skb_release", "__slab_", "___slab_", "alloc_pages", "free_unref_", "__free_pages", "page_frag", "napi_skb_cache", "skb_free_head", "__build_skb", "build_skb", "napi_alloc", "netdev_alloc", "consume_skb", "__kfree_skb", "slab_", "rmqueue", "get_page_from_freelist", "free_pcppages", "page_pool"):
		return catMemory
	}
	return ""
}

// classify puts one folded stack (frames outermost first) in a category.
func classify(frames []string) string {
	if len(frames) == 0 {
		return catOtherKern
	}
	in := parseFrame(frames[len(frames)-1])
	if !in.kernel() {
		return catUser
	}
	// the copy in the driver's rx_fixup: a copy routine innermost, with the
	// fixup (directly, or through skb_put_data) right outside it
	if isCopy(in.sym) {
		for j := len(frames) - 2; j >= 0 && j >= len(frames)-3; j-- {
			if strings.HasSuffix(parseFrame(frames[j]).sym, "rx_fixup") {
				return catCopy
			}
		}
	}
	switch {
	case isIdle(in.sym):
		return catIdle
	case oneOf(in.sym, "clear_page_erms", "clear_page_rep", "clear_page_orig", "clear_highpages_kasan_tagged", "clear_page", "__pi_clear_page", "kernel_init_pages"):
		return catZero
	case oneOf(in.sym, "handle_softirqs", "__irq_exit_rcu", "irq_exit_rcu") && underIRQEntry(frames):
		// interrupts come back on here after a hard interrupt: its time
		// (the sampling timer's own, the tick) lands on this frame
		return catHardIRQ
	}
	for j := len(frames) - 1; j >= 0; j-- {
		f := parseFrame(frames[j])
		if f.dso == "[kernel.kallsyms]" && oneOf(f.sym, "rx_complete", "tx_complete", "rx_submit") {
			// usbnet's and u_ether's: the gadget's are given back by the UDC
			return sideOf(frames[:j])
		}
		if c := frameCategory(f); c != "" {
			return c
		}
	}
	return catOtherKern
}

// underIRQEntry: a hard interrupt's entry is within the four frames
// outside the innermost (x86's sysvec_*, arm64's el1/el0 interrupt entry).
func underIRQEntry(frames []string) bool {
	for j := len(frames) - 2; j >= 0 && j >= len(frames)-5; j-- {
		s := parseFrame(frames[j]).sym
		if strings.HasPrefix(s, "sysvec_") || oneOf(s, "el1_interrupt", "el0_interrupt", "__el1_irq", "__el0_irq_handler_common",
			"el1h_64_irq_handler", "el0t_64_irq_handler", "gic_handle_irq", "do_interrupt_handler", "irq_exit_rcu") {
			return true
		}
	}
	return false
}

// sideOf tells a completion of usbnet's from one of u_ether's by what
// called it: the UDC's giveback for the gadget, the HCD's for usbnet.
func sideOf(outer []string) string {
	for j := len(outer) - 1; j >= 0; j-- {
		s := parseFrame(outer[j]).sym
		if strings.HasPrefix(s, "usb_gadget_giveback") {
			return catGadget
		}
		if strings.Contains(s, "giveback_urb") {
			return catDUTRX
		}
	}
	return catOtherKern
}

// inFixup: the stack is in an rx_fixup and not below the point where it
// hands a frame on (frames outermost first).
func inFixup(frames []string) bool {
	in := false
	for _, fr := range frames {
		sym := parseFrame(fr).sym
		switch {
		case strings.HasSuffix(sym, "rx_fixup"):
			in = true
		case in && (sym == "usbnet_skb_return" || strings.HasPrefix(sym, "napi_gro") || strings.HasPrefix(sym, "netif_rx")):
			return false
		}
	}
	return in
}

// profile is one boot's samples per category.
type profile struct {
	total int
	cat   map[string]int
	// fixup: samples in the driver's rx_fixup's own work - under an
	// rx_fixup frame but not under what it hands a frame to the stack
	// with (usbnet_skb_return on): parsing the NTB, allocating, zeroing
	// and copying each datagram, whatever category those frames fall in.
	fixup int
	// recv: samples of the receive side a usbnet change could touch at
	// most: the receive categories and rx_fixup's own work (a sum of the
	// above, per sample, so nothing is counted twice).
	recv int
	// per vCPU (the folded stacks' first field): all, idle, receive
	// side and sender half samples
	cpu map[string]*cpuSamples
}

type cpuSamples struct{ total, idle, recv, send, napi int }

// hottest is the vCPU with the most busy samples.
func (p profile) hottest() (string, *cpuSamples) {
	var best string
	var bs *cpuSamples
	for c, s := range p.cpu {
		if bs == nil || s.total-s.idle > bs.total-bs.idle || (s.total-s.idle == bs.total-bs.idle && c < best) {
			best, bs = c, s
		}
	}
	return best, bs
}

// receiver lists the receive side's categories.
var receiver = map[string]bool{catCopy: true, catDUTRX: true, catGRO: true, catTCPRX: true, catRecvApp: true}

// modSyms names kernel addresses from the modules' lines of a guest's
// /proc/kallsyms ("ADDR TYPE NAME\t[MODULE]"), sorted by address.
type modSyms struct {
	addr []uint64
	name []string // "sym_([module])", a folded frame
}

func parseModSyms(b []byte) (*modSyms, error) {
	type sym struct {
		a uint64
		n string
	}
	var syms []sym
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 || !strings.HasPrefix(f[3], "[") {
			return nil, fmt.Errorf("kallsyms line %d: %q", i+1, line)
		}
		a, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("kallsyms line %d: %w", i+1, err)
		}
		syms = append(syms, sym{a, f[2] + "_(" + f[3] + ")"})
	}
	sort.Slice(syms, func(i, j int) bool { return syms[i].a < syms[j].a })
	m := &modSyms{}
	for _, s := range syms {
		m.addr = append(m.addr, s.a)
		m.name = append(m.name, s.n)
	}
	return m, nil
}

// resolve names a "0xADDR_([unknown])" frame by the module symbol at or
// below ADDR; other frames, and addresses below every symbol, stay.
func (m *modSyms) resolve(fr string) string {
	if m == nil || !strings.HasPrefix(fr, "0x") || !strings.HasSuffix(fr, "_([unknown])") {
		return fr
	}
	a, err := strconv.ParseUint(strings.TrimSuffix(fr[2:], "_([unknown])"), 16, 64)
	if err != nil {
		return fr
	}
	i := sort.Search(len(m.addr), func(i int) bool { return m.addr[i] > a }) - 1
	if i < 0 {
		return fr
	}
	return m.name[i]
}

// readFolded sums a folded-stacks file by category, naming unnamed
// module frames by syms (nil: none).
func readFolded(b []byte, syms *modSyms) (profile, error) {
	p := profile{cat: map[string]int{}, cpu: map[string]*cpuSamples{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return p, fmt.Errorf("line %d: no count", n)
		}
		cnt, err := strconv.Atoi(line[i+1:])
		if err != nil || cnt < 0 || cnt > 1<<40 { // no guest takes 2^40 samples
			return p, fmt.Errorf("line %d: bad count %q", n, line[i+1:])
		}
		parts := strings.Split(line[:i], ";")
		if len(parts) < 2 {
			return p, fmt.Errorf("line %d: no cpu;comm", n)
		}
		frames := parts[2:]
		for k := range frames {
			frames[k] = syms.resolve(frames[k])
		}
		p.total += cnt
		c := classify(frames)
		p.cat[c] += cnt
		fix := inFixup(frames)
		if fix {
			p.fixup += cnt
		}
		cs := p.cpu[parts[0]]
		if cs == nil {
			cs = &cpuSamples{}
			p.cpu[parts[0]] = cs
		}
		cs.total += cnt
		if strings.HasPrefix(parts[1], "napi/") { // a threaded NAPI poll's kthread
			cs.napi += cnt
		}
		switch {
		case c == catIdle:
			cs.idle += cnt
		case fix || receiver[c]:
			cs.recv += cnt
		case sender[c]:
			cs.send += cnt
		}
		if fix || receiver[c] {
			p.recv += cnt
		}
	}
	return p, sc.Err()
}

// profileTable: a row per category, a column per boot (share of all
// samples, %), and the sender half's share of the busy samples.
func profileTable(names []string, profs []profile) string {
	header := append([]string{"category"}, names...)
	var rows [][]string
	pct := func(p profile, n int) string {
		if p.total == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", 100*float64(n)/float64(p.total))
	}
	for _, c := range categoryOrder {
		row := []string{c}
		for _, p := range profs {
			row = append(row, pct(p, p.cat[c]))
		}
		rows = append(rows, row)
	}
	busy := []string{"busy (not idle)"}
	send := []string{"sender half, % of busy"}
	fix := []string{"of all: rx_fixup's own work (parse, alloc, zero, copy)"}
	recv := []string{"receive side, % of busy (copy, usbnet RX, GRO, TCP receive, app's copy, rx_fixup's work)"}
	total := []string{"samples"}
	for _, p := range profs {
		fix = append(fix, pct(p, p.fixup))
		if b := p.total - p.cat[catIdle]; b > 0 {
			recv = append(recv, fmt.Sprintf("%.1f", 100*float64(p.recv)/float64(b)))
		} else {
			recv = append(recv, "-")
		}
		b := p.total - p.cat[catIdle]
		s := 0
		for c := range sender {
			s += p.cat[c]
		}
		busy = append(busy, pct(p, b))
		if b > 0 {
			send = append(send, fmt.Sprintf("%.1f", 100*float64(s)/float64(b)))
		} else {
			send = append(send, "-")
		}
		total = append(total, strconv.Itoa(p.total))
	}
	hot := []string{"busiest vCPU: busy %"}
	hotRecv := []string{"busiest vCPU: receive side, % of its busy"}
	hotSend := []string{"busiest vCPU: sender half, % of its busy"}
	others := []string{"other vCPUs: busy %"}
	napi := []string{"NAPI threads (napi/*), % of each vCPU's samples"}
	for _, p := range profs {
		napi = append(napi, napiCell(p))
		c, s := p.hottest()
		if s == nil || s.total == s.idle {
			hot, hotRecv, hotSend, others = append(hot, "-"), append(hotRecv, "-"), append(hotSend, "-"), append(others, "-")
			continue
		}
		b := float64(s.total - s.idle)
		hot = append(hot, fmt.Sprintf("%.0f (cpu%s)", 100*b/float64(s.total), c))
		hotRecv = append(hotRecv, fmt.Sprintf("%.1f", 100*float64(s.recv)/b))
		hotSend = append(hotSend, fmt.Sprintf("%.1f", 100*float64(s.send)/b))
		var ot, oi int
		for oc, os := range p.cpu {
			if oc != c {
				ot, oi = ot+os.total, oi+os.idle
			}
		}
		if ot > 0 {
			others = append(others, fmt.Sprintf("%.0f", 100*float64(ot-oi)/float64(ot)))
		} else {
			others = append(others, "-")
		}
	}
	rows = append(rows, busy, send, recv, fix, hot, hotRecv, hotSend, others, napi, total)
	return Table(header, rows)
}

// minProfileSamples: a profile counts with at least this many samples
// (PLAN.md).
const minProfileSamples = 2000

// profileRuns reads the profiled boots SIDE-N of dir, rep by rep (the
// reps the first side has), side by side: a column per boot that counts,
// and the reason for each that does not.
func profileRuns(dir string, sides ...string) (names []string, profs []profile, dropped []string, err error) {
	reps, err := Reps(dir, sides[0])
	if err != nil {
		return nil, nil, nil, err
	}
	if len(reps) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: no %s-N runs", dir, sides[0])
	}
	for _, i := range reps {
		for _, side := range sides {
			name := fmt.Sprintf("%s-%d", side, i)
			run := filepath.Join(dir, name)
			s, ok, err := ReadRXSide(run)
			if err != nil {
				return nil, nil, nil, err
			}
			if !ok {
				dropped = append(dropped, name+": failed or incomplete")
				continue
			}
			b, err := ReadFile(filepath.Join(run, "profile-receive.folded.gz"))
			if err != nil {
				return nil, nil, nil, err
			}
			var syms *modSyms
			if ks, err := ReadFile(filepath.Join(run, "kallsyms-modules.txt.gz")); err == nil {
				if syms, err = parseModSyms(ks); err != nil {
					return nil, nil, nil, fmt.Errorf("%s: %w", run, err)
				}
			} else if !os.IsNotExist(err) {
				return nil, nil, nil, err
			}
			p, err := readFolded(b, syms)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%s: %w", run, err)
			}
			if p.total < minProfileSamples {
				dropped = append(dropped, fmt.Sprintf("%s: %d samples", name, p.total))
				continue
			}
			names = append(names, fmt.Sprintf("%s (%.0f Mbit/s)", name, s.Mbit))
			profs = append(profs, p)
		}
	}
	return names, profs, dropped, nil
}

// ProfileRunsTable is profileTable over dir's profiled boots of the sides
// (SIDE-N directories with profile-receive.folded.gz and, where the lab
// wrote it, kallsyms-modules.txt.gz), with the boots that did not count
// named under it.
func ProfileRunsTable(dir string, sides ...string) (string, error) {
	names, profs, dropped, err := profileRuns(dir, sides...)
	if err != nil {
		return "", err
	}
	t := profileTable(names, profs)
	if len(dropped) > 0 {
		t += "\nNot counted: " + strings.Join(dropped, "; ") + ".\n"
	}
	return t, nil
}

// napiCell is "cpuN x%" for each vCPU that ran a NAPI thread, "-" when
// none did (the poll in softirq).
func napiCell(p profile) string {
	var cpus []string
	for c, s := range p.cpu {
		if s.napi > 0 {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) == 0 {
		return "-"
	}
	sort.Strings(cpus)
	var parts []string
	for _, c := range cpus {
		s := p.cpu[c]
		parts = append(parts, fmt.Sprintf("cpu%s %.1f", c, 100*float64(s.napi)/float64(s.total)))
	}
	return strings.Join(parts, ", ")
}
