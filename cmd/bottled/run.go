package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/version"
	"github.com/bottled-dev/bottled/watch"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:        "run",
		Usage:       "keep every session's bottle current (the daemon)",
		Description: help(runHelp),
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "debounce", Value: watch.DefaultDebounce, Usage: "quiet time after a change before rendering"},
			&cli.DurationFlag{Name: "max-wait", Value: watch.DefaultMaxWait, Usage: "longest a session that keeps changing waits for a render"},
			&cli.IntFlag{Name: "workers", Value: watch.DefaultWorkers, Usage: "sessions rendered at once"},
			&cli.IntFlag{Name: "max-cached", Value: watch.DefaultMaxCached, Usage: "sessions whose parse state is kept in memory"},
			&cli.IntFlag{Name: "cache-mb", Value: watch.DefaultCacheBytes >> 20, Usage: "MiB of parse state and rendered turns kept in memory (a live session bigger than that is kept while it changes)"},
			&cli.DurationFlag{Name: "rescan", Value: watch.DefaultRescan, Usage: "interval of the full check that covers missed file events"},
			// For tests that follow the rescan's checks of quiet transcripts
			// without waiting seconds for the quiet.
			&cli.DurationFlag{Name: "check-quiet", Value: watch.DefaultCheckQuiet, Hidden: true,
				Usage: "how long a transcript is left alone before the rescan checks its bottle"},
			// For tests of failed renders, which would otherwise wait out
			// the first retry's second each.
			&cli.DurationFlag{Name: "retry-min", Value: watch.DefaultRetryMin, Hidden: true,
				Usage: "wait before a failed render is tried again the first time (it doubles with each failure)"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text or json"},
			&cli.BoolFlag{Name: "verbose", Usage: "log every render"},
		},
		Action: runDaemon,
	}
}

func runDaemon(ctx context.Context, cmd *cli.Command) error {
	d, err := dirsOfArgless(cmd)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if cmd.Bool("verbose") {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	// On a terminal, the catch-up's progress bar and the log share it.
	logs := cmd.Root().ErrWriter
	var term *watch.Terminal
	if f, ok := logs.(*os.File); ok && isTerminal(f) {
		term = watch.NewTerminal(f)
		logs = term
	}
	var logger *slog.Logger
	switch cmd.String("log-format") {
	case "text":
		logger = slog.New(slog.NewTextHandler(logs, opts))
	case "json":
		logger = slog.New(slog.NewJSONHandler(logs, opts))
	default:
		return usagef("--log-format must be text or json, not %q", cmd.String("log-format"))
	}
	for _, f := range []string{"debounce", "max-wait", "rescan", "check-quiet", "retry-min"} {
		if cmd.Duration(f) <= 0 {
			return usagef("--%s must be positive", f)
		}
	}
	// The daemon would raise a shorter one to the debounce: a session
	// that keeps writing cannot be rendered before it has been quiet.
	if mw, db := cmd.Duration("max-wait"), cmd.Duration("debounce"); mw < db {
		return usagef("--max-wait %s is shorter than --debounce %s: it must be at least that", mw, db)
	}
	for _, f := range []string{"workers", "max-cached", "cache-mb"} {
		if cmd.Int(f) <= 0 {
			return usagef("--%s must be positive", f)
		}
	}
	cfg := watch.Config{
		ClaudeDir: d.claude, DataDir: d.data,
		Debounce: cmd.Duration("debounce"), MaxWait: cmd.Duration("max-wait"), Rescan: cmd.Duration("rescan"),
		CheckQuiet: cmd.Duration("check-quiet"), RetryMin: cmd.Duration("retry-min"),
		Workers: cmd.Int("workers"), MaxCached: cmd.Int("max-cached"), CacheBytes: int64(cmd.Int("cache-mb")) << 20,
		Version: version.String(), Logger: logger, Progress: term,
	}
	daemon := watch.New(cfg)
	// SIGHUP, which a daemon takes as a cue to look at everything again,
	// must not kill it (the default), nor a closed log pipe (SIGPIPE).
	signal.Ignore(syscall.SIGPIPE)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() { // stops when Run returns
		for {
			select {
			case <-hup:
				logger.Info("SIGHUP: checking every bottle against its sources again")
				daemon.Recheck()
			case <-done:
				return
			}
		}
	}()
	err = daemon.Run(ctx)
	signal.Stop(hup)
	close(done)
	if errors.Is(err, watch.ErrRunning) {
		return exitError{code: exitFailed, msg: err.Error()}
	}
	return err
}

// isTerminal reports whether f is a character device (a terminal), where a
// progress bar can redraw itself.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
