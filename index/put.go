package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ncruces/go-sqlite3"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/sources"
)

// fileState identifies the content of a bottle file. Bottles are replaced
// by rename and never written in place, so a file whose identity, size and
// modification time are unchanged holds the bytes it held.
type fileState struct {
	id    sources.FileID
	size  int64
	mtime int64 // nanoseconds
}

func stateOf(info os.FileInfo) fileState {
	return fileState{id: sources.FileIDOf(info), size: info.Size(), mtime: info.ModTime().UnixNano()}
}

// archivePrefix starts the names of archived bottles, relative to the
// bottles directory.
const archivePrefix = "archive/"

// Put indexes the bottle that was just written as name (relative to the
// bottles directory: "<session>.md" or "archive/<file>") with the bytes
// data, updating only the blocks that changed. If the file no longer holds
// data (another writer replaced it meanwhile), what it holds now is indexed
// instead. Put never builds the index: one that is missing, of another
// format or corrupt is reported as ErrUnusable. It waits for another
// process's write (SQLite's busy timeout) only until ctx ends.
func (ix *Index) Put(ctx context.Context, name string, data []byte) error {
	return ix.doExisting(func() error {
		data, st, err := ix.readBottle(name, data)
		if errors.Is(err, fs.ErrNotExist) {
			return ix.tx(ctx, func() error { return ix.removeLocked(name) })
		}
		if err != nil {
			return err
		}
		var update *docUpdate
		err = ix.tx(ctx, func() (err error) {
			update, err = ix.putLocked(name, data, st)
			return err
		})
		if err == nil && update != nil {
			ix.known.put(update.bottle, update.indexed)
		}
		return err
	})
}

// readBottle reads the bottle file name with the state of the file read.
// If the file holds written (the bytes of a bottle just written as name),
// written is returned without reading the rest: the bottle's fourth line
// records its render time to the nanosecond and its size, so equal heads
// mean equal bottles.
func (ix *Index) readBottle(name string, written []byte) ([]byte, fileState, error) {
	// A link is not followed (it may point anywhere), nor is anything but
	// a regular file read: either is as if the bottle were gone.
	f, info, err := safefile.Open(filepath.Join(ix.store.Dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, fileState{}, safefile.AlsoIs(err, fs.ErrNotExist)
	}
	defer f.Close()
	st := stateOf(info)
	if head := headLen(written); head > 0 && info.Size() == int64(len(written)) {
		buf := make([]byte, head)
		if _, err := io.ReadFull(f, buf); err == nil && bytes.Equal(buf, written[:head]) {
			return written, st, nil
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fileState{}, err
		}
	}
	data := make([]byte, info.Size())
	n, err := io.ReadFull(f, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fileState{}, fmt.Errorf("read bottle %s: %w", f.Name(), err)
	}
	return data[:n], st, nil
}

// headLen is the length of a bottle's first four lines (its header and
// state line), 0 if it has fewer.
func headLen(data []byte) int {
	off := 0
	for range 4 {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return 0
		}
		off += i + 1
	}
	return off
}

// blockSum is the checksum a block is matched by between updates: its
// length and CRC-32, which runs in hardware on common CPUs, so checking
// every block of a bottle that grew by one turn costs far less than
// tokenizing it. (Matching, not security: a changed block whose checksum
// collided with the one it replaced would keep its old words searchable;
// hits are checked against the bottle anyway.)
func blockSum(b []byte) int64 {
	return int64(uint64(len(b))<<32 | uint64(crc32.ChecksumIEEE(b)))
}

// doc is an indexed block as the database knows it.
type doc struct {
	id, seq, time, sum int64
	mark               uint64 // the update that last matched it
}

// docUpdate is what the cache keeps of a bottle after an update, once the
// transaction has committed.
type docUpdate struct {
	bottle int64
	*indexed
}

// putLocked indexes a bottle's bytes under name. Called in a transaction.
// A bottle this process indexed last (in the cache) is read from its
// earlier parse: only the blocks past the part of its body that did not
// change are parsed and checksummed again.
func (ix *Index) putLocked(name string, data []byte, st fileState) (*docUpdate, error) {
	r, err := ix.rowAt(name)
	if err != nil {
		return nil, err
	}
	prev, err := ix.recall(r)
	if err != nil {
		return nil, err
	}
	var parsed *render.Parsed
	if prev != nil {
		parsed = prev.parsed
	}
	p, same, _ := render.Reparse(data, ix.loc, parsed)
	return ix.putParsed(parsedBottle{name, data, st, p}, r, prev, same)
}

