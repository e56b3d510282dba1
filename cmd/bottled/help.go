package main

import (
	_ "embed" // the help texts
	"strings"
)

// The commands' long descriptions, which --help prints, are prose, kept as
// text in help/<command>.txt so that they are edited as the reader sees
// them, with the lines where they break. They are embedded as strings:
// nothing is read or copied when bottled starts, which every hook does.
var (
	//go:embed help/bottled.txt
	bottledHelp string
	//go:embed help/export.txt
	exportHelp string
	//go:embed help/index.txt
	indexHelp string
	//go:embed help/install.txt
	installHelp string
	//go:embed help/mcp.txt
	mcpHelp string
	//go:embed help/render.txt
	renderHelp string
	//go:embed help/run.txt
	runHelp string
	//go:embed help/search.txt
	searchHelp string
	//go:embed help/sessions.txt
	sessionsHelp string
	//go:embed help/show.txt
	showHelp string
	//go:embed help/status.txt
	statusHelp string
	//go:embed help/uninstall.txt
	uninstallHelp string
	//go:embed help/view.txt
	viewHelp string
)

// help is a description as --help prints it: without its file's last
// newline.
func help(text string) string { return strings.TrimSuffix(text, "\n") }
