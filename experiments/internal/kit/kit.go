// SPDX-License-Identifier: Apache-2.0

// Package kit is what the experiments share: it writes the markdown tables
// they compute for docs/results.md, reads the raw files they compute them
// from (a run's archive data/RUN.tar.gz read as if it were the directory
// data/RUN, see archive.go), and reads the kinds of run more than one
// experiment made: usbnet-rx.sh's and usbnet-marks.sh's boots (rx.go,
// marks.go), the guests' receive profiles (profile.go), and the sweeps of
// bad inputs (sweep.go). An experiment imports kit, never another
// experiment.
package kit

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Table renders a header and rows as a markdown table: one line per row,
// cells separated by " | " (an empty cell as "| |"), a "---" rule under
// the header.
func Table(header []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			if c == "" {
				b.WriteString(" |")
			} else {
				b.WriteString(" " + c + " |")
			}
		}
		b.WriteString("\n")
	}
	line(header)
	rule := make([]string, len(header))
	for i := range rule {
		rule[i] = "---"
	}
	b.WriteString("|" + strings.Join(rule, "|") + "|\n")
	for _, r := range rows {
		if len(r) != len(header) {
			panic(fmt.Sprintf("kit: row of %d cells under a header of %d", len(r), len(header)))
		}
		line(r)
	}
	return b.String()
}

// ReadFile reads path, gunzipping it when its name ends in .gz.
func ReadFile(path string) ([]byte, error) {
	b, err := ReadRaw(path)
	if err != nil || !strings.HasSuffix(path, ".gz") {
		return b, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// ReadJSON decodes the JSON file at path (gzipped if it ends in .gz) into v.
func ReadJSON(path string, v any) error {
	b, err := ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
