package cli

import (
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/k8s"
)

// runIDValue is --run-id, checked as it is parsed: an empty one (given
// as --run-id ”) is refused as any other id the objects cannot carry.
type runIDValue struct {
	flag string
	p    *string
}

func (v runIDValue) Set(s string) error {
	if err := k8s.CheckRunID(v.flag, s); err != nil {
		return err
	}
	*v.p = s
	return nil
}

func (v runIDValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}
func (v runIDValue) Type() string { return "string" }

// nodeSelectorValue is --node-selector, checked as it is parsed.
type nodeSelectorValue struct{ p *string }

func (v nodeSelectorValue) Set(s string) error {
	if _, err := k8s.ParseNodeSelector(s); err != nil {
		return hint.Wrap(err, "labels as k=v[,k=v], each a valid label key and value, e.g. --node-selector disktype=ssd")
	}
	*v.p = s
	return nil
}

func (v nodeSelectorValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}
func (v nodeSelectorValue) Type() string { return "string" }
