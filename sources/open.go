package sources

import (
	"io/fs"
	"os"

	"github.com/bottled-dev/bottled/safefile"
)

// Every transcript bottled reads (a session's, its predecessors', the
// tails and heads of its project directory's other files) is opened
// through OpenRegular, which follows symbolic links (a user may link a
// transcript) and opens only a regular file, without waiting (see
// safefile.OpenFollow). A project directory can hold, under a name
// bottled reads, something that is not a regular file: a named pipe,
// whose open waits for a writer for ever; a socket or a device, which
// cannot be read or whose open has effects; or a regular file under
// another program's lease, whose open waits until the lease is given up.
// None of them may hold up a worker of the daemon, the hook, or an MCP
// call.

// ErrNotRegular reports a path that names something other than a regular
// file (after following symlinks): errors.Is(err, ErrNotRegular). Such an
// error is also an fs.ErrNotExist: no file bottled can read is there, and
// every reader treats it as it treats a missing file (a transcript gone).
var ErrNotRegular = safefile.ErrNotRegular

// StatRegular returns the file info of the regular file at path, following
// symlinks, or an error wrapping ErrNotRegular if something else is there.
func StatRegular(path string) (fs.FileInfo, error) {
	info, err := safefile.StatFollow(path)
	return info, safefile.AlsoIs(err, fs.ErrNotExist)
}

// OpenRegular opens the regular file at path for reading, following
// symlinks, and returns it with the info of the open file; see
// safefile.OpenFollow.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	f, info, err := safefile.OpenFollow(path)
	return f, info, safefile.AlsoIs(err, fs.ErrNotExist)
}
