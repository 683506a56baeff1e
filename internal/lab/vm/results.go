// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The guest sends each file of /results over its second serial port as
//
//	@@WS-FILE NAME SIZE SHA256
//	base64 of the gzip-compressed contents, in lines
//	@@WS-EOF NAME
//
// and ends with "@@WS-DONE". Only the guest's init writes to that port, so
// no kernel message can land in the middle of the data; the size and
// checksum catch anything else.

// ResultFile is one file received from the guest.
type ResultFile struct {
	Name string
	Data []byte
}

// ParseResults decodes the results channel. done tells whether the guest
// reached the end marker; files that were cut off or fail their checksum
// are errors (the good ones are still returned).
func ParseResults(r io.Reader) (files []ResultFile, done bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	var errs []string
	var cur *struct {
		name string
		size int
		sum  string
		b64  strings.Builder
	}
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		// A UART's probe leaves a byte ahead of the first line (raspi3b's
		// mini UART: "X@@WS-FILE ...").
		if i := strings.Index(line, markerPrefix+"-"); i > 0 {
			line = line[i:]
		}
		switch {
		case strings.HasPrefix(line, markerPrefix+"-FILE "):
			f := strings.Fields(line)
			if cur != nil {
				errs = append(errs, cur.name+": cut off")
			}
			if len(f) != 4 {
				errs = append(errs, "bad header "+strconv.Quote(line))
				cur = nil
				continue
			}
			n, _ := strconv.Atoi(f[2])
			cur = &struct {
				name string
				size int
				sum  string
				b64  strings.Builder
			}{name: filepath.Base(f[1]), size: n, sum: f[3]}
		case strings.HasPrefix(line, markerPrefix+"-EOF "):
			if cur == nil {
				continue
			}
			data, derr := decodeResult(cur.b64.String())
			switch {
			case derr != nil:
				errs = append(errs, fmt.Sprintf("%s: %v", cur.name, derr))
			case len(data) != cur.size:
				errs = append(errs, fmt.Sprintf("%s: %d bytes, the guest sent %d", cur.name, len(data), cur.size))
			case sha(data) != cur.sum:
				errs = append(errs, fmt.Sprintf("%s: checksum mismatch", cur.name))
			default:
				files = append(files, ResultFile{Name: cur.name, Data: data})
			}
			cur = nil
		case line == markerPrefix+"-DONE":
			done = true
		default:
			if cur != nil {
				cur.b64.WriteString(strings.TrimSpace(line))
			}
		}
	}
	if cur != nil {
		errs = append(errs, cur.name+": cut off (the guest stopped while sending it)")
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return files, done, fmt.Errorf("results from the guest: %s", strings.Join(errs, "; "))
	}
	return files, done, nil
}

func decodeResult(s string) ([]byte, error) {
	gz, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("base64: %w", err)
	}
	z, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return io.ReadAll(z)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// parseFacts reads the guest's facts.txt (key=value lines).
func parseFacts(b []byte) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
			m[k] = v
		}
	}
	return m
}

// annotateBench appends notes to a bench result file without touching the
// fields it does not know.
func annotateBench(path string, notes []string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var old []string
	if raw, ok := m["notes"]; ok {
		_ = json.Unmarshal(raw, &old)
	}
	nb, _ := json.Marshal(append(old, notes...))
	m["notes"] = nb
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

// RXSeen is observe's RX path class of one device in one bench, with the
// bytes it saw the device deliver up the stack there.
type RXSeen struct {
	Class string
	Bytes float64
}

// RXPaths returns, from a bench result's runs, the observe RX path class
// of each device seen ("cdc_ncm0" -> "netif_rx backlog (no NAPI, no GRO)"),
// the run where the device delivered the most bytes.
func RXPaths(benchJSON []byte) map[string]RXSeen {
	var r struct {
		Runs []struct {
			Observe *struct {
				Devices []struct {
					Name   string  `json:"name"`
					RXPath string  `json:"rx_path"`
					Bytes  float64 `json:"delivered_bytes"`
				} `json:"devices"`
			} `json:"observe"`
		} `json:"runs"`
	}
	out := map[string]RXSeen{}
	if json.Unmarshal(benchJSON, &r) != nil {
		return out
	}
	for _, run := range r.Runs {
		if run.Observe == nil {
			continue
		}
		for _, d := range run.Observe.Devices {
			MergeRXPath(out, d.Name, RXSeen{d.RXPath, d.Bytes})
		}
	}
	return out
}

// MergeRXPath keeps, per device, the class seen where the device delivered
// the most bytes: a bench that sends sees only ACKs come in, nothing for
// GRO to merge, so its class says less about the RX path than the
// receiving bench's, whichever file comes last.
func MergeRXPath(into map[string]RXSeen, dev string, s RXSeen) {
	if s.Class == "" {
		return
	}
	if old, ok := into[dev]; !ok || s.Bytes > old.Bytes {
		into[dev] = s
	}
}
