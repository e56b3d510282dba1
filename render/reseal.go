package render

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/bottled-dev/bottled/redact"
)

// Resealing. A bottle made by other redaction rules is rendered again
// from its sources (bottles.WhyRules), but some bottles cannot be: an archived
// one (its session was cleared; it is the record of what it was) and a
// live one whose transcript is gone, which claude-mem's rows alone would
// only make a reconstructed bottle of (one that a full bottle never gives
// way to) or none. Such a bottle is redacted as it is (Reseal), and the
// bottle store writes it in place.
// (What an older bottle's outline clipped below the length that tells a
// credential stays; the messages themselves are whole.)

// Reseal redacts the bottle data with rules, keeping its lines: a span
// that held newlines (a private key block) is replaced by its placeholder
// and as many newlines, so that the outline's and the legs' line numbers
// stay right. The state line records rules, its task and the names of
// what was unknown are redacted too (the names brought under today's
// rules first: see sources.Unknown.Renamed), and its byte count is made
// right again. A bottle already made by rules is returned as it is.
func Reseal(data []byte, rules *redact.Rules) ([]byte, *State, error) {
	st, err := StateOf(data)
	if err != nil {
		return nil, nil, err
	}
	if st.Redact == rules.ID() {
		return data, st, nil
	}
	lines := bytes.SplitN(data, []byte("\n"), stateLineN+1)
	if len(lines) <= stateLineN {
		return nil, nil, fmt.Errorf("%w: nothing after the state line", ErrNoState)
	}
	head := redactKeepingLines(rules, string(bytes.Join(lines[:stateLineN-1], []byte("\n"))))
	body := redactKeepingLines(rules, string(lines[stateLineN]))
	st.Redact, st.Task = rules.ID(), rules.Redact(st.Task)
	if st.Unknown != nil {
		st.Unknown = st.Unknown.Renamed(rules.Redact)
	}
	out, err := st.withStateLine([]byte(head+"\n"), []byte(body))
	if err != nil {
		return nil, nil, fmt.Errorf("reseal %s: %w", st.Session, err)
	}
	return out, st, nil
}

// redactKeepingLines is rules.Redact that keeps the newlines of each span
// it replaces, after the placeholder.
func redactKeepingLines(rules *redact.Rules, s string) string {
	fs := rules.Find(s)
	if fs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, f := range fs {
		b.WriteString(s[last:f.Start])
		b.WriteString(redact.Placeholder(f.Kind))
		b.WriteString(strings.Repeat("\n", strings.Count(s[f.Start:f.End], "\n")))
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}
