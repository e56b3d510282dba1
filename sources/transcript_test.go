package sources

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/internal/growfile"
)

// The real transcripts are read in place from ../shared/fixtures/real
// (located by internal/fixtures), never copied into the repository.

// realCounts are the genuine user messages, assistant messages with text
// and compactions of each real fixture's spine. The user and assistant
// counts were checked by hand against transcript-format.md §8.4; they
// differ from its table in two places, both on purpose:
//   - ae4a77f8: 3 users, not 2 — "/compact and continue with the reamining
//     tasks" is a built-in command typed with arguments, which the spine
//     keeps as "/compact …" (the arguments are the user's words);
//   - 5c0375b4: 1 user, not 0 — its only input is the custom command
//     "/orchestrator @CLAUDE.md を…", kept as a user message.
//
// Subagent and compaction-summariser files hold only sidechain records and
// give nothing.
var realCounts = []struct {
	file                     string
	users, assistants, comps int
}{
	{"marot__spotter__short.jsonl", 1, 1, 0},
	{"marot__spotter__tool_heavy.jsonl", 2, 1, 0},
	{"marot__spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", 3, 158, 1},
	{"marot__spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04__subagents__agent-aac57f5.jsonl", 0, 0, 0},
	{"marot__spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04__subagents__agent-acompact-946d2b.jsonl", 0, 0, 0},
	{"daaain__claude-code-log__-experiments-worktrees__ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl", 2, 8, 0},
	{"daaain__claude-code-log__-experiments-worktrees__ef958aa1-0e93-49f0-bb71-150f63befcd1__subagents__agent-a52886dc180afb356.jsonl", 0, 0, 0},
	{"daaain__claude-code-log__-experiments-ideas__03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl", 4, 5, 0},
	{"daaain__claude-code-log__-src-deep-manifest__a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl", 7, 69, 0},
	{"daaain__claude-code-log__-src-deep-manifest__agent-c8d9b115.jsonl", 0, 0, 0},
	{"daaain__claude-code-log__-Users-dain-workspace-danieldemmel-me-next__4379d1bf-ccb1-414e-a856-9791b73f3af2.jsonl", 1, 3, 0},
	{"daaain__claude-code-log__-Users-dain-workspace-claude-code-log-sample__71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl", 1, 3, 0},
	{"daaain__claude-code-log__-Users-dain-workspace-claude-code-log-sample__fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl", 2, 7, 0},
	{"d-kimuson__claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", 1, 3, 0},
	{"DRMacIver__claude-reliability__hello-world-script__transcript.jsonl", 1, 2, 0},
}

func countEntries(sp *Spine) (users, assistants, comps int) {
	for _, e := range sp.Entries {
		switch e.Kind {
		case EntryUser:
			users++
		case EntryAssistant:
			if e.Text != "" {
				assistants++
			}
		case EntryCompaction:
			comps++
		}
	}
	return
}

