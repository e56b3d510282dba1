package bottles

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/growfile"
	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// TestWriteRefusesCrossedRender reproduces the race in which a render that
// read an older transcript but newer claude-mem rows replaced a bottle made
// from a newer transcript, so that a turn vanished from the bottle: two
// renders, each of which read one source further than the other, are
// written one after the other. The second must not replace the first;
// Write says so (Crossed), and a render from sources read now, which
// cover both, replaces it.
func TestWriteRefusesCrossedRender(t *testing.T) {
	w := memwriter.Require(t)
	root := t.TempDir()
	data := filepath.Join(root, "data")
	dir := BottlesDir(data)
	dbPath := sources.ClaudeMemFile(data)
	const sid = "c7055ed0-0000-4000-8000-000000000001"
	path := filepath.Join(root, "claude", "projects", "-p", sid+".jsonl")
	c := &rdbChain{sid: sid}
	rdbWriteFile(t, path, rdbUser(c, "2026-11-30T10:00:00.000Z", "CROSS-P1 fix the retry loop")+
		rdbAssistant(c, "2026-11-30T10:00:05.000Z", "msg_1", rdbToolUse("toolu_1", "Bash", map[string]any{"command": "go test"}))+
		rdbToolResult(c, "2026-11-30T10:00:06.000Z", "toolu_1", "ok")+
		rdbAssistant(c, "2026-11-30T10:00:07.000Z", "msg_2", rdbText("CROSS-A1 Fixed.")))
	w.Write(t, dbPath,
		memwriter.Op{"op": "session", "content": sid, "project": "p", "prompt": "CROSS-P1 fix the retry loop"},
		memwriter.Op{"op": "register", "content": sid, "memory": "mem-" + sid},
		memwriter.Op{"op": "prompt", "content": sid, "number": 1, "text": "CROSS-P1 fix the retry loop"},
		memwriter.Op{"op": "observation", "content": sid, "prompt_number": 1, "type": "change", "title": "CROSS-OBS1 ran the tests", "narrative": "All passed."})
	db, err := sources.OpenClaudeMemDB(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	memory := func() *sources.ClaudeMem {
		m, err := db.Session(t.Context(), sid)
		if err != nil || m == nil {
			t.Fatalf("read memory: %v", err)
		}
		return m
	}
	transcript := func() *sources.Transcript {
		tr, err := sources.ReadTranscript(sid, path)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	bottle := func(tr *sources.Transcript, m *sources.ClaudeMem) *render.Bottle {
		b, err := render.Render(render.Input{SessionID: sid, Spine: sources.BuildSpine(sid, []*sources.Transcript{tr}), ClaudeMem: m, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// One render reads the database, then the transcript after a turn was
	// appended; the other reads the transcript before that turn, then the
	// database after claude-mem wrote another observation.
	m0, t0 := memory(), transcript()
	growfile.Append(t, path, rdbUser(c, "2026-11-30T10:01:00.000Z", "CROSS-P2 now add a test")+
		rdbAssistant(c, "2026-11-30T10:01:05.000Z", "msg_3", rdbText("CROSS-A2 Added.")))
	t1 := transcript()
	w.Write(t, dbPath, memwriter.Op{"op": "observation", "content": sid, "prompt_number": 1, "type": "change", "title": "CROSS-OBS2 checked coverage", "narrative": "Fine."})
	m1 := memory()
	newerTranscript, newerMemory := bottle(t1, m0), bottle(t0, m1)

	if got, err := storeAt(dir).Write(newerTranscript); err != nil || got != Written {
		t.Fatalf("first Write = %v, %v", got, err)
	}
	got, err := storeAt(dir).Write(newerMemory)
	if err != nil {
		t.Fatal(err)
	}
	onDisk, _ := os.ReadFile(BottlePath(dir, sid))
	if !bytes.Contains(onDisk, []byte("CROSS-P2")) {
		t.Fatalf("a bottle from an older transcript replaced one from a newer transcript (Write = %v): the turn CROSS-P2 vanished", got)
	}
	if got != Crossed {
		t.Errorf("Write = %v, want %v", got, Crossed)
	}

	// Sources read now cover both bottles.
	both := bottle(transcript(), memory())
	if got, err := storeAt(dir).Write(both); err != nil || got != Written {
		t.Fatalf("Write of a render covering both = %v, %v; want written", got, err)
	}
	onDisk, _ = os.ReadFile(BottlePath(dir, sid))
	for _, want := range []string{"CROSS-P2", "CROSS-OBS1", "CROSS-OBS2"} {
		if !bytes.Contains(onDisk, []byte(want)) {
			t.Errorf("the bottle lacks %s", want)
		}
	}
}
