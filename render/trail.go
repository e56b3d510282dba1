package render

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/textcut"
)

// The trail: what the assistant did between its texts, from the tool
// calls the transcript records, one line per deed or per run of alike
// deeds (DESIGN §2, "What was done"). It names what was done, never what
// a tool answered. Every string of it comes from deedText, the one place
// a tool's argument becomes bottle text.

// Bounds of a trail line's parts, in runes: the start of a command names
// it (80 runes, a terminal line: over the real sessions with a compaction
// the trail then costs a fifth of the bottle, where 100 runes cost a
// quarter), a description or a
// query is a line, a path keeps its end, a run of reads names its files
// only while they are few and short.
const (
	commandMax   = 80
	argumentMax  = 120
	pathMax      = 200
	patternMax   = 40
	lookFilesMax = 3
	lookListMax  = 100
)

// deedText prepares a tool argument for the bottle: through text (the tag
// stripper and the bottle's redaction rules, as every bottle string), on
// one line. Clipping comes after, so that nothing is cut before it was
// cleaned and redacted.
func (r *renderer) deedText(s string) string { return oneLine(r.text(s)) }

// trailLines makes the lines of a run of deeds (no text between them).
// Paths under the session's directory are shown relative to it.
func (r *renderer) trailLines(deeds []sources.Deed) []string {
	var lines []string
	for i := 0; i < len(deeds); {
		n := r.runLength(deeds[i:])
		if l := r.trailLine(deeds[i : i+n]); l != "" {
			lines = append(lines, l)
		}
		i += n
	}
	return lines
}

// runLength is how many deeds from the first one line shows: reads and
// searches in a row, or the same call repeated (an edit of the same file,
// the same command, tool or URL).
func (r *renderer) runLength(ds []sources.Deed) int {
	first := ds[0]
	n := 1
	for n < len(ds) {
		d := ds[n]
		switch {
		case looks(first.Kind) && looks(d.Kind):
		case first.Kind != d.Kind || first.Tool != d.Tool || first.Target != d.Target:
			return n
		case first.Kind == sources.DeedWrite || first.Kind == sources.DeedTask:
			return n // each its own line: what was written, what was asked
		}
		n++
	}
	return n
}

func looks(k sources.DeedKind) bool { return k == sources.DeedRead || k == sources.DeedSearch }

// trailLine is the line of one run of deeds.
func (r *renderer) trailLine(run []sources.Deed) string {
	d := run[0]
	if looks(d.Kind) {
		return r.lookLine(run)
	}
	var b strings.Builder
	switch d.Kind {
	case sources.DeedEdit:
		b.WriteString("edited " + r.path(d.Target))
	case sources.DeedWrite:
		if d.Created {
			b.WriteString("created " + r.path(d.Target))
		} else {
			b.WriteString("wrote " + r.path(d.Target))
		}
	case sources.DeedCommand:
		b.WriteString("ran " + codeSpan(clip(r.deedText(d.Target), commandMax)))
	case sources.DeedTask:
		b.WriteString("task")
		if a := clip(r.deedText(d.Agent), argumentMax); a != "" {
			b.WriteString(" (" + a + ")")
		}
		if t := clip(r.deedText(d.Target), argumentMax); t != "" {
			b.WriteString(": " + t)
		}
	case sources.DeedFetch:
		b.WriteString("fetched " + orDash(clip(r.deedText(d.Target), argumentMax)))
	case sources.DeedWebSearch:
		b.WriteString("searched the web: " + orDash(clip(r.deedText(d.Target), argumentMax)))
	default:
		b.WriteString(orDash(clip(r.deedText(d.Tool), argumentMax)))
		if t := clip(r.deedText(d.Target), argumentMax); t != "" {
			b.WriteString(": " + t)
		}
	}
	if len(run) > 1 {
		fmt.Fprintf(&b, " ×%d", len(run))
	}
	b.WriteString(lineCounts(run))
	failed := 0
	for _, d := range run {
		if d.Failed {
			failed++
		}
	}
	switch {
	case failed == 0:
	case failed == len(run):
		b.WriteString(" — failed")
	default:
		fmt.Fprintf(&b, " — %d failed", failed)
	}
	return b.String()
}

// lineCounts is " (+A −R)" for changes, " (+A)" for a new file and
// " (N lines)" for a file written over, when the counts are known.
func lineCounts(run []sources.Deed) string {
	added, removed, done := 0, 0, 0
	for _, d := range run {
		if !d.Lines || d.Failed {
			continue // a failed edit changed nothing
		}
		added += d.Added
		removed += d.Removed
		done++
	}
	d := run[0]
	switch {
	case done == 0:
		return ""
	case d.Kind == sources.DeedWrite && d.Created:
		return fmt.Sprintf(" (+%d)", added)
	case d.Kind == sources.DeedWrite:
		return fmt.Sprintf(" (%d lines)", added)
	}
	return fmt.Sprintf(" (+%d −%d)", added, removed)
}

// lookLine folds a run of reads and searches into one line: the files
// read while they are few and short, else their number, and the search
// when there is one, else the number of searches.
func (r *renderer) lookLine(run []sources.Deed) string {
	var files []string
	searches, pattern := 0, "" // the pattern is shown only for a single search
	for _, d := range run {
		if d.Kind == sources.DeedSearch {
			searches++
			if searches == 1 {
				pattern = clip(r.deedText(d.Target), patternMax)
			}
			continue
		}
		if p := r.path(d.Target); !slices.Contains(files, p) {
			files = append(files, p)
		}
	}
	var parts []string
	if list := strings.Join(files, ", "); len(files) > 0 && len(files) <= lookFilesMax && utf8.RuneCountInString(list) <= lookListMax {
		parts = append(parts, "read "+list)
	} else if len(files) > 0 {
		parts = append(parts, fmt.Sprintf("read %d files", len(files)))
	}
	switch {
	case searches == 1 && pattern != "":
		parts = append(parts, "searched "+codeSpan(pattern))
	case searches == 1:
		parts = append(parts, "searched")
	case searches > 1:
		parts = append(parts, fmt.Sprintf("%d searches", searches))
	}
	return strings.Join(parts, "; ")
}

// path is a file a deed names, relative to the session's directory when
// under it, clipped at its start (the file's name is its end), or before
// a placeholder the clip would split, which is shown whole.
func (r *renderer) path(p string) string {
	p = r.deedText(p)
	if cwd := r.project; cwd != "" && cwd != "/" {
		if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(cwd, "/")+"/"); ok && rest != "" {
			p = rest
		}
	}
	if c := textcut.ClipStart(p, pathMax, textcut.Runes); c != p {
		i := len(p) - (len(c) - len(textcut.Ellipsis))
		if start, ok := placeholderAround(p, i); ok {
			i = start
		}
		p = textcut.Ellipsis + p[i:]
	}
	return orDash(p)
}

// codeSpan shows s as markdown code, with a fence longer than any run of
// backticks in it.
func codeSpan(s string) string {
	if s == "" {
		return "—"
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if fence == "`" {
		return fence + s + fence
	}
	return fence + " " + s + " " + fence
}
