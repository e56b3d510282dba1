package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"
)

func indexCommand() *cli.Command {
	return &cli.Command{
		Name:  "index",
		Usage: "show the search index, or build it again from the bottles (--rebuild)",
		Description: "The index is kept in <data-dir>/bottled-index/ by the daemon as it writes bottles, and\n" +
			"brought up to date from the bottles before every search. It is only a cache: --rebuild\n" +
			"builds it anew from the bottles (as happens by itself when it is missing, from another\n" +
			"version of bottled, or damaged).",
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "rebuild", Usage: "build the index again from the bottles"}},
		Action: runIndex,
	}
}

func runIndex(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("index takes no arguments")
	}
	d, err := dirsOf(c)
	if err != nil {
		return err
	}
	rebuild := c.Bool("rebuild")
	start := time.Now()
	ix, err := openIndex(c, d, rebuild)
	if err != nil {
		return err
	}
	defer ix.Close()
	took := time.Since(start)
	st, err := ix.Stats(c.Context)
	if err != nil {
		return err
	}
	if rebuild {
		fmt.Fprintf(c.App.Writer, "rebuilt in %s (%.0f MB of bottles, %.0f MB/s)\n", took.Round(time.Millisecond),
			float64(st.BottleBytes)/1e6, float64(st.BottleBytes)/1e6/max(took.Seconds(), 1e-9))
	}
	stale, err := ix.Stale(c.Context)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "index     %s (%.1f MB)\n", st.Path, float64(st.Bytes)/1e6)
	fmt.Fprintf(c.App.Writer, "holds     %d bottles of %d sessions, %d blocks\n", st.Bottles, st.Sessions, st.Blocks)
	fmt.Fprintf(c.App.Writer, "behind    %d bottles changed since indexed (the next search takes them in)\n", len(stale))
	return nil
}
