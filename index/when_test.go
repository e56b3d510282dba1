package index

import (
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"2026-05-01", time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-05-01 14:30", time.Date(2026, 5, 1, 14, 30, 0, 0, time.UTC)},
		{"2026-05-01T14:30:05", time.Date(2026, 5, 1, 14, 30, 5, 0, time.UTC)},
		{"2026-05-01T14:30:00+02:00", time.Date(2026, 5, 1, 12, 30, 0, 0, time.UTC)},
		{"90m", now.Add(-90 * time.Minute)},
		{"12h", now.Add(-12 * time.Hour)},
		{"7d", now.AddDate(0, 0, -7)},
		{"2w", now.AddDate(0, 0, -14)},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in, now, time.UTC)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"yesterday", "7", "d", "-3d", "2026-13-01", "1e9d"} {
		if _, err := ParseTime(bad, now, time.UTC); err == nil {
			t.Errorf("ParseTime(%q) succeeded", bad)
		}
	}
}

// TestFormatTime: a time is shown to the minute in the zone asked for, in
// a form ParseTime reads back to that minute; an unknown one as "—".
func TestFormatTime(t *testing.T) {
	east := time.FixedZone("east", 2*60*60)
	at := time.Date(2026, 5, 1, 12, 30, 59, 0, time.UTC)
	cases := []struct {
		t    time.Time
		loc  *time.Location
		want string
	}{
		{time.Time{}, time.UTC, "—"},
		{at, time.UTC, "2026-05-01 12:30"},
		{at, east, "2026-05-01 14:30"},
		{at.In(east), time.UTC, "2026-05-01 12:30"},
	}
	for _, c := range cases {
		got := FormatTime(c.t, c.loc)
		if got != c.want {
			t.Errorf("FormatTime(%v, %v) = %q; want %q", c.t, c.loc, got, c.want)
			continue
		}
		if back, err := ParseTime(got, at, c.loc); !c.t.IsZero() && (err != nil || !back.Equal(c.t.Truncate(time.Minute))) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", got, back, err, c.t.Truncate(time.Minute))
		}
	}
}

// TestBound: a scope's ends from what was asked, open where nothing was,
// and an error that says which end could not be read.
func TestBound(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		since, until string
		want         Scope
		err          string // the error's start
	}{
		{"", "", Scope{}, ""},
		{"7d", "", Scope{Since: now.AddDate(0, 0, -7)}, ""},
		{"", "2026-05-01", Scope{Until: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}, ""},
		{"yesterday", "", Scope{}, `since: cannot read "yesterday"`},
		{"7d", "someday", Scope{Since: now.AddDate(0, 0, -7)}, `until: cannot read "someday"`},
	}
	for _, c := range cases {
		var sc Scope
		err := sc.Bound(c.since, c.until, now, time.UTC)
		if (err == nil) != (c.err == "") || err != nil && !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("Bound(%q, %q): %v, want an error starting %q", c.since, c.until, err, c.err)
		}
		if !sc.Since.Equal(c.want.Since) || !sc.Until.Equal(c.want.Until) {
			t.Errorf("Bound(%q, %q): since %v until %v, want %v and %v", c.since, c.until, sc.Since, sc.Until, c.want.Since, c.want.Until)
		}
	}
}
