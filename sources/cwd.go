package sources

import (
	"bufio"
	"bytes"
	"io"
)

// cwdScanBytes bounds how much of a transcript TranscriptCWD reads: the
// first record that names a working directory is one of the first few
// (Claude Code writes it on every message record, and only a snapshot or
// a summary comes before the first prompt), but a prompt pasted whole can
// make that record hundreds of KB long.
const cwdScanBytes = 1 << 20

// TranscriptCWD returns the working directory the first records of the
// transcript at path were written in, "" when none of its first
// cwdScanBytes names one or it cannot be read. It is the project's
// directory for a session that has no bottle to say it: the project
// directory's name (ProjectKey) is not enough, many directories sharing
// one.
func TranscriptCWD(path string) string {
	f, _, err := OpenRegular(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	br := bufio.NewReader(io.LimitReader(f, cwdScanBytes))
	var r rawRecord
	for {
		line, err := br.ReadBytes('\n')
		if parseRecord(bytes.TrimSpace(line), &r) && len(r.cwd) > 0 {
			return string(r.cwd)
		}
		if err != nil {
			return ""
		}
	}
}
