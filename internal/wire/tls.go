package wire

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"
)

// channelMaterialMax bounds what a plugin reads from ChannelTLSEnv's
// descriptor: three PEM blocks take about 1.5 KiB.
const channelMaterialMax = 64 << 10

// SelfSigned returns a new Ed25519 key and a certificate for "localhost"
// it signs itself, both PEM: the identity of one end of a channel, valid
// for as long as the process that made it keeps it.
func SelfSigned() (certPEM, keyPEM []byte, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("channel key: %w", err)
	}
	return selfSigned(pub, priv)
}

// SelfSignedP256 is SelfSigned with an ECDSA P-256 key: the one key every
// TLS library verifies. BoringSSL, under gRPC's C core (the grpcio wheels
// of PyPI, gRPC C++), asks by default for no Ed25519 signature from a
// client.
func SelfSignedP256() (certPEM, keyPEM []byte, err error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("channel key: %w", err)
	}
	return selfSigned(priv.Public(), priv)
}

func selfSigned(pub crypto.PublicKey, priv crypto.Signer) (certPEM, keyPEM []byte, err error) {
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

// MutualTLS is one end's configuration: its own certificate and key, and
// the peer's certificate as the only one it accepts, whether it dials or
// accepts (go-plugin's broker has the plugin dial the host too).
func MutualTLS(certPEM, keyPEM, peerPEM []byte) (*tls.Config, error) {
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

// ReadChannelTLS is the plugin's side: its certificate, its key and the
// host's certificate, as the host wrote them (internal/remote's
// NewChannelTLS), read from r.
func ReadChannelTLS(r io.Reader) (*tls.Config, error) {
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
	return MutualTLS(blocks[0], blocks[1], blocks[2])
}
