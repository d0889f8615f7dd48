package remote

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/yagent/yagent/internal/wire"
)

// pluginSide reads the plugin's share of c the way a launched plugin does,
// from the pipe's read end.
func pluginSide(t *testing.T, c *ChannelTLS) *tls.Config {
	t.Helper()
	cfg, err := wire.ReadChannelTLS(c.child)
	if err != nil {
		t.Fatalf("ReadChannelTLS: %v", err)
	}
	c.Started()
	return cfg
}

// stranger is a TLS configuration with a key and certificate of its own
// that trusts any peer: what a process that reached a plugin's socket, or
// posed as a plugin, could bring.
func stranger(t *testing.T) *tls.Config {
	t.Helper()
	cert, key, err := wire.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	own, err := tls.X509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{own}, InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}
}

// exchange runs a TLS handshake between a client and a server config over
// a socket pair, and one byte each way so that the server's verdict on the
// client's certificate reaches the client (in TLS 1.3 the client's
// handshake ends before the server has judged it). It returns the
// client's and the server's errors.
func exchange(t *testing.T, client, server *tls.Config) (clientErr, serverErr error) {
	t.Helper()
	a, b := connPair(t)
	defer a.Close()
	defer b.Close()
	done := make(chan error, 1)
	go func() {
		s := tls.Server(b, server)
		err := s.Handshake()
		if err == nil {
			buf := make([]byte, 1)
			if _, err = s.Read(buf); err == nil {
				_, err = s.Write(buf)
			}
		}
		if err != nil {
			b.Close() // the client's read ends, whatever it waits for
		}
		done <- err
	}()
	c := tls.Client(a, client)
	clientErr = c.Handshake()
	if clientErr == nil {
		if _, clientErr = c.Write([]byte{1}); clientErr == nil {
			_, clientErr = c.Read(make([]byte, 1))
		}
	}
	if clientErr != nil {
		a.Close()
	}
	return clientErr, <-done
}

// connPair is the two ends of a connected stream socket pair.
func connPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	fa, fb, err := wire.SocketPair()
	if err != nil {
		t.Skip(err)
	}
	defer fa.Close()
	defer fb.Close()
	a, err := net.FileConn(fa)
	if err != nil {
		t.Fatal(err)
	}
	b, err := net.FileConn(fb)
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	return a, b
}

// TestChannelTLS_Handshake: the host and its plugin complete a mutual TLS
// handshake, the host dialling the plugin (the plugin's service) and the
// plugin dialling the host (go-plugin's broker, the host's callbacks).
func TestChannelTLS_Handshake(t *testing.T) {
	c, err := NewChannelTLS()
	if err != nil {
		t.Fatal(err)
	}
	host, plugin := c.Config(), pluginSide(t, c)
	if cerr, serr := exchange(t, host, plugin); cerr != nil || serr != nil {
		t.Errorf("host dials plugin: client %v, server %v", cerr, serr)
	}
	if cerr, serr := exchange(t, plugin, host); cerr != nil || serr != nil {
		t.Errorf("plugin dials host: client %v, server %v", cerr, serr)
	}
}

// TestChannelTLS_RefusesStrangers: each end accepts its peer's
// certificate alone. A stranger's key, or the host's key of another
// plugin's launch, is refused by the plugin, and the host refuses a
// server that is not its plugin.
func TestChannelTLS_RefusesStrangers(t *testing.T) {
	c, err := NewChannelTLS()
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewChannelTLS()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	host, plugin := c.Config(), pluginSide(t, c)

	otherHost := other.Config().Clone()
	otherHost.InsecureSkipVerify = true // it would refuse this plugin itself
	for name, client := range map[string]*tls.Config{
		"a stranger's certificate":                 stranger(t),
		"no certificate":                           {InsecureSkipVerify: true, MinVersion: tls.VersionTLS13},
		"the host's certificate of another launch": otherHost,
	} {
		cerr, serr := exchange(t, client, plugin)
		if serr == nil || cerr == nil {
			t.Errorf("%s: the plugin accepted it (client %v, server %v)", name, cerr, serr)
		}
	}
	if cerr, _ := exchange(t, host, stranger(t)); cerr == nil || !strings.Contains(cerr.Error(), "certificate") {
		t.Errorf("host dialled a server that is not its plugin: %v", cerr)
	}
}

