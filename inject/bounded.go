package inject

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// SessionEndTimeout bounds the SessionEnd hook's whole run, well inside
// what Claude Code gives it: 5 s as install registers it (endTimeout), and
// 1.5 s, Claude Code's default for SessionEnd hooks, when registered by
// hand without a timeout.
const SessionEndTimeout = time.Second

// ErrNoAnswer reports a hook that gave up: its work was not done by its
// deadline, or the hook was told to stop (SIGTERM). It prints nothing,
// and Claude Code goes on as without bottled.
var ErrNoAnswer = errors.New("no answer")

// SessionStartFrom reads a SessionStart payload from r and answers it
// (see SessionStart) within cfg.Timeout from its call, stdin's read
// included (see bounded).
func SessionStartFrom(ctx context.Context, cfg Config, r io.Reader) ([]byte, error) {
	cfg.defaults()
	return bounded(ctx, cfg.Timeout, func(ctx context.Context) ([]byte, error) {
		p, err := ReadPayload(r)
		if err != nil {
			return nil, err
		}
		return SessionStart(ctx, cfg, p)
	})
}

// SessionEndFrom reads a SessionEnd payload from r and answers it (see
// SessionEnd) within SessionEndTimeout from its call.
func SessionEndFrom(ctx context.Context, cfg Config, r io.Reader) error {
	_, err := bounded(ctx, SessionEndTimeout, func(ctx context.Context) ([]byte, error) {
		p, err := ReadPayload(r)
		if err != nil {
			return nil, err
		}
		return nil, SessionEnd(ctx, cfg, p)
	})
	return err
}

// bounded runs work, a hook's whole run, and returns its answer, or an
// error wrapping ErrNoAnswer once limit has passed or ctx is done (the
// hook was told to stop), whatever work is doing then: Claude Code waits
// for the hook, and a read that the disk does not answer (a file system
// that hangs, a database locked by its writer) cannot hold up its
// session. work's context carries the same deadline, for the parts that
// can stop early. The goroutine running work is not waited for when the
// deadline passes: the hook's process exits right after, which ends it; a
// system call cannot be interrupted otherwise.
func bounded(ctx context.Context, limit time.Duration, work func(context.Context) ([]byte, error)) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type answer struct {
		out []byte
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := work(ctx)
		done <- answer{out, err}
	}()
	select {
	case a := <-done:
		return a.out, a.err
	case <-ctx.Done():
	}
	select {
	case a := <-done: // done at the deadline: still in time
		return a.out, a.err
	default:
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w within the hook's deadline of %v (reading stdin, a file or claude-mem's database took longer)", ErrNoAnswer, limit)
	}
	return nil, fmt.Errorf("%w: stopped (%v)", ErrNoAnswer, context.Cause(ctx))
}
