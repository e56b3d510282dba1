package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bottled-dev/bottled/index"
)

// maxHits bounds a search's hits: each costs the model 50–100 tokens.
const maxHits = 50

type searchArgs struct {
	Query    string `json:"query" jsonschema:"words, or a \"quoted phrase\""`
	All      bool   `json:"all,omitempty" jsonschema:"all projects, not just this one"`
	Archived bool   `json:"archived,omitempty" jsonschema:"include cleared sessions"`
	Since    string `json:"since,omitempty" jsonschema:"from: 2026-05-01, 2026-05-01 14:00 or an age (7d)"`
	Until    string `json:"until,omitempty" jsonschema:"before: same forms"`
	Limit    int    `json:"limit,omitempty" jsonschema:"hits (default 10)"`
}

var searchTool = &sdk.Tool{
	Name: "search",
	Description: "Search the bottles (verbatim conversations) of this project's sessions, best matches first. " +
		"Each hit: session, date, who spoke or deed (a file changed, a command run), bottle line, snippet. " +
		"Read around one with read {session, from}.",
}

type sessionsArgs struct {
	All      bool `json:"all,omitempty" jsonschema:"all projects, not just this one"`
	Archived bool `json:"archived,omitempty" jsonschema:"include cleared sessions"`
	Limit    int  `json:"limit,omitempty" jsonschema:"sessions (default 10)"`
}

var sessionsTool = &sdk.Tool{
	Name:        "sessions",
	Description: "List this project's sessions, newest first: id, started, last active, turns, compactions, mode, first prompt.",
}

// scope is the index scope of a search or list.
func (s *Server) scope(all, archived bool, limit int) index.Scope {
	sc := index.Scope{Archived: archived, Limit: min(limit, maxHits)}
	if !all {
		sc.Project = s.cfg.Project
	}
	return sc
}

// scopeName names what a search or list in sc covered: this project (the
// one the server's directory is in, as ext says), or all projects.
func (s *Server) scopeName(sc index.Scope, ext index.Extent) string {
	var where string
	switch {
	case sc.Project == "":
		where = "all projects"
	case ext.InProject:
		where = "this project (" + ext.Project + ")"
	default:
		where = "the sessions under " + ext.Project
	}
	if sc.Archived {
		where += ", cleared sessions included"
	}
	return where
}

// noHits says what a search that found nothing searched, and how to
// widen it.
func (s *Server) noHits(query string, sc index.Scope, args searchArgs, ext index.Extent) string {
	var b strings.Builder
	if sc.Project != "" && !ext.InProject && ext.Sessions == 0 {
		fmt.Fprintf(&b, "No hits for %q here: no session was started in %s, above it or under it", query, ext.Project)
	} else {
		fmt.Fprintf(&b, "No hits for %q in %s: %s", query, s.scopeName(sc, ext), sessionCount(ext.Sessions, "session"))
		if sc.Project != "" && !ext.InProject {
			b.WriteString(" (none was started in it or above it)")
		}
	}
	if ext.Cleared > 0 {
		fmt.Fprintf(&b, ", %s left out", sessionCount(ext.Cleared, "cleared session"))
	}
	bounded := args.Since != "" || args.Until != ""
	if bounded {
		b.WriteString(", since/until applied")
	}
	b.WriteString(".")
	var wider []string
	if !args.All && ext.All > ext.Sessions {
		wider = append(wider, fmt.Sprintf("all:true (every project: %s)", sessionCount(ext.All, "session")))
	}
	if ext.Cleared > 0 {
		wider = append(wider, fmt.Sprintf("archived:true (the %s too)", sessionCount(ext.Cleared, "cleared session")))
	}
	if bounded {
		wider = append(wider, "no since/until")
	}
	if len(wider) > 0 {
		b.WriteString(" Wider: " + strings.Join(wider, ", ") + ".")
	}
	return b.String()
}

// buildNote says how much of the bottles a search or a list covered
// while the index is still being built ("Searched …; search again …"),
// "" when it covered them all.
func buildNote(b *index.BuildState, did, again string) string {
	if b == nil || b.Indexed >= b.Total {
		return ""
	}
	return fmt.Sprintf("%s the newest %d of %s (%d%%): the search index is still being built; %s again later for the rest.\n",
		did, b.Indexed, sessionCount(b.Total, "session"), b.Percent(), again)
}

