package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/textcut"
)

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:        "search",
		Usage:       "search the bottles of this project's sessions",
		ArgsUsage:   "QUERY",
		Description: help(searchHelp),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "search every project"},
			archivedFlag(),
			&cli.StringFlag{Name: "since", Usage: "only from `WHEN` on: 2026-05-01, \"2026-05-01 14:00\" or an age (12h, 7d)"},
			&cli.StringFlag{Name: "until", Usage: "only before `WHEN` (same forms)"},
			limitFlag(20, "hits"),
			&cli.BoolFlag{Name: "json", Usage: "print the hits as a JSON array"},
		},
		Action: runSearch,
	}
}

// hitJSON is a hit in --json output. The field names are stable.
type hitJSON struct {
	Session string `json:"session"`
	Bottle  string `json:"bottle"`
	Line    int    `json:"line"`
	Time    string `json:"time,omitempty"` // RFC 3339
	Speaker string `json:"speaker"`        // user, assistant, observation, summary, deed
	// Deed marks a hit in the trail of what was done (a file changed, a
	// command run…) rather than in what someone said.
	Deed     bool   `json:"deed"`
	Project  string `json:"project"`
	Archived bool   `json:"archived"`
	Snippet  string `json:"snippet"`
	// Partial is set while the index is still being built: the search
	// covered the newest Indexed of Total sessions.
	Partial *partialJSON `json:"partial,omitempty"`
}

type partialJSON struct {
	Indexed int `json:"indexed"`
	Total   int `json:"total"`
}

func runSearch(ctx context.Context, cmd *cli.Command) error {
	query := strings.TrimSpace(strings.Join(cmd.Args().Slice(), " "))
	if query == "" {
		return usagef("search takes a QUERY")
	}
	d, scope, err := workScope(cmd)
	if err != nil {
		return err
	}
	if err := scope.Bound(cmd.String("since"), cmd.String("until"), time.Now(), time.Local); err != nil {
		return usagef("--%v", err) // --since: …
	}
	if since, until := cmd.String("since"), cmd.String("until"); !scope.Since.IsZero() && !scope.Until.IsZero() && !scope.Until.After(scope.Since) {
		order := "before"
		if scope.Until.Equal(scope.Since) {
			order = "not after"
		}
		return usagef("--until %s is %s --since %s: nothing is in that range", until, order, since)
	}
	ix, err := openIndex(ctx, cmd, d, searchBuildFor, false)
	if err != nil {
		return err
	}
	defer ix.Close()
	hits, err := ix.Search(ctx, query, scope)
	if errors.Is(err, index.ErrNoWords) {
		return usagef("%v: %q", err, query)
	}
	if err != nil {
		return syncError(ctx, err)
	}
	ext, err := ix.Extent(ctx, scope)
	if err != nil {
		return err
	}
	var partial *partialJSON
	if note := buildNote(ext.Build, "searched"); note != "" {
		fmt.Fprintln(cmd.Root().ErrWriter, "bottled: "+note)
		partial = &partialJSON{Indexed: ext.Build.Indexed, Total: ext.Build.Total}
	}
	if cmd.Bool("json") {
		out := make([]hitJSON, 0, len(hits))
		for _, h := range hits {
			j := hitJSON{Session: h.Session, Bottle: h.Bottle, Line: h.Line, Speaker: h.Kind.String(), Deed: h.Kind == render.BlockDeed,
				Project: h.Project, Archived: h.Archived, Snippet: h.Snippet, Partial: partial}
			if !h.Time.IsZero() {
				j.Time = h.Time.Format(time.RFC3339)
			}
			out = append(out, j)
		}
		if err := writeJSON(cmd.Root().Writer, out); err != nil {
			return err
		}
	} else {
		writeHits(cmd, hits, cmd.Bool("all"))
	}
	if len(hits) == 0 {
		if !cmd.Bool("json") { // the empty array is the answer
			asked := searchAsked{all: cmd.Bool("all"), archived: cmd.Bool("archived"), bounded: cmd.String("since") != "" || cmd.String("until") != ""}
			lines := noHits(ext, asked)
			if why := noBottle(ctx, ix, d); why != "" {
				lines = []string{"no hits: " + why}
			}
			for _, line := range lines { // the answer, said as everything on stderr is
				fmt.Fprintln(cmd.Root().ErrWriter, "bottled: "+line)
			}
		}
		return exitError{code: exitFailed}
	}
	return nil
}

// noBottle says why there is no bottle at all to search, "" when there
// is one: then what the search covered says the rest. Sessions without a
// bottle are none of the index's, so that no session was started in a
// directory is not the index's to say when it holds nothing.
func noBottle(ctx context.Context, ix *index.Index, d dirs) string {
	if n, err := ix.CountSessions(ctx, index.Scope{Archived: true}); err != nil || n > 0 {
		return ""
	}
	dir := bottles.BottlesDir(d.data)
	if info, err := os.Lstat(dir); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		to, _ := os.Readlink(dir)
		return fmt.Sprintf("%s (to %s) %v", dir, to, safefile.ErrLinkedDir)
	}
	return noBottleYet(d)
}

