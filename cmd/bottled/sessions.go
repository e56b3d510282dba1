package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/textcut"
)

// sessionsLimit is how many sessions a list shows unless --limit says.
const sessionsLimit = 20

func sessionsCommand() *cli.Command {
	return &cli.Command{
		Name:        "sessions",
		Usage:       "list this project's sessions, newest first",
		Description: help(sessionsHelp),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "list every project's sessions"},
			archivedFlag(),
			limitFlag(sessionsLimit, "sessions"),
			&cli.BoolFlag{Name: "json", Usage: "print the sessions as a JSON array"},
		},
		Action: runSessions,
	}
}

// sessionJSON is a session in --json output. The field names are stable.
type sessionJSON struct {
	Session     string `json:"session"`
	Bottle      string `json:"bottle"`
	Project     string `json:"project"`
	Mode        string `json:"mode"`                 // full, reconstructed
	Started     string `json:"started,omitempty"`    // RFC 3339
	LastActive  string `json:"lastActive,omitempty"` // RFC 3339
	Turns       int    `json:"turns"`
	Compactions int    `json:"compactions"`
	Archived    bool   `json:"archived"`
	FirstPrompt string `json:"firstPrompt"`
}

func runSessions(ctx context.Context, cmd *cli.Command) error {
	if cmd.NArg() > 0 {
		return usagef("sessions takes no arguments (to show a session: bottled show ID)")
	}
	d, scope, err := workScope(cmd)
	if err != nil {
		return err
	}
	ix, err := openIndex(ctx, cmd, d, searchBuildFor, false)
	if err != nil {
		return err
	}
	defer ix.Close()
	list, err := ix.Sessions(ctx, scope)
	if err != nil {
		return syncError(ctx, err)
	}
	if b, err := ix.Building(ctx); err == nil {
		if note := buildNote(b, "listed"); note != "" {
			fmt.Fprintln(cmd.Root().ErrWriter, "bottled: "+note)
		}
	}
	out := cmd.Root().Writer
	switch {
	case cmd.Bool("json"):
		if err := writeSessionsJSON(out, list); err != nil {
			return err
		}
	case len(list) > 0:
		writeSessions(out, list, cmd.Bool("all"), terminalWidth(out))
	default:
		said, err := noSessions(ctx, ix, scope, d)
		if err != nil {
			return syncError(ctx, err)
		}
		fmt.Fprint(cmd.Root().ErrWriter, said)
	}
	if len(list) == 0 {
		return exitError{code: exitFailed}
	}
	return nil
}

func writeSessionsJSON(w io.Writer, list []index.Session) error {
	out := make([]sessionJSON, 0, len(list))
	for _, s := range list {
		j := sessionJSON{Session: s.ID, Bottle: s.Bottle, Project: s.Project, Mode: string(s.Mode), Turns: s.Turns,
			Compactions: s.Compactions, Archived: s.Archived, FirstPrompt: s.FirstPrompt}
		if !s.Started.IsZero() {
			j.Started = s.Started.Format(time.RFC3339)
		}
		if !s.LastActive.IsZero() {
			j.LastActive = s.LastActive.Format(time.RFC3339)
		}
		out = append(out, j)
	}
	return writeJSON(w, out)
}

// A list on a terminal fits its width, one row a line: a project's path
// is cut from the left (its last directories say most), and a terminal
// too narrow for every column gives up, in turn, those least missed
// (sessionFallbacks). Each of these is a number of terminal columns.
const (
	// minPromptColumns is the fewest columns a first prompt is cut to
	// while a column can still give way: a few words, enough to tell
	// sessions apart (the first prompt cut to 10 said nothing).
	minPromptColumns = 24
	// minProjectColumns is the fewest a project's path is cut to: its
	// last directory or two.
	minProjectColumns = 16
	// shortIDLength is how much of a session's id a narrow terminal
	// shows: show, export, render and MCP's read take the start of an id
	// (at least 6 characters), and 8 of its hex digits leave one in 4
	// billion sessions to share it.
	shortIDLength = 8
)

// sessionColumns are the columns of a list that a narrow terminal can
// give up or narrow; the session's id, its first prompt and, with --all,
// its project are always there.
type sessionColumns struct {
	started, fullID, compactions, turns, mode, lastActive bool
}

// sessionFallbacks are what a terminal too narrow for a list's rows
// gives up, in turn, the least missed first: when a session was started
// (the list is ordered by when it was last active), the whole id, then
// the counts and the mode; last, when it was last active.
var sessionFallbacks = []func(*sessionColumns){
	func(c *sessionColumns) { c.started = false },
	func(c *sessionColumns) { c.fullID = false },
	func(c *sessionColumns) { c.compactions = false },
	func(c *sessionColumns) { c.turns = false },
	func(c *sessionColumns) { c.mode = false },
	func(c *sessionColumns) { c.lastActive = false },
}

// writeSessions prints the list as a table. On a terminal width columns
// wide (0: not a terminal, the rows whole) each row fits one line: the
// columns that fit (sessionFallbacks), a project's path cut from the left,
// the first prompt cut to what is left.
func writeSessions(w io.Writer, list []index.Session, all bool, width int) {
	cols := sessionColumns{started: true, fullID: true, compactions: true, turns: true, mode: true, lastActive: true}
	rows := sessionRows(list, all, cols)
	for _, giveUp := range sessionFallbacks {
		if width == 0 || fixedWidth(rows, all)+minRest(all) <= width {
			break
		}
		giveUp(&cols)
		rows = sessionRows(list, all, cols)
	}
	if all && width > 0 {
		cutProjects(rows, width-fixedWidth(rows, all))
	}
	writeTable(w, rows, width)
}

