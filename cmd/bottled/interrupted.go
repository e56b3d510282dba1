package main

import (
	"context"
	"errors"

	"github.com/bottled-dev/bottled/index"
)

// What a command stopped by Ctrl-C (or SIGTERM) says, besides that it was
// interrupted: what it stopped, and what is left of its work, as far as
// that can be told. It exits 128 plus the signal's number (130 for
// Ctrl-C); see interruptedCode.

// buildInterrupted is the error of a command stopped while it opened the
// search index: building it (anew, if rebuild), or waiting for another
// process that builds it. What is left is asked of the index.
func buildInterrupted(ctx context.Context, d dirs, rebuild, waited bool) error {
	if waited {
		return interrupted(ctx, "while waiting for another process to build the search index: it goes on (%s says how far it got)", d.command("status"))
	}
	const what = "while building the search index"
	st, err := index.InUse(d.data)
	switch {
	case errors.Is(err, index.ErrUnusable):
		return interrupted(ctx, "%s: there is no search index yet; the next search, or %s, builds it", what, d.command("index"))
	case err != nil:
		return interrupted(ctx, "%s: %v", what, err)
	case st.Build != nil:
		// A build commits as it goes, newest sessions first.
		return interrupted(ctx, "%s: it keeps what it did, the newest %s of %s; the next search, or %s, goes on",
			what, number(st.Build.Indexed), sessions(st.Build.Total), d.command("index"))
	case rebuild:
		return interrupted(ctx, "%s: the index in use is the one from before: %s of %s (%s builds it anew)",
			what, count(st.Bottles, "bottle"), count(st.Sessions, "session"), d.command("index", "--rebuild"))
	}
	return interrupted(ctx, "%s: the index in use holds %s of %s", what, count(st.Bottles, "bottle"), count(st.Sessions, "session"))
}

// syncError is the error of a query of the index, which first takes in the
// bottles that changed since it was last brought up to date: stopped, it
// keeps those it committed.
func syncError(ctx context.Context, err error) error {
	if stopped(ctx, err) {
		return interrupted(ctx, "while bringing the search index up to date: it keeps the bottles it took in; the next search takes in the rest")
	}
	return err
}