// sessionCount is "1 session", "3 sessions".
func sessionCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func (s *Server) search(ctx context.Context, _ *sdk.CallToolRequest, args searchArgs) (*sdk.CallToolResult, any, error) {
	sc := s.scope(args.All, args.Archived, args.Limit)
	if err := sc.Bound(args.Since, args.Until, s.cfg.Now(), s.cfg.Location); err != nil {
		return nil, nil, err
	}
	hits, ext, err := fromIndex(ctx, s, sc, func(ix *index.Index) ([]index.Hit, error) {
		hits, err := ix.Search(ctx, args.Query, sc)
		if errors.Is(err, index.ErrNoWords) {
			err = fmt.Errorf("%w: %q", err, args.Query)
		}
		return hits, err
	})
	if err != nil {
		return nil, nil, err
	}
	var out strings.Builder
	out.WriteString(buildNote(ext.Build, "Searched", "search"))
	if len(hits) == 0 {
		out.WriteString(s.noHits(args.Query, sc, args, ext))
		return textResult(out.String()), nil, nil
	}
	fmt.Fprintf(&out, "%d hit(s) for %q in %s, best first:\n", len(hits), args.Query, s.scopeName(sc, ext))
	current := s.current()
	for i, h := range hits {
		fmt.Fprintf(&out, "%d. %s · %s · %s · line %d%s", i+1, h.Session, index.FormatTime(h.Time, s.cfg.Location), h.Kind, h.Line,
			whose(h.Session, current, h.Archived, args.All, h.Project))
		fmt.Fprintf(&out, "\n   %s\n", h.Snippet)
	}
	out.WriteString(`Read around a hit: read {"session":"<id>","from":<line>}` + "\n")
	return textResult(out.String()), nil, nil
}

// fromIndex answers a search or a list: what ask finds in the index, and
// the extent of scope sc it covered, which the answer names.
func fromIndex[T any](ctx context.Context, s *Server, sc index.Scope, ask func(*index.Index) (T, error)) (T, index.Extent, error) {
	var none T
	ix, err := s.index(ctx)
	if err != nil {
		return none, index.Extent{}, err
	}
	found, err := ask(ix)
	if err != nil {
		return none, index.Extent{}, err
	}
	ext, err := ix.Extent(ctx, sc)
	return found, ext, err
}

func (s *Server) sessions(ctx context.Context, _ *sdk.CallToolRequest, args sessionsArgs) (*sdk.CallToolResult, any, error) {
	sc := s.scope(args.All, args.Archived, args.Limit)
	list, ext, err := fromIndex(ctx, s, sc, func(ix *index.Index) ([]index.Session, error) {
		return ix.Sessions(ctx, sc)
	})
	if err != nil {
		return nil, nil, err
	}
	var out strings.Builder
	out.WriteString(buildNote(ext.Build, "Listed", "list"))
	if len(list) == 0 {
		fmt.Fprintf(&out, "No sessions with a bottle in %s.", s.scopeName(sc, ext))
		if !args.All || !args.Archived {
			out.WriteString(" Wider: all:true, archived:true.")
		}
		return textResult(out.String()), nil, nil
	}
	fmt.Fprintf(&out, "%d session(s) of %s, newest first:\n", len(list), s.scopeName(sc, ext))
	current := s.current()
	for _, ses := range list {
		fmt.Fprintf(&out, "- %s · started %s · last %s · %d turn(s) · %d compaction(s) · %s%s",
			ses.ID, index.FormatTime(ses.Started, s.cfg.Location), index.FormatTime(ses.LastActive, s.cfg.Location), ses.Turns, ses.Compactions, ses.Mode,
			whose(ses.ID, current, ses.Archived, args.All, ses.Project))
		if ses.FirstPrompt != "" {
			fmt.Fprintf(&out, "\n  %q", ses.FirstPrompt)
		}
		out.WriteByte('\n')
	}
	return textResult(out.String()), nil, nil
}

// whose is what a hit or a listed session says of its session beyond its
// id: whether it is the one the server runs in or a cleared one, and its
// project when more than this one is shown.
func whose(session, current string, archived, all bool, project string) string {
	var b strings.Builder
	switch {
	case session == current:
		b.WriteString(" · this session")
	case archived:
		b.WriteString(" · cleared")
	}
	if all && project != "" {
		b.WriteString(" · " + project)
	}
	return b.String()
}
