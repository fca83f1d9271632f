package report

import (
	"html/template"
	"regexp"
	"strings"
)

// Term is a word the reports use that a newcomer may not know, and what
// it means there.
type Term struct {
	Word    string
	Meaning string
}

// Glossary is every such word, in the order 'iolens help words' lists
// them; the HTML pages give each its meaning as a hover title.
var Glossary = []Term{
	{"QD", "queue depth: how many IOs are in flight at once. QD1 is one at a time, each waiting for the last; QD32 keeps 32 waiting. A database's commit log runs near QD1; a busy server with many clients runs deeper."},
	{"iodepth", "fio's queue depth for one job; the IOs in flight are iodepth times numjobs (the jobs running at once)."},
	{"knee", "the queue depth past which more IOs in flight give no more IOPS or MB/s, only more latency: the disk (or its cap) is full there."},
	{"plateau", "the rate a disk holds past its knee: its ceiling for that IO size and pattern."},
	{"p99", "the latency that 99 IOs in 100 beat (p50: half of them; p99.9: 999 in 1,000). The slow tail an application notices, which a mean hides."},
	{"±", "how sure a figure is: the rate moved within this much of it over the test's seconds (and depths). A wide ± means an unsteady disk or too short a test."},
	{"p-value", "in compare: the chance that a difference this large shows up by noise alone. Below 0.01 the change is clear, below 0.05 likely, above that it is noise."},
}

// termRE finds the glossary's words in text: QD alone or with its depth
// (QD1, QD32), knee(s), plateau(s), p99 and p99.9, iodepth, ±.
var termRE = regexp.MustCompile(`\b(QD\d*|knees?|plateaus?|p99(?:\.9+)?|iodepth|p-value)\b|±`)

// termOf is the glossary entry a match stands for.
func termOf(m string) (Term, bool) {
	word := m
	switch {
	case strings.HasPrefix(m, "QD"):
		word = "QD"
	case strings.HasPrefix(m, "knee"):
		word = "knee"
	case strings.HasPrefix(m, "plateau"):
		word = "plateau"
	case strings.HasPrefix(m, "p99"):
		word = "p99"
	}
	for _, t := range Glossary {
		if t.Word == word {
			return t, true
		}
	}
	return Term{}, false
}

// glossed is text as HTML, escaped, with each glossary word in an <abbr>
// whose title says what it means.
func glossed(text string) template.HTML {
	var b strings.Builder
	last := 0
	for _, loc := range termRE.FindAllStringIndex(text, -1) {
		t, ok := termOf(text[loc[0]:loc[1]])
		if !ok {
			continue
		}
		b.WriteString(template.HTMLEscapeString(text[last:loc[0]]))
		b.WriteString(`<abbr title="`)
		b.WriteString(template.HTMLEscapeString(t.Word + ": " + t.Meaning))
		b.WriteString(`">`)
		b.WriteString(template.HTMLEscapeString(text[loc[0]:loc[1]]))
		b.WriteString(`</abbr>`)
		last = loc[1]
	}
	b.WriteString(template.HTMLEscapeString(text[last:]))
	return template.HTML(b.String())
}
