package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bottled-dev/bottled/index"
)

// What a search says besides its hits: what it searched when it found
// nothing, and how to widen it; how much of the bottles it covered while
// the index is still being built.

// searchAsked is what a search was asked to cover.
type searchAsked struct {
	all, archived bool
	bounded       bool // --since or --until
}

// noHits is what a search that found nothing says: what it searched, and
// the flags that would search more.
func noHits(ext index.Extent, asked searchAsked) []string {
	var where string
	switch {
	case asked.all:
		where = "in every project: " + sessions(ext.Sessions)
	case ext.InProject:
		where = fmt.Sprintf("in this project, %s: %s", ext.Project, sessions(ext.Sessions))
	case ext.Sessions == 0:
		where = fmt.Sprintf("here: no session was started in %s, above it or under it", ext.Project)
	default:
		where = fmt.Sprintf("in the %s started under %s (none was started in it or above it)", sessions(ext.Sessions), ext.Project)
	}
	if ext.Cleared > 0 {
		where += fmt.Sprintf(", %s left out", cleared(ext.Cleared))
	}
	if asked.bounded {
		where += ", within --since/--until"
	}
	out := []string{"no hits " + where}
	var wider []string
	if !asked.all && ext.All > ext.Sessions {
		wider = append(wider, fmt.Sprintf("--all (every project: %s)", sessions(ext.All)))
	}
	if ext.Cleared > 0 {
		wider = append(wider, fmt.Sprintf("--archived (the %s too)", cleared(ext.Cleared)))
	}
	if asked.bounded {
		wider = append(wider, "no --since/--until")
	}
	if len(wider) > 0 {
		out = append(out, "to widen: "+strings.Join(wider, ", "))
	}
	return out
}

// buildNote says how much of the bottles a search (or a list: did says
// which) covered while the index is still being built, "" when it covered
// them all.
func buildNote(b *index.BuildState, did string) string {
	if b == nil || b.Indexed >= b.Total {
		return ""
	}
	note := fmt.Sprintf("%s the newest %s of %s (%d%%): the search index is still being built", did, number(b.Indexed), sessions(b.Total), b.Percent())
	if b.Active {
		return note + " by another process (bottled status shows how far)"
	}
	return note + `; "bottled index" finishes it, and each search goes on with it for a few seconds`
}

// sessions is "1 session", "1,200 sessions".
func sessions(n int) string {
	if n == 1 {
		return "1 session"
	}
	return number(n) + " sessions"
}

func cleared(n int) string {
	if n == 1 {
		return "1 cleared session"
	}
	return number(n) + " cleared sessions"
}

// number writes n with thousands separators: 5,000.
func number(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + number(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
