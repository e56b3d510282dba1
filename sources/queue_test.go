package sources

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/synth"
)

// TestSteeringQueue replays interleavings of Claude Code's input queue:
// typed messages, task notifications, commands, and the dequeue, remove
// and popAll operations that consume them. A steering message is never
// lost, never moved to another message's place, and never doubled.
func TestSteeringQueue(t *testing.T) {
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	tick := func() time.Time { at = at.Add(time.Second); return at }
	q := func(op, content string) string { return synth.Rec{Session: "s", At: tick()}.Queue(op, content) }
	e := func(content string) string { return q("enqueue", content) }
	r := func(content string) string { return q("remove", content) }
	d := func() string { return q("dequeue", "") }
	// soon is an enqueue stamped just after the record before it, written
	// after an operation that consumed it (Claude Code can swap the two).
	soon := func(content string) string {
		at = at.Add(5 * time.Millisecond)
		return synth.Rec{Session: "s", At: at}.Queue("enqueue", content)
	}
	// stale is an enqueue stamped a minute after the record before it:
	// written before operations that came earlier than it.
	stale := func(content string) string {
		return synth.Rec{Session: "s", At: at.Add(time.Minute)}.Queue("enqueue", content)
	}
	user := func(uuid, parent, text string) string {
		return synth.Rec{Session: "s", UUID: uuid, Parent: parent, At: tick()}.User(text)
	}
	said := func(uuid, parent, text string) string {
		return synth.Rec{Session: "s", UUID: uuid, Parent: parent, At: tick()}.Assistant("m-"+uuid, text)
	}
	queuedCommand := func(uuid, parent, text, origin string) string {
		return fmt.Sprintf(`{"type":"attachment","uuid":%q,"parentUuid":%q,"sessionId":"s","timestamp":%q,`+
			`"attachment":{"type":"queued_command","prompt":%q,"commandMode":"prompt","origin":{"kind":%q}}}`+"\n",
			uuid, parent, tick().Format("2006-01-02T15:04:05.000Z"), text, origin)
	}
	const note = "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>"
	const jsonNote = `{"task_id":"c19e044","description":"Watch the build","task_type":"local_bash"}`
	start := user("u1", "", "P1") + said("a1", "u1", "working")
	tests := []struct {
		name string
		data string
		want []string // spine texts; a steering message is marked "~", one never delivered "!"
	}{
		{"typed, then removed", e("STEER") + r("") + said("a2", "a1", "done"),
			[]string{"P1", "working", "~STEER", "done"}},
		{"a notification never consumed does not take the typed message's remove",
			e(note) + e("STEER") + r("") + said("a2", "a1", "done"),
			[]string{"P1", "working", "~STEER", "done"}},
		{"two typed behind an unconsumed notification keep their places",
			e(note) + e("STEER-1") + r("") + said("a2", "a1", "one") + e("STEER-2") + r("") + said("a3", "a2", "two"),
			[]string{"P1", "working", "~STEER-1", "one", "~STEER-2", "two"}},
		{"a notification removed after the typed message",
			e(note) + e("STEER") + r("") + r("") + said("a2", "a1", "done"),
			[]string{"P1", "working", "~STEER", "done"}},
		{"a JSON task notification is not a message", e(jsonNote) + r("") + said("a2", "a1", "done"),
			[]string{"P1", "working", "done"}},
		{"a command waits: the remove takes the typed message", e("/context") + e("STEER") + r("") + said("a2", "a1", "done"),
			[]string{"P1", "working", "~STEER", "done"}},
		{"a command removed is not a message", e("/mcp") + r("") + said("a2", "a1", "done"),
			[]string{"P1", "working", "done"}},
		{"dequeued and run as the next prompt renders once", e("NEXT") + d() + user("u2", "a1", "NEXT") + said("a2", "u2", "ok"),
			[]string{"P1", "working", "NEXT", "ok"}},
		{"a dequeue starts the typed message before a notification",
			e(note) + e("NEXT") + d() + user("u2", "a1", "NEXT") + e("STEER") + r("") + said("a2", "u2", "ok"),
			[]string{"P1", "working", "NEXT", "~STEER", "ok"}},
		{"removed and then sent as a prompt renders once", e("AGAIN") + r("") + user("u2", "a1", "AGAIN") + said("a2", "u2", "ok"),
			[]string{"P1", "working", "AGAIN", "ok"}},
		{"the same text sent much later still counts both times",
			e("yes") + r("") + said("a2", "a1", "ok") + user("u2", "a2", "other") + user("u3", "u2", "yes") + said("a3", "u3", "fine"),
			[]string{"P1", "working", "~yes", "ok", "other", "yes", "fine"}},
		{"popAll takes typed messages back", e("POPPED") + q("popAll", "POPPED") + user("u2", "a1", "edited") + said("a2", "u2", "ok"),
			[]string{"P1", "working", "edited", "ok"}},
		{"popAll leaves notifications queued", e(note) + e("POPPED") + q("popAll", "") + e("STEER") + r("") + said("a2", "a1", "ok"),
			[]string{"P1", "working", "~STEER", "ok"}},
		{"a remove with its text takes that entry, out of order",
			e("STEER-A") + e("STEER-B") + r("STEER-B") + said("a2", "a1", "b") + r("") + said("a3", "a2", "a"),
			[]string{"P1", "working", "~STEER-B", "b", "~STEER-A", "a"}},
		{"a remove with its text stands for itself when the queued copy differs",
			e(`<cross-session-message from="x" hop-chain="1">hi</cross-session-message>`) + e("STEER") +
				r(`<cross-session-message from="x">hi</cross-session-message>`) + r("STEER") + said("a2", "a1", "ok"),
			[]string{"P1", "working", "~STEER", "ok"}},
		{"a queued_command attachment carries it once", e("STEER") + r("STEER") + queuedCommand("q1", "a1", "STEER", "human") + said("a2", "q1", "ok"),
			[]string{"P1", "working", "~STEER", "ok"}},
		{"typed and never consumed is kept, as not delivered", e("LOST") + said("a2", "a1", "done"),
			[]string{"P1", "working", "!LOST", "done"}},
		{"sent as the next prompt before its remove renders once",
			e("NEXT") + user("u2", "a1", "NEXT") + r("") + said("a2", "u2", "ok"),
			[]string{"P1", "working", "NEXT", "ok"}},
		{"a remove does not take what was enqueued after it", r("") + e("LATER") + said("a2", "a1", "done"),
			[]string{"P1", "working", "!LATER", "done"}},
		{"a remove written just before the enqueue it took delivers it", r("") + soon("SWAPPED") + said("a2", "a1", "done"),
			[]string{"P1", "working", "~SWAPPED", "done"}},
		{"a remove does not take an entry written before it but stamped later", stale("LATE") + r("") + said("a2", "a1", "done"),
			[]string{"P1", "working", "!LATE", "done"}},
		{"another session's message is not the user's",
			e(`<cross-session-message from="x">PEER</cross-session-message>`) + r(`<cross-session-message from="x">PEER</cross-session-message>`) +
				queuedCommand("q1", "a1", `<cross-session-message from="x">PEER</cross-session-message>`, "peer") + said("a2", "q1", "ok"),
			[]string{"P1", "working", "ok"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := spineFromString(t, start+tc.data)
			var got []string
			for _, e := range sp.Entries {
				s := e.Text
				switch {
				case e.Undelivered:
					s = "!" + s
				case e.Steering:
					s = "~" + s
				}
				got = append(got, s)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("spine = %q, want %q", got, tc.want)
			}
		})
	}
}
