package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/index"
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
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeSessions prints the list as a table, each row cut to width columns
// (none if 0) by cutting its first prompt.
func writeSessions(w io.Writer, list []index.Session, all bool, width int) {
	head := []string{"SESSION", "STARTED", "LAST ACTIVE", "TURNS", "COMPACTIONS", "MODE"}
	if all {
		head = append(head, "PROJECT")
	}
	rows := [][]string{append(head, "FIRST PROMPT")}
	for _, s := range list {
		id := s.ID
		if s.Archived {
			id += " (cleared)"
		}
		row := []string{id, stamp(s.Started), stamp(s.LastActive), fmt.Sprint(s.Turns), fmt.Sprint(s.Compactions), string(s.Mode)}
		if all {
			row = append(row, s.Project)
		}
		prompt := s.FirstPrompt
		if prompt == "" {
			prompt = "—"
		}
		rows = append(rows, append(row, prompt))
	}
	writeTable(w, rows, width)
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
		fmt.Fprintf(&b, "bottled: there is no bottle in %s/bottles yet: bottled run (the daemon) renders every session's, bottled render ID one\n", d.data)
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
