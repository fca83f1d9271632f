package cli

import (
	"strings"

	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/pflag"
)

// formatsAnnotation marks an -o flag with the kind of the report registry
// it offers, which completion and the tests read.
const formatsAnnotation = "iolens/report-formats"

// outputFlag is -o of a command that writes a report: its formats, its
// help, its completion and what it accepts are the registry's.
func outputFlag(f *pflag.FlagSet, p *string, reg report.Registry, usage string) {
	*p = "text"
	f.VarP(&reportFormat{p: p, regs: []report.Registry{reg}}, "output", "o", usage+strings.Join(reg.Names(), ", "))
	_ = f.SetAnnotation("output", formatsAnnotation, []string{reg.Kind})
}

// alsoFormats adds to -o the formats of another report the command writes
// when, for example, a flag says so.
func alsoFormats(f *pflag.FlagSet, reg report.Registry, when string) {
	fl := f.Lookup("output")
	fl.Usage += "; " + when + ": " + strings.Join(reg.Names(), ", ")
	_ = f.SetAnnotation("output", formatsAnnotation, append(fl.Annotations[formatsAnnotation], reg.Kind))
	if v, ok := fl.Value.(*reportFormat); ok {
		v.regs = append(v.regs, reg)
	}
}

// reportFormat is the value of an outputFlag: a format of one of its
// registries (by any of its names), checked as the flag is parsed.
type reportFormat struct {
	p    *string
	regs []report.Registry
}

func (v *reportFormat) Set(s string) error {
	var first error
	for _, reg := range v.regs {
		_, err := reg.Lookup(s)
		if err == nil {
			*v.p = s
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

func (v *reportFormat) String() string { return *v.p }
func (v *reportFormat) Type() string   { return "format" }

// registriesOf are the report registries an -o flag offers, the main one
// first.
func registriesOf(fl *pflag.Flag) []report.Registry {
	var out []report.Registry
	for _, k := range fl.Annotations[formatsAnnotation] {
		for _, r := range report.Registries() {
			if r.Kind == k {
				out = append(out, r)
			}
		}
	}
	return out
}

// registryOf is the main report registry an -o flag offers, if it is one.
func registryOf(fl *pflag.Flag) (report.Registry, bool) {
	regs := registriesOf(fl)
	if len(regs) == 0 {
		return report.Registry{}, false
	}
	return regs[0], true
}
