package render

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHugeLineCase generates the case described in
// testdata/render/huge-line/README.md (too big to commit): a prompt line
// over 600 KB and a tool result line over 2 MB among ordinary records.
func TestHugeLineCase(t *testing.T) {
	const id = "9b1d6c1e-6a53-4c54-9d0e-4f3f2f6b7a10"
	dir := t.TempDir()
	var lines []string
	parent := ""
	n := 0
	add := func(typ string, fields map[string]any) {
		n++
		uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
		r := map[string]any{"type": typ, "uuid": uuid, "sessionId": id, "cwd": "/home/dev/importer", "version": "2.1.114",
			"timestamp": fmt.Sprintf("2026-04-20T07:%02d:%02d.000Z", n/60, n%60), "isSidechain": false, "userType": "external"}
		if parent != "" {
			r["parentUuid"] = parent
		} else {
			r["parentUuid"] = nil
		}
		for k, v := range fields {
			r[k] = v
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
		parent = uuid
	}
	user := func(text string) {
		add("user", map[string]any{"message": map[string]any{"role": "user", "content": text}})
	}
	assistant := func(msg string, block map[string]any) {
		add("assistant", map[string]any{"message": map[string]any{"id": msg, "role": "assistant", "type": "message", "content": []any{block}}})
	}
	user("HUGE-P1 the importer chokes on this log, see below")
	assistant("msg_1", map[string]any{"type": "text", "text": "HUGE-A1 Let me look at the log."})
	var log strings.Builder
	log.WriteString("HUGE-PROMPT-START\n")
	for i := 0; log.Len() < 640<<10; i++ {
		fmt.Fprintf(&log, "2026-04-20T07:15:00Z WARN importer: row %d skipped (bad date)\n", i)
	}
	log.WriteString("HUGE-PROMPT-END")
	user(log.String())
	assistant("msg_2", map[string]any{"type": "tool_use", "id": "toolu_big", "name": "Read", "input": map[string]any{"file_path": "/var/log/importer.log"}})
	out := "HUGE-TOOL-OUTPUT-SECRET\n" + strings.Repeat("2026-04-20 row data that the bottle must not show\n", 1100<<10/52) + "HUGE-TOOL-OUTPUT-SECRET"
	add("user", map[string]any{"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_big", "content": out}}},
		"toolUseResult": map[string]any{"type": "text", "file": map[string]any{"filePath": "/var/log/importer.log", "content": out}}})
	assistant("msg_3", map[string]any{"type": "text", "text": "HUGE-A2 The log shows 412 rows with a bad date format."})
	user("HUGE-P3 fix the date parser")
	assistant("msg_4", map[string]any{"type": "text", "text": "HUGE-A3 Fixed."})
	data := strings.Join(lines, "\n") + "\n"
	if longest := len(lines[4]); longest < 2<<20 || len(lines[2]) < 600<<10 {
		t.Fatalf("generated lines too short: prompt %d, tool result %d", len(lines[2]), longest)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("transcript.jsonl", data)
	write("expect.txt", "# session: "+id+`
+ HUGE-P1 the importer chokes on this log, see below
+ HUGE-PROMPT-START
+ HUGE-PROMPT-END
+ HUGE-A1 Let me look at the log.
+ HUGE-A2 The log shows 412 rows with a bad date format.
+ HUGE-P3 fix the date parser
+ HUGE-A3 Fixed.
- HUGE-TOOL-OUTPUT-SECRET
users 3
assistants 3
`)
	in, b := renderCase(t, dir)
	checkOracles(t, dir, in, b.Bytes)
}