// TestChannelTLS_AttachKeepsKeysOutOfTheEnvironment: the plugin's key goes
// through the inherited pipe; the environment names the descriptor and
// holds the host's certificate (for a plugin of an older sdk), no key.
func TestChannelTLS_AttachKeepsKeysOutOfTheEnvironment(t *testing.T) {
	c, err := NewChannelTLS()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmd := exec.Command("true")
	cmd.ExtraFiles = make([]*os.File, 1) // a descriptor already passed: ours is 4
	c.Attach(cmd)
	env := strings.Join(cmd.Env, "\n")
	if !strings.Contains(env, wire.ChannelTLSEnv+"=4") || !strings.Contains(env, autoMTLSEnv+"=-----BEGIN CERTIFICATE") {
		t.Errorf("env %q: want %s=4 and the host's certificate in %s", env, wire.ChannelTLSEnv, autoMTLSEnv)
	}
	if strings.Contains(env, "PRIVATE KEY") {
		t.Errorf("a private key is in the plugin's environment")
	}
	if len(cmd.ExtraFiles) != 2 || cmd.ExtraFiles[1] != c.child {
		t.Errorf("ExtraFiles %v: want the pipe's read end after the one already there", cmd.ExtraFiles)
	}
}

// boringSSLVerify is the signatures BoringSSL verifies by default
// (kVerifySignatureAlgorithms in its ssl/extensions.cc), which a server of
// gRPC's C core (the grpcio wheels of PyPI, gRPC C++) asks a client for:
// no Ed25519.
var boringSSLVerify = []tls.SignatureScheme{
	tls.ECDSAWithP256AndSHA256, tls.PSSWithSHA256, tls.PKCS1WithSHA256,
	tls.ECDSAWithP384AndSHA384, tls.PSSWithSHA384, tls.PKCS1WithSHA384,
	tls.PSSWithSHA512, tls.PKCS1WithSHA512,
}

// TestChannelTLS_HostCertificateForEveryPlugin: a plugin that does not read
// the pipe (an older sdk, another language) trusts the certificates in
// AutoMTLS's variable, and the host sends it one it can verify. Go's TLS
// sends the first certificate of the host's Config whose signature the
// peer asks for (crypto/tls's getClientCertificate): a peer that verifies
// Ed25519, as Go and OpenSSL do, gets the Ed25519 one; a BoringSSL peer,
// which does not, the P-256 one, rather than no certificate and a refused
// handshake.
func TestChannelTLS_HostCertificateForEveryPlugin(t *testing.T) {
	c, err := NewChannelTLS()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	inEnv := map[string]bool{}
	for rest := c.hostCert; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		inEnv[string(blk.Bytes)] = true
	}
	sent := func(schemes []tls.SignatureScheme) (x509.PublicKeyAlgorithm, bool) {
		cri := &tls.CertificateRequestInfo{SignatureSchemes: schemes, Version: tls.VersionTLS13}
		for _, cert := range c.Config().Certificates {
			if cri.SupportsCertificate(&cert) == nil {
				leaf, err := x509.ParseCertificate(cert.Certificate[0])
				if err != nil {
					t.Fatal(err)
				}
				return leaf.PublicKeyAlgorithm, inEnv[string(cert.Certificate[0])]
			}
		}
		return x509.UnknownPublicKeyAlgorithm, false
	}
	for _, tc := range []struct {
		peer    string
		schemes []tls.SignatureScheme
		want    x509.PublicKeyAlgorithm
	}{
		{"a peer that verifies Ed25519", append([]tls.SignatureScheme{tls.Ed25519}, boringSSLVerify...), x509.Ed25519},
		{"BoringSSL", boringSSLVerify, x509.ECDSA},
	} {
		if got, trusted := sent(tc.schemes); got != tc.want || !trusted {
			what := "no certificate"
			if got != x509.UnknownPublicKeyAlgorithm {
				what = fmt.Sprintf("a %v certificate (in %s: %v)", got, autoMTLSEnv, trusted)
			}
			t.Errorf("%s: the host sends %s, want a %v one of %s", tc.peer, what, tc.want, autoMTLSEnv)
		}
	}
}
