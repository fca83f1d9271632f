package etcdtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs are PEM files for a TLS test: a CA with a server certificate for
// 127.0.0.1 and localhost and a client certificate, and a second CA
// with its own client certificate, which the first CA's servers refuse.
type Certs struct {
	Dir                             string
	CA, ServerCert, ServerKey       string
	ClientCert, ClientKey           string
	OtherCA                         string
	OtherClientCert, OtherClientKey string
	caCert, otherCert               *x509.Certificate
	caKey, otherKey                 *ecdsa.PrivateKey
	serial                          int64
	notBefore, notAfter             time.Time
}

// NewCerts writes the certificates into a directory of t's.
func NewCerts(t testing.TB) *Certs {
	t.Helper()
	c := &Certs{Dir: t.TempDir(), notBefore: time.Now().Add(-time.Hour), notAfter: time.Now().Add(24 * time.Hour)}
	var err error
	if c.caCert, c.caKey, err = c.ca("iolens test CA", "ca"); err != nil {
		t.Fatal(err)
	}
	if c.otherCert, c.otherKey, err = c.ca("iolens other CA", "other-ca"); err != nil {
		t.Fatal(err)
	}
	c.CA, c.OtherCA = filepath.Join(c.Dir, "ca.crt"), filepath.Join(c.Dir, "other-ca.crt")
	if c.ServerCert, c.ServerKey, err = c.leaf("server", c.caCert, c.caKey, x509.ExtKeyUsageServerAuth); err != nil {
		t.Fatal(err)
	}
	if c.ClientCert, c.ClientKey, err = c.leaf("client", c.caCert, c.caKey, x509.ExtKeyUsageClientAuth); err != nil {
		t.Fatal(err)
	}
	if c.OtherClientCert, c.OtherClientKey, err = c.leaf("other-client", c.otherCert, c.otherKey, x509.ExtKeyUsageClientAuth); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *Certs) next() *big.Int {
	c.serial++
	return big.NewInt(c.serial)
}

func (c *Certs) ca(cn, file string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: c.next(), Subject: pkix.Name{CommonName: cn}, NotBefore: c.notBefore, NotAfter: c.notAfter,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, writePEM(filepath.Join(c.Dir, file+".crt"), "CERTIFICATE", der)
}

func (c *Certs) leaf(name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage) (string, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{SerialNumber: c.next(), Subject: pkix.Name{CommonName: "iolens test " + name}, NotBefore: c.notBefore, NotAfter: c.notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	if usage == x509.ExtKeyUsageServerAuth {
		// etcd's gateway dials its own gRPC port with the serving
		// certificate, as a client: it needs both usages.
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return "", "", err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	crt, k := filepath.Join(c.Dir, name+".crt"), filepath.Join(c.Dir, name+".key")
	if err := writePEM(crt, "CERTIFICATE", der); err != nil {
		return "", "", err
	}
	return crt, k, writePEM(k, "EC PRIVATE KEY", kder)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
