// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"github.com/wirespeed/wirespeed/internal/stats"
)

// Probe kinds.
const (
	ProbeICMP = "icmp"
	ProbeUDP  = "udp"
)

// ProbeConfig configures one latency probe.
type ProbeConfig struct {
	Kind     string         // ProbeICMP or ProbeUDP
	Target   netip.AddrPort // port only for UDP
	Interval time.Duration  // 10-200 ms
	TOS      int            // IP TOS byte (DSCP << 2)
	Priority int            // SO_PRIORITY, -1 = leave
	Timeout  time.Duration  // a reply later than this counts as lost (default 1 s)
	// InNetns, when set, runs the socket creation in the right network
	// namespace (the lab's sender side).
	InNetns func(fn func() error) error
}

// RTT is one probe: when it was sent (seconds relative to the load start,
// negative while idle) and its round-trip time, or Lost.
type RTT struct {
	T    float64 `json:"t"`
	Ms   float64 `json:"ms,omitempty"`
	Lost bool    `json:"lost,omitempty"`
}

// PhaseStats summarises the probes of one phase (idle or loaded).
type PhaseStats struct {
	Sent    int     `json:"sent"`
	Lost    int     `json:"lost"`
	LossPct float64 `json:"loss_pct"`
	MinMs   float64 `json:"min_ms"`
	MeanMs  float64 `json:"mean_ms"`
	P50Ms   float64 `json:"p50_ms"`
	P90Ms   float64 `json:"p90_ms"`
	P99Ms   float64 `json:"p99_ms"`
	MaxMs   float64 `json:"max_ms"`
}

// Phase summarises the probes with from <= T < to.
func Phase(rtts []RTT, from, to float64) PhaseStats {
	var ms []float64
	var ps PhaseStats
	for _, r := range rtts {
		if r.T < from || r.T >= to {
			continue
		}
		ps.Sent++
		if r.Lost {
			ps.Lost++
			continue
		}
		ms = append(ms, r.Ms)
	}
	if ps.Sent > 0 {
		ps.LossPct = 100 * float64(ps.Lost) / float64(ps.Sent)
	}
	if len(ms) > 0 {
		ps.MinMs = stats.Percentile(ms, 0)
		ps.MeanMs = stats.Mean(ms)
		ps.P50Ms = stats.Percentile(ms, 50)
		ps.P90Ms = stats.Percentile(ms, 90)
		ps.P99Ms = stats.Percentile(ms, 99)
		ps.MaxMs = stats.Percentile(ms, 100)
	} else {
		nan := math.NaN()
		ps.MinMs, ps.MeanMs, ps.P50Ms, ps.P90Ms, ps.P99Ms, ps.MaxMs = nan, nan, nan, nan, nan, nan
	}
	return ps
}

// Prober sends probes at a fixed interval and records their RTTs.
type Prober struct {
	cfg    ProbeConfig
	conn   net.PacketConn
	dst    net.Addr
	id     uint16
	zero   time.Time // T = time since zero
	mu     sync.Mutex
	sent   map[uint64]time.Time
	rtts   []RTT
	index  map[uint64]int
	stop   chan struct{}
	wg     sync.WaitGroup
	closed bool

	kernelRx bool // replies carry the kernel's receive time (SO_TIMESTAMPNS)
}

// RxTime says where receive times come from: "kernel" (SO_TIMESTAMPNS)
// or "user" (when the reply was read).
func (p *Prober) RxTime() string {
	if p.kernelRx {
		return "kernel"
	}
	return "user"
}

// ValidateProbe checks interval, TOS and priority.
func ValidateProbe(interval time.Duration, tos, prio int) error {
	if interval < 10*time.Millisecond || interval > 200*time.Millisecond {
		return fmt.Errorf("--probe-interval %v: want 10ms-200ms", interval)
	}
	if tos < 0 || tos > 255 {
		return fmt.Errorf("--tos %d: want 0-255 (DSCP EF is 184 = 0xb8)", tos)
	}
	if prio < -1 || prio > 15 {
		return fmt.Errorf("--priority %d: want 0-15, the probe's SO_PRIORITY (6 and up need CAP_NET_ADMIN), or -1 to leave it", prio)
	}
	return nil
}

