package inject

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// TestHooksAnswerWithinTheirDeadline runs the hooks, in fake time, on a
// stdin that never delivers a payload (Claude Code has been seen to leave
// it open): each gives up at its deadline, or at once when it is told to
// stop, whatever its work is waiting for.
func TestHooksAnswerWithinTheirDeadline(t *testing.T) {
	tests := []struct {
		name   string
		stopAt time.Duration // when the hook is told to stop (0: never)
		want   time.Duration
		run    func(ctx context.Context, cfg Config, r io.Reader) error
	}{
		{"session-start", 0, 300 * time.Millisecond, func(ctx context.Context, cfg Config, r io.Reader) error {
			out, err := SessionStartFrom(ctx, cfg, r)
			if out != nil {
				t.Errorf("an answer: %s", out)
			}
			return err
		}},
		{"session-start stopped", 50 * time.Millisecond, 50 * time.Millisecond, func(ctx context.Context, cfg Config, r io.Reader) error {
			_, err := SessionStartFrom(ctx, cfg, r)
			return err
		}},
		{"session-end", 0, SessionEndTimeout, func(ctx context.Context, cfg Config, r io.Reader) error {
			return SessionEndFrom(ctx, cfg, r)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, w := io.Pipe()
				defer w.Close() // ends the abandoned read
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.stopAt > 0 {
					time.AfterFunc(tc.stopAt, cancel)
				}
				cfg := Config{ClaudeDir: t.TempDir(), DataDir: t.TempDir(), Timeout: 300 * time.Millisecond}
				start := time.Now()
				err := tc.run(ctx, cfg, r)
				if !errors.Is(err, ErrNoAnswer) {
					t.Errorf("err %v, want ErrNoAnswer", err)
				}
				if took := time.Since(start); took != tc.want {
					t.Errorf("answered after %v, want %v", took, tc.want)
				}
			})
		})
	}
}
