package inject

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/sources"
)

// Records a session's transcript gains around a compaction and a hook.
func boundaryRec(uuid, logicalParent string) string {
	return fmt.Sprintf(`{"type":"system","subtype":"compact_boundary","parentUuid":null,"logicalParentUuid":%q,"uuid":%q,"compactMetadata":{"trigger":"manual"},"timestamp":"2026-11-30T11:00:00.000Z"}`+"\n", logicalParent, uuid)
}

func summaryRec(uuid, parent string) string {
	return fmt.Sprintf(`{"type":"user","parentUuid":%q,"isCompactSummary":true,"isVisibleInTranscriptOnly":true,"uuid":%q,"message":{"role":"user","content":"This session is being continued from a previous conversation."}}`+"\n", parent, uuid)
}

// hookContextRec is what Claude Code 2.1.3xx records for hook context.
func hookContextRec(uuid, parent, context string) string {
	return fmt.Sprintf(`{"type":"attachment","parentUuid":%q,"uuid":%q,"attachment":{"type":"hook_additional_context","content":[%q],"hookName":"SessionStart","toolUseID":"SessionStart","hookEvent":"SessionStart"}}`+"\n", parent, uuid, context)
}

// hookSuccessRec is what versions that record only the hook's output
// write.
func hookSuccessRec(uuid, parent, context string) string {
	stdout := fmt.Sprintf(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":%q}}`, context)
	return fmt.Sprintf(`{"type":"attachment","parentUuid":%q,"uuid":%q,"attachment":{"type":"hook_success","hookName":"SessionStart:resume","hookEvent":"SessionStart","stdout":%q,"exitCode":0}}`+"\n", parent, uuid, stdout)
}

// TestPointerEconomy: the pointer is injected on compact, and on resume
// only for a session with a compaction and no pointer to the same bottle
// after it.
func TestPointerEconomy(t *testing.T) {
	pointerTo := func(path string) string {
		return sources.PointerHeading + "\n\nbottled keeps the record of this session in " + path + "\n"
	}
	tests := []struct {
		name   string
		source string
		after  func(e *env) string // appended to the one-turn transcript
		want   bool
	}{
		{"resume, never compacted", "resume", func(e *env) string { return "" }, false},
		{"resume, never compacted, an earlier resume's pointer", "resume", func(e *env) string {
			return hookContextRec("h1", "a1", pointerTo(e.bottle()))
		}, false},
		{"resume after a compaction", "resume", func(e *env) string {
			return boundaryRec("b1", "a1") + summaryRec("c1", "b1") + user("u2", "c1", "HOOK-P2 after the compaction")
		}, true},
		{"resume, pointer after the compaction", "resume", func(e *env) string {
			return boundaryRec("b1", "a1") + summaryRec("c1", "b1") + hookContextRec("h1", "c1", pointerTo(e.bottle())) + user("u2", "h1", "HOOK-P2 go on")
		}, false},
		{"resume, pointer recorded only as hook output", "resume", func(e *env) string {
			return boundaryRec("b1", "a1") + summaryRec("c1", "b1") + hookSuccessRec("h1", "c1", pointerTo(e.bottle()))
		}, false},
		{"resume, pointer only before the compaction", "resume", func(e *env) string {
			return hookContextRec("h1", "a1", pointerTo(e.bottle())) + boundaryRec("b1", "h1") + summaryRec("c1", "b1")
		}, true},
		{"resume, pointer to a path that no longer holds the bottle", "resume", func(e *env) string {
			return boundaryRec("b1", "a1") + summaryRec("c1", "b1") + hookContextRec("h1", "c1", pointerTo(e.data+"/bottles/archive/20261101T000000Z-"+e.id+".md"))
		}, true},
		{"resume, another tool's context after the compaction", "resume", func(e *env) string {
			return boundaryRec("b1", "a1") + summaryRec("c1", "b1") + hookContextRec("h1", "c1", "other tool: "+e.bottle())
		}, true},
		{"resume of a file a compaction rolled over into", "resume", func(e *env) string {
			return summaryRec("c1", "")
		}, true},
		{"compact, always", "compact", func(e *env) string {
			return boundaryRec("b1", "a1") + summaryRec("c1", "b1") + hookContextRec("h1", "c1", pointerTo(e.bottle())) + boundaryRec("b2", "h1") + summaryRec("c2", "b2")
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.append(t, tc.after(e))
			out, err := SessionStart(context.Background(), e.cfg(), e.payload(tc.source))
			if err != nil {
				t.Fatal(err)
			}
			if got := out != nil; got != tc.want {
				t.Fatalf("pointer printed: %v, want %v\n%s", got, tc.want, out)
			}
			if !tc.want {
				return
			}
			ctx := decode(t, out)
			if !strings.Contains(ctx, e.bottle()) {
				t.Errorf("the pointer does not name %s:\n%s", e.bottle(), ctx)
			}
		})
	}
}

// TestPointerNamesMCPTools: with bottled's MCP server registered (install
// says so with the hook's flag), the pointer names its tools; without, it
// does not.
func TestPointerNamesMCPTools(t *testing.T) {
	for _, mcp := range []bool{false, true} {
		e := newEnv(t)
		cfg := e.cfg()
		cfg.MCPTools = mcp
		out, err := SessionStart(context.Background(), cfg, e.payload("compact"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(decode(t, out), "mcp__bottled__read"); got != mcp {
			t.Errorf("MCP tools registered %v: the pointer names them: %v", mcp, got)
		}
	}
}
