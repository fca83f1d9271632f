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
// help and its completion are the registry's.
func outputFlag(f *pflag.FlagSet, p *string, reg report.Registry, usage string) {
	f.StringVarP(p, "output", "o", "text", usage+strings.Join(reg.Names(), ", "))
	_ = f.SetAnnotation("output", formatsAnnotation, []string{reg.Kind})
}

// alsoFormats adds to -o the formats of another report the command writes
// when, for example, a flag says so.
func alsoFormats(f *pflag.FlagSet, reg report.Registry, when string) {
	fl := f.Lookup("output")
	fl.Usage += "; " + when + ": " + strings.Join(reg.Names(), ", ")
	_ = f.SetAnnotation("output", formatsAnnotation, append(fl.Annotations[formatsAnnotation], reg.Kind))
}

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
