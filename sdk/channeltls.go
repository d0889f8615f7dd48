package sdk

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"time"
)

// ChannelTLSEnv names the descriptor a plugin reads its TLS identity from,
// when the host hands it one (see ChannelTLS). Serve takes the variable out
// of the environment and reads and closes the descriptor before anything
// in the plugin can start a command.
const ChannelTLSEnv = "YAGENT_TLS_FD"

// autoMTLSEnv is where go-plugin's AutoMTLS puts the host's certificate. A
// plugin built against an sdk older than ChannelTLS finds it there, makes
// its own P-521 certificate and prints it in go-plugin's handshake line.
const autoMTLSEnv = "PLUGIN_CLIENT_CERT"

// channelMaterialMax bounds what a plugin reads from ChannelTLSEnv's
// descriptor: three PEM blocks take about 1.5 KiB.
const channelMaterialMax = 64 << 10

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
// sets too, and go-plugin trusts the certificate it prints.
type ChannelTLS struct {
	config   *tls.Config
	hostCert []byte   // PEM
	child    *os.File // the pipe's read end, for the plugin
}

// NewChannelTLS makes the keys and certificates of one plugin launch and
// the pipe that carries the plugin's share.
func NewChannelTLS() (*ChannelTLS, error) {
	hostCert, hostKey, err := selfSigned()
	if err != nil {
		return nil, err
	}
	pluginCert, pluginKey, err := selfSigned()
	if err != nil {
		return nil, err
	}
	config, err := mutualTLS(hostCert, hostKey, pluginCert)
	if err != nil {
		return nil, err
	}
	r, w, err := inheritPipe()
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
	return &ChannelTLS{config: config, hostCert: hostCert, child: r}, nil
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
// ChannelTLSEnv, and the host's certificate where AutoMTLS puts it.
func (c *ChannelTLS) Attach(cmd *exec.Cmd) {
	attachInherited(cmd, ChannelTLSEnv, c.child)
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

// selfSigned returns a new Ed25519 key and a certificate for "localhost"
// it signs itself, both PEM: the identity of one end of a channel, valid
// for as long as the process that made it keeps it.
func selfSigned() (certPEM, keyPEM []byte, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("channel key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, fmt.Errorf("channel certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"yagent plugin channel"}},
		DNSNames:              []string{"localhost"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		return nil, nil, fmt.Errorf("channel certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, fmt.Errorf("channel key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// mutualTLS is one end's configuration: its own certificate and key, and
// the peer's certificate as the only one it accepts, whether it dials or
// accepts (go-plugin's broker has the plugin dial the host too).
func mutualTLS(certPEM, keyPEM, peerPEM []byte) (*tls.Config, error) {
	own, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("channel identity: %w", err)
	}
	peer := x509.NewCertPool()
	if !peer.AppendCertsFromPEM(peerPEM) {
		return nil, errors.New("channel peer certificate: no certificate in it")
	}
	return &tls.Config{
		Certificates: []tls.Certificate{own},
		RootCAs:      peer,
		ClientCAs:    peer,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ServerName:   "localhost",
		MinVersion:   tls.VersionTLS13,
	}, nil
}

// readChannelTLS is the plugin's side: its certificate, its key and the
// host's certificate, as NewChannelTLS wrote them, read from r.
func readChannelTLS(r io.Reader) (*tls.Config, error) {
	b, err := io.ReadAll(io.LimitReader(r, channelMaterialMax+1))
	if err != nil {
		return nil, fmt.Errorf("read channel TLS: %w", err)
	}
	if len(b) > channelMaterialMax {
		return nil, fmt.Errorf("channel TLS material over %d bytes", channelMaterialMax)
	}
	var blocks [3][]byte
	want := [3]string{"CERTIFICATE", "PRIVATE KEY", "CERTIFICATE"}
	for i := range blocks {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil || blk.Type != want[i] {
			return nil, fmt.Errorf("channel TLS material: block %d is not a %s", i+1, want[i])
		}
		blocks[i] = pem.EncodeToMemory(blk)
	}
	return mutualTLS(blocks[0], blocks[1], blocks[2])
}
