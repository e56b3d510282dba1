package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"bottled/render"
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
	ix, err := openIndex(c, d)
	if err != nil {
		return err
	}
	defer ix.Close()
	if c.Bool("rebuild") {
		size := bottleBytes(render.BottlesDir(d.data))
		start := time.Now()
		if err := ix.Rebuild(c.Context); err != nil {
			return err
		}
		took := time.Since(start)
		fmt.Fprintf(c.App.Writer, "rebuilt in %s (%.0f MB of bottles, %.0f MB/s)\n", took.Round(time.Millisecond),
			float64(size)/1e6, float64(size)/1e6/max(took.Seconds(), 1e-9))
	}
	st, err := ix.Stats(c.Context)
	if err != nil {
		return err
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

// bottleBytes is the size of the bottles, archived ones included.
func bottleBytes(dir string) int64 {
	var n int64
	for _, sub := range []string{dir, render.ArchiveDir(dir)} {
		entries, _ := os.ReadDir(sub)
		for _, e := range entries {
			if info, err := e.Info(); err == nil && info.Mode().IsRegular() && filepath.Ext(e.Name()) == ".md" {
				n += info.Size()
			}
		}
	}
	return n
}
