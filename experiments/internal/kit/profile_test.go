// SPDX-License-Identifier: Apache-2.0

package kit

import "testing"

// TestClassify: each rule on a stack of the kind the lab's profiles hold
// (frames outermost first, modules' frames named [kernel.kallsyms]).
func TestClassify(t *testing.T) {
	k := func(s string) string { return s + "_([kernel.kallsyms])" }
	for _, c := range []struct {
		frames []string
		want   string
	}{
		{[]string{k("do_idle"), k("default_idle"), k("pv_native_safe_halt")}, catIdle},
		// an interrupt taken while idle is not idle
		{[]string{k("do_idle"), k("default_idle"), k("pv_native_safe_halt"), k("sysvec_apic_timer_interrupt"), k("__irq_exit_rcu"), k("handle_softirqs")}, catHardIRQ},
		{[]string{k("do_idle"), k("pv_native_safe_halt"), k("net_rx_action"), k("__napi_poll"), k("usbnet_poll"), k("cdc_ncm_rx_fixup"), k("memcpy_orig")}, catCopy},
		{[]string{k("__napi_poll"), k("usbnet_poll"), k("cdc_ncm_rx_fixup"), k("__netdev_alloc_skb"), k("get_page_from_freelist"), k("clear_highpages_kasan_tagged")}, catZero},
		{[]string{k("__napi_poll"), k("usbnet_poll"), k("cdc_ncm_rx_fixup"), k("__netdev_alloc_skb")}, catMemory},
		{[]string{k("__napi_poll"), k("usbnet_poll"), k("usbnet_skb_return"), k("napi_gro_receive"), k("dev_gro_receive"), k("tcp4_gro_receive")}, catGRO},
		{[]string{k("usbnet_poll"), k("napi_gro_receive"), k("gro_normal_list"), k("ip_list_rcv"), k("tcp_v4_rcv"), k("_raw_spin_unlock")}, catTCPRX},
		// the unlock the IRQs-off time lands on belongs to its caller
		{[]string{k("__hrtimer_run_queues"), k("dummy_timer"), k("_raw_spin_unlock_irqrestore")}, catBus},
		{[]string{k("dev_hard_start_xmit"), k("eth_start_xmit"), k("_raw_spin_unlock_irqrestore")}, catGadget},
		{[]string{k("tasklet_action_common"), k("cdc_ncm_txpath_bh"), k("_raw_spin_unlock_irqrestore")}, catDUTTX},
		// usbnet's and u_ether's completions share names: the giveback tells
		{[]string{k("dummy_timer"), k("usb_hcd_giveback_urb"), k("__usb_hcd_giveback_urb"), k("rx_complete")}, catDUTRX},
		{[]string{k("dummy_timer"), k("usb_gadget_giveback_request"), k("rx_complete")}, catGadget},
		{[]string{k("__x64_sys_read"), k("tcp_recvmsg"), k("rep_movs_alternative")}, catRecvApp},
		{[]string{k("__x64_sys_write"), k("tcp_sendmsg"), k("tcp_sendmsg_locked"), k("_copy_from_iter")}, catSendApp},
		{[]string{k("tcp_sendmsg_locked"), k("tcp_push"), k("__tcp_push_pending_frames"), k("tcp_write_xmit"), k("__tcp_transmit_skb")}, catTCPTX},
		{[]string{k("perf_trace_softirq"), k("trace_call_bpf"), "bpf_prog_ab_tp_(bpf_prog_ab_tp)"}, catTracing},
		{[]string{"main_(/usr/bin/iperf3)", "write_(/lib/x86_64-linux-gnu/libc.so.6)"}, catUser},
		{[]string{k("kthread"), k("worker_thread"), k("some_function")}, catOtherKern},
		// arm64's interrupt entry
		{[]string{k("el1h_64_irq"), k("el1h_64_irq_handler"), k("el1_interrupt"), k("irq_exit_rcu"), k("__irq_exit_rcu"), k("handle_softirqs")}, catHardIRQ},
		{[]string{k("cpu_startup_entry"), k("do_idle"), k("default_idle_call"), k("cpu_do_idle")}, catIdle},
		// a module named by perf
		{[]string{k("net_rx_action"), "usbnet_poll_([usbnet])", "cdc_ncm_rx_fixup_([cdc_ncm])"}, catDUTRX},
	} {
		if got := classify(c.frames); got != c.want {
			t.Errorf("%v: %q, want %q", c.frames, got, c.want)
		}
	}
}

