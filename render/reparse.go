package render

import (
	"hash/maphash"
	"time"
)

// This file reads a bottle that replaces one read before, taking the
// blocks of the part of the body the two share from the earlier parse:
// after an append, a bottle's body is the same up to its last turn (the
// header above it grows, which moves the body but does not change it).

// markEvery is how many bytes of body lie between two of the parser's
// marks (Parsed.marks): a Reparse reads again at most this much of what
// the two bodies share. A mark is some 90 bytes, a hundredth of what it
// spares reading.
const markEvery = 8 << 10

// markSeed seeds the hashes of the body between marks: they are compared
// within one process only, by Reparse.
var markSeed = maphash.MakeSeed()

// parseMark is the parser's state at the start of a line of the body:
// the line's offset from the body's start and its number from the body's
// first line, how many blocks came before it, and what the lines before
// it told the parser. The state depends on those lines only (and on the
// date the body starts from, the state at the body's first line), so a
// body with the same bytes before the mark's line is read from there as
// Parse would. sum is the hash of the body from the mark before to this
// one (0 for the first mark), by which Reparse finds the marks whose
// bytes before are the same: 64 bits, so a change is missed once in
// 2^64.
type parseMark struct {
	off, line int
	blocks    int
	s         bodyState
	sum       uint64
}

// Reparse is Parse(data, loc) for a bottle that replaces one parsed as
// prev by Reparse in this process (nil for the first): the blocks of the
// part of the body the two share are taken from prev, and only the rest of
// the body is read. prev is taken over (its blocks are changed and reused)
// and must not be used after. It also returns how many of the leading
// blocks were taken: each is as prev had it (moved with the body), its
// bytes the same. With a prev parsed in another zone, or a body that
// starts from another date (the session's start changed), nothing is
// taken. Its parse also marks the parser's state every markEvery bytes of
// body, for the next Reparse: a few percent more than Parse, which does
// not.
func Reparse(data []byte, loc *time.Location, prev *Parsed) (*Parsed, int, error) {
	ps, err := startParse(data, loc)
	if err != nil {
		return nil, 0, err
	}
	kept := 0
	if prev != nil && prev.loc == ps.loc && prev.BodyStart > 0 && ps.p.BodyStart > 0 &&
		len(prev.marks) > 0 && prev.marks[0].s == ps.s {
		kept = ps.resume(prev)
	}
	ps.body(true)
	return ps.p, kept, nil
}

// resume puts the parser at the last of prev's marks before which the
// body is the same as prev's, with the blocks before it, and returns how
// many of those are final.
func (ps *parser) resume(prev *Parsed) int {
	p := ps.p
	body := ps.data[p.BodyStart:]
	i := 0
	for ; i+1 < len(prev.marks); i++ {
		from, m := prev.marks[i].off, prev.marks[i+1]
		if m.off > len(body) || maphash.Bytes(markSeed, body[from:m.off]) != m.sum {
			break
		}
	}
	m := prev.marks[i]
	shift, lineShift := p.BodyStart-prev.BodyStart, p.State.Legs[0]-prev.State.Legs[0]
	if m.blocks > 0 {
		p.Blocks = prev.Blocks[:m.blocks]
	}
	if shift != 0 || lineShift != 0 {
		for k := range p.Blocks {
			b := &p.Blocks[k]
			b.Start, b.End, b.Text, b.Line = b.Start+shift, b.End+shift, b.Text+shift, b.Line+lineShift
		}
	}
	p.marks = prev.marks[:i+1]
	ps.s, ps.nextMark = m.s, m.off+markEvery
	ps.lines.nextStart, ps.lines.n = p.BodyStart+m.off, p.State.Legs[0]+m.line-1
	// The open block, if any, ends where the rest of the body says.
	kept := m.blocks
	if m.s.cur >= 0 {
		kept = min(kept, m.s.cur)
	}
	return kept
}
