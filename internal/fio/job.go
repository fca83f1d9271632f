package fio

import (
	"fmt"
	"strings"
)

// JobFile is a fio job file: an optional global section and jobs, each an
// ordered list of options. Order matters to fio (stonewall).
type JobFile struct {
	Global []KV
	Jobs   []Section
}

// Section is one named section of a job file. Global is set for sections
// fio treats as global ones: every name that starts with "global".
type Section struct {
	Name    string
	Global  bool
	Line    int // 1-based line of the [header], when parsed
	Options []KV
}

// KV is one fio option; an empty Value writes a bare flag. Line is the
// 1-based line it was read from, when parsed.
type KV struct {
	Key, Value string
	Line       int
}

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

// Limits on what ParseJobFile reads. fio reads lines with fgets into an
// 8 KiB buffer and silently splits longer ones into two options.
const (
	MaxJobFileBytes = 1 << 20
	maxLineBytes    = 4096
	maxSections     = 512
	maxNameBytes    = 128
)

// SyntaxError is a job file line iolens will not hand to fio: bad syntax,
// or a construct that makes fio read something other than the text
// (includes, environment variables, reserved keywords).
type SyntaxError struct {
	Line   int // 1-based; 0 for the file as a whole
	Reason string
	hint   string
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 {
		return e.Reason
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
}

// Hint says what to write instead.
func (e *SyntaxError) Hint() string { return e.hint }

// ParseJobFile reads fio's INI job syntax the way fio 3.33 reads it
// (init.c __parse_jobs_ini, parse.c strip_blank_end): a line whose first
// non-blank character is ';' or '#' is a comment, and everything from the
// first ';' or '#' of any other line is cut off; a section whose name
// starts with "global" is a global section; option names are case
// sensitive. Sections are returned in order, global ones included.
//
// What would make fio read more than this text is refused: every line
// starting with "include" (fio takes "include<TAB>x" and "include=x" as
// includes too), and any '$', since fio expands ${VAR} from its
// environment and $pagesize, $mb_memory and $ncpus through a shell
// pipeline to bc. So are control characters and non-ASCII bytes, which
// fio copies raw into its JSON report.
func ParseJobFile(text string) ([]Section, error) {
	if len(text) > MaxJobFileBytes {
		return nil, &SyntaxError{Reason: fmt.Sprintf("job file is %d bytes, more than the %d iolens reads", len(text), MaxJobFileBytes),
			hint: "a job file describes tests, not data: split it or shorten it"}
	}
	var out []Section
	for n, raw := range strings.Split(text, "\n") {
		line := n + 1
		raw = strings.TrimSuffix(raw, "\r")
		if len(raw) > maxLineBytes {
			return nil, &SyntaxError{Line: line, Reason: fmt.Sprintf("line is %d bytes long, more than %d", len(raw), maxLineBytes)}
		}
		for i := 0; i < len(raw); i++ {
			if c := raw[i]; c >= 0x80 || (c < 0x20 && c != '\t') || c == 0x7f {
				return nil, &SyntaxError{Line: line, Reason: fmt.Sprintf("byte 0x%02x at column %d: job files are plain ASCII text", c, i+1),
					hint: "remove control characters and non-ASCII text (fio copies them raw into its JSON report)"}
			}
		}
		s := strings.TrimLeft(raw, " \t")
		if s == "" || s[0] == ';' || s[0] == '#' {
			continue
		}
		if i := strings.IndexAny(s, ";#"); i >= 0 {
			s = s[:i]
		}
		s = strings.TrimRight(s, " \t")
		if s == "" {
			continue
		}
		if strings.Contains(s, "$") {
			return nil, &SyntaxError{Line: line, Reason: fmt.Sprintf("%q: '$' starts an expansion ($VAR, ${VAR}, $pagesize, $mb_memory, $ncpus) that fio fills from its environment or a shell", s),
				hint: "write the value itself"}
		}
		if strings.HasPrefix(s, "[") {
			if !strings.HasSuffix(s, "]") {
				return nil, &SyntaxError{Line: line, Reason: fmt.Sprintf("section header %q has no closing ]", s)}
			}
			name := strings.TrimSpace(s[1 : len(s)-1])
			if err := checkSectionName(name); err != "" {
				return nil, &SyntaxError{Line: line, Reason: fmt.Sprintf("section name %q: %s", name, err),
					hint: "name sections with letters, digits and . _ - + :"}
			}
			if len(out) == maxSections {
				return nil, &SyntaxError{Line: line, Reason: fmt.Sprintf("more than %d sections", maxSections)}
			}
			out = append(out, Section{Name: name, Global: strings.HasPrefix(name, "global"), Line: line})
			continue
		}
		// fio's test is strncmp(line, "include", 7): "includefoo",
		// "include=x" and "include\tx" are all include directives.
		if strings.HasPrefix(s, "include") {
			return nil, &SyntaxError{Line: line, Reason: fmt.Sprintf("%q: include directives make fio read another file", s),
				hint: "copy the included options into this file"}
		}
		if len(out) == 0 {
			return nil, &SyntaxError{Line: line, Reason: fmt.Sprintf("option %q outside any [section]", s)}
		}
		kv := KV{Key: s, Line: line}
		if i := strings.IndexByte(s, '='); i >= 0 {
			kv.Key, kv.Value = strings.TrimRight(s[:i], " \t"), strings.TrimSpace(s[i+1:])
		}
		if kv.Key == "" {
			return nil, &SyntaxError{Line: line, Reason: fmt.Sprintf("%q has no option name", s)}
		}
		cur := &out[len(out)-1]
		cur.Options = append(cur.Options, kv)
	}
	jobs := 0
	for _, s := range out {
		if !s.Global {
			jobs++
		}
	}
	if jobs == 0 {
		return nil, &SyntaxError{Reason: "no job sections found",
			hint: "a job file needs at least one [name] section besides [global]"}
	}
	return out, nil
}

func checkSectionName(name string) string {
	if name == "" {
		return "empty"
	}
	if len(name) > maxNameBytes {
		return fmt.Sprintf("longer than %d characters", maxNameBytes)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-+:", c)) {
			return fmt.Sprintf("character %q is not allowed", c)
		}
	}
	return ""
}