func TestReadFolded(t *testing.T) {
	p, err := readFolded([]byte("0;iperf3;"+"x_([kernel.kallsyms]);tcp_recvmsg_([kernel.kallsyms]) 3\n1;swapper;do_idle_([kernel.kallsyms]);pv_native_safe_halt_([kernel.kallsyms]) 5\n"), nil)
	if err != nil || p.total != 8 || p.cat[catRecvApp] != 3 || p.cat[catIdle] != 5 || p.cpu["1"] == nil || p.cpu["1"].total != 5 || p.recv != 3 {
		t.Errorf("readFolded: %+v, %v", p, err)
	}
	for _, bad := range []string{"0;x;y\n", "0;x;y z\n", "nocomm 3\n", "0;x;y -1\n"} {
		if _, err := readFolded([]byte(bad), nil); err == nil {
			t.Errorf("readFolded(%q) took it", bad)
		}
	}
}

// An unnamed module frame is named by the module symbol at or below its
// address, and then classified by its module.
func TestModSyms(t *testing.T) {
	m, err := parseModSyms([]byte("ffffffffc0a02000 t rx_complete\t[usbnet]\nffffffffc0a01000 t usbnet_poll\t[usbnet]\nffffffffc0b00000 t eth_start_xmit\t[u_ether]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for fr, want := range map[string]string{
		"0xffffffffc0a01234_([unknown])": "usbnet_poll_([usbnet])",
		"0xffffffffc0a02000_([unknown])": "rx_complete_([usbnet])",
		"0xffffffffc0b00010_([unknown])": "eth_start_xmit_([u_ether])",
		"0xffffffff00000000_([unknown])": "0xffffffff00000000_([unknown])",
		"tcp_v4_rcv_([kernel.kallsyms])": "tcp_v4_rcv_([kernel.kallsyms])",
	} {
		if got := m.resolve(fr); got != want {
			t.Errorf("resolve(%s) = %s, want %s", fr, got, want)
		}
	}
	p, err := readFolded([]byte("0;kworker;x_([kernel.kallsyms]);0xffffffffc0a02010_([unknown]) 2\n"), m)
	if err != nil || p.cat[catDUTRX] != 2 {
		t.Errorf("a resolved usbnet frame: %+v, %v", p, err)
	}
	if _, err := parseModSyms([]byte("zz t x\t[m]\n")); err == nil {
		t.Error("parseModSyms took a bad address")
	}
}

func TestInFixup(t *testing.T) {
	k := func(s string) string { return s + "_([kernel.kallsyms])" }
	for _, c := range []struct {
		frames []string
		want   bool
	}{
		{[]string{k("usbnet_poll"), k("cdc_ncm_rx_fixup"), k("__netdev_alloc_skb"), k("clear_page_erms")}, true},
		{[]string{k("usbnet_poll"), k("cdc_ncm_rx_fixup"), k("memcpy_orig")}, true},
		{[]string{k("usbnet_poll"), k("cdc_ncm_rx_fixup"), k("usbnet_skb_return"), k("napi_gro_receive"), k("tcp_v4_rcv")}, false},
		{[]string{k("usbnet_poll"), k("rx_process"), k("usbnet_skb_return")}, false},
	} {
		if got := inFixup(c.frames); got != c.want {
			t.Errorf("inFixup(%v) = %v, want %v", c.frames, got, c.want)
		}
	}
}

// The receive side counts rx_fixup's allocations (memory, zeroing) once,
// with the receive categories, and nothing of the sender's.
func TestReceiveSide(t *testing.T) {
	b := []byte("0;k;usbnet_poll_([kernel.kallsyms]);cdc_ncm_rx_fixup_([kernel.kallsyms]);__netdev_alloc_skb_([kernel.kallsyms]) 4\n" +
		"0;k;usbnet_poll_([kernel.kallsyms]);cdc_ncm_rx_fixup_([kernel.kallsyms]);memcpy_orig_([kernel.kallsyms]) 2\n" +
		"0;k;napi_gro_receive_([kernel.kallsyms]);dev_gro_receive_([kernel.kallsyms]) 3\n" +
		"0;k;tcp_sendmsg_([kernel.kallsyms]);skb_page_frag_refill_([kernel.kallsyms]);clear_page_erms_([kernel.kallsyms]) 5\n")
	p, err := readFolded(b, nil)
	if err != nil || p.recv != 9 || p.fixup != 6 || p.cat[catMemory] != 4 || p.cat[catZero] != 5 {
		t.Errorf("receive side: %+v, %v; want recv 9, fixup 6", p, err)
	}
}

// The busiest vCPU is the one with the most busy samples; its receive and
// sender shares are of its own busy samples.
func TestHottest(t *testing.T) {
	b := []byte("0;swapper;do_idle_([kernel.kallsyms]);pv_native_safe_halt_([kernel.kallsyms]) 8\n" +
		"0;k;napi_gro_receive_([kernel.kallsyms]);dev_gro_receive_([kernel.kallsyms]) 2\n" +
		"1;k;napi_gro_receive_([kernel.kallsyms]);dev_gro_receive_([kernel.kallsyms]) 3\n" +
		"1;k;dummy_timer_([kernel.kallsyms]);_raw_spin_unlock_irqrestore_([kernel.kallsyms]) 6\n" +
		"1;swapper;do_idle_([kernel.kallsyms]);pv_native_safe_halt_([kernel.kallsyms]) 1\n")
	p, err := readFolded(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, s := p.hottest()
	if napiCell(p) != "-" {
		t.Errorf("no napi/ comm, yet napiCell says %q", napiCell(p))
	}
	q, _ := readFolded([]byte("2;napi/usb0-0;usbnet_poll_([kernel.kallsyms]) 1\n2;swapper;do_idle_([kernel.kallsyms]);pv_native_safe_halt_([kernel.kallsyms]) 3\n"), nil)
	if got := napiCell(q); got != "cpu2 25.0" {
		t.Errorf("napiCell = %q, want cpu2 25.0", got)
	}
	if c != "1" || s.total != 10 || s.idle != 1 || s.recv != 3 || s.send != 6 {
		t.Errorf("hottest: cpu%s %+v, want cpu1 total 10 idle 1 recv 3 send 6", c, s)
	}
}

// FuzzReadFolded: whatever a guest sends as folded stacks and kallsyms,
// reading them does not panic, and an accepted profile adds up: every
// sample in one category and one vCPU, the receive side within them.
func FuzzReadFolded(f *testing.F) {
	f.Add([]byte("0;iperf3;x_([kernel.kallsyms]);tcp_recvmsg_([kernel.kallsyms]) 3\n1;k;0xffffffffc0a01234_([unknown]) 2\n"),
		[]byte("ffffffffc0a01000 t usbnet_poll\t[usbnet]\n"))
	f.Add([]byte("0;a;b 1\n"), []byte(""))
	f.Fuzz(func(t *testing.T, folded, kallsyms []byte) {
		syms, err := parseModSyms(kallsyms)
		if err != nil {
			syms = nil
		}
		p, err := readFolded(folded, syms)
		if err != nil {
			return
		}
		sum, cpus := 0, 0
		for _, n := range p.cat {
			sum += n
		}
		for _, s := range p.cpu {
			cpus += s.total
			if s.idle+s.recv+s.send > s.total {
				t.Fatalf("a vCPU's parts exceed it: %+v", s)
			}
		}
		if sum != p.total || cpus != p.total || p.recv > p.total || p.fixup > p.total {
			t.Fatalf("does not add up: total %d, categories %d, vCPUs %d, recv %d, fixup %d", p.total, sum, cpus, p.recv, p.fixup)
		}
	})
}
