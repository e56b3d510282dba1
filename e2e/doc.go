// Package e2e tests bottled with the real Claude Code CLI: the binary
// from npm, pointed at internal/standin (a stand-in for the Messages API
// on 127.0.0.1), with bottled's hooks and read permission registered by
// `bottled install --no-start` and the real `bottled run` daemon, each test
// in its own HOME, Claude Code and data directories. The tests assert from
// the requests Claude Code makes, the hooks' effects and the files on
// disk: what reaches the model after a compaction or a resume, that the
// model can follow the pointer's reading plan with Claude Code's own Read
// tool, and what /clear leaves behind, headless and in the interactive
// screen under tmux.
//
// They run when Claude Code is found (BOTTLED_CLAUDE, or claude on PATH)
// and are skipped otherwise; CI sets BOTTLED_REQUIRE_CLAUDE_CODE=1 so that
// they fail instead.
package e2e
