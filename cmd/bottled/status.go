package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/inject"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/watch"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:        "status",
		Usage:       "show what the daemon and the bottles are doing",
		Description: help(statusHelp),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON (the format is stable; see the README)"},
			&cli.BoolFlag{Name: "all", Usage: "list every session, each checked on disk"},
			// For tests of a daemon that does not answer, which would
			// otherwise wait the whole deadline.
			&cli.DurationFlag{Name: "daemon-wait", Value: daemonWait, Hidden: true,
				Usage: "how long to wait for the daemon's answer before reading the disk"},
		},
		Action: runStatus,
	}
}

// statusReport is the --json output.
type statusReport struct {
	Daemon      *watch.Status `json:"daemon"`
	DaemonError string        `json:"daemonError,omitempty"`
	Disk        *watch.Survey `json:"disk"`
	// Install is what Claude Code's settings say about bottled.
	Install inject.Installation `json:"install"`

	daemonErr error // DaemonError's error
	daemonPID int   // the pid holding the daemon's lock, if any
}

func runStatus(ctx context.Context, cmd *cli.Command) error {
	d, err := dirsOfArgless(cmd)
	if err != nil {
		return err
	}
	if cmd.Duration("daemon-wait") <= 0 {
		return usagef("--daemon-wait must be positive")
	}
	var rep statusReport
	qctx, cancel := context.WithTimeout(ctx, cmd.Duration("daemon-wait"))
	rep.Daemon, err = watch.Query(qctx, d.data)
	cancel()
	if err != nil {
		rep.DaemonError, rep.daemonErr, rep.daemonPID = err.Error(), err, watch.LockHolder(d.data)
	}
	all := cmd.Bool("all")
	if rep.Daemon != nil && rep.Daemon.Bottles != nil && !all {
		// The daemon checked every bottle and follows every change: ask
		// it, rather than read every transcript again.
		rep.Disk = rep.Daemon.Bottles
	} else if rep.Disk, err = watch.TakeSurvey(ctx, d.claude, d.data); err != nil {
		return err
	}
	if rep.Daemon != nil {
		rep.Daemon.Bottles = nil // it is Disk, or Disk replaces it
	}
	home, _ := os.UserHomeDir()
	rep.Install = inject.CheckInstallation(filepath.Join(d.claude, "settings.json"), d.data, home)
	if cmd.Bool("json") {
		projectsOf(rep.Disk.Sessions, d.data)
		return writeJSON(cmd.Root().Writer, rep)
	}
	shown := len(rep.Disk.Sessions)
	if !all {
		shown = min(shown, recentShown)
	}
	projectsOf(rep.Disk.Sessions[:shown], d.data) // only the rows printed: each is a read
	printStatus(cmd.Root().Writer, d, &rep, shown, time.Now())
	return nil
}

// daemonWait bounds the wait for the daemon's answer to status: one that
// answers at all answers in milliseconds (its status is kept ready, see
// watch's status server), and a stopped or wedged one must not keep the
// user waiting for what the disk can tell.
const daemonWait = 3 * time.Second

// recentShown is how many sessions the text lists without --all.
const recentShown = 10

