package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v3"
)

func indexCommand() *cli.Command {
	return &cli.Command{
		Name:        "index",
		Usage:       "show the search index, or build it again from the bottles (--rebuild)",
		Description: help(indexHelp),
		Flags:       []cli.Flag{&cli.BoolFlag{Name: "rebuild", Usage: "build the index again from the bottles"}},
		Action:      runIndex,
	}
}

func runIndex(ctx context.Context, cmd *cli.Command) error {
	d, err := dirsOfArgless(cmd)
	if err != nil {
		return err
	}
	rebuild := cmd.Bool("rebuild")
	start := time.Now()
	ix, err := openIndex(ctx, cmd, d, 0, rebuild)
	if err != nil {
		return err
	}
	defer ix.Close()
	took := time.Since(start)
	st, err := ix.Stats(ctx)
	if err != nil {
		return err
	}
	if rebuild {
		fmt.Fprintf(cmd.Root().Writer, "rebuilt in %s (%s of bottles, %s)\n", took.Round(time.Millisecond),
			size(st.BottleBytes), rate(st.BottleBytes, took.Seconds()))
	}
	stale, err := ix.Stale(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.Root().Writer, "index     %s (%s)\n", st.Path, size(st.Bytes))
	fmt.Fprintf(cmd.Root().Writer, "holds     %s of %s, %s\n", count(st.Bottles, "bottle"), count(st.Sessions, "session"), count(st.Blocks, "block"))
	fmt.Fprintf(cmd.Root().Writer, "behind    %s changed since indexed (the next search takes them in)\n", count(len(stale), "bottle"))
	return nil
}
