package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/render"
)

// showTimeout bounds the render of a stale or missing bottle before it is
// shown: a person waits longer than Claude Code does for the hook (5 s).
// A stale bottle of a 118 MB transcript renders in 1.0–1.3 s on the 2-core
// CI machine, so this covers transcripts of a few GB.
const showTimeout = 30 * time.Second

func showCommand() *cli.Command {
	return &cli.Command{
		Name:        "show",
		Usage:       "print a session's bottle, rendered first if it is stale or missing",
		ArgsUsage:   "SESSION",
		Description: help(showHelp),
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "from", Usage: "print from line `N` of the bottle (default: the first)", HideDefault: true},
			&cli.IntFlag{Name: "to", Usage: "print up to line `M` (default, or past the end: to the end)", HideDefault: true},
			&cli.DurationFlag{Name: "timeout", Value: showTimeout, Usage: "longest a render before printing may take"},
		},
		Action: runShow,
	}
}

func runShow(ctx context.Context, cmd *cli.Command) error {
	arg, err := oneArg(cmd)
	if err != nil {
		return err
	}
	from, to := cmd.Int("from"), cmd.Int("to")
	for _, f := range []struct {
		name string
		n    int
	}{{"from", from}, {"to", to}} {
		if f.n < 0 {
			return usagef("--%s must be a line number, 1 or more", f.name)
		}
	}
	if from > 0 && to > 0 && to < from {
		return usagef("--to %d is before --from %d", to, from)
	}
	if cmd.Duration("timeout") <= 0 {
		return usagef("--timeout must be positive")
	}
	d, id, err := sessionNamed(cmd, arg)
	if err != nil {
		return err
	}
	rules, err := d.rules()
	if err != nil {
		return err
	}
	cur, err := bottles.Open(d.data, nil, nil).EnsureRead(ctx, bottles.ReadRequest{SessionID: id, ClaudeDir: d.claude,
		Timeout: cmd.Duration("timeout"), Rules: rules})
	if err != nil {
		if cur, err = notRendered(ctx, cmd, d, arg, id, cur, err); err != nil {
			return err
		}
	}
	if cur.Archived {
		fmt.Fprintf(cmd.Root().ErrWriter, "bottled: session %s was cleared (/clear); this is its archived bottle, %s\n", id, cur.Path)
	}
	part, err := lineRange(cur.Data, from, to, id)
	if err != nil {
		return err
	}
	_, err = cmd.Root().Writer.Write(part)
	return err
}

// notRendered deals with a bottle that could not be brought up to date
// before it is shown: the bottle as it is, with a warning, or the error
// to end with.
func notRendered(ctx context.Context, cmd *cli.Command, d dirs, arg, id string, cur *bottles.Current, err error) (*bottles.Current, error) {
	switch {
	case stopped(ctx, err):
		kept := "it has no bottle yet"
		if cur != nil {
			kept = "its bottle is as it was"
		}
		return nil, interrupted(ctx, "while rendering the bottle of %s: %s", id, kept)
	case errors.Is(err, render.ErrNothing):
		msg := err.Error()
		if len(arg) < bottles.MinPrefix {
			msg += fmt.Sprintf(" (to name a session by the start of its id, give at least %d characters)", bottles.MinPrefix)
		}
		return nil, exitError{code: exitFailed, msg: msg}
	case cur == nil:
		return nil, err
	}
	why := err.Error()
	if errors.Is(err, context.DeadlineExceeded) {
		why = fmt.Sprintf("rendering it takes longer than --timeout %s; %s renders it without a limit", cmd.Duration("timeout"), d.command("render", id))
	}
	fmt.Fprintf(cmd.Root().ErrWriter, "bottled: warning: could not bring the bottle up to date (%s); showing it as rendered at %s\n",
		why, cur.State.Rendered.Local().Format("2006-01-02 15:04:05"))
	return cur, nil
}

// lineRange is lines from to to of a bottle (1-based, inclusive; 0 is the
// first or the last line), or the error saying why they are not there.
func lineRange(data []byte, from, to int, id string) ([]byte, error) {
	lines := render.LinesOf(data)
	n := lines.Count()
	from = max(from, 1)
	if to == 0 || to > n {
		to = n
	}
	if from > n {
		return nil, usagef("--from %d is past the end of the bottle of %s (%s)", from, id, count(n, "line"))
	}
	return lines.Span(from, to), nil
}

// sessionNamed is the directories of cmd (dirsOf) and the session its
// SESSION argument arg names (findSession).
func sessionNamed(cmd *cli.Command, arg string) (dirs, string, error) {
	d, err := dirsOf(cmd)
	if err != nil {
		return dirs{}, "", err
	}
	id, err := findSession(cmd, d, arg)
	return d, id, err
}

// findSession resolves a command's SESSION argument: an id, or the start
// of one that only one session has (bottles.Store.FindSession). A start several
// have lists them on stderr, to choose from, and exits 2.
func findSession(cmd *cli.Command, d dirs, arg string) (string, error) {
	id, err := bottles.Open(d.data, nil, nil).FindSession(d.claude, arg)
	var amb *bottles.AmbiguousError
	switch {
	case errors.As(err, &amb):
		writeCandidates(cmd.Root().ErrWriter, amb)
		return "", exitError{code: exitUsage}
	case err != nil:
		return "", usageError{err}
	}
	return id, nil
}

// writeCandidates lists the sessions an ambiguous start of an id names.
func writeCandidates(w io.Writer, amb *bottles.AmbiguousError) {
	fmt.Fprintf(w, "bottled: %q names %d sessions; give more of the id:\n", amb.Prefix, amb.Count)
	marked := false
	for _, c := range amb.Candidates {
		marked = marked || c.Archived || c.Bottle == ""
	}
	var rows [][]string
	for _, c := range amb.Candidates {
		row := []string{"  " + c.ID, stamp(c.LastActive)}
		if marked {
			switch {
			case c.Bottle == "":
				row = append(row, "(no bottle yet)")
			case c.Archived:
				row = append(row, "(cleared)")
			default:
				row = append(row, "")
			}
		}
		prompt := c.FirstPrompt
		if prompt == "" {
			prompt = "—"
		}
		rows = append(rows, append(row, prompt))
	}
	writeTable(w, rows, terminalWidth(w))
	if more := amb.Count - len(amb.Candidates); more > 0 {
		fmt.Fprintf(w, "  … and %d more\n", more)
	}
}