// StartProbe opens the probe socket and starts sending. zero is the
// reference time of the T values (the load start; probes before it are idle).
func StartProbe(cfg ProbeConfig, zero time.Time) (*Prober, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Second
	}
	p := &Prober{cfg: cfg, zero: zero, sent: map[uint64]time.Time{}, index: map[uint64]int{},
		stop: make(chan struct{}), id: uint16(os.Getpid())}
	open := func() error { return p.open() }
	var err error
	if cfg.InNetns != nil {
		err = cfg.InNetns(open)
	} else {
		err = open()
	}
	if err != nil {
		return nil, err
	}
	p.wg.Add(2)
	go p.receive()
	go p.send()
	return p, nil
}

func (p *Prober) open() error {
	switch p.cfg.Kind {
	case ProbeICMP:
		if os.Geteuid() == 0 {
			c, err := net.ListenPacket("ip4:icmp", "0.0.0.0")
			if err != nil {
				return fmt.Errorf("ICMP raw socket: %w", err)
			}
			p.conn = c
			p.dst = &net.IPAddr{IP: p.cfg.Target.Addr().AsSlice()}
			return p.setOpts(c.(*net.IPConn))
		}
		// Unprivileged ICMP ("ping") socket: needs net.ipv4.ping_group_range.
		c, err := icmp.ListenPacket("udp4", "0.0.0.0")
		if err != nil {
			return fmt.Errorf("ICMP datagram socket (not root; allow it with sysctl net.ipv4.ping_group_range='0 2147483647', or run as root): %w", err)
		}
		if p.cfg.TOS != 0 {
			if err := c.IPv4PacketConn().SetTOS(p.cfg.TOS); err != nil {
				c.Close()
				return fmt.Errorf("set TOS on ICMP socket: %w", err)
			}
		}
		if p.cfg.Priority >= 0 {
			c.Close()
			return fmt.Errorf("SO_PRIORITY on an unprivileged ICMP socket is not supported: run as root")
		}
		p.conn = c
		p.dst = &net.UDPAddr{IP: p.cfg.Target.Addr().AsSlice()}
		return nil
	case ProbeUDP:
		c, err := net.ListenUDP("udp4", nil)
		if err != nil {
			return fmt.Errorf("UDP probe socket: %w", err)
		}
		p.conn = c
		p.dst = net.UDPAddrFromAddrPort(p.cfg.Target)
		return p.setOpts(c)
	}
	return fmt.Errorf("unknown probe kind %q", p.cfg.Kind)
}

func (p *Prober) setOpts(c interface {
	SyscallConn() (syscall.RawConn, error)
}) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		// Receive times from the kernel (as ping takes them): the moment
		// the reply reached the socket, not when this process next got a
		// CPU - on a loaded host that wakeup alone can add milliseconds.
		if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil {
			p.kernelRx = true
		}
		if p.cfg.TOS != 0 {
			if e := unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, p.cfg.TOS); e != nil {
				serr = fmt.Errorf("set IP_TOS %d: %w", p.cfg.TOS, e)
				return
			}
		}
		if p.cfg.Priority >= 0 {
			if e := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PRIORITY, p.cfg.Priority); e != nil {
				serr = fmt.Errorf("set SO_PRIORITY %d: %w", p.cfg.Priority, e)
			}
		}
	})
	if err != nil {
		return err
	}
	if serr != nil {
		p.conn.Close()
	}
	return serr
}

func (p *Prober) packet(seq uint64, now time.Time) ([]byte, error) {
	if p.cfg.Kind == ProbeUDP {
		b := make([]byte, 32)
		binary.BigEndian.PutUint64(b[0:8], seq)
		binary.BigEndian.PutUint64(b[8:16], uint64(now.UnixNano()))
		copy(b[24:], "wirespd\x00")
		return b, nil
	}
	payload := make([]byte, 16)
	binary.BigEndian.PutUint64(payload[0:8], seq)
	binary.BigEndian.PutUint64(payload[8:16], uint64(now.UnixNano()))
	m := icmp.Message{Type: ipv4.ICMPTypeEcho, Code: 0, Body: &icmp.Echo{ID: int(p.id), Seq: int(seq & 0xffff), Data: payload}}
	return m.Marshal(nil)
}

