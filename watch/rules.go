package watch

import (
	"context"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/redact"
)

// LoadRedaction reads the redaction rules of a data directory (see
// bottles.LoadRules), and says what they are and what is wrong with the
// user's patterns file, as status shows it. The rules are never nil.
func LoadRedaction(dataDir string) (*redact.Rules, Redaction) {
	rules, err := bottles.LoadRules(dataDir)
	r := Redaction{Rules: rules.ID(), Patterns: bottles.RulesFile(dataDir), User: rules.UserPatterns()}
	if err != nil {
		r.Error = err.Error()
	}
	return rules, r
}

// loadRules reads the redaction rules the daemon renders with when the
// patterns file changed since it last did (or at the first call), and
// reports whether they are other rules than before. Other rules make
// every bottle stale (bottles.WhyRules): the freshness cache is forgotten,
// so that the rescan checks them all. A file that cannot be used is said
// in the log and in status, once per change of the file; the daemon goes
// on with the built-in rules and the lines that can be used. Called at
// start and by the rescan, one at a time.
func (d *Daemon) loadRules() bool {
	path := bottles.RulesFile(d.cfg.DataDir)
	stamp, _ := stampOf(path)
	if old := d.rules.Load(); old != nil && stamp == d.rulesStamp {
		return false
	}
	d.rulesStamp = stamp
	rules, status := LoadRedaction(d.cfg.DataDir)
	d.rec.update(func(st *Status) { st.Redaction = status })
	if status.Error != "" {
		d.log.Warn("some redaction patterns cannot be used; bottles are redacted with the built-in rules and the patterns that can", "err", status.Error)
	}
	old := d.rules.Swap(rules)
	if old == nil || old.ID() == rules.ID() {
		return false
	}
	d.log.Info("the redaction rules changed: every bottle is made again, and the search index purged of what the old ones held",
		"rules", rules.ID(), "patterns", path, "user_patterns", rules.UserPatterns())
	d.freshness.forget()
	return true
}

// rulesNow are the rules renders use now.
func (d *Daemon) rulesNow() *redact.Rules {
	if r := d.rules.Load(); r != nil {
		return r
	}
	return redact.Builtin()
}

// resealUnrenderable redacts in place the bottles made by other rules
// that no render can make again (bottles.Store.ResealFile): the archived ones,
// and the live ones of the sessions in orphans, whose transcript is gone;
// the store asks for the search index to be purged of what they held
// before it replaces each, and the keeper is told. Called by
// Run before the catch-up (whose renders reseal orphans themselves, once
// they found nothing to render them from) and by the rescan when the
// rules changed.
func (d *Daemon) resealUnrenderable(ctx context.Context, orphans []string) {
	began := d.cfg.Now()
	rules := d.rulesNow()
	n, err := d.store.ResealArchives(rules)
	if err != nil {
		d.log.Warn("redact archived bottles made by other redaction rules", "err", err)
	}
	for _, id := range orphans {
		if ctx.Err() != nil {
			return
		}
		out, err := d.store.ResealFile(d.store.Path(id), rules)
		if err != nil {
			d.log.Warn("redact a bottle made by other redaction rules", "session", id, "err", err)
		}
		if out != nil {
			n++
			d.indexBottle(ctx, id, out)
		}
	}
	if n == 0 {
		return
	}
	d.log.Info("bottles made by other redaction rules that no source can make again were redacted in place",
		"bottles", n, "took", d.cfg.Now().Sub(began).Round(time.Millisecond))
	signal(d.purgeNow)
}

// resealLive redacts in place the live bottle of a session that its
// sources could not make again (nothing to render, or only a
// reconstructed bottle the full one is kept over), if it was made by
// other rules, and has the search index forget what it held.
func (d *Daemon) resealLive(ctx context.Context, s *session) {
	rules := d.rulesNow()
	out, err := d.store.ResealFile(d.store.Path(s.id), rules)
	if err != nil {
		d.log.Warn("redact a bottle made by other redaction rules", "session", s.id, "err", err)
		return
	}
	if out == nil {
		return
	}
	d.log.Debug("bottle made by other redaction rules redacted in place: its sources cannot make it again", "session", s.id)
	// The purge the reseal asked for forgets whatever a rewrite found
	// by the parse state removed too.
	s.rewrote = false
	d.indexBottle(ctx, s.id, out)
	d.purgeAsked(s.id)
}
