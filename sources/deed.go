package sources

import "strings"

// DeedKind says what kind of thing a tool call did, which decides how a
// bottle's trail names it.
type DeedKind uint8

const (
	// DeedOther is any other tool, named by Tool (a Skill's Target is
	// the skill's name).
	DeedOther DeedKind = iota
	// DeedEdit changed part of a file (Edit, MultiEdit, NotebookEdit).
	DeedEdit
	// DeedWrite wrote a whole file (Write); Created says whether it was new.
	DeedWrite
	// DeedCommand ran a shell command (Bash, or PowerShell on Windows);
	// Target is the command.
	DeedCommand
	// DeedTask started a subagent (Task, Agent); Target is its
	// description, Agent its type. What the subagent did is its own
	// transcript's: the task stands for it.
	DeedTask
	// DeedFetch fetched a URL (WebFetch).
	DeedFetch
	// DeedWebSearch searched the web (WebSearch); Target is the query.
	DeedWebSearch
	// DeedRead read a file (Read); Target is the file.
	DeedRead
	// DeedSearch searched files (Grep, Glob, LS); Target is the pattern
	// or directory.
	DeedSearch
	// DeedMCP called an MCP server's tool; Tool is its mcp__… name.
	DeedMCP
)

// Deed is one tool call of the assistant's, as its tool_use block and
// the result's status record it: what the tool was asked to do, never
// what it answered. Target is the tool's main argument, cut at the end
// of the word that passes its first targetMax bytes (see argument).
type Deed struct {
	Kind   DeedKind `json:"kind"`
	Tool   string   `json:"tool"`
	Target string   `json:"target,omitempty"`
	Agent  string   `json:"agent,omitempty"`
	// Added and Removed count the lines a file change added and removed,
	// when Lines says they are known (from the edit's old and new text,
	// with the lines both share at their start and end left out).
	Added   int  `json:"added,omitempty"`
	Removed int  `json:"removed,omitempty"`
	Lines   bool `json:"lines,omitempty"`
	// Created marks a Write that made a new file: its result says so, or,
	// when no result says, no earlier tool call of the session touched
	// the path.
	Created bool `json:"created,omitempty"`
	// Failed marks a call whose result was an error (for Bash, a
	// non-zero exit status).
	Failed bool `json:"failed,omitempty"`

	call int // index of its tool_use id in the entry's ToolUseIDs
}

// targetMax bounds the bytes of a tool argument kept: a trail line shows
// the start of a command, and heredocs make commands of megabytes.
const targetMax = 1024

// toolInput is what a deed needs of a tool_use block's input. The raw
// strings alias the line being parsed and are used before it is gone.
type toolInput struct {
	filePath, notebookPath, command, description []byte
	subagentType, url, query, pattern, path      []byte
	skill                                        []byte
	oldString, newString, content, newSource     []byte
	editMode                                     string
	edits                                        [][2][]byte // MultiEdit: old and new strings
}

// readToolInput reads the fields of a tool_use input that deeds use.
func readToolInput(s *scanner) *toolInput {
	in := &toolInput{}
	ok := s.objectOrSkip(func(k []byte) {
		switch string(k) {
		case "file_path":
			in.filePath = rawOrNil(s)
		case "notebook_path":
			in.notebookPath = rawOrNil(s)
		case "command":
			in.command = rawOrNil(s)
		case "description":
			in.description = rawOrNil(s)
		case "subagent_type":
			in.subagentType = rawOrNil(s)
		case "url":
			in.url = rawOrNil(s)
		case "query":
			in.query = rawOrNil(s)
		case "pattern":
			in.pattern = rawOrNil(s)
		case "path":
			in.path = rawOrNil(s)
		case "skill":
			in.skill = rawOrNil(s)
		case "old_string":
			in.oldString = rawOrNil(s)
		case "new_string":
			in.newString = rawOrNil(s)
		case "content":
			in.content = rawOrNil(s)
		case "new_source":
			in.newSource = rawOrNil(s)
		case "edit_mode":
			in.editMode = s.str()
		case "edits":
			if s.peek() != '[' {
				return
			}
			s.array(func() {
				var e [2][]byte
				if s.objectOrSkip(func(k []byte) {
					switch string(k) {
					case "old_string":
						e[0] = rawOrNil(s)
					case "new_string":
						e[1] = rawOrNil(s)
					}
				}) {
					in.edits = append(in.edits, e)
				}
			})
		}
	})
	if !ok {
		return nil
	}
	return in
}

// rawOrNil is the raw string at the cursor, or nil for another value.
func rawOrNil(s *scanner) []byte {
	if s.peek() != '"' {
		s.skip()
		return nil
	}
	return s.rawString()
}

