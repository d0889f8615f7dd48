package edit

import (
	"fmt"
	"strings"
)

func leadingWS(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// indentPair is the indentation of one matched line: in the file, and in
// old_string.
type indentPair struct{ file, old string }

// reindent maps new_string's indentation the way the file's matched lines
// relate to old_string's: a common prefix added or removed (a lost or extra
// indent level), or a change of unit (tabs written as spaces, 2 vs 4
// spaces). It returns the text and a detail to report, "" when the
// indentation already agreed.
func reindent(fileLines, oldLines []string, newText string, fileUnit func() int) (string, string) {
	var pairs []indentPair
	differ := false
	for k, ol := range oldLines {
		if strings.Trim(ol, " \t") == "" {
			continue
		}
		p := indentPair{leadingWS(fileLines[k]), leadingWS(ol)}
		differ = differ || p.file != p.old
		pairs = append(pairs, p)
	}
	if !differ {
		return newText, ""
	}
	newLines := strings.Split(newText, "\n")

	fileTabs, oldTabs := false, false
	for _, p := range pairs {
		fileTabs = fileTabs || strings.Contains(p.file, "\t")
		oldTabs = oldTabs || strings.Contains(p.old, "\t")
	}
	for _, l := range newLines {
		oldTabs = oldTabs || strings.Contains(leadingWS(l), "\t")
	}
	fileSpaces := !fileTabs && hasSpaceIndent(pairs, true)
	oldSpaces := !oldTabs && (hasSpaceIndent(pairs, false) || hasSpaceLines(newLines))
	unitChange := (fileTabs && oldSpaces) || (fileSpaces && oldTabs)

	levels := func() (string, string, bool) {
		fsys := indentSys{tabs: fileTabs, unit: 1}
		if !fileTabs {
			fsys.unit = fileUnit()
		}
		osys := indentSys{tabs: oldTabs, unit: 1}
		if !oldTabs {
			osys.unit = oldSpaceUnit(pairs, newLines)
		}
		if fsys == osys {
			return "", "", false
		}
		out, ok := mapLevels(pairs, newLines, fsys, osys)
		if !ok {
			return "", "", false
		}
		return out, fmt.Sprintf("new_string re-indented from %s to the file's %s", osys, fsys), true
	}

	if unitChange {
		if out, d, ok := levels(); ok {
			return out, d
		}
	}
	if out, p, ok := prefixDelta(pairs, newLines, true); ok {
		return out, fmt.Sprintf("new_string re-indented: %s added before each line, as in the file", describeWS(p))
	}
	if out, p, ok := prefixDelta(pairs, newLines, false); ok {
		return out, fmt.Sprintf("new_string re-indented: %s removed from each line, as in the file", describeWS(p))
	}
	if !unitChange {
		if out, d, ok := levels(); ok {
			return out, d
		}
	}
	return newText, notReindented
}

// notReindented is reindent's detail when no mapping fits.
const notReindented = "old_string's indentation differs from the file's in no consistent way, so new_string went in as written; check the result"

func hasSpaceIndent(pairs []indentPair, file bool) bool {
	for _, p := range pairs {
		ws := p.old
		if file {
			ws = p.file
		}
		if strings.Contains(ws, " ") {
			return true
		}
	}
	return false
}

func hasSpaceLines(lines []string) bool {
	for _, l := range lines {
		if strings.Contains(leadingWS(l), " ") {
			return true
		}
	}
	return false
}

// prefixDelta handles a constant prefix: every file indent is P + the old
// indent (add=true: old_string lost P) or the reverse (add=false).
func prefixDelta(pairs []indentPair, newLines []string, add bool) (string, string, bool) {
	var p string
	for i, pr := range pairs {
		long, short := pr.file, pr.old
		if !add {
			long, short = pr.old, pr.file
		}
		// The prefix sits before the shared part: long = P + short.
		if !strings.HasSuffix(long, short) {
			return "", "", false
		}
		d := long[:len(long)-len(short)]
		if i == 0 {
			p = d
		} else if d != p {
			return "", "", false
		}
	}
	if p == "" {
		return "", "", false
	}
	out := make([]string, len(newLines))
	for i, l := range newLines {
		switch {
		case strings.Trim(l, " \t") == "":
			out[i] = l
		case add:
			out[i] = p + l
		default:
			out[i] = strings.TrimPrefix(l, p)
		}
	}
	return strings.Join(out, "\n"), p, true
}

// indentSys is a way of writing indentation: tabs, or spaces in units.
type indentSys struct {
	tabs bool
	unit int
}

func (s indentSys) String() string {
	if s.tabs {
		return "tabs"
	}
	return fmt.Sprintf("%d-space indents", s.unit)
}

// parse returns the indent level of ws and the alignment spaces left over.
func (s indentSys) parse(ws string) (level, rem int, ok bool) {
	if s.tabs {
		n := len(ws) - len(strings.TrimLeft(ws, "\t"))
		rest := ws[n:]
		if strings.Contains(rest, "\t") {
			return 0, 0, false
		}
		return n, len(rest), true
	}
	if strings.Contains(ws, "\t") {
		return 0, 0, false
	}
	return len(ws) / s.unit, len(ws) % s.unit, true
}

func (s indentSys) render(level, rem int) string {
	if s.tabs {
		return strings.Repeat("\t", level) + strings.Repeat(" ", rem)
	}
	return strings.Repeat(" ", level*s.unit+rem)
}

// mapLevels rewrites new lines from osys into fsys, shifted by the constant
// level difference the matched lines show.
func mapLevels(pairs []indentPair, newLines []string, fsys, osys indentSys) (string, bool) {
	d, set := 0, false
	for _, p := range pairs {
		lf, rf, ok1 := fsys.parse(p.file)
		lo, ro, ok2 := osys.parse(p.old)
		if !ok1 || !ok2 || rf != ro {
			return "", false
		}
		if !set {
			d, set = lf-lo, true
		} else if lf-lo != d {
			return "", false
		}
	}
	out := make([]string, len(newLines))
	for i, l := range newLines {
		if strings.Trim(l, " \t") == "" {
			out[i] = l
			continue
		}
		ws := leadingWS(l)
		lv, rem, ok := osys.parse(ws)
		if !ok {
			return "", false
		}
		out[i] = fsys.render(max(lv+d, 0), rem) + l[len(ws):]
	}
	return strings.Join(out, "\n"), true
}

// fileSpaceUnit guesses a space-indented file's unit: the most common
// increase of indentation from one non-blank line to the next.
func fileSpaceUnit(work string, fl []span) int {
	widths := make([]int, 0, len(fl))
	for _, s := range fl {
		l := work[s.start:s.end]
		if strings.Trim(l, " \t\r") == "" {
			continue
		}
		widths = append(widths, len(leadingWS(l)))
	}
	return commonStep(widths)
}

func oldSpaceUnit(pairs []indentPair, newLines []string) int {
	var widths []int
	for _, p := range pairs {
		widths = append(widths, len(p.old))
	}
	for _, l := range newLines {
		if strings.Trim(l, " \t") != "" {
			widths = append(widths, len(leadingWS(l)))
		}
	}
	return commonStep(widths)
}

func commonStep(widths []int) int {
	counts := map[int]int{}
	best, bestN := 0, 0
	for i := 1; i < len(widths); i++ {
		if d := widths[i] - widths[i-1]; d > 0 && d <= 8 {
			counts[d]++
			if counts[d] > bestN || (counts[d] == bestN && d < best) {
				best, bestN = d, counts[d]
			}
		}
	}
	if best > 0 {
		return best
	}
	g := 0
	for _, w := range widths {
		g = gcd(g, w)
	}
	if g > 0 && g <= 8 {
		return g
	}
	return 4
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func describeWS(ws string) string {
	tabs := strings.Count(ws, "\t")
	spaces := strings.Count(ws, " ")
	plural := func(n int, w string) string {
		if n == 1 {
			return "1 " + w
		}
		return fmt.Sprintf("%d %ss", n, w)
	}
	switch {
	case tabs > 0 && spaces > 0:
		return plural(tabs, "tab") + " and " + plural(spaces, "space")
	case tabs > 0:
		return plural(tabs, "tab")
	}
	return plural(spaces, "space")
}