// sessionRows is the list's table, the header first, with cols' columns;
// with all, the last but one is the project's.
func sessionRows(list []index.Session, all bool, cols sessionColumns) [][]string {
	var head []string
	add := func(row []string, on bool, cell string) []string {
		if on {
			return append(row, cell)
		}
		return row
	}
	head = append(head, "SESSION")
	head = add(head, cols.started, "STARTED")
	head = add(head, cols.lastActive, "LAST ACTIVE")
	head = add(head, cols.turns, "TURNS")
	head = add(head, cols.compactions, "COMPACTIONS")
	head = add(head, cols.mode, "MODE")
	head = add(head, all, "PROJECT")
	rows := [][]string{append(head, "FIRST PROMPT")}
	idLength := 0 // whole
	if !cols.fullID {
		idLength = distinctPrefix(list)
	}
	for _, s := range list {
		id := s.ID
		if idLength > 0 && len(id) > idLength {
			id = id[:idLength]
		}
		if s.Archived {
			id += " (cleared)"
		}
		row := []string{id}
		row = add(row, cols.started, stamp(s.Started))
		row = add(row, cols.lastActive, stamp(s.LastActive))
		row = add(row, cols.turns, fmt.Sprint(s.Turns))
		row = add(row, cols.compactions, fmt.Sprint(s.Compactions))
		row = add(row, cols.mode, string(s.Mode))
		row = add(row, all, s.Project)
		prompt := s.FirstPrompt
		if prompt == "" {
			prompt = "—"
		}
		rows = append(rows, append(row, prompt))
	}
	return rows
}

// distinctPrefix is how much of the start of its ids tells the sessions
// of list apart: shortIDLength, or more if two of them start alike (the
// whole id, 0, for a session listed twice: cleared, then resumed).
func distinctPrefix(list []index.Session) int {
	longest := 0
	for _, s := range list {
		longest = max(longest, len(s.ID))
	}
	for n := shortIDLength; n < longest; n++ {
		seen := make(map[string]bool, len(list))
		whole := true
		for _, s := range list {
			p := s.ID[:min(n, len(s.ID))]
			if seen[p] {
				whole = false
				break
			}
			seen[p] = true
		}
		if whole {
			return n
		}
	}
	return 0
}

// fixedWidth is how many columns a row of rows takes before its project
// (with all) or else its first prompt, separators included.
func fixedWidth(rows [][]string, all bool) int {
	fixed := len(rows[0]) - 1
	if all {
		fixed--
	}
	return leadWidth(rows, fixed)
}

// minRest is the fewest columns a row needs after its fixed ones.
func minRest(all bool) int {
	if all {
		return minProjectColumns + 2 + minPromptColumns
	}
	return minPromptColumns
}

// cutProjects cuts the project column (the last but one) of rows so that
// room columns hold it and the first prompt: it takes at most 2/5 of
// them, and no fewer than minProjectColumns.
func cutProjects(rows [][]string, room int) {
	i := len(rows[0]) - 2
	width := min(columnWidth(rows, i), max(minProjectColumns, room*2/5))
	for _, row := range rows[1:] {
		row[i] = cutLeft(row[i], width)
	}
}

// cutLeft cuts s to width terminal columns from the left, starting it with
// "…" when cut, at a "/" when one leaves enough to say something.
func cutLeft(s string, width int) string {
	tail, cut := strings.CutPrefix(textcut.ClipStart(s, width, textcut.Columns), textcut.Ellipsis)
	if !cut || tail == s {
		return s
	}
	if i := strings.IndexByte(tail, '/'); i > 0 && textcut.Width(tail[i:]) >= width/2 {
		tail = tail[i:]
	}
	return textcut.Ellipsis + tail
}

// stamp shows a time to the minute in the local zone, "—" if unknown.
func stamp(t time.Time) string { return index.FormatTime(t, time.Local) }

// noSessions says what an empty list covered and how to widen it.
func noSessions(ctx context.Context, ix *index.Index, scope index.Scope, d dirs) (string, error) {
	var b strings.Builder
	where := "in any project"
	if scope.Project != "" {
		where = "in " + scope.Project + " or under it"
	}
	fmt.Fprintf(&b, "bottled: no sessions with a bottle %s", where)
	if !scope.Archived {
		b.WriteString(" (cleared ones left out)")
	}
	b.WriteString("\n")
	counts := func(s index.Scope) (int, error) { return ix.CountSessions(ctx, s) }
	total, err := counts(index.Scope{Archived: true})
	if err != nil || total == 0 {
		fmt.Fprintf(&b, "bottled: %s\n", noBottleYet(d))
		return b.String(), err
	}
	var wider []string
	if scope.Project != "" {
		everywhere := scope
		everywhere.Project = ""
		n, err := counts(everywhere)
		if err != nil {
			return "", err
		}
		if n > 0 {
			wider = append(wider, fmt.Sprintf("--all (%s in every project)", count(n, "session")))
		}
	}
	if !scope.Archived {
		cleared := scope
		cleared.Archived = true
		n, err := counts(cleared)
		if err != nil {
			return "", err
		}
		if n > 0 {
			wider = append(wider, fmt.Sprintf("--archived (%s)", count(n, "cleared session")))
		}
	}
	if len(wider) > 0 {
		fmt.Fprintf(&b, "bottled: to widen it: %s\n", strings.Join(wider, ", "))
	}
	return b.String(), nil
}