// printStatus writes the report as text, with the shown newest sessions.
func printStatus(out io.Writer, d dirs, rep *statusReport, shown int, now time.Time) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(label, format string, a ...any) { fmt.Fprintf(w, "%s\t%s\n", label, fmt.Sprintf(format, a...)) }
	disk := rep.Disk
	asJSON := d.command("status", "--json") // lists all that the text cuts short
	if st := rep.Daemon; st != nil {
		printDaemon(row, st, disk, asJSON, now)
	} else {
		row("daemon", "%s", noDaemonLine(d, rep))
		row("database", "%s", dbLine(disk.DB))
		if disk.Redaction != nil {
			row("redact", "%s", redactionLine(*disk.Redaction))
		}
	}
	if o := d.origins(); o != "" {
		row("dirs", "%s", o)
	}
	if in := rep.Install; in.Problem != "" {
		row("install", "%s: %s", in.Settings, in.Problem)
	} else {
		row("install", "hooks registered in %s · Claude Code reads bottles without asking", in.Settings)
	}
	row("bottles", "%s", bottlesLine(disk))
	for _, line := range unreadableLines(disk, asJSON) {
		row("", "%s", line)
	}
	if st := rep.Daemon; st != nil {
		for i, e := range st.Errors {
			if i == 3 {
				row("", "… %d more (%s)", len(st.Errors)-i, asJSON)
				break
			}
			label := ""
			if i == 0 {
				label = "errors"
			}
			row(label, "%s ago  %s  %s", age(now.Sub(e.Time)), short(e.Session), e.Error)
		}
	}
	w.Flush()
	printSessions(out, disk, shown, d.command("status", "--all"), terminalWidth(out), now)
}

// printDaemon writes the rows that come from the daemon's status, beside
// the survey disk; asJSON is the command that lists what they cut short.
func printDaemon(row func(label, format string, a ...any), st *watch.Status, disk *watch.Survey, asJSON string, now time.Time) {
	row("daemon", "running · pid %d · up %s · version %s", st.PID, age(now.Sub(st.Started)), st.Version)
	var roots []string
	for _, r := range st.Roots {
		state := "watched"
		if !r.Watched {
			state = "waiting for it"
		}
		roots = append(roots, r.Path+" ("+state+")")
	}
	row("watching", "%s · %s · %s", strings.Join(roots, " · "), count(st.Projects, "project"), count(st.Sessions, "transcript"))
	for _, line := range unwatchedLines(st, disk, asJSON) {
		row("", "%s", line)
	}
	if st.Blocked != "" {
		row("blocked", "no bottle can be written: %s", st.Blocked)
	}
	row("database", "%s", dbLine(st.DB))
	row("redact", "%s", redactionLine(st.Redaction))
	row("search", "%s", searchLine(st.Search, now))
	r := st.Renders
	latency := "no change rendered yet"
	if r.Samples > 0 {
		latency = fmt.Sprintf("change to bottle p50 %s p90 %s p99 %s", ms(r.P50ms), ms(r.P90ms), ms(r.P99ms))
	}
	row("renders", "%d written · %d unchanged · %d failed · %s", r.Written, r.Unchanged, r.Failed, latency)
	if cu := st.CatchUp; !cu.Over {
		row("catch-up", "%d of %s checked", cu.Done, count(cu.Total, "transcript"))
	}
}

// redactionLine says which rules redact the bottles, and what is wrong
// with the user's patterns file.
func redactionLine(r watch.Redaction) string {
	line := "built-in rules"
	if r.User > 0 {
		line += " and " + count(r.User, "pattern") + " of " + r.Patterns
	}
	line += " (rules " + r.Rules + ")"
	if r.Error != "" {
		line += " · ERROR " + r.Error
	}
	return line
}

// noDaemonLine says why there is no daemon status (see daemonProblem),
// that the rest is read from disk, and, when none runs, how to start one.
func noDaemonLine(d dirs, rep *statusReport) string {
	line := daemonProblem(rep) + ": what follows is read from disk"
	if rep.daemonPID == 0 && !errors.Is(rep.daemonErr, watch.ErrBusy) {
		line += "; start it with `" + d.command("run") + "` or `" + d.command("install") + "`"
	}
	return line
}

// daemonProblem says whether no daemon runs (and why none answers), or
// one runs (its pid) but is too busy to answer or did not answer: a
// running daemon is never said not to run.
func daemonProblem(rep *statusReport) string {
	running := "running"
	if rep.daemonPID > 0 {
		running = fmt.Sprintf("running (pid %d)", rep.daemonPID)
	}
	var nr *watch.NotRunningError
	switch {
	case errors.Is(rep.daemonErr, watch.ErrBusy):
		return fmt.Sprintf("%s but too busy to answer status (%s)", running, rep.DaemonError)
	case rep.daemonPID == 0 && errors.As(rep.daemonErr, &nr):
		return "not running (" + nr.Why + ")"
	case rep.daemonPID == 0:
		return fmt.Sprintf("not running (%s)", rep.DaemonError)
	case errors.Is(rep.daemonErr, watch.ErrNotRunning):
		return running + " but its socket is gone (it makes it again within a second)"
	}
	return fmt.Sprintf("%s but did not answer status (%s)", running, rep.DaemonError)
}

