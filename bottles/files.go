package bottles

import (
	"os"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
)

// Links. bottled makes no symbolic link in its data directory, so one
// found there was put by someone else (or by a dotfiles tool gone wrong)
// and may point anywhere: a bottle that is a link may name a file outside
// the data directory, which the MCP server would serve and the index take
// in. So bottle files are opened without following a link (safefile.Open),
// and the directories bottled makes are made with safefile.MkdirPrivate.

// ErrNotRegular reports a bottle path that holds something other than a
// regular file (a symbolic link, a FIFO, a directory): it is not read. An
// error that is ErrNotRegular is an ErrNoState too, so that a writer
// replaces the link itself, never what it points to.
var ErrNotRegular = safefile.ErrNotRegular

// openBottle opens the bottle file at path for reading, without following
// a symbolic link and without blocking (a FIFO), and only if it is a
// regular file.
func openBottle(path string) (*os.File, error) {
	f, _, err := safefile.Open(path)
	return f, safefile.AlsoIs(err, render.ErrNoState)
}

// ReadState reads the state recorded in the bottle at path without reading
// the rest of the file. A file that is not a regular one (a symbolic link,
// a FIFO) has none (see openBottle).
func ReadState(path string) (*render.State, error) {
	f, err := openBottle(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return render.ReadStateFrom(f)
}