func (p *Prober) send() {
	defer p.wg.Done()
	t := time.NewTicker(p.cfg.Interval)
	defer t.Stop()
	var seq uint64
	for {
		now := time.Now()
		b, err := p.packet(seq, now)
		if err == nil {
			p.mu.Lock()
			p.sent[seq] = now
			p.index[seq] = len(p.rtts)
			p.rtts = append(p.rtts, RTT{T: now.Sub(p.zero).Seconds(), Lost: true})
			p.mu.Unlock()
			_, _ = p.conn.WriteTo(b, p.dst) // an error is a lost probe
		}
		seq++
		// Expire old probes.
		p.expire(now)
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
	}
}

func (p *Prober) expire(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for s, ts := range p.sent {
		if now.Sub(ts) > p.cfg.Timeout {
			delete(p.sent, s)
		}
	}
}

// read returns the next datagram and when it arrived: the kernel's
// SO_TIMESTAMPNS time where the socket has it, otherwise now.
func (p *Prober) read(buf, oob []byte) (int, time.Time, error) {
	if p.kernelRx {
		var n, oobn int
		var err error
		switch c := p.conn.(type) {
		case *net.IPConn:
			n, oobn, _, _, err = c.ReadMsgIP(buf, oob)
			// Unlike ReadFrom, ReadMsgIP leaves a raw socket's IPv4
			// header in place.
			if err == nil && n > 0 && buf[0]>>4 == 4 {
				if hl := int(buf[0]&0x0f) * 4; hl >= 20 && hl <= n {
					n = copy(buf, buf[hl:n])
				}
			}
		case *net.UDPConn:
			n, oobn, _, _, err = c.ReadMsgUDP(buf, oob)
		default:
			n, _, err = p.conn.ReadFrom(buf)
		}
		now := time.Now()
		if err == nil {
			if t, ok := kernelTime(oob[:oobn]); ok {
				return n, t, nil
			}
		}
		return n, now, err
	}
	n, _, err := p.conn.ReadFrom(buf)
	return n, time.Now(), err
}

// kernelTime finds an SCM_TIMESTAMPNS in a control message buffer.
func kernelTime(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS &&
			len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := *(*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(int64(ts.Sec), int64(ts.Nsec)), true
		}
	}
	return time.Time{}, false
}

func (p *Prober) receive() {
	defer p.wg.Done()
	buf := make([]byte, 1500)
	oob := make([]byte, 128)
	for {
		n, now, err := p.read(buf, oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return
			}
			continue
		}
		seq, ok := p.parse(buf[:n])
		if !ok {
			continue
		}
		p.mu.Lock()
		if ts, ok := p.sent[seq]; ok {
			delete(p.sent, seq)
			if i, ok := p.index[seq]; ok {
				p.rtts[i].Ms = float64(now.Sub(ts).Nanoseconds()) / 1e6
				p.rtts[i].Lost = false
			}
		}
		p.mu.Unlock()
	}
}

func (p *Prober) parse(b []byte) (uint64, bool) {
	if p.cfg.Kind == ProbeUDP {
		if len(b) < 32 || string(b[24:31]) != "wirespd" {
			return 0, false
		}
		return binary.BigEndian.Uint64(b[0:8]), true
	}
	m, err := icmp.ParseMessage(1, b)
	if err != nil || m.Type != ipv4.ICMPTypeEchoReply {
		return 0, false
	}
	e, ok := m.Body.(*icmp.Echo)
	if !ok || len(e.Data) < 16 {
		return 0, false
	}
	// Raw sockets see every echo reply in the namespace: match our ID
	// (datagram sockets get theirs rewritten by the kernel, and only theirs).
	if _, raw := p.dst.(*net.IPAddr); raw && e.ID != int(p.id) {
		return 0, false
	}
	return binary.BigEndian.Uint64(e.Data[0:8]), true
}

// Stop stops sending, waits up to the timeout for replies still on their way,
// closes the socket and returns every probe (unanswered ones as lost).
func (p *Prober) Stop(ctx context.Context) []RTT {
	p.mu.Lock()
	if p.closed {
		out := append([]RTT(nil), p.rtts...)
		p.mu.Unlock()
		return out
	}
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	deadline := time.Now().Add(p.cfg.Timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		p.mu.Lock()
		pending := len(p.sent)
		p.mu.Unlock()
		if pending == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = p.conn.Close()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]RTT(nil), p.rtts...)
}