// bottlesLine counts the bottles by state; the states other than
// fresh, stale and missing are named only when there are some.
func bottlesLine(disk *watch.Survey) string {
	parts := []string{fmt.Sprintf("%d fresh", disk.Fresh), fmt.Sprintf("%d stale", disk.Stale), fmt.Sprintf("%d missing", disk.Missing)}
	if disk.Archived > 0 {
		parts = append(parts, fmt.Sprintf("%d cleared and archived", disk.Archived))
	}
	if disk.Empty > 0 {
		parts = append(parts, fmt.Sprintf("%d empty", disk.Empty))
	}
	line := strings.Join(parts, " · ") + " (of " + count(disk.Transcripts, "transcript") + ")"
	if disk.Orphans > 0 {
		line += fmt.Sprintf(" · %s without transcript", count(disk.Orphans, "bottle"))
	}
	return line + observerNote(disk.Observer)
}

// printSessions lists the shown newest sessions, and says how to see
// them all (the command listAll) when some are left out.
func printSessions(out io.Writer, disk *watch.Survey, shown int, listAll string, width int, now time.Time) {
	sessions := disk.Sessions[:min(shown, len(disk.Sessions))]
	if len(sessions) == 0 {
		return
	}
	if len(sessions) < disk.Transcripts {
		fmt.Fprintf(out, "\nrecent sessions (the newest %d of %d; %s lists them all)\n", len(sessions), disk.Transcripts, listAll)
	} else {
		fmt.Fprintln(out, "\nrecent sessions")
	}
	var rows [][]string
	for _, s := range sessions {
		mode := s.Mode
		if mode == "" {
			mode = "—"
		}
		fresh := s.Freshness
		if s.Why != "" && s.Freshness != watch.FreshnessFresh {
			fresh += " (" + s.Why + ")"
		}
		project := s.Project
		if project == "" {
			project = filepath.Base(filepath.Dir(s.Transcript)) // its key, all there is
		}
		rows = append(rows, []string{"  " + s.Session, age(now.Sub(s.Modified)) + " ago", mode, fresh, project})
	}
	if width > 0 {
		cutLastLeft(rows, width)
	}
	writeTable(out, rows, 0)
}

// cutLastLeft cuts the last cell of each row from the left (a project's
// last directories say most) so that the rows fit width terminal columns,
// leaving it no fewer than minProjectColumns.
func cutLastLeft(rows [][]string, width int) {
	last := len(rows[0]) - 1
	lead := leadWidth(rows, last)
	for _, row := range rows {
		row[last] = cutLeft(row[last], max(width-lead, minProjectColumns))
	}
}

// projectsOf fills in the working directory of each session: the one its
// bottle's header names, else the one its transcript's records name.
func projectsOf(sessions []watch.SessionCheck, dataDir string) {
	store := bottles.Open(dataDir, nil, nil)
	for i := range sessions {
		s := &sessions[i]
		if f, _, err := safefile.Open(store.Path(s.Session)); err == nil {
			s.Project = render.ProjectOf(f)
			f.Close()
		}
		if s.Project == "" {
			s.Project = sources.TranscriptCWD(s.Transcript)
		}
	}
}

// observerNote mentions claude-mem's own sessions, which get no bottle.
func observerNote(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return " · 1 observer session (claude-mem's own, not bottled)"
	}
	return fmt.Sprintf(" · %d observer sessions (claude-mem's own, not bottled)", n)
}