// noBottleYet says that the bottles directory holds no bottle, and which
// commands make them, with the directories this command was given.
func noBottleYet(d dirs) string {
	return fmt.Sprintf("there is no bottle in %s yet: %s (the daemon) renders every session's, %s one",
		bottles.BottlesDir(d.data), d.command("run"), d.command("render", "ID"))
}

// archivedFlag and limitFlag are the flags of a search's or a list's
// scope that workScope reads besides --all, which each says in its own
// words.
func archivedFlag() cli.Flag {
	return &cli.BoolFlag{Name: "archived", Usage: "include sessions cleared with /clear"}
}

// limitFlag is --limit: at most value of what by default.
func limitFlag(value int, what string) cli.Flag {
	return &cli.IntFlag{Name: "limit", Value: value, Usage: fmt.Sprintf("at most `N` %s (up to %d)", what, index.MaxLimit)}
}

// workScope is the directories and the scope of a search or a list from
// the command's flags: the working directory's project, or every project
// with --all; cleared sessions with --archived; --limit results, which
// must be from 1 to index.MaxLimit.
func workScope(cmd *cli.Command) (dirs, index.Scope, error) {
	if cmd.Int("limit") < 1 || cmd.Int("limit") > index.MaxLimit {
		return dirs{}, index.Scope{}, usagef("--limit must be from 1 to %d", index.MaxLimit)
	}
	d, err := dirsOf(cmd)
	if err != nil {
		return d, index.Scope{}, err
	}
	scope := index.Scope{Archived: cmd.Bool("archived"), Limit: cmd.Int("limit")}
	if !cmd.Bool("all") {
		if scope.Project, err = os.Getwd(); err != nil {
			return d, scope, err
		}
	}
	return d, scope, nil
}

// searchBuildFor bounds how long a search that finds the index unbuilt
// (or its build left unfinished, with no process at it) spends building
// before it answers from the newest sessions indexed so far: long enough
// for a few hundred MB of bottles, short of a wait people give up on. What
// it built is kept; the next search, "bottled index" or the daemon goes on.
const searchBuildFor = 3 * time.Second

// snippetWidth bounds a snippet in the human output, in terminal columns:
// one terminal line with the columns before it. The snippet is cut around
// its match, which a cut from its start can drop (CJK text takes two
// columns a character).
const snippetWidth = 90

func writeHits(cmd *cli.Command, hits []index.Hit, all bool) {
	if len(hits) == 0 {
		return // runSearch says what was searched
	}
	tw := tabwriter.NewWriter(cmd.Root().Writer, 0, 0, 2, ' ', 0)
	head := "WHEN\tWHO\tSESSION\tLINE\t"
	if all {
		head += "PROJECT\t"
	}
	fmt.Fprintln(tw, head+"TEXT")
	for _, h := range hits {
		when := stamp(h.Time)
		session := h.Session
		if h.Archived {
			session += " (cleared)"
		}
		snip := textcut.Window(h.Snippet, h.Match[0], h.Match[1], snippetWidth, textcut.Columns)
		row := fmt.Sprintf("%s\t%s\t%s\t%d\t", when, h.Kind, session, h.Line)
		if all {
			row += h.Project + "\t"
		}
		fmt.Fprintln(tw, row+snip)
	}
	tw.Flush()
}

// openIndex opens the search index, saying on stderr when it has to be
// built first (for at most buildFor, 0 to the end; the newest sessions
// first), or builds it anew (rebuild).
func openIndex(ctx context.Context, cmd *cli.Command, d dirs, buildFor time.Duration, rebuild bool) (*index.Index, error) {
	opts := index.Options{Location: time.Local, BuildFor: buildFor, Rebuild: rebuild, Progress: progressPrinter(cmd.Root().ErrWriter, time.Now)}
	if !rebuild {
		opts.Building = func() {
			fmt.Fprintf(cmd.Root().ErrWriter, "bottled: building the search index from %s (once), the newest sessions first…\n", d.data)
		}
	}
	waited := false
	opts.Waiting = func() {
		waited = true
		fmt.Fprintln(cmd.Root().ErrWriter, "bottled: another process (the daemon?) is building the search index; waiting for it… (bottled status says how far it got)")
	}
	ix, err := index.Open(ctx, d.data, opts)
	if err != nil && stopped(ctx, err) {
		return nil, buildInterrupted(ctx, d, rebuild, waited)
	}
	return ix, err
}

// progressEvery is how often a long build or sync of the index says how
// far it got: a quick one says nothing.
const progressEvery = 2 * time.Second

// progressPrinter returns an index.Options.Progress that prints how far
// the index got every progressEvery, by the clock now, and, once it said
// something, when every bottle is in (a build then merges what it wrote,
// which takes a few more seconds).
func progressPrinter(w io.Writer, now func() time.Time) func(done, total int64) {
	next := now().Add(progressEvery)
	said := false
	return func(done, total int64) {
		switch now := now(); {
		case done >= total && said:
			fmt.Fprintf(w, "bottled: indexed all %s of bottles; finishing…\n", size(total))
		case done < total && now.After(next):
			fmt.Fprintf(w, "bottled: indexed %s of bottles…\n", sizeOf(done, total))
			next, said = now.Add(progressEvery), true
		}
	}
}
