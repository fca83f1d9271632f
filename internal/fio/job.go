package fio

import (
	"fmt"
	"strings"
)

// JobFile is a fio job file: an optional global section and jobs, each an
// ordered list of options. Order matters to fio (stonewall, includes).
type JobFile struct {
	Global []KV
	Jobs   []Section
}

// Section is one named job.
type Section struct {
	Name    string
	Options []KV
}

// KV is one fio option; an empty Value writes a bare flag.
type KV struct{ Key, Value string }

// String renders the job file in fio's INI syntax.
func (j JobFile) String() string {
	var b strings.Builder
	if len(j.Global) > 0 {
		b.WriteString("[global]\n")
		writeKVs(&b, j.Global)
	}
	for _, s := range j.Jobs {
		fmt.Fprintf(&b, "\n[%s]\n", s.Name)
		writeKVs(&b, s.Options)
	}
	return b.String()
}

func writeKVs(b *strings.Builder, kvs []KV) {
	for _, kv := range kvs {
		if kv.Value == "" {
			fmt.Fprintf(b, "%s\n", kv.Key)
		} else {
			fmt.Fprintf(b, "%s=%s\n", kv.Key, kv.Value)
		}
	}
}

// ParseJobFile reads fio's INI job syntax: [sections], key=value or bare
// flags, ; and # comments. The [global] section is returned separately.
// Includes and environment expansion are not supported and are an error,
// so a job never silently differs from what the user wrote.
func ParseJobFile(text string) (JobFile, error) {
	var jf JobFile
	var cur *[]KV
	for n, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == ';' || line[0] == '#' {
			continue
		}
		if i := strings.IndexAny(line, ";#"); i > 0 && (line[i-1] == ' ' || line[i-1] == '\t') {
			line = strings.TrimSpace(line[:i])
		}
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") {
				return jf, fmt.Errorf("line %d: section header %q has no closing ]", n+1, line)
			}
			name := strings.TrimSpace(line[1 : len(line)-1])
			if name == "" {
				return jf, fmt.Errorf("line %d: empty section name", n+1)
			}
			if name == "global" {
				cur = &jf.Global
				continue
			}
			jf.Jobs = append(jf.Jobs, Section{Name: name})
			cur = &jf.Jobs[len(jf.Jobs)-1].Options
			continue
		}
		if strings.HasPrefix(line, "include ") {
			return jf, fmt.Errorf("line %d: include is not supported; inline the included file", n+1)
		}
		if cur == nil {
			return jf, fmt.Errorf("line %d: option %q outside any [section]", n+1, line)
		}
		kv := KV{Key: line}
		if i := strings.IndexByte(line, '='); i >= 0 {
			kv = KV{Key: strings.TrimSpace(line[:i]), Value: strings.TrimSpace(line[i+1:])}
		}
		if strings.Contains(kv.Value, "${") {
			return jf, fmt.Errorf("line %d: environment expansion (%s) is not supported; write the value", n+1, kv.Value)
		}
		*cur = append(*cur, kv)
	}
	if len(jf.Jobs) == 0 {
		return jf, fmt.Errorf("no job sections found (a job file needs at least one [name] section besides [global])")
	}
	return jf, nil
}
