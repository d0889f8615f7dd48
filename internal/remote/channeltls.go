package remote

import (
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"

	"github.com/yagent/yagent/internal/wire"
)

// autoMTLSEnv is where go-plugin's AutoMTLS puts the host's certificate. A
// plugin built against an sdk older than ChannelTLS finds it there, makes
// its own P-521 certificate and prints it in go-plugin's handshake line.
const autoMTLSEnv = "PLUGIN_CLIENT_CERT"

// ChannelTLS is the mutual TLS of one plugin's gRPC connection, which
// carries describe, approvals, process groups, session ends and shutdown
// (calls take the CallChannel). It does what go-plugin's AutoMTLS does with
// Ed25519 keys instead of P-521 ones, whose generation, signatures and
// verifications took a few hundred milliseconds of CPU across a start's
// handshakes: the host makes a key and a self-signed certificate for itself
// and one for the plugin, and hands the plugin its key and both
// certificates through a pipe only the plugin inherits; each side then
// accepts only the other's certificate. No private key is ever in an
// environment, a command the plugin runs inherits neither the descriptor
// nor the variable, and a process that reaches the plugin's socket without
// the host's key is refused in the handshake (TestChannelTLS_RefusesStrangers).
//
// The host makes one per launch: NewChannelTLS, Attach to the plugin's
// command, Config for go-plugin's ClientConfig.TLSConfig, Started once the
// process runs. A plugin built against an older sdk does not read the pipe:
// it takes the host's certificate from AutoMTLS's variable, which Attach
// sets too, and go-plugin trusts the certificate it prints. So does a
// plugin in another language (examples/python). For a TLS library that
// verifies no Ed25519 signature from a client (BoringSSL's default), the
// host has a second certificate, ECDSA P-256, in the variable and in its
// Config: Go's TLS sends the first of the two the peer asks for.
type ChannelTLS struct {
	config   *tls.Config
	hostCert []byte   // PEM: the Ed25519 certificate, then the P-256 one
	child    *os.File // the pipe's read end, for the plugin
}

// NewChannelTLS makes the keys and certificates of one plugin launch and
// the pipe that carries the plugin's share.
func NewChannelTLS() (*ChannelTLS, error) {
	hostCert, hostKey, err := wire.SelfSigned()
	if err != nil {
		return nil, err
	}
	pluginCert, pluginKey, err := wire.SelfSigned()
	if err != nil {
		return nil, err
	}
	config, err := wire.MutualTLS(hostCert, hostKey, pluginCert)
	if err != nil {
		return nil, err
	}
	p256Cert, p256Key, err := wire.SelfSignedP256()
	if err != nil {
		return nil, err
	}
	p256, err := tls.X509KeyPair(p256Cert, p256Key)
	if err != nil {
		return nil, fmt.Errorf("channel identity: %w", err)
	}
	config.Certificates = append(config.Certificates, p256)
	r, w, err := wire.InheritPipe()
	if err != nil {
		return nil, fmt.Errorf("channel TLS pipe: %w", err)
	}
	// Well under a pipe's capacity: written whole before the plugin runs.
	_, err = w.Write(append(append(pluginCert, pluginKey...), hostCert...))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("channel TLS pipe: %w", err)
	}
	return &ChannelTLS{config: config, hostCert: append(hostCert, p256Cert...), child: r}, nil
}

// Config is the host's side of the connection, for go-plugin's
// ClientConfig.TLSConfig (with AutoMTLS off); nil for a nil ChannelTLS.
func (c *ChannelTLS) Config() *tls.Config {
	if c == nil {
		return nil
	}
	return c.config
}

// Attach hands the plugin its share as an inherited descriptor named in
// wire.ChannelTLSEnv, and the host's certificate where AutoMTLS puts it.
func (c *ChannelTLS) Attach(cmd *exec.Cmd) {
	wire.AttachInherited(cmd, wire.ChannelTLSEnv, c.child)
	cmd.Env = append(cmd.Env, autoMTLSEnv+"="+string(c.hostCert))
}

// Started closes the host's copy of the pipe, once the plugin's process
// holds its own; Close does the same for a launch that failed. Both do
// nothing on a nil ChannelTLS.
func (c *ChannelTLS) Started() {
	if c != nil && c.child != nil {
		_ = c.child.Close()
		c.child = nil
	}
}

// Close releases what Started would.
func (c *ChannelTLS) Close() { c.Started() }
