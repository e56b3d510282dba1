package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/standin"
	"github.com/bottled-dev/bottled/internal/waitfor"
	"github.com/bottled-dev/bottled/sources"
)

// userRecorded reports whether transcript holds a user record whose
// message is text.
func userRecorded(transcript, text string) bool {
	for line := range strings.Lines(transcript) {
		var r struct {
			Type    string `json:"type"`
			Message struct {
				Content any `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(line), &r) == nil && r.Type == "user" && r.Message.Content == text {
			return true
		}
	}
	return false
}

// reply answers every turn with a fixed text.
func reply(text string) standin.Script {
	return func(*standin.Request) standin.Answer { return standin.Answer{Text: text} }
}

// turnsSince returns the main-loop requests recorded after the first n
// requests.
func (w *world) turnsSince(n int) []*standin.Request {
	return standin.Turns(w.api.Since(n))
}

// oneTurn runs `claude -p args…` and returns the one main-loop request it
// made.
func (w *world) oneTurn(args ...string) (*standin.Request, claudeRun) {
	w.t.Helper()
	n := w.api.Count()
	r := w.claudeP(args...)
	turns := w.turnsSince(n)
	if len(turns) != 1 {
		w.t.Fatalf("claude -p %q made %d model requests, want 1", args, len(turns))
	}
	return turns[0], r
}

// newSession runs the first turn of a new session, prompt, and returns
// the session's id.
func (w *world) newSession(prompt string) string {
	w.t.Helper()
	id := newSessionID()
	w.oneTurn(prompt, "--session-id", id)
	return id
}

// settled waits until the daemon's bottle of the session holds text.
func (w *world) settled(id string, texts ...string) string {
	w.t.Helper()
	return w.waitBottle(id, fmt.Sprintf("the bottle of %s shows %q", id, texts), func(b string) bool {
		for _, s := range texts {
			if !strings.Contains(b, s) {
				return false
			}
		}
		return true
	})
}

func TestStartupAndResume(t *testing.T) {
	t.Parallel()
	w := newWorld(t, reply("Reply one: the plan is to refactor the parser."))
	id := newSessionID()

	// 1. startup: nothing injected; the daemon bottles prompt and reply.
	req, r := w.oneTurn("Refactor the parser, please.", "--session-id", id)
	if n := pointers(req); n != 0 {
		t.Errorf("startup request carries %d pointers, want 0", n)
	}
	if got := hookTimes(r.debug); len(got) != 0 {
		t.Errorf("SessionStart hooks ran at startup: %v", got)
	}
	w.settled(id, "Refactor the parser, please.", "Reply one: the plan is to refactor the parser.")

	// 2. resume of a session never compacted: Claude Code loaded the whole
	// conversation verbatim, so no pointer.
	w.api.SetScript(reply("Reply two."))
	req, r = w.oneTurn("Go on.", "--resume", id)
	if n := pointers(req); n != 0 {
		t.Errorf("resume of a never-compacted session: the request carries %d pointers, want 0", n)
	}
	if !strings.Contains(r.debug, "SessionStart:resume") {
		t.Errorf("the resume hook did not run:\n%s", hookTimes(r.debug))
	}
	w.settled(id, "Go on.", "Reply two.")
}

// TestToolTurn: a turn that runs a command keeps the command in the
// bottle's trail, and neither its output nor the rest of its input.
func TestToolTurn(t *testing.T) {
	t.Parallel()
	const secretOutput = "tool-output-7f3a9c"
	// The command prints the marker without spelling it.
	const command = `printf '%s-%s\n' tool-output 7f3a9c`
	w := newWorld(t, func(r *standin.Request) standin.Answer {
		if u := r.LastUser(); u != nil {
			for _, b := range u.Blocks {
				if b.Type == "tool_result" {
					return standin.Answer{Text: "The command ran; all is well."}
				}
			}
		}
		return standin.Answer{Text: "Let me run it.", Tool: &standin.ToolUse{Name: "Bash", Input: map[string]any{
			"command": command, "description": "Print a marker",
		}}}
	})
	id := newSessionID()
	n := w.api.Count()
	w.claudeP("Run the marker command.", "--session-id", id, "--allowedTools", "Bash")
	turns := w.turnsSince(n)
	if len(turns) != 2 {
		t.Fatalf("%d model requests, want 2 (the tool call and its result)", len(turns))
	}
	results := turns[1].ToolResults()
	if len(results) != 1 || results[0].IsError || !strings.Contains(results[0].Text, secretOutput) {
		t.Fatalf("the Bash tool did not run as scripted: %+v", results)
	}
	b := w.settled(id, "Run the marker command.", "Let me run it.", "The command ran; all is well.")
	for _, tool := range []string{secretOutput, "tool_use", "Print a marker"} {
		if strings.Contains(b, tool) {
			t.Errorf("the bottle shows tool traffic %q:\n%s", tool, b)
		}
	}
	if !strings.Contains(b, "*Did:*\n- ran `"+command+"`\n") {
		t.Errorf("the bottle's trail does not name the command:\n%s", b)
	}
}

func TestManualCompactAndResume(t *testing.T) {
	t.Parallel()
	w := newWorld(t, reply("First answer, verbatim."))
	id := w.newSession("Start the work.")
	w.api.SetScript(reply("Second answer."))
	w.oneTurn("Keep going.", "--resume", id)

	// 4. /compact, then a turn: exactly one pointer, naming the bottle.
	w.claudeP("/compact", "--resume", id)
	w.api.SetScript(reply("Third answer, after the compaction."))
	req, _ := w.oneTurn("What next?", "--resume", id)
	onePointer(t, "after /compact", req)
	path := w.bottlePath(id)
	if !strings.Contains(req.AllText(), path) {
		t.Errorf("the pointer does not name the bottle %s", path)
	}
	b := w.settled(id, "compacted (manual)", "Third answer, after the compaction.")
	if strings.Index(b, "compacted (manual)") > strings.Index(b, "Third answer") {
		t.Errorf("the compaction is not marked before the turn that followed it:\n%s", b)
	}

	// 5. resume after that: still exactly one pointer.
	w.api.SetScript(reply("Fourth answer."))
	req, _ = w.oneTurn("And now?", "--resume", id)
	onePointer(t, "resumed after a compaction,", req)
	req, _ = w.oneTurn("Once more.", "--resume", id)
	onePointer(t, "resumed again after a compaction,", req)
}

// TestCompactHookKeepsFreshBottle: the /compact that headless Claude Code
// enqueues in the transcript before compacting is not content, so the
// compact hook points to the bottle it finds instead of rendering it
// again. No daemon here, which would re-render before the hook runs.
func TestCompactHookKeepsFreshBottle(t *testing.T) {
	t.Parallel()
	w := newWorldNoDaemon(t, reply("An answer."))
	id := w.newSession("A task.")
	if out, err := w.bottled("render", id); err != nil {
		t.Fatalf("bottled render: %v\n%s", err, out)
	}
	before := w.bottle(id)
	r := w.claudeP("/compact", "--resume", id)
	if !strings.Contains(w.transcript(id), `"content":"/compact"`) {
		t.Fatalf("Claude Code did not enqueue /compact in the transcript; the test no longer tests anything")
	}
	if !strings.Contains(r.debug, "SessionStart:compact") {
		t.Fatalf("the compact hook did not run:\n%s", hookLog(r.debug))
	}
	if after := w.bottle(id); after != before {
		t.Errorf("the compact hook rendered a bottle that was fresh; it was:\n%s\nnow:\n%s", before, after)
	}
}

func TestAutoCompaction(t *testing.T) {
	t.Parallel()
	// Claude Code takes the first answers' usage for the fixed prefix of
	// every request (system prompt and tools): with one turn reporting a
	// full context, it decides compaction cannot help. So two small turns
	// come first.
	w := newWorld(t, reply("A small answer."))
	id := w.newSession("First small turn.")
	w.oneTurn("Second small turn.", "--resume", id)
	w.api.SetScript(func(*standin.Request) standin.Answer {
		return standin.Answer{Text: "A long answer that fills the context.", InputTokens: 190000}
	})
	w.oneTurn("Fill the context.", "--resume", id)
	w.settled(id, "A long answer that fills the context.")

	w.api.SetScript(reply("Answer after the automatic compaction."))
	// The model takes seconds to summarise, long after Claude Code has
	// written the prompt that triggered the compaction; the stand-in
	// answers at once, and in one run in eight its answer came before
	// that write (Claude Code writes its transcript in batches), and the
	// hook after it read a transcript without the prompt. So it waits for
	// the prompt, as a model's latency would.
	const prompt = "The prompt that triggers compaction."
	w.api.SetBeforeCompaction(func(*standin.Request) {
		if !waitfor.Holds(waitfor.Deadline, func() bool { return userRecorded(w.transcript(id), prompt) }) {
			t.Errorf("the prompt that triggers compaction is not in the transcript %v after the compaction began", waitfor.Deadline)
		}
	})
	n := w.api.Count()
	r := w.run([]string{"CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000"}, "-p", prompt, "--resume", id)
	if r.err != nil {
		t.Fatalf("claude: %v\n%s", r.err, r.stderr)
	}
	reqs := w.api.Since(n)
	compacted := false
	for _, q := range reqs {
		compacted = compacted || q.Kind == standin.KindCompaction
	}
	if !compacted {
		t.Fatalf("Claude Code did not compact automatically: %d requests", len(reqs))
	}
	req, err := lastTurn(reqs)
	if err != nil {
		t.Fatal(err)
	}
	onePointer(t, "after auto-compaction", req)
	if !strings.Contains(req.AllText(), "Current task: The prompt that triggers compaction.") {
		t.Errorf("the pointer's current task is not the prompt that triggered compaction:\n%s", pointerText(req))
	}
	w.settled(id, "compacted (auto)", "Answer after the automatic compaction.")
}

// pointerText is the pointer as the model got it, for failure messages.
func pointerText(r *standin.Request) string {
	all := r.AllText()
	i := strings.Index(all, sources.PointerHeading)
	if i < 0 {
		return "(no pointer)"
	}
	return all[i:min(len(all), i+4000)]
}

// readStep is one Read of the pointer's reading plan.
type readStep struct{ offset, limit int }

var planStep = regexp.MustCompile(`offset (\d+), limit (\d+)`)

// readingPlan returns the Reads the pointer asks for, in order.
func readingPlan(pointer string) []readStep {
	var steps []readStep
	for _, m := range planStep.FindAllStringSubmatch(pointer, -1) {
		o, _ := strconv.Atoi(m[1])
		l, _ := strconv.Atoi(m[2])
		steps = append(steps, readStep{o, l})
	}
	return steps
}

// planLines returns the lines a step was planned for: those of the
// bottle as the hook saw it, from offset to offset+limit, less the slack
// a step reads past its part (the next step's first lines).
func planLines(bottle string, s readStep, last bool) []string {
	lines := strings.Split(strings.TrimSuffix(bottle, "\n"), "\n")
	end := s.offset + s.limit - 1
	if !last {
		end -= slackLines
	}
	var out []string
	for i := s.offset; i <= end && i <= len(lines); i++ {
		out = append(out, lines[i-1])
	}
	return out
}

// Lines of a bottle that a re-render rewrites while the model reads: the
// header's render time, the state line, and the line numbers the outline
// gives.
var (
	headerLine  = regexp.MustCompile(`^project: .* · rendered: `)
	outlineLine = regexp.MustCompile(`^- line \d+ · `)
)

// holdsLine reports whether a Read result (numbered lines) holds line, as
// far as it is the same in every render of the bottle.
func holdsLine(result, line string) bool {
	switch {
	case strings.HasPrefix(line, "<!-- bottled-state "):
		return strings.Contains(result, "\t<!-- bottled-state ")
	case headerLine.MatchString(line):
		return strings.Contains(result, "\t"+line[:headerLine.FindStringIndex(line)[1]])
	case outlineLine.MatchString(line):
		rest := line[outlineLine.FindStringIndex(line)[1]:]
		return regexp.MustCompile(`\t- line \d+ · ` + regexp.QuoteMeta(rest) + `\n`).MatchString(result + "\n")
	}
	return strings.Contains(result, "\t"+line)
}

// slackLines is how far past its part each step of a plan reads
// (inject's slack), so that lines shifted by the daemon's re-render while
// the model reads are still covered.
const slackLines = 40

// plan is what the stand-in, as the model, saw of the pointer: the steps
// and the bottle as it was when the pointer reached the model.
type plan struct {
	steps  []readStep
	bottle string
	// control, when set, is one more Read after the plan's, of the whole
	// bottle with offset and limit: the Read tool must refuse it, which
	// shows that its cap is enforced in these tests.
	control bool
}

// followPlan makes the stand-in, as the model, answer the first request
// after a compaction by reading the bottle step by step as the pointer's
// plan says, then answer in text; it returns the plan it followed, filled
// in once the pointer arrives.
func followPlan(t *testing.T, w *world, id string) *plan {
	p := new(plan)
	next, controlled := 0, false
	w.api.SetScript(func(r *standin.Request) standin.Answer {
		if next == 0 {
			if pointers(r) != 1 {
				return standin.Answer{Text: "no pointer to follow"}
			}
			p.steps = readingPlan(pointerText(r))
			p.bottle = w.bottle(id)
		}
		if next < len(p.steps) {
			s := p.steps[next]
			next++
			return standin.Answer{Tool: &standin.ToolUse{Name: "Read", Input: map[string]any{
				"file_path": w.bottlePath(id), "offset": s.offset, "limit": s.limit,
			}}}
		}
		if p.control && !controlled {
			controlled = true
			return standin.Answer{Tool: &standin.ToolUse{Name: "Read", Input: map[string]any{
				"file_path": w.bottlePath(id), "offset": 1, "limit": strings.Count(p.bottle, "\n"),
			}}}
		}
		return standin.Answer{Text: "I have read the bottle."}
	})
	return p
}

// checkReads checks that every Read of the plan came back without error
// and held the lines it was planned for, and that together they reached
// the bottle's end.
func checkReads(t *testing.T, reqs []*standin.Request, p *plan, lastAssistant string) {
	t.Helper()
	if len(p.steps) == 0 {
		t.Fatal("the pointer has no reading plan")
	}
	turns := standin.Turns(reqs)
	control := 0
	if p.control {
		control = 1
	}
	if len(turns) != len(p.steps)+1+control {
		t.Fatalf("%d model requests for a plan of %d reads", len(turns), len(p.steps))
	}
	if p.control {
		res := turns[len(turns)-1].ToolResults()
		if len(res) == 0 || !strings.Contains(res[len(res)-1].Text, "exceeds maximum allowed tokens") {
			t.Errorf("the Read tool did not refuse a read of the whole bottle: its token cap is not in force here: %+v", res)
		}
	}
	for i, s := range p.steps {
		results := turns[i+1].ToolResults()
		if len(results) == 0 {
			t.Fatalf("read %d (%+v): no tool result", i+1, s)
		}
		res := results[len(results)-1]
		if res.IsError || strings.Contains(res.Text, "haven't granted") || strings.Contains(res.Text, "exceeds maximum") {
			t.Fatalf("read %d (%+v) failed: %.400s", i+1, s, res.Text)
		}
		for _, line := range planLines(p.bottle, s, i == len(p.steps)-1) {
			if !holdsLine(res.Text, line) {
				t.Fatalf("read %d (%+v) lacks the planned line %.120q", i+1, s, line)
			}
		}
	}
	last := turns[len(p.steps)].ToolResults()
	if res := last[len(last)-1]; !strings.Contains(res.Text, lastAssistant) {
		t.Errorf("the last read does not hold the bottle's final assistant message %q", lastAssistant)
	}
	end := p.steps[len(p.steps)-1]
	if lines := strings.Count(p.bottle, "\n"); end.offset+end.limit-1 < lines {
		t.Errorf("the plan stops at line %d of %d", end.offset+end.limit-1, lines)
	}
}

func TestModelReadsSmallBottle(t *testing.T) {
	t.Parallel()
	w := newWorld(t, reply("The small session's last answer."))
	id := w.newSession("A short task.")
	w.settled(id, "The small session's last answer.")
	w.claudeP("/compact", "--resume", id)

	p := followPlan(t, w, id)
	n := w.api.Count()
	w.claudeP("Continue.", "--resume", id) // no permission flags: only what install wrote
	checkReads(t, w.api.Since(n), p, "The small session's last answer.")
}

// denseText is a long answer that tokenises densely: code, log lines and
// non-Latin text, the kinds a characters-per-token estimate gets wrong.
func denseText(turn int) string {
	var b strings.Builder
	for i := range 120 {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "{\"t\":%d,\"i\":%d,\"k\":[%d,%d,%d],\"ok\":true,\"p\":\"/v1/x/%x\"}\n", turn, i, i*7, i*13, i*31, i*977)
		case 1:
			fmt.Fprintf(&b, "2026-11-30T10:%02d:%02d.%03dZ ERR [w%d] 0x%08x != 0x%08x (retry %d/9)\n", i%60, (i*7)%60, i*37%1000, turn, i*2654435761, i*40503, i%9)
		case 2:
			fmt.Fprintf(&b, "第%d轮：解析器在处理嵌套结构时失败，需要重新检查缓冲区边界与错误恢复逻辑。🙂🚀\n", i)
		default:
			fmt.Fprintf(&b, "Это строка номер %d: проверка плотного текста для оценки количества токенов.\n", i)
		}
	}
	return b.String()
}

func TestModelReadsLongBottle(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	id := newSessionID()
	for turn := 1; turn <= 12; turn++ {
		w.api.SetScript(reply(fmt.Sprintf("Answer %d.\n%s", turn, denseText(turn))))
		args := []string{fmt.Sprintf("Task step %d.", turn), "--resume", id}
		if turn == 1 {
			args[1] = "--session-id"
		}
		w.oneTurn(args...)
		if turn%5 == 0 {
			w.claudeP("/compact", "--resume", id)
		}
	}
	last := "The long session's final answer."
	w.api.SetScript(reply(last))
	w.oneTurn("Wrap up.", "--resume", id)
	w.settled(id, last)
	w.claudeP("/compact", "--resume", id)

	p := followPlan(t, w, id)
	p.control = true
	n := w.api.Count()
	w.claudeP("Continue.", "--resume", id)
	if len(p.steps) < 3 {
		t.Errorf("a bottle of %d bytes was read in %d steps; the test wants one several Reads long", len(p.bottle), len(p.steps))
	}
	checkReads(t, w.api.Since(n), p, last)
	t.Logf("plan %v over a bottle of %d lines, %d bytes", p.steps, strings.Count(p.bottle, "\n"), len(p.bottle))
}
