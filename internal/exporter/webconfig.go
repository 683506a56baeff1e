// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"fmt"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"
	"golang.org/x/crypto/bcrypt"

	"github.com/wirespeed/wirespeed/internal/inputfile"
)

// WebConfigLimit bounds the web configuration file (certificates and keys
// may be inline; a few KB each).
const WebConfigLimit = 1 << 20

// WebConfig is what a web configuration file protects the exporter with.
type WebConfig struct {
	TLS        bool // tls_server_config: HTTPS only
	BasicAuth  bool // basic_auth_users: a user and password on every request
	ClientCert bool // client_auth_type RequireAndVerifyClientCert: a client certificate the CA signed
}

// Protected says whether the file makes the exporter fit to leave loopback
// without --allow-remote: TLS, and every client authenticated (a password
// or a verified client certificate). A password without TLS would cross
// the network in clear; TLS without authentication serves anyone.
func (c WebConfig) Protected() bool { return c.TLS && (c.BasicAuth || c.ClientCert) }

func (c WebConfig) String() string {
	switch {
	case c.TLS && c.BasicAuth && c.ClientCert:
		return "TLS, client certificates and basic auth"
	case c.TLS && c.BasicAuth:
		return "TLS and basic auth"
	case c.TLS && c.ClientCert:
		return "TLS and client certificates"
	case c.TLS:
		return "TLS without authentication"
	case c.BasicAuth:
		return "basic auth over plain HTTP"
	}
	return "plain HTTP"
}

// CheckWebConfig reads path as prometheus/exporter-toolkit's web
// configuration file (the toolkit's own web.Validate: strict YAML, the
// certificate and key load and match, passwords are bcrypt hashes) and says
// what it protects with. The errors name the file and what to fix.
func CheckWebConfig(path string) (WebConfig, error) {
	fail := func(format string, a ...any) (WebConfig, error) {
		return WebConfig{}, fmt.Errorf("--web.config.file %s: %s (the format: docs/fleet.md, or node_exporter's web-configuration documentation)", path, fmt.Sprintf(format, a...))
	}
	b, err := inputfile.Read(path, "--web.config.file", WebConfigLimit)
	if err != nil {
		return fail("%v", err)
	}
	var c web.Config
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return fail("not a web configuration: %v", err)
	}
	for user, hash := range c.Users {
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return fail("basic_auth_users: the password of %q is not a bcrypt hash (%v); write its hash, e.g. what follows the colon in the output of `htpasswd -nBC 10 %s`", user, err, user)
		}
	}
	if err := web.Validate(path); err != nil {
		return fail("%v", err)
	}
	return WebConfig{
		TLS:        c.TLSConfig.IsEnabled(),
		BasicAuth:  len(c.Users) > 0,
		ClientCert: c.TLSConfig.ClientAuth == "RequireAndVerifyClientCert",
	}, nil
}
