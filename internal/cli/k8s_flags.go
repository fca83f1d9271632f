package cli

// checkedString is a string flag checked as it is parsed, an empty value
// as any other.
type checkedString struct {
	p     *string
	check func(string) error
}

func (v checkedString) Set(s string) error {
	if err := v.check(s); err != nil {
		return err
	}
	*v.p = s
	return nil
}

func (v checkedString) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}
func (v checkedString) Type() string { return "string" }