// makeDeed turns a tool_use block into a deed.
func makeDeed(name string, in *toolInput) *Deed {
	if in == nil {
		in = &toolInput{}
	}
	d := &Deed{Tool: name}
	switch name {
	case "Edit":
		d.Kind, d.Target = DeedEdit, argument(in.filePath)
		d.Added, d.Removed = lineChange(in.oldString, in.newString)
		d.Lines = true
	case "MultiEdit":
		d.Kind, d.Target = DeedEdit, argument(in.filePath)
		for _, e := range in.edits {
			a, r := lineChange(e[0], e[1])
			d.Added, d.Removed = d.Added+a, d.Removed+r
		}
		d.Lines = true
	case "NotebookEdit":
		d.Kind, d.Target = DeedEdit, argument(in.notebookPath)
		if in.editMode != "delete" {
			d.Added, d.Lines = rawLines(in.newSource), true
		}
	case "Write":
		d.Kind, d.Target = DeedWrite, argument(in.filePath)
		d.Added, d.Lines = rawLines(in.content), in.content != nil
	case "Bash", "PowerShell":
		d.Kind, d.Target = DeedCommand, argument(in.command)
	case "Task", "Agent":
		d.Kind, d.Target, d.Agent = DeedTask, argument(in.description), argument(in.subagentType)
	case "WebFetch":
		d.Kind, d.Target = DeedFetch, argument(in.url)
	case "WebSearch":
		d.Kind, d.Target = DeedWebSearch, argument(in.query)
	case "Read":
		d.Kind, d.Target = DeedRead, argument(in.filePath)
	case "Grep", "Glob":
		d.Kind, d.Target = DeedSearch, argument(in.pattern)
	case "LS":
		d.Kind, d.Target = DeedSearch, argument(in.path)
	case "Skill":
		d.Target = argument(in.skill)
	default:
		if strings.HasPrefix(name, "mcp__") {
			d.Kind = DeedMCP
		}
	}
	return d
}

// wordMax is how far past targetMax an argument is kept to end the word
// that the cut falls in: a credential the cut split would leave its
// head in the bottle, too short for redaction to tell what it is, while
// whole it is redacted (a context's value is at most 8 KiB). A word
// longer than that is left out whole.
const wordMax = 16 << 10

// argument decodes a raw JSON string, cut when it is longer than
// targetMax bytes: at the first blank (a space, a tab or an escaped
// newline) after its first targetMax bytes, or, when none comes within
// wordMax more, at the last blank before them; never inside an escape.
func argument(raw []byte) string {
	if len(raw) <= targetMax {
		return unescape(raw)
	}
	lastBlank := 0
	for i := 0; i < len(raw); {
		step, blank := rawChar(raw, i)
		switch {
		case i+step > len(raw) || blank && i >= targetMax:
			return strings.ToValidUTF8(unescape(raw[:i]), "")
		case i+step > targetMax+wordMax && lastBlank == 0:
			return "…" // one word too long to keep any of: that it was cut shows
		case i+step > targetMax+wordMax:
			return strings.ToValidUTF8(unescape(raw[:lastBlank]), "")
		case blank:
			lastBlank = i
		}
		i += step
	}
	return unescape(raw)
}

// rawChar returns the length of the character of a raw JSON string at
// i (an escape is one), and whether it is a blank.
func rawChar(raw []byte, i int) (int, bool) {
	switch raw[i] {
	case ' ', '\t':
		return 1, true
	case '\\':
		if i+1 < len(raw) {
			switch raw[i+1] {
			case 'n', 'r', 't':
				return 2, true
			case 'u':
				return 6, false
			}
		}
		return 2, false
	}
	return 1, false
}

// rawLines counts the lines of a raw JSON string: its newline escapes,
// and one more for a last line without a newline.
func rawLines(raw []byte) int {
	n := 0
	forLines(raw, func([]byte) { n++ })
	return n
}

// forLines calls line for each line of a raw JSON string, split at its
// newline escapes; a string that ends with a newline has no empty last
// line, and the empty string has none.
func forLines(raw []byte, line func([]byte)) {
	start := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] == 'n' {
			line(raw[start:i])
			start = i + 2
		}
		i++
	}
	if start < len(raw) {
		line(raw[start:])
	}
}

// lineChange counts the lines an edit from old to new adds and removes,
// leaving out the lines both start and end with: an edit quotes lines
// around its change to place it.
func lineChange(old, new []byte) (added, removed int) {
	var a, b [][]byte
	forLines(old, func(l []byte) { a = append(a, l) })
	forLines(new, func(l []byte) { b = append(b, l) })
	for len(a) > 0 && len(b) > 0 && string(a[0]) == string(b[0]) {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && string(a[len(a)-1]) == string(b[len(b)-1]) {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	return len(b), len(a)
}

// toolResult flags, from a tool_result block and the record's
// toolUseResult.
const (
	resultFailed  uint8 = 1 << iota // is_error
	resultCreated                   // toolUseResult.type "create"
	resultTyped                     // toolUseResult has a type, so resultCreated is known
)

// fileDeed reports whether a deed names a file the session touched.
func fileDeed(k DeedKind) bool { return k == DeedEdit || k == DeedWrite || k == DeedRead }
