// SPDX-License-Identifier: Apache-2.0

package all

// The experiments of docs/results.md's sections from usbnet round 2 (issue 12) on.
import (
	_ "github.com/wirespeed/wirespeed/experiments/arm64-lab"
	_ "github.com/wirespeed/wirespeed/experiments/bad-inputs"
	_ "github.com/wirespeed/wirespeed/experiments/hostile"
	_ "github.com/wirespeed/wirespeed/experiments/tune-vm"
	_ "github.com/wirespeed/wirespeed/experiments/usbnet-devlab"
	_ "github.com/wirespeed/wirespeed/experiments/usbnet-round2"
	_ "github.com/wirespeed/wirespeed/experiments/usbnet-round3"
	_ "github.com/wirespeed/wirespeed/experiments/usbnet-round4"
	_ "github.com/wirespeed/wirespeed/experiments/usbnet-round5"
	_ "github.com/wirespeed/wirespeed/experiments/usbnet-rxcost"
	_ "github.com/wirespeed/wirespeed/experiments/usbnet-selftests"
	_ "github.com/wirespeed/wirespeed/experiments/vm-crash-rate"
)
