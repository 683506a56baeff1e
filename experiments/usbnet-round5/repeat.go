// SPDX-License-Identifier: Apache-2.0

package usbnetround5

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// repeatBoot is one of prefix-repeat.sh's boots: NAME-ROUND.
var repeatBoot = regexp.MustCompile(`^(.+)-([0-9]+)$`)

// repeatCounts is prefix-repeat.sh's record: a row per modules dir (its
// last patch from NAME.source), how many of its boots ran clean and what
// each failed one died of (vm.json's failure, first line).
func repeatCounts(dir string) (string, error) {
	ents, err := kit.ReadDir(dir)
	if err != nil {
		return "", err
	}
	type side struct {
		boots, clean int
		fails        []string
	}
	sides := map[string]*side{}
	for _, e := range ents {
		m := repeatBoot.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		outcome, _, err := stressVerdict(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		s := sides[m[1]]
		if s == nil {
			s = &side{}
			sides[m[1]] = s
		}
		s.boots++
		if outcome == "clean" {
			s.clean++
		} else {
			s.fails = append(s.fails, "round "+m[2]+": "+strings.TrimPrefix(outcome, "FAIL: "))
		}
	}
	names := make([]string, 0, len(sides))
	for n := range sides {
		names = append(names, n)
	}
	sort.Strings(names)
	var rows [][]string
	for _, n := range names {
		s := sides[n]
		last := "?"
		if src, err := kit.ReadFile(filepath.Join(dir, n+".source")); err == nil {
			last = strings.TrimSpace(string(src))
			if i := strings.LastIndex(last, ": "); i >= 0 {
				last = last[i+2:]
			}
		}
		sort.Strings(s.fails)
		failed := "-"
		if len(s.fails) > 0 {
			failed = strings.Join(s.fails, "; ")
		}
		rows = append(rows, []string{n, last, strconv.Itoa(s.boots), fmt.Sprintf("%d of %d", s.boots-s.clean, s.boots), failed})
	}
	return kit.Table([]string{"modules", "its last patch", "stress boots", "failed", "what the failed boots died of"}, rows), nil
}