func TestRealFixtureCounts(t *testing.T) {
	dir := fixtures.Real(t)
	listed := map[string]bool{}
	for _, tc := range realCounts {
		listed[tc.file] = true
		t.Run(tc.file, func(t *testing.T) {
			tr, err := ReadTranscript("s", filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			sp := BuildSpine("s", []*Transcript{tr})
			u, a, c := countEntries(sp)
			if u != tc.users || a != tc.assistants || c != tc.comps {
				t.Errorf("users, assistants, compactions = %d, %d, %d; want %d, %d, %d", u, a, c, tc.users, tc.assistants, tc.comps)
			}
			if sp.Malformed != 0 {
				t.Errorf("Malformed = %d, want 0", sp.Malformed)
			}
		})
	}
	all, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, f := range all {
		if !listed[filepath.Base(f)] {
			t.Errorf("fixture %s has no expected counts", filepath.Base(f))
		}
	}
}

// TestRealFixtureRewind checks the one real rewind: the abandoned branch's
// prompts are gone and the kept branch's are there.
func TestRealFixtureRewind(t *testing.T) {
	p := fixtures.Path(t, "daaain__claude-code-log__-experiments-ideas__03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl")
	tr, err := ReadTranscript("s", p)
	if err != nil {
		t.Fatal(err)
	}
	sp := BuildSpine("s", []*Transcript{tr})
	// The prompts of lines 17–35 are the abandoned branch (transcript-format.md §5).
	abandoned, kept := userTextsOfLines(t, p, 17, 35), userTextsOfLines(t, p, 36, 61)
	if len(abandoned) != 3 || len(kept) == 0 {
		t.Fatalf("fixture changed: %d abandoned and %d kept prompts", len(abandoned), len(kept))
	}
	var got []string
	for _, e := range sp.Entries {
		if e.Kind == EntryUser {
			got = append(got, e.Text)
		}
	}
	for _, a := range abandoned {
		if slices.Contains(kept, a) {
			continue // the user typed the same words again on the kept branch
		}
		if slices.Contains(got, a) {
			t.Errorf("abandoned prompt %.60q is in the spine", a)
		}
	}
	for _, k := range kept {
		if !slices.Contains(got, k) {
			t.Errorf("kept prompt %.60q is missing from the spine", k)
		}
	}
}

// userTextsOfLines returns the plain-string prompts of user records on the
// given 1-based lines, decoded with encoding/json as an independent check.
func userTextsOfLines(t *testing.T, path string, from, to int) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, line := range bytes.Split(data, []byte("\n")) {
		if i+1 < from || i+1 > to || len(line) == 0 {
			continue
		}
		var r struct {
			Type    string `json:"type"`
			IsMeta  bool   `json:"isMeta"`
			Message struct {
				Content any `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if s, ok := r.Message.Content.(string); ok && r.Type == "user" && !r.IsMeta && !strings.HasPrefix(s, "<") {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// TestIncrementalEqualsFull grows a copy of every real fixture (both
// corpora, subagent files too) the way Claude Code does, calling Update
// after each append, and checks the spine equals the one-shot parse:
// appending whole lines resumes at every line boundary; appending lines in
// two halves also resumes mid-line, where the torn half must wait for the
// rest.
func TestIncrementalEqualsFull(t *testing.T) {
	for _, f := range fixtures.All(t) {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			full, err := ReadTranscript("s", f)
			if err != nil {
				t.Fatal(err)
			}
			want := spineOf(t, full)
			want.Files = nil // the copy is another file
			bounds := lineBounds(data)
			for _, halves := range []bool{false, true} {
				path := filepath.Join(t.TempDir(), "s.jsonl")
				tr := writeAndRead(t, path, nil)
				for i := 1; i < len(bounds); i++ {
					from, to := bounds[i-1], bounds[i]
					cuts := []int{to}
					if halves {
						cuts = []int{(from + to) / 2, to}
					}
					for _, cut := range cuts {
						growfile.Append(t, path, data[from:cut])
						if _, err := tr.Update(); err != nil {
							t.Fatal(err)
						}
						from = cut
					}
					if tr.offset != int64(to) {
						t.Fatalf("after line %d: offset %d, want %d", i, tr.offset, to)
					}
				}
				got := spineOf(t, tr)
				got.Files = nil
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("halves=%v: incremental spine differs from the one-shot parse", halves)
				}
			}
		})
	}
}

// TestUpdateResumesAtSplit parses a prefix of a real fixture, appends the
// rest in one write and updates: the result is the one-shot parse.
func TestUpdateResumesAtSplit(t *testing.T) {
	f := fixtures.Path(t, "daaain__claude-code-log__-src-deep-manifest__a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	want := unsettled(spineOf(t, writeAndRead(t, path, data)))
	for _, cut := range []int{0, 1, len(data) / 3, midLine(data, len(data)/2), len(data) - 1, len(data)} {
		tr := writeAndRead(t, path, data[:cut])
		growfile.Append(t, path, data[cut:])
		if _, err := tr.Update(); err != nil {
			t.Fatal(err)
		}
		if got := unsettled(spineOf(t, tr)); !reflect.DeepEqual(got, want) {
			t.Errorf("split at byte %d: spine differs from the one-shot parse", cut)
		}
	}
}

// unsettled forgets the modification times a spine's file states record:
// a time is recorded only once it is older than the file system's grain
// (FileState.Mod), so two reads of the same bytes record it or not by how
// long after the write each was made, which a busy machine decides.
func unsettled(sp *Spine) *Spine {
	for i := range sp.Files {
		sp.Files[i].Mod = 0
	}
	return sp
}

func spineOf(t *testing.T, tr *Transcript) *Spine {
	t.Helper()
	return BuildSpine(tr.SessionID, []*Transcript{tr})
}

func writeAndRead(t *testing.T, path string, data []byte) *Transcript {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	tr := NewTranscript("s", path)
	if _, err := tr.Update(); err != nil {
		t.Fatal(err)
	}
	return tr
}

// lineBounds returns 0 and the offset after every newline.
func lineBounds(data []byte) []int {
	b := []int{0}
	for i, c := range data {
		if c == '\n' {
			b = append(b, i+1)
		}
	}
	return b
}

func midLine(data []byte, at int) int {
	end := bytes.IndexByte(data[at:], '\n')
	if end < 0 {
		return len(data)
	}
	return at + end/2
}
