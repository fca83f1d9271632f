// Package etcdtest starts a real single-member etcd on loopback ports for
// tests, with or without TLS client-certificate authentication, makes
// the certificates, and drives writes through etcd's own HTTP/JSON
// gateway so the member fsyncs its WAL. Everything it starts is stopped
// when the test ends, whether it passed or not.
package etcdtest