func dbLine(db watch.DB) string {
	line := db.Path + " · not opened yet"
	switch {
	case db.Reachable:
		line = fmt.Sprintf("%s · reachable · schema %d", db.Path, db.SchemaVersion)
	case db.Error != "" && !db.Since.IsZero():
		line = fmt.Sprintf("%s · cannot be read since %s: %s", db.Path, db.Since.Local().Format("2006-01-02 15:04"), db.Error)
	case db.Error != "":
		line = fmt.Sprintf("%s · %s", db.Path, db.Error)
	}
	if db.Held > 0 {
		line += " · " + count(db.Held, "bottle") + " kept as they are until it can be read"
	}
	return line
}

func searchLine(s watch.Search, now time.Time) string {
	since := s.Since.Local().Format("2006-01-02 15:04")
	switch s.State {
	case watch.SearchReady:
		return "index ready"
	case watch.SearchOpening:
		line := "index being built or brought up to date since " + since
		if s.Total > 0 {
			line += ": " + sizeOf(s.Done, s.Total) + " of bottles"
		}
		return line + " (searches answer from the newest sessions indexed so far)"
	case watch.SearchUnavailable:
		return fmt.Sprintf("index unavailable since %s: %s · next try in %s (bottles are written as usual)", since, s.Error, age(max(s.Retry.Sub(now), 0)))
	}
	return "index not opened yet"
}

// age formats a duration the way people say it: 45s, 12m, 3h12m, 4d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func ms(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.1fs", v/1000)
	}
	return fmt.Sprintf("%.0fms", v)
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}

// unwatchedLines says which directories the daemon could not watch, one
// line per reason (the watcher's), naming the directory when it is the
// only one for its reason; not those the disk survey (status --all)
// cannot read, which unreadableLines names. An older daemon gives no
// reasons: its directories are counted. asJSON is the command that lists
// them.
func unwatchedLines(st *watch.Status, disk *watch.Survey, asJSON string) []string {
	const rescan = ": changes there wait for the rescan"
	unread := func(dir string) bool {
		return slices.ContainsFunc(disk.UnreadableDirs, func(d watch.DirError) bool { return d.Path == dir })
	}
	unwatched := slices.DeleteFunc(slices.Clone(st.Unwatched), unread)
	if len(st.UnwatchedWhy) == 0 {
		if n := len(unwatched); n > 0 {
			return []string{countAs(n, "directory", "directories") + " not watched (see the daemon's log)" + rescan}
		}
		return nil
	}
	byWhy := map[string][]string{}
	for _, dir := range unwatched {
		why := st.UnwatchedWhy[dir]
		byWhy[why] = append(byWhy[why], dir)
	}
	var lines []string
	for _, why := range slices.Sorted(maps.Keys(byWhy)) {
		dirs := byWhy[why]
		what := countAs(len(dirs), "directory", "directories") + " not watched: " + why
		if len(dirs) == 1 {
			what = dirs[0] + " not watched: " + why
		}
		switch {
		case why == watch.WhyWatchLimit:
			lines = append(lines, what+" (the daemon's log says how to raise it)"+rescan)
		case len(dirs) == 1:
			lines = append(lines, what+" (tried again at every rescan)")
		default:
			lines = append(lines, what+" (tried again at every rescan; "+asJSON+" lists them)")
		}
	}
	return lines
}

// unreadableShown is how many directories that cannot be read the text
// names; --json lists them all.
const unreadableShown = 3

// unreadableLines names the project directories a disk survey could not
// read, whose transcripts it could not count; asJSON lists them all.
func unreadableLines(disk *watch.Survey, asJSON string) []string {
	var lines []string
	for i, d := range disk.UnreadableDirs {
		if i == unreadableShown {
			lines = append(lines, fmt.Sprintf("… %s more that cannot be read (%s)", countAs(len(disk.UnreadableDirs)-i, "directory", "directories"), asJSON))
			break
		}
		lines = append(lines, fmt.Sprintf("%s cannot be read (%s): its transcripts are not counted", d.Path, d.Error))
	}
	return lines
}
