// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/lab"
)

// labFlags are the lab knobs shared by 'lab up', 'bench' and --variant.
type labFlags struct {
	gro, senderOffloads string
	threaded            bool
	rps, rate, qdisc    string
	pinSender, pinRecv  int
}

func addLabFlags(fs *flag.FlagSet) *labFlags {
	return addLabFlagsFrom(fs, labFlags{gro: "off", senderOffloads: "on", pinSender: -1, pinRecv: -1})
}

// addLabFlagsFrom registers the lab flags with def's values as defaults.
func addLabFlagsFrom(fs *flag.FlagSet, def labFlags) *labFlags {
	f := &labFlags{}
	fs.StringVar(&f.gro, "gro", def.gro, "receiver GRO: on (veth gets a NAPI + GRO) or off (netif_rx backlog path)")
	fs.BoolVar(&f.threaded, "threaded", def.threaded, "threaded NAPI on the receiver (needs --gro on)")
	fs.StringVar(&f.senderOffloads, "sender-offloads", def.senderOffloads, "sender TSO/GSO/GRO: on, or off for wire-sized segments as from a real NIC")
	fs.StringVar(&f.rps, "rps", def.rps, "receiver RPS CPU mask (hex, e.g. 3)")
	fs.StringVar(&f.rate, "rate", def.rate, "shape the lab link (sender egress, tbf) to RATE, e.g. 100M, 2.5G, 500k (bits/s)")
	fs.StringVar(&f.qdisc, "qdisc", def.qdisc, "sender root qdisc: noqueue (veth default: a full receive ring drops) or pfifo_fast (the kernel default on NICs), pfifo, fq_codel, fq, sfq (if this kernel has them): a queue backpressure can fill, as on a real NIC")
	fs.IntVar(&f.pinSender, "pin-sender", def.pinSender, "pin the iperf3 client(s) to CPU")
	fs.IntVar(&f.pinRecv, "pin-receiver", def.pinRecv, "pin the iperf3 server(s) to CPU")
	return f
}

// parseOnOff reads an on/off knob (on, off, 1, 0, true, false, yes, no).
func parseOnOff(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "1", "true", "yes":
		return true, nil
	case "off", "0", "false", "no":
		return false, nil
	}
	return false, fmt.Errorf("--%s %q: want on or off", name, v)
}

func (f *labFlags) config() (lab.Config, error) {
	var c lab.Config
	var err error
	if c.GRO, err = parseOnOff("gro", f.gro); err != nil {
		return c, err
	}
	on, err := parseOnOff("sender-offloads", f.senderOffloads)
	if err != nil {
		return c, err
	}
	c.SenderOffloadsOff = !on
	c.Threaded = f.threaded
	c.RPSMask = f.rps
	c.SenderQdisc = f.qdisc
	if f.rate != "" {
		if c.RateMbit, err = parseRate(f.rate); err != nil {
			return c, fmt.Errorf("--rate: %w", err)
		}
		if c.RateMbit == 0 {
			return c, fmt.Errorf("--rate 0: leave --rate out for an unshaped link")
		}
	}
	if f.pinSender >= 0 {
		v := f.pinSender
		c.PinSender = &v
	} else if f.pinSender != -1 {
		return c, fmt.Errorf("--pin-sender %d: want a CPU number", f.pinSender)
	}
	if f.pinRecv >= 0 {
		v := f.pinRecv
		c.PinReceiver = &v
	} else if f.pinRecv != -1 {
		return c, fmt.Errorf("--pin-receiver %d: want a CPU number", f.pinRecv)
	}
	return c, c.Validate()
}

// parseRate parses "100M", "2.5G", "500k", "100Mbit", "1e9" (bits/s) into Mbit/s.
func parseRate(s string) (float64, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "/s"), "bit")
	t = strings.TrimSuffix(t, "bps")
	mult := 1e-6 // plain number: bits/s
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1e-3, strings.TrimSuffix(t, "k")
	case strings.HasSuffix(t, "m"):
		mult, t = 1, strings.TrimSuffix(t, "m")
	case strings.HasSuffix(t, "g"):
		mult, t = 1e3, strings.TrimSuffix(t, "g")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v != v {
		return 0, fmt.Errorf("%q is not a rate: use e.g. 100M, 2.5G or 500k (bits per second)", s)
	}
	r := v * mult
	if r > 1e6 {
		return 0, fmt.Errorf("%q: more than 1 Tbit/s", s)
	}
	if r > 0 && r < 0.008 {
		return 0, fmt.Errorf("%q: less than 8 kbit/s", s)
	}
	return r, nil
}