// recall takes from the cache what the last update of the bottle of row
// r left (nil if none, or if another connection wrote to the index
// since). Whatever happens next, it is no longer in the cache: the update
// changes it in place, and puts it back once committed.
func (ix *Index) recall(r row) (*indexed, error) {
	version, err := ix.dataVersion()
	if err != nil {
		return nil, err
	}
	ix.known.check(version)
	if r.id == 0 {
		return nil, nil
	}
	return ix.known.take(r.id), nil
}

// dataVersion is SQLite's data_version: it changes when another
// connection commits.
func (ix *Index) dataVersion() (int64, error) {
	var version int64 = -1
	err := ix.query(`PRAGMA data_version`, func(s *sqlite3.Stmt) error {
		version = s.ColumnInt64(0)
		return nil
	})
	return version, err
}

// parsedBottle is a bottle file as an update read it: its name (relative
// to the bottles directory), its bytes, the state of the file they were
// read from, and their parse (nil if they do not parse).
type parsedBottle struct {
	name string
	data []byte
	st   fileState
	p    *render.Parsed
}

// putParsed is putLocked for a bottle read and parsed already. r is the
// row at b.name (rowAt), prev, if not nil, what the bottle's last update
// left (taken from the cache), the first same of whose blocks b.p took
// (render.Reparse of prev.parsed: so same is at most the number of its
// blocks, each of which has its row in prev.docs).
func (ix *Index) putParsed(b parsedBottle, r row, prev *indexed, same int) (*docUpdate, error) {
	p := b.p
	if p == nil {
		// Not a bottle (or not one of a format this build reads): it has
		// nothing to search.
		return nil, ix.removeRow(r)
	}
	r, err := ix.bottleRow(b.name, b.st, r)
	if err != nil {
		return nil, err
	}
	x, err := ix.updateDocs(r, b.data, p, prev, same)
	if err != nil {
		return nil, err
	}
	x.parsed = p
	if err := ix.writeBottle(r.id, b.name, b.st, p); err != nil {
		return nil, err
	}
	if r.session != "" && r.session != p.State.Session {
		if err := ix.fixRoles(r.session); err != nil {
			return nil, err
		}
	}
	return &docUpdate{r.id, x}, ix.fixRoles(p.State.Session)
}

// row is what a bottle's row says of the blocks indexed under it: the
// session and project they were indexed for ("" for a new row, which has
// none).
type row struct {
	id               int64
	session, project string
}

// rowAt returns the row of the bottle at name (id 0 if there is none).
func (ix *Index) rowAt(name string) (row, error) {
	var r row
	err := ix.query(`SELECT id, session, project FROM bottles WHERE path = ?`, func(s *sqlite3.Stmt) error {
		r = row{s.ColumnInt64(0), s.ColumnText(1), s.ColumnText(2)}
		return nil
	}, name)
	return r, err
}

// bottleRow returns the row of the bottle at name, r (what rowAt found
// there), creating it (or moving the row of the same file from its old
// name, when a bottle was archived) if there is none.
func (ix *Index) bottleRow(name string, st fileState, r row) (row, error) {
	if r.id != 0 {
		return r, nil
	}
	// A file moved here keeps its identity: archiving renames a bottle, and
	// its words are indexed already.
	type moved struct {
		row
		path string
	}
	var found []moved
	err := ix.query(`SELECT id, session, project, path FROM bottles WHERE ino = ? AND size = ? AND mtime = ? AND dev = ?`, func(s *sqlite3.Stmt) error {
		found = append(found, moved{row{s.ColumnInt64(0), s.ColumnText(1), s.ColumnText(2)}, s.ColumnText(3)})
		return nil
	}, st.id.Ino, st.size, st.mtime, st.id.Dev)
	if err != nil {
		return row{}, err
	}
	for _, m := range found {
		if _, err := os.Lstat(filepath.Join(ix.store.Dir, filepath.FromSlash(m.path))); errors.Is(err, fs.ErrNotExist) {
			return m.row, ix.exec(`UPDATE bottles SET path = ? WHERE id = ?`, name, m.id)
		}
	}
	err = ix.exec(`INSERT INTO bottles (path, session, archived, role, project, mode, started, last_active, turns,
		compactions, first_prompt, dev, ino, size, mtime) VALUES (?, '', 0, 0, '', '', 0, 0, 0, 0, '', 0, 0, 0, 0)`, name)
	return row{id: ix.conn.LastInsertRowID()}, err
}

