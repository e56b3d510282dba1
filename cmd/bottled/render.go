package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

func renderCommand() *cli.Command {
	return &cli.Command{
		Name:        "render",
		Usage:       "render one session's bottle now",
		ArgsUsage:   "SESSION_ID",
		Description: help(renderHelp),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "transcript", Usage: "read this transcript `FILE` instead of looking it up"},
			&cli.BoolFlag{Name: "stdout", Usage: "print the bottle instead of writing it"},
		},
		Action: runRender,
	}
}

func runRender(ctx context.Context, cmd *cli.Command) error {
	id, err := oneArg(cmd)
	if err != nil {
		return err
	}
	d, err := dirsOf(cmd)
	if err != nil {
		return err
	}
	transcript := cmd.String("transcript")
	if transcript == "" {
		if id, err = findSession(cmd, d, id); err != nil {
			return err
		}
	} else if err := transcriptOf(id, transcript, func(whole string) string { return renderAgain(cmd, d, whole) }); err != nil {
		return err
	}
	rules, err := d.rules()
	if err != nil {
		return err
	}
	db, dbErr := sources.OpenClaudeMemDB(ctx, sources.ClaudeMemFile(d.data))
	if dbErr == nil {
		defer db.Close()
	}
	req := bottles.Request{SessionID: id, Transcript: transcript, ClaudeDir: d.claude, ClaudeMem: db, ClaudeMemErr: dbErr, Rules: rules}
	store := bottles.Open(d.data, nil, nil)
	r := rendered{id: id, dbErr: dbErr, stdout: cmd.Bool("stdout"), show: d.command("show", id)}
	if r.dbBroken() { // what the bottle on disk shows matters only then
		onDisk, _ := bottles.ReadState(store.Path(id))
		r.memOnDisk = showsMemory(onDisk)
	}
	if r.stdout {
		r.b, err = store.FromDisk(ctx, req)
	} else {
		r.b, r.outcome, err = store.WriteFromDisk(ctx, req)
	}
	switch {
	case errors.Is(err, render.ErrNothing):
		return exitError{code: exitFailed, msg: err.Error()}
	case err != nil && stopped(ctx, err):
		return interrupted(ctx, "while rendering the bottle of %s: nothing was written", id)
	case err != nil:
		return err
	}
	r.warn(cmd.Root().ErrWriter)
	if r.stdout {
		_, err := cmd.Root().Writer.Write(r.b.Bytes)
		return err
	}
	fmt.Fprintf(cmd.Root().Writer, "%s\t%s\n", store.PathOf(r.outcome, id), r.what())
	return nil
}

// rendered is what a render made and what it knew of the sources, for
// what it says of them.
type rendered struct {
	id      string
	b       *render.Bottle
	outcome bottles.Outcome // of the write; none with stdout
	stdout  bool
	// dbErr is why claude-mem's database could not be read (nil: it was).
	dbErr error
	// memOnDisk: the bottle on disk before the render shows claude-mem
	// records.
	memOnDisk bool
	// show is the command that prints the bottle on disk.
	show string
}

// dbBroken reports whether a database is there and could not be read (as
// opposed to there being none, which is nothing to warn of).
func (r rendered) dbBroken() bool {
	return r.dbErr != nil && !errors.Is(r.dbErr, sources.ErrNoClaudeMemDB)
}

// warn says on w what the render lacked: the database, transcript lines
// it could not read, what it does not know.
func (r rendered) warn(w io.Writer) {
	if r.dbBroken() {
		fmt.Fprintf(w, "bottled: warning: %v%s\n", r.dbErr, r.withoutDB())
	}
	if n := r.b.Malformed; n > 0 {
		lines := count(n, "transcript line") + " could not be read and were left out"
		if n == 1 {
			lines = "1 transcript line could not be read and was left out"
		}
		fmt.Fprintf(w, "bottled: warning: %s\n", lines)
	}
	if u := r.b.State.Unknown; u != nil {
		fmt.Fprintf(w, "bottled: warning: the transcript holds what this bottled does not know (written by a newer Claude Code?): %s\n", u)
	}
}

// withoutDB says what became of a render made without the database.
func (r rendered) withoutDB() string {
	switch {
	case r.stdout && r.memOnDisk:
		return fmt.Sprintf(": printed from the transcript alone, without the claude-mem records the bottle on disk shows (%s prints it)", r.show)
	case r.stdout:
		return " (printed from the transcript alone)"
	case r.outcome == bottles.Written:
		return " (rendered from the transcript alone)"
	case r.memOnDisk:
		return " (the bottle on disk is kept, with the claude-mem records it shows)"
	}
	return ""
}

