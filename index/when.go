package index

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseTime reads a time bound as people and models write them: a date
// ("2026-05-01"), a date and time ("2026-05-01 14:30", "2026-05-01T14:30",
// RFC 3339), or an age back from now ("90m", "12h", "7d", "2w"). Dates and
// times without a zone are in loc.
func ParseTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	if n := len(s); n >= 2 {
		units := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
		if unit, ok := units[s[n-1]]; ok {
			if v, err := strconv.Atoi(s[:n-1]); err == nil && v >= 0 && v < 100000 {
				return now.Add(-time.Duration(v) * unit), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("cannot read %q as a time: give a date (2026-05-01), a date and time (2026-05-01 14:30) or an age (12h, 7d)", s)
}

// TimeLayout is how bottled's interfaces show the time of a hit or a
// session: to the minute, in a form ParseTime reads back.
const TimeLayout = "2006-01-02 15:04"

// FormatTime shows t in loc as TimeLayout, "—" if it is unknown (zero).
func FormatTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(loc).Format(TimeLayout)
}

// Bound sets sc.Since and sc.Until from since and until as bottled's
// interfaces take them from people and models (ParseTime: ages back from
// now, times without a zone in loc); an empty one leaves its end open. The
// error for one that cannot be read starts with which: "since: " or
// "until: ".
func (sc *Scope) Bound(since, until string, now time.Time, loc *time.Location) error {
	var err error
	if sc.Since, err = ParseTime(since, now, loc); err != nil {
		return fmt.Errorf("since: %w", err)
	}
	if sc.Until, err = ParseTime(until, now, loc); err != nil {
		return fmt.Errorf("until: %w", err)
	}
	return nil
}
