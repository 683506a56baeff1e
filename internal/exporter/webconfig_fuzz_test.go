// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCheckWebConfig: the web configuration file is outside input; any
// bytes give an error naming the file or a configuration, never a panic,
// and a file that sets nothing protects nothing.
func FuzzCheckWebConfig(f *testing.F) {
	f.Add([]byte("basic_auth_users:\n  prometheus: $2y$10$abcdefghijklmnopqrstuu5Ue.7bp7Fp4V4GrUh7Z0S1dK0Q4Fv2e\n"))
	f.Add([]byte("tls_server_config:\n  cert_file: x.crt\n  key_file: x.key\n"))
	f.Add([]byte("{}"))
	f.Add([]byte("- a\n- b\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "web.yml")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := CheckWebConfig(p)
		if err != nil {
			if !strings.Contains(err.Error(), p) {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		if c.Protected() && !c.TLS {
			t.Fatalf("protected without TLS: %+v", c)
		}
	})
}
