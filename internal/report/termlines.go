package report

import (
	"regexp"
	"strings"
)

// termWidth is the widest line the text reports print of a verdict or an
// advice: an 80- or 120-column terminal holds it with its indent.
const termWidth = 96

// headRE is a verdict line's own name ("read:  ", "fsync: ", "burst: "):
// the line's next lines are indented to stand under what follows it.
var headRE = regexp.MustCompile(`^[a-z][a-z ]{0,10}:\s+`)

// termLines breaks a verdict or advice line into lines of at most width
// characters: between its figures ("; ") first, then between words. The
// lines after the first are indented to stand under the first's text.
func termLines(s string, width int) []string {
	if len([]rune(s)) <= width {
		return []string{s}
	}
	head := headRE.FindString(s)
	pad := strings.Repeat(" ", len(head))
	if pad == "" {
		pad = "  "
	}
	var out []string
	line := head
	emit := func() {
		if strings.TrimSpace(line) != "" {
			out = append(out, line)
			line = pad
		}
	}
	for i, part := range figures(s[len(head):]) {
		if i > 0 {
			line += ";"
			emit()
		}
		for _, w := range strings.Fields(part) {
			switch {
			case strings.TrimSpace(line) == "" || strings.HasSuffix(line, " "):
				line += w
			case len([]rune(line))+1+len([]rune(w)) > width:
				emit()
				line += w
			default:
				line += " " + w
			}
		}
	}
	emit()
	return out
}

// figures splits a line at its "; " outside brackets: each is a figure of
// its own ("3,501 IOPS ±5.9% (a flat IOPS cap)").
func figures(s string) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth = max(0, depth-1)
		case ';':
			if depth == 0 && i+1 < len(s) && s[i+1] == ' ' {
				out = append(out, s[from:i])
				from = i + 2
			}
		}
	}
	return append(out, s[from:])
}
