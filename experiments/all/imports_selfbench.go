// SPDX-License-Identifier: Apache-2.0

package all

// The instruments' own cost and noise (issue 20).
import _ "github.com/wirespeed/wirespeed/experiments/selfbench"
