// SPDX-License-Identifier: Apache-2.0

package all

// The experiments of docs/results.md's first sections (issues 3-14).
import (
	_ "github.com/wirespeed/wirespeed/experiments/doctorlive"
	_ "github.com/wirespeed/wirespeed/experiments/exporteroverhead"
	_ "github.com/wirespeed/wirespeed/experiments/makerun"
	_ "github.com/wirespeed/wirespeed/experiments/tunecrash"
	_ "github.com/wirespeed/wirespeed/experiments/tunequality"
)
