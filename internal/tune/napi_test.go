// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/netdevnl"
	"github.com/wirespeed/wirespeed/internal/testnet"
)

// napi-set on a veth's NAPI in a test namespace: apply, read back, revert.
func TestNAPISetRoot(t *testing.T) {
	ns := testnet.New(t)
	_, b := ns.AddVeth(t)
	ns.Run(t, "ethtool", "-K", b, "gro", "on") // gives the veth a NAPI
	idx, _ := strconv.Atoi(ns.Run(t, "cat", "/sys/class/net/"+b+"/ifindex"))
	tu := newTuner(t, Live())
	var err error
	var outs [2]Outcome
	var before, after string
	ns.Do(t, func() {
		var napis []netdevnl.NAPI
		if napis, err = netdevnl.DumpNAPIs(); err != nil {
			return
		}
		var id uint32
		for _, n := range napis {
			if n.Ifindex == idx {
				id = n.ID
			}
		}
		if id == 0 {
			err = errNoNAPI
			return
		}
		a := doctor.Action{ID: "napi/gft", Kind: doctor.KindNAPI, Target: strconv.Itoa(int(id)) + ":gro-flush-timeout", Value: "20000"}
		ctx := context.Background()
		if before, err = Read(ctx, Live(), a); err != nil {
			return
		}
		if outs[0], err = tu.Apply(ctx, a); err != nil {
			return
		}
		var r []Outcome
		if r, err = tu.Revert(ctx, nil, true); err != nil || len(r) != 1 {
			return
		}
		outs[1] = r[0]
		after, err = Read(ctx, Live(), a)
	})
	if err == errNoNAPI {
		t.Skip("this kernel gives the veth no NAPI visible to napi-get")
	}
	if errors.Is(err, netdevnl.ErrNotSupported) {
		t.Skipf("napi-set not available here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if outs[0].State != StateApplied || outs[0].Got != "20000" || outs[1].State != StateReverted || after != before {
		t.Fatalf("apply %+v, revert %+v, before %q after %q", outs[0], outs[1], before, after)
	}
}

var errNoNAPI = errors.New("no NAPI")