// what is the mode of the bottle written, or why the one on disk was kept.
func (r rendered) what() string {
	mode := string(r.b.State.Mode)
	keptForDB := r.dbBroken() && r.memOnDisk
	switch r.outcome {
	case bottles.Crossed:
		if keptForDB {
			return mode + "\t(kept: it shows claude-mem records the database cannot give now)"
		}
		return mode + "\t(kept: another render read some source further meanwhile; run it again)"
	case bottles.Covered:
		if keptForDB {
			return mode + "\t(kept: it shows claude-mem records the database cannot give now)"
		}
		return mode + "\t(unchanged: already rendered from these sources)"
	case bottles.Archived:
		return mode + "\t(archived: the session was cleared and has nothing new since)"
	case bottles.KeptFull:
		return "full\t(kept: the transcript is gone, the full bottle stays)"
	}
	return mode
}

// showsMemory reports whether a bottle of state st shows claude-mem
// records.
func showsMemory(st *render.State) bool {
	m := st != nil && st.ClaudeMem != nil
	return m && (st.ClaudeMem.Prompt > 0 || st.ClaudeMem.Observation > 0 || st.ClaudeMem.Summary > 0)
}

// renderAgain is the command line of this render for session whole, to
// suggest to the user.
func renderAgain(cmd *cli.Command, d dirs, whole string) string {
	words := []string{"render", whole, "--transcript", cmd.String("transcript")}
	if cmd.Bool("stdout") {
		words = append(words, "--stdout")
	}
	return d.command(words...)
}

// transcriptOf checks that the transcript at path is session id's, before
// --transcript puts its conversation in the bottle of id: the session its
// file is named for (as Claude Code names them, and the daemon reads them)
// and the one its last records name must both be id, and an id that
// neither confirms must be whole (a UUID), for a start of an id would
// make a bottle of a session that does not exist, which then stands in for
// the real one. A file that cannot be read is left to the render to
// report. retry is the command that renders it by the whole id.
func transcriptOf(id, path string, retry func(whole string) string) error {
	if !sources.ValidSessionID(id) {
		return usagef("invalid session id %q: expected letters, digits, '-' or '_'", id)
	}
	file := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if !isUUID(file) {
		file = ""
	}
	records := sessionNamedIn(path)
	for _, c := range []struct{ named, how string }{
		{records, "the transcript of session %s, not of %s"},
		{file, "named for session %s, not %s"},
	} {
		switch {
		case c.named == "" || c.named == id:
		case strings.HasPrefix(c.named, id):
			return usagef("with --transcript give the whole session id: %s", retry(c.named))
		default:
			return usagef("%s is "+c.how+": give that id, or the transcript of %s", path, c.named, id, id)
		}
	}
	if file == "" && records == "" && !isUUID(id) {
		return usagef("%q is not a whole session id (a lower-case UUID, as %s): with --transcript give the whole id of the session the file holds", id, sessionExample)
	}
	return nil
}

// sessionExample is a session id, to show what one looks like.
const sessionExample = "3f9c2a71-5d0e-4b8a-9c61-2e7f0a4d8b15"

// sessionTail is how much of a transcript's end sessionNamedIn reads:
// its last records name the session; a last line longer than this (a
// pasted image) leaves the check to the file's name.
const sessionTail = 1 << 20

// sessionNamedIn is the session the last record of the transcript at path
// that names one names (its "sessionId"), "" if none in its tail does or
// it cannot be read. The last, for a file's first records can be another
// session's: Claude Code 1.0.x began a resumed session's file with a copy
// of its predecessor's records, under the predecessor's id (seen in the
// real fixtures). Only a regular file is opened, without waiting (a named
// pipe is not read).
func sessionNamedIn(path string) string {
	var named string
	err := sources.ScanTail(path, sessionTail, func(line []byte) bool {
		var rec struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(line, &rec) == nil {
			named = rec.SessionID
		}
		return named == ""
	})
	if err != nil {
		return ""
	}
	return named
}

// isUUID reports whether s has the shape of Claude Code's session ids:
// a UUID in lower-case hex, 8-4-4-4-12.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f'):
			return false
		}
	}
	return true
}

// rules reads the redaction rules of the data directory for a command
// that renders. A patterns file that cannot be used stops the command,
// with what is wrong and where: a command is run by someone who can fix it
// (the daemon and the hook go on with the rules that can be used).
func (d dirs) rules() (*redact.Rules, error) {
	rules, err := bottles.LoadRules(d.data)
	if err != nil {
		return nil, exitError{code: exitFailed, msg: err.Error()}
	}
	return rules, nil
}
