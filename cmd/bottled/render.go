package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

func renderCommand() *cli.Command {
	return &cli.Command{
		Name:      "render",
		Usage:     "render one session's bottle now",
		ArgsUsage: "SESSION_ID",
		Description: "Finds the session's transcript under <claude-dir>/projects/*/ (or reads --transcript),\n" +
			"reads its claude-mem records, and writes <data-dir>/bottles/<SESSION_ID>.md.\n" +
			"Exit status: 0 rendered, 1 nothing to render (the reason is printed), 2 bad usage.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "transcript", Usage: "read this transcript `FILE` instead of looking it up"},
			&cli.BoolFlag{Name: "stdout", Usage: "print the bottle instead of writing it"},
		},
		Action: runRender,
	}
}

func runRender(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("render takes exactly one SESSION_ID (got %d arguments)", c.NArg())
	}
	id := c.Args().First()
	if !sources.ValidSessionID(id) {
		return usagef("invalid session id %q: expected letters, digits, '-' or '_'", id)
	}
	d, err := dirsOf(c)
	if err != nil {
		return err
	}
	db, dbErr := sources.OpenMemoryDB(c.Context, sources.MemoryFile(d.data))
	if dbErr == nil {
		defer db.Close()
	}
	req := render.Request{SessionID: id, Transcript: c.String("transcript"), ClaudeDir: d.claude, Memory: db, MemoryErr: dbErr}
	dir := render.BottlesDir(d.data)
	var (
		b       *render.Bottle
		outcome render.Outcome
	)
	if c.Bool("stdout") {
		b, err = render.FromDisk(c.Context, req, time.Now(), time.Local)
	} else {
		b, outcome, err = render.WriteFromDisk(c.Context, dir, req, time.Now, time.Local)
	}
	if errors.Is(err, render.ErrNothing) {
		return exitError{code: exitFailed, msg: err.Error()}
	}
	if err != nil {
		return err
	}
	if dbErr != nil && !errors.Is(dbErr, sources.ErrNoMemoryDB) {
		fmt.Fprintf(c.App.ErrWriter, "bottled: warning: %v (rendered from the transcript alone)\n", dbErr)
	}
	if b.Malformed > 0 {
		fmt.Fprintf(c.App.ErrWriter, "bottled: warning: %d transcript lines could not be read and were left out\n", b.Malformed)
	}
	if u := b.State.Unknown; u != nil {
		fmt.Fprintf(c.App.ErrWriter, "bottled: warning: the transcript holds what this bottled does not know (written by a newer Claude Code?): %s\n", u)
	}
	if c.Bool("stdout") {
		_, err := c.App.Writer.Write(b.Bytes)
		return err
	}
	path := outcome.Path(dir, id)
	switch outcome {
	case render.Crossed:
		why := "other renders kept writing newer sources; run it again"
		if db == nil {
			why = "it shows claude-mem records the database cannot give now"
		}
		fmt.Fprintf(c.App.Writer, "%s\t%s\t(kept: %s)\n", path, b.State.Mode, why)
	case render.Archived:
		fmt.Fprintf(c.App.Writer, "%s\t%s\t(archived: the session was cleared and has nothing new since)\n", path, b.State.Mode)
	case render.Covered:
		fmt.Fprintf(c.App.Writer, "%s\t%s\t(unchanged: already rendered from these sources)\n", path, b.State.Mode)
	case render.KeptFull:
		fmt.Fprintf(c.App.Writer, "%s\tfull\t(kept: the transcript is gone, the full bottle stays)\n", path)
	default:
		fmt.Fprintf(c.App.Writer, "%s\t%s\n", path, b.State.Mode)
	}
	return nil
}
