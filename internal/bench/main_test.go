// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"os"
	"testing"

	"github.com/wirespeed/wirespeed/internal/testnet"
)

func TestMain(m *testing.M) {
	testnet.RefuseRerun()
	os.Exit(m.Run())
}

// TestInspectSelfNotInTestBinary: bench's inspect re-executes its own
// binary as 'inspect --json IFACE'. In a test binary that would run every
// test again, and a test that reaches a bench run would start another copy
// - the chain of cli.test processes issue 32 saw. In a test binary
// InspectSelf must give nothing (bench then records no inspect snapshot).
func TestInspectSelfNotInTestBinary(t *testing.T) {
	if f := InspectSelf(); f != nil {
		t.Fatal("InspectSelf would re-execute this test binary")
	}
}
