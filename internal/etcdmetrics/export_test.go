package etcdmetrics

import "errors"

// IsNotEtcd reports whether err says the page is not an etcd member's.
func IsNotEtcd(err error) bool {
	var n *NotEtcdError
	var f *FormatError
	return errors.As(err, &n) || errors.As(err, &f)
}