// updateDocs brings the indexed blocks of the bottle of row r in line with
// the parsed bottle: blocks whose checksum is already indexed are kept
// (their position and time updated), new ones are tokenized, and the rest
// are deleted. prev, if not nil, is what the bottle's last update left,
// and its first same blocks are p's first (render.Reuse): their checksums
// are those of their rows, not computed again, and their rows, the first
// of prev.docs, are kept as they are, without looking at them, as the
// matching below would keep them. It returns what the cache keeps of the
// bottle (the block list updated in place: a bottle that grew by a turn
// allocates nothing for the blocks it had).
func (ix *Index) updateDocs(r row, data []byte, p *render.Parsed, prev *indexed, same int) (*indexed, error) {
	id, scope := r.id, scopeWords(p.Project, p.State.Mode)
	// Any list of the bottle's rows in the cache is stale from here on.
	ix.known.forget(id)
	var (
		olds, reused []doc // reused[i] is the row of block i, for i < same
		err          error
	)
	if prev != nil {
		// same ≤ len(prev.docs) by construction (see putParsed); a
		// broken guarantee indexes more blocks again, never stops the
		// daemon.
		reused = prev.docs[:min(same, len(prev.docs))]
	}
	// The kept rows are those of the earlier update's first blocks, in
	// their order: prev.docs[i] is block i's row (indexed.docs), as this
	// function, the only one that makes an indexed, left it.
	keep := len(reused)
	switch {
	case r.project != p.Project:
		// Blocks indexed under another project (the bottle's project
		// changed) carry the wrong scope: none is kept.
		keep = 0
		if err := ix.deleteDocsOf(id); err != nil {
			return nil, err
		}
	case prev != nil:
		olds = prev.docs
	default:
		if olds, err = ix.docsOf(id); err != nil {
			return nil, err
		}
	}
	ix.marks++
	mark := ix.marks
	var when int64
	if keep > 0 {
		when = olds[keep-1].time
	}
	// The rows of the blocks past the kept ones, by checksum, in the order
	// of their blocks: matched in that order, identical blocks take them
	// in turn, as they did.
	have := map[int64][]doc{}
	for _, d := range olds[keep:] {
		have[d.sum] = append(have[d.sum], d)
	}
	next := olds[:keep]
	// taken counts, per checksum, the rows identical blocks earlier in the
	// bottle took: they take them in order, so the next free one is at
	// that index. A trail repeats lines (a command run in every turn), and
	// looking for a free row from the start would cost the square of
	// their number.
	var taken map[int64]int
	for seq := keep; seq < len(p.Blocks); seq++ {
		b := p.Blocks[seq]
		if !b.Time.IsZero() {
			when = b.Time.Unix()
		}
		// reused shares its array with next (olds is prev.docs), whose
		// element seq this iteration writes last: it is read first.
		var sum int64
		if seq < len(reused) {
			sum = reused[seq].sum
		} else {
			sum = blockSum(data[b.Start:b.End])
		}
		ds := have[sum]
		if taken == nil {
			taken = map[int64]int{}
		}
		if i := taken[sum]; i < len(ds) {
			taken[sum] = i + 1
			d := &ds[i]
			d.mark = mark
			if d.seq != int64(seq) || d.time != when {
				if err := ix.exec(`UPDATE docs SET seq = ?, time = ? WHERE id = ?`, seq, when, d.id); err != nil {
					return nil, err
				}
				d.seq, d.time = int64(seq), when
			}
			next = append(next, *d)
			continue
		}
		body := data[b.Text:b.End]
		if err := ix.insertDoc(id, seq, sum, b.Kind, when, countWords(body)); err != nil {
			return nil, err
		}
		row := ix.conn.LastInsertRowID()
		if err := ix.exec(`INSERT INTO text (rowid, body, scope) VALUES (?, ?, ?)`, row, body, scope); err != nil {
			return nil, err
		}
		d := doc{id: row, seq: int64(seq), time: when, sum: sum, mark: mark}
		have[sum] = append(ds, d)
		taken[sum] = len(ds) + 1 // every row of this checksum is taken
		next = append(next, d)
	}
	for _, ds := range have {
		for _, d := range ds {
			if d.mark != mark {
				if err := ix.deleteDoc(d.id); err != nil {
					return nil, err
				}
			}
		}
	}
	return &indexed{docs: next}, nil
}

