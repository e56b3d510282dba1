package main

import (
	"context"
	"strconv"

	"github.com/urfave/cli/v3"
)

func viewCommand() *cli.Command {
	return &cli.Command{
		Name:        "view",
		Usage:       "every session's bottle as a live web page on this machine (runs bottled-view from beside this binary)",
		Description: help(viewHelp),
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "port", Usage: "listen on port `N` of 127.0.0.1 (0: a free one)"},
			&cli.BoolFlag{Name: "no-open", Usage: "print the address without opening a browser"},
		},
		Action: runView,
	}
}

func runView(_ context.Context, cmd *cli.Command) error {
	if err := noArgs(cmd); err != nil {
		return err
	}
	port := cmd.Int("port")
	if port < 0 || port > 65535 {
		return usagef("--port must be from 0 to 65535")
	}
	args := []string{"view", "--port", strconv.Itoa(port)}
	if cmd.Bool("no-open") {
		args = append(args, "--no-open")
	}
	d, err := dirsOf(cmd)
	if err != nil {
		return err
	}
	return execBeside(viewBinary, d, args...)
}

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:        "export",
		Usage:       "write a session as one standalone HTML page (or its bottle's markdown)",
		ArgsUsage:   "SESSION",
		Description: help(exportHelp),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "html", Usage: "html or md"},
			&cli.StringFlag{Name: "o", Usage: "write to `FILE` instead of stdout"},
			&cli.BoolFlag{Name: "force", Usage: "replace FILE if it exists"},
		},
		Action: runExport,
	}
}

func runExport(_ context.Context, cmd *cli.Command) error {
	arg, err := oneArg(cmd)
	if err != nil {
		return err
	}
	format := cmd.String("format")
	if format != "html" && format != "md" {
		return usagef("--format must be html or md, not %q", format)
	}
	d, id, err := sessionNamed(cmd, arg)
	if err != nil {
		return err
	}
	args := []string{"export", "--format", format}
	if out := cmd.String("o"); out != "" {
		// bottled-view checks the file (and says what to give instead),
		// in this process's directory, as the user named it; -o=FILE
		// keeps a name that starts with "-" a value.
		args = append(args, "-o="+out)
	}
	if cmd.Bool("force") {
		args = append(args, "--force")
	}
	return execBeside(viewBinary, d, append(args, "--", id)...)
}
