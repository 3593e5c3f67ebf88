//go:build unix

package judge

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"reflect"
)

// A TLS configuration is copied with what a server needs of it: its
// certificates (with their private keys), versions, protocols and client
// authentication. Callbacks and session state stay behind.
func encodeTLS(_ *encoder, v reflect.Value) (value, error) {
	c := v.Interface().(*tls.Config)
	x := value{Kind: "tls", Int: int64(c.MinVersion), Uint: uint64(c.MaxVersion), Str: c.ServerName}
	x.Elems = append(x.Elems, value{Int: int64(c.ClientAuth)})
	x.Methods = c.NextProtos
	for _, cert := range c.Certificates {
		key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
		if err != nil {
			return value{}, fmt.Errorf("tls.Config: a certificate's key: %w", err)
		}
		cv := value{Bytes: key}
		for _, der := range cert.Certificate {
			cv.Elems = append(cv.Elems, value{Bytes: der})
		}
		x.Elems = append(x.Elems, cv)
	}
	return x, nil
}

func decodeTLS(_ *decoder, x value, _ reflect.Type) (reflect.Value, error) {
	c := &tls.Config{MinVersion: uint16(x.Int), MaxVersion: uint16(x.Uint), ServerName: x.Str, NextProtos: x.Methods}
	if len(x.Elems) > 0 {
		c.ClientAuth = tls.ClientAuthType(x.Elems[0].Int)
	}
	for _, cv := range x.Elems[min(1, len(x.Elems)):] {
		key, err := x509.ParsePKCS8PrivateKey(cv.Bytes)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("tls.Config: a certificate's key: %w", err)
		}
		cert := tls.Certificate{PrivateKey: key}
		for _, der := range cv.Elems {
			cert.Certificate = append(cert.Certificate, der.Bytes)
		}
		c.Certificates = append(c.Certificates, cert)
	}
	return reflect.ValueOf(c), nil
}