// insertDoc writes the row of a new block, numbered by docID.
func (ix *Index) insertDoc(bottle int64, seq int, sum int64, kind render.BlockKind, when int64, words int) error {
	if id := ix.docID(); id != 0 {
		return ix.exec(`INSERT INTO docs (id, bottle, seq, sum, kind, time, words) VALUES (?, ?, ?, ?, ?, ?, ?)`, id, bottle, seq, sum, int(kind), when, words)
	}
	return ix.exec(`INSERT INTO docs (bottle, seq, sum, kind, time, words) VALUES (?, ?, ?, ?, ?, ?)`, bottle, seq, sum, int(kind), when, words)
}

// docsOf returns the indexed blocks of bottle id in their order.
func (ix *Index) docsOf(id int64) ([]doc, error) {
	var docs []doc
	err := ix.query(`SELECT id, seq, sum, time FROM docs WHERE bottle = ? ORDER BY seq, id`, func(s *sqlite3.Stmt) error {
		docs = append(docs, doc{id: s.ColumnInt64(0), seq: s.ColumnInt64(1), sum: s.ColumnInt64(2), time: s.ColumnInt64(3)})
		return nil
	}, id)
	return docs, err
}

// deleteDocsOf deletes every indexed block of bottle id.
func (ix *Index) deleteDocsOf(id int64) error {
	var docs []int64
	if err := ix.query(`SELECT id FROM docs WHERE bottle = ?`, func(s *sqlite3.Stmt) error {
		docs = append(docs, s.ColumnInt64(0))
		return nil
	}, id); err != nil {
		return err
	}
	for _, d := range docs {
		if err := ix.deleteDoc(d); err != nil {
			return err
		}
	}
	return nil
}

func (ix *Index) deleteDoc(id int64) error {
	if err := ix.exec(`DELETE FROM text WHERE rowid = ?`, id); err != nil {
		return err
	}
	return ix.exec(`DELETE FROM docs WHERE id = ?`, id)
}

// writeBottle records what the session list shows of a bottle, and the
// state of the file it was read from.
func (ix *Index) writeBottle(id int64, name string, st fileState, p *render.Parsed) error {
	started, last, turns := unix(p.Started), unix(p.LastActive()), p.Turns()
	return ix.exec(`UPDATE bottles SET session = ?, archived = ?, project = ?, mode = ?, started = ?, last_active = ?,
		turns = ?, compactions = ?, first_prompt = ?, dev = ?, ino = ?, size = ?, mtime = ? WHERE id = ?`,
		p.State.Session, strings.HasPrefix(name, archivePrefix), p.Project, string(p.State.Mode), started, last,
		turns, max(len(p.State.Legs)-1, 0), p.FirstPrompt, st.id.Dev, st.id.Ino, st.size, st.mtime, id)
}

// removeLocked forgets the bottle at name.
func (ix *Index) removeLocked(name string) error {
	r, err := ix.rowAt(name)
	if err != nil {
		return err
	}
	return ix.removeRow(r)
}

// removeRow forgets the bottle of row r (none if its id is 0).
func (ix *Index) removeRow(r row) error {
	if r.id == 0 {
		return nil
	}
	if err := ix.deleteDocsOf(r.id); err != nil {
		return err
	}
	if err := ix.exec(`DELETE FROM bottles WHERE id = ?`, r.id); err != nil {
		return err
	}
	ix.known.forget(r.id)
	return ix.fixRoles(r.session)
}

// fixRoles recomputes which of a session's bottles stands for it (see
// roleCurrent).
func (ix *Index) fixRoles(session string) error {
	type b struct {
		id       int64
		archived bool
		path     string
		role     int
	}
	var rows []b
	err := ix.query(`SELECT id, archived, path, role FROM bottles WHERE session = ?`, func(s *sqlite3.Stmt) error {
		rows = append(rows, b{s.ColumnInt64(0), s.ColumnBool(1), s.ColumnText(2), s.ColumnInt(3)})
		return nil
	}, session)
	if err != nil {
		return err
	}
	current, newest := false, -1
	for i, r := range rows {
		if !r.archived {
			current = true
		} else if newest < 0 || bottles.NewerArchive(strings.TrimPrefix(r.path, archivePrefix), strings.TrimPrefix(rows[newest].path, archivePrefix)) {
			newest = i
		}
	}
	for i, r := range rows {
		role := roleSuperseded
		switch {
		case !r.archived:
			role = roleCurrent
		case !current && i == newest:
			role = roleArchived
		}
		if role != r.role {
			if err := ix.exec(`UPDATE bottles SET role = ? WHERE id = ?`, role, r.id); err != nil {
				return err
			}
		}
	}
	return nil
}
