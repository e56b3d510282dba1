package main

import (
	"context"
	"errors"
	"fmt"

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
	if cmd.String("transcript") == "" {
		if id, err = findSession(cmd, d, id); err != nil {
			return err
		}
	} else if !sources.ValidSessionID(id) {
		return usagef("invalid session id %q: expected letters, digits, '-' or '_'", id)
	}
	rules, err := d.rules()
	if err != nil {
		return err
	}
	db, dbErr := sources.OpenClaudeMemDB(ctx, sources.ClaudeMemFile(d.data))
	if dbErr == nil {
		defer db.Close()
	}
	req := bottles.Request{SessionID: id, Transcript: cmd.String("transcript"), ClaudeDir: d.claude, ClaudeMem: db, ClaudeMemErr: dbErr, Rules: rules}
	store := bottles.Open(d.data, nil, nil)
	var (
		b       *render.Bottle
		outcome bottles.Outcome
	)
	if cmd.Bool("stdout") {
		b, err = store.FromDisk(ctx, req)
	} else {
		b, outcome, err = store.WriteFromDisk(ctx, req)
	}
	switch {
	case errors.Is(err, render.ErrNothing):
		return exitError{code: exitFailed, msg: err.Error()}
	case err != nil && stopped(ctx, err):
		return interrupted(ctx, "while rendering the bottle of %s: nothing was written", id)
	case err != nil:
		return err
	}
	if dbErr != nil && !errors.Is(dbErr, sources.ErrNoClaudeMemDB) {
		fmt.Fprintf(cmd.Root().ErrWriter, "bottled: warning: %v (rendered from the transcript alone)\n", dbErr)
	}
	if b.Malformed > 0 {
		lines := count(b.Malformed, "transcript line") + " could not be read and were left out"
		if b.Malformed == 1 {
			lines = "1 transcript line could not be read and was left out"
		}
		fmt.Fprintf(cmd.Root().ErrWriter, "bottled: warning: %s\n", lines)
	}
	if u := b.State.Unknown; u != nil {
		fmt.Fprintf(cmd.Root().ErrWriter, "bottled: warning: the transcript holds what this bottled does not know (written by a newer Claude Code?): %s\n", u)
	}
	if cmd.Bool("stdout") {
		_, err := cmd.Root().Writer.Write(b.Bytes)
		return err
	}
	path := store.PathOf(outcome, id)
	switch outcome {
	case bottles.Crossed:
		why := "other renders kept writing newer sources; run it again"
		if db == nil {
			why = "it shows claude-mem records the database cannot give now"
		}
		fmt.Fprintf(cmd.Root().Writer, "%s\t%s\t(kept: %s)\n", path, b.State.Mode, why)
	case bottles.Archived:
		fmt.Fprintf(cmd.Root().Writer, "%s\t%s\t(archived: the session was cleared and has nothing new since)\n", path, b.State.Mode)
	case bottles.Covered:
		fmt.Fprintf(cmd.Root().Writer, "%s\t%s\t(unchanged: already rendered from these sources)\n", path, b.State.Mode)
	case bottles.KeptFull:
		fmt.Fprintf(cmd.Root().Writer, "%s\tfull\t(kept: the transcript is gone, the full bottle stays)\n", path)
	default:
		fmt.Fprintf(cmd.Root().Writer, "%s\t%s\n", path, b.State.Mode)
	}
	return nil
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
