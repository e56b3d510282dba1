package render

import (
	"cmp"
	"slices"
	"strings"

	"github.com/bottled-dev/bottled/sources"
)

// placeObservations puts each observation under the turn it belongs to,
// by the best evidence available for it:
//  1. the tool_uses table links the observation to a tool call the
//     transcript shows in a turn;
//  2. its prompt number names a stored prompt that matches a transcript
//     user message (by text, then by order);
//  3. its time falls after the start of a turn and before the next.
//
// Within a turn observations are ordered by time, then id.
func placeObservations(turns []*turn, m *sources.ClaudeMem) {
	if len(turns) == 0 || len(m.Observations) == 0 {
		return
	}
	byTool := map[int64]int{} // observation id → turn of its tool call
	if len(m.ToolUses) > 0 {
		for i, t := range turns {
			for _, a := range t.assistant {
				for _, id := range a.ToolUseIDs {
					if obs, ok := m.ToolUses[id]; ok {
						if _, seen := byTool[obs]; !seen {
							byTool[obs] = i
						}
					}
				}
			}
		}
	}
	byPrompt := matchPrompts(turns, m.Prompts)
	for _, o := range m.Observations {
		i, ok := byTool[o.ID]
		if !ok && o.PromptNumber > 0 {
			i, ok = byPrompt[o.PromptNumber]
		}
		if !ok {
			i = turnAt(turns, o)
		}
		turns[i].obs = append(turns[i].obs, o)
	}
	for _, t := range turns {
		slices.SortStableFunc(t.obs, func(a, b sources.Observation) int {
			return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
		})
	}
}

// turnAt is the last turn that started at or before the observation.
func turnAt(turns []*turn, o sources.Observation) int {
	at := 0
	for i, t := range turns {
		if s := t.start(); !s.IsZero() && !s.After(o.Created) {
			at = i
		}
	}
	return at
}

// matchPrompts maps stored prompt numbers to the user turns they record.
// A stored prompt matches the next unmatched turn whose text is the same
// (claude-mem stores what the user submitted, tag-stripped and capped);
// prompts left between two text matches are paired with the turns between
// them in order. Prompts claude-mem never stored (private, steering) leave
// turns unmatched, which is why text comes first.
func matchPrompts(turns []*turn, prompts []sources.Prompt) map[int64]int {
	var users []int // indexes of turns with a user message
	var texts []string
	for i, t := range turns {
		if t.user != nil {
			users = append(users, i)
			texts = append(texts, normalize(t.user.Text))
		}
	}
	match := make([]int, len(prompts)) // prompt index → user index, -1 if none
	next := 0
	for pi, p := range prompts {
		match[pi] = -1
		want, prefix := normalize(p.Text), false
		if p.CutByClaudeMem || p.Clipped {
			want, prefix = strings.TrimSpace(strings.TrimSuffix(want, "…")), true
		}
		if want == "" {
			continue
		}
		for ui := next; ui < len(texts); ui++ {
			if texts[ui] == want || prefix && strings.HasPrefix(texts[ui], want) {
				match[pi], next = ui, ui+1
				break
			}
		}
	}
	// Pair the prompts between text matches with the turns between them.
	lastUser := -1
	for pi := 0; pi < len(prompts); {
		if match[pi] >= 0 {
			lastUser = match[pi]
			pi++
			continue
		}
		end := pi
		for end < len(prompts) && match[end] < 0 {
			end++
		}
		limit := len(users)
		if end < len(prompts) {
			limit = match[end]
		}
		for k, u := pi, lastUser+1; k < end && u < limit; k, u = k+1, u+1 {
			match[k] = u
		}
		pi = end
	}
	out := map[int64]int{}
	for pi, p := range prompts {
		if match[pi] >= 0 && p.Number > 0 {
			if _, dup := out[p.Number]; !dup {
				out[p.Number] = users[match[pi]]
			}
		}
	}
	return out
}

// normalize reduces a message to what both sources agree on: stripped of
// claude-mem's tags and with whitespace collapsed.
func normalize(s string) string { return oneLine(stripped(s)) }
