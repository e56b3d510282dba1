package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/inject"
	"github.com/bottled-dev/bottled/watch"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show what the daemon and the bottles are doing",
		Description: "Asks the running daemon for its state and what it knows of every bottle (fresh, stale\n" +
			"or missing). Without a daemon, says so and checks every transcript's bottle against its\n" +
			"sources on disk instead.\n" +
			"--json prints one object: {\"daemon\": <daemon status or null>, \"daemonError\": …, \"disk\": <survey>}.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON (the format is stable; see the README)"},
		},
		Action: runStatus,
	}
}

// statusReport is the --json output.
type statusReport struct {
	Daemon      *watch.Status `json:"daemon"`
	DaemonError string        `json:"daemonError,omitempty"`
	daemonErr   error         // DaemonError's error
	daemonPID   int           // the pid holding the daemon's lock, if any
	Disk        *watch.Survey `json:"disk"`
	// Install is what Claude Code's settings say about bottled.
	Install inject.Installation `json:"install"`
}

func runStatus(ctx context.Context, cmd *cli.Command) error {
	if cmd.NArg() > 0 {
		return usagef("status takes no arguments")
	}
	d, err := dirsOf(cmd)
	if err != nil {
		return err
	}
	var rep statusReport
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	rep.Daemon, err = watch.Query(qctx, d.data)
	cancel()
	if err != nil {
		rep.DaemonError, rep.daemonErr, rep.daemonPID = err.Error(), err, watch.LockHolder(d.data)
	}
	if rep.Daemon != nil && rep.Daemon.Bottles != nil {
		// The daemon checked every bottle and follows every change: ask
		// it, rather than read every transcript again.
		rep.Disk, rep.Daemon.Bottles = rep.Daemon.Bottles, nil
	} else if rep.Disk, err = watch.TakeSurvey(ctx, d.claude, d.data); err != nil {
		return err
	}
	home, _ := os.UserHomeDir()
	rep.Install = inject.CheckInstallation(filepath.Join(d.claude, "settings.json"), d.data, home)
	if cmd.Bool("json") {
		enc := json.NewEncoder(cmd.Root().Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printStatus(cmd.Root().Writer, d, &rep, time.Now())
	return nil
}

func printStatus(out io.Writer, d dirs, rep *statusReport, now time.Time) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(label, format string, a ...any) { fmt.Fprintf(w, "%s\t%s\n", label, fmt.Sprintf(format, a...)) }
	disk := rep.Disk
	if st := rep.Daemon; st != nil {
		row("daemon", "running · pid %d · up %s · version %s", st.PID, age(now.Sub(st.Started)), st.Version)
		var roots []string
		for _, r := range st.Roots {
			state := "watched"
			if !r.Watched {
				state = "waiting for it"
			}
			roots = append(roots, r.Path+" ("+state+")")
		}
		row("watching", "%s · %d projects · %d transcripts", strings.Join(roots, " · "), st.Projects, st.Sessions)
		if n := len(st.Unwatched); n > 0 {
			row("", "%d directories not watched (see the daemon's log; the inotify limit?): changes there wait for the rescan", n)
		}
		if st.Blocked != "" {
			row("blocked", "no bottle can be written: %s", st.Blocked)
		}
		row("database", "%s", dbLine(st.DB))
		row("search", "%s", searchLine(st.Search, now))
		r := st.Renders
		latency := "no change rendered yet"
		if r.Samples > 0 {
			latency = fmt.Sprintf("change to bottle p50 %s p90 %s p99 %s", ms(r.P50ms), ms(r.P90ms), ms(r.P99ms))
		}
		row("renders", "%d written · %d unchanged · %d failed · %s", r.Written, r.Unchanged, r.Failed, latency)
		if cu := st.CatchUp; !cu.Over {
			row("catch-up", "%d of %d transcripts checked", cu.Done, cu.Total)
		}
	} else {
		row("daemon", "%s; what follows is read from disk", daemonProblem(rep))
		row("database", "%s", dbLine(disk.DB))
	}
	if in := rep.Install; in.Problem != "" {
		row("install", "%s: %s", in.Settings, in.Problem)
	} else {
		row("install", "hooks registered in %s · Claude Code reads bottles without asking", in.Settings)
	}
	row("bottles", "%d fresh · %d stale · %d missing · %d cleared and archived (of %d transcripts) · %d without transcript%s",
		disk.Fresh, disk.Stale, disk.Missing, disk.Archived, disk.Transcripts, disk.Orphans, observerNote(disk.Observer))
	if st := rep.Daemon; st != nil {
		for i, e := range st.Errors {
			if i == 3 {
				row("", "… %d more (bottled status --json)", len(st.Errors)-i)
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
	if len(disk.Sessions) == 0 {
		return
	}
	fmt.Fprintln(out, "\nrecent sessions")
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, s := range disk.Sessions {
		mode := s.Mode
		if mode == "" {
			mode = "—"
		}
		fresh := s.Freshness
		if s.Why != "" && s.Freshness != "fresh" {
			fresh += " (" + s.Why + ")"
		}
		fmt.Fprintf(w, "  %s\t%s ago\t%s\t%s\t%s\n", s.Session, age(now.Sub(s.Modified)), mode, fresh, filepath.Base(filepath.Dir(s.Transcript)))
	}
	w.Flush()
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

// daemonProblem says why there is no daemon status: none runs, or one
// runs (its pid holds the lock) but is too busy to answer status, has
// lost its socket a moment ago, or did not answer (stopped, say).
func daemonProblem(rep *statusReport) string {
	running := "running"
	if rep.daemonPID > 0 {
		running = fmt.Sprintf("running (pid %d)", rep.daemonPID)
	}
	switch {
	case errors.Is(rep.daemonErr, watch.ErrBusy):
		return fmt.Sprintf("%s but too busy to answer status (%s)", running, rep.DaemonError)
	case rep.daemonPID == 0:
		return fmt.Sprintf("not running (%s)", rep.DaemonError)
	case errors.Is(rep.daemonErr, watch.ErrNotRunning):
		return running + " but its socket is gone (it makes it again within a second)"
	}
	return fmt.Sprintf("%s but did not answer status (%s)", running, rep.DaemonError)
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
		line += fmt.Sprintf(" · %d bottles kept as they are until it can be read", db.Held)
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
			line += fmt.Sprintf(": %.0f of %.0f MB of bottles", float64(s.Done)/1e6, float64(s.Total)/1e6)
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
