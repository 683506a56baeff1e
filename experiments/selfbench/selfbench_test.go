// SPDX-License-Identifier: Apache-2.0

package selfbench

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/exporter"
)

// The amortised figure assumes the exporter's default refresh.
func TestRefreshIsExportersDefault(t *testing.T) {
	if RefreshSeconds != exporter.DefaultRefresh.Seconds() {
		t.Fatalf("RefreshSeconds %d, exporter.DefaultRefresh %v", RefreshSeconds, exporter.DefaultRefresh)
	}
}
