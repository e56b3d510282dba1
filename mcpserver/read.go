package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/textcut"
)

// A read returns at most this much of a bottle. Claude Code caps an MCP
// tool result at 25,000 tokens by default; at a deliberately low 3 bytes
// per token this is about 10,000, a result with room to spare.
const (
	readBytes    = 30 << 10
	clusterSlack = 1 << 10 // bytes past readBytes a line's cut looks at
	readLines    = 800
)

// readArgs are the read tool's arguments.
type readArgs struct {
	Session string `json:"session,omitempty" jsonschema:"session id or its start (default: this session)"`
	Leg     string `json:"leg,omitempty" jsonschema:"\"latest\" or a leg number"`
	From    int    `json:"from,omitempty" jsonschema:"first line to read"`
	To      int    `json:"to,omitempty" jsonschema:"last line to read"`
}

var readTool = &sdk.Tool{
	Name: "read",
	Description: "Read a bottle: a session's verbatim conversation, what was done (files changed, commands run) and observations. " +
		"Without leg or from: its outline, turns and compactions with their lines. " +
		"Each result ends with where to continue.",
}

// shown is the bottle a read shows, its session, and whether it is this
// session's (worked out once per read: finding this session reads the
// disk).
type shown struct {
	*bottles.Current
	session string
	here    bool
}

func (s *Server) read(ctx context.Context, _ *sdk.CallToolRequest, args readArgs) (*sdk.CallToolResult, any, error) {
	current := s.current()
	id, cur, err := s.findBottle(ctx, strings.TrimSpace(args.Session), current)
	if err != nil {
		return nil, nil, err
	}
	b := shown{cur, id, id == current}
	text, err := s.part(b, b.Data, b.State, args)
	if err != nil {
		return nil, nil, err
	}
	return textResult(text), nil, nil
}

// part picks what a read asked for and formats it.
func (s *Server) part(b shown, data []byte, st *render.State, args readArgs) (string, error) {
	ls := render.LinesOf(data)
	n := ls.Count()
	head := s.heading(b, st)
	switch {
	case args.Leg != "" && args.From != 0:
		return "", fmt.Errorf("give leg or from, not both")
	case args.Leg != "":
		k, err := legNumber(args.Leg, len(st.Legs))
		if err != nil {
			return "", err
		}
		from, to := st.Legs[k-1], n
		if k < len(st.Legs) {
			to = st.Legs[k] - 1
		}
		return head + fmt.Sprintf(" — leg %d of %d", k, len(st.Legs)) + "\n\n" + s.chunk(b, ls, from, to), nil
	case args.From != 0 || args.To != 0:
		from, to := max(args.From, 1), args.To
		if to == 0 || to > n {
			to = n
		}
		if from > n || to < from {
			return "", fmt.Errorf("lines %d–%d are outside the bottle (lines 1–%d)", from, to, n)
		}
		return head + "\n\n" + s.chunk(b, ls, from, to), nil
	}
	return head + "\n\n" + s.outline(b, ls, st), nil
}

// heading names the bottle a result shows.
func (s *Server) heading(b shown, st *render.State) string {
	h := fmt.Sprintf("Bottle of session %s (%s, %d lines", b.session, st.Mode, st.Lines)
	if b.Archived {
		h += ", cleared"
	}
	if b.here {
		h += ", this session"
	}
	return h + ") " + b.Path
}

func legNumber(arg string, legs int) (int, error) {
	if strings.EqualFold(strings.TrimSpace(arg), "latest") {
		return legs, nil
	}
	k, err := strconv.Atoi(strings.TrimSpace(arg))
	if err != nil || k < 1 || k > legs {
		return 0, fmt.Errorf("leg %q: give \"latest\" or a number from 1 to %d", arg, legs)
	}
	return k, nil
}

// outline is the header (without the state line) and the outline, then
// how to read on.
func (s *Server) outline(b shown, ls render.Lines, st *render.State) string {
	var out strings.Builder
	last := min(max(st.Outline[1], 3), ls.Count())
	for n := 1; n <= last; n++ {
		if n == 4 {
			continue // the state line is for programs
		}
		out.Write(ls.Line(n))
	}
	legs := st.Legs
	fmt.Fprintf(&out, "\n— %d line(s), %d leg(s)", ls.Count(), len(legs))
	if len(legs) > 0 {
		fmt.Fprintf(&out, "; the latest starts at line %d. Next: read {%s\"leg\":\"latest\"}", legs[len(legs)-1], s.sessionArg(b))
	}
	out.WriteString(" —\n")
	return out.String()
}

// chunk is lines from..to, as many as fit one result, then where to
// continue.
func (s *Server) chunk(b shown, ls render.Lines, from, to int) string {
	var out strings.Builder
	size, n := 0, from
	for ; n <= to && n-from < readLines; n++ {
		line := ls.Line(n)
		if size+len(line) > readBytes {
			if n > from {
				break
			}
			// One line bigger than a result: its start, and where the
			// rest is.
			// Not inside a character: the one that straddles the budget
			// is looked at whole (unless it is longer than clusterSlack).
			cut := textcut.Head(string(line[:min(len(line), readBytes+clusterSlack)]), readBytes, textcut.Bytes)
			out.WriteString(cut)
			fmt.Fprintf(&out, "\n[line %d goes on for %d more bytes; the whole line is in %s]\n", n, len(line)-len(cut), b.Path)
			n++
			break
		}
		out.Write(line)
		size += len(line)
	}
	last := n - 1
	if text := out.String(); text != "" && text[len(text)-1] != '\n' {
		out.WriteByte('\n') // the bottle's last line has no newline
	}
	total := ls.Count()
	switch {
	case last >= total:
		fmt.Fprintf(&out, "\n— lines %d–%d; end of the bottle —\n", from, last)
	case last >= to:
		fmt.Fprintf(&out, "\n— lines %d–%d of %d; more: read {%s\"from\":%d} —\n", from, last, total, s.sessionArg(b), last+1)
	default:
		more := fmt.Sprintf("\"from\":%d", last+1)
		if to < total {
			more += fmt.Sprintf(",\"to\":%d", to)
		}
		fmt.Fprintf(&out, "\n— lines %d–%d of %d; continue: read {%s%s} —\n", from, last, total, s.sessionArg(b), more)
	}
	return out.String()
}

// sessionArg is the session argument a continuation needs: none for this
// session.
func (s *Server) sessionArg(b shown) string {
	if b.here {
		return ""
	}
	return fmt.Sprintf("\"session\":%q,", b.session)
}

func textResult(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}
