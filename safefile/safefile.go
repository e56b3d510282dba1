// Package safefile owns how bottled puts a file in place and how it opens
// one, for every package that does either (the sources' readers, the
// bottle store, the search index, the settings editor, the login agent).
//
// A file is written atomically: its bytes go to a new temporary file in
// the same directory, mode 0600, which is synced and renamed over the
// target, and the directory is synced, so that a crash of the machine
// leaves the old file or the new one, never a part of either (Write). A
// writer of many files can defer the syncs (WriteTemp without sync, then
// SyncFile and SyncDir once for all). Whatever was at the target (a file
// of another mode, a symbolic link) is replaced, never written through.
//
// A file is opened only if it is a regular file, and the open never waits:
// a named pipe would wait for a writer for ever, a file under another
// program's lease until the lease is given up (Open, OpenFollow). Open
// does not follow a symbolic link at the path; OpenFollow does, for the
// files bottled reads where the user may have put a link (transcripts).
//
// A directory bottled makes in its data directory is owner-only and never
// a symbolic link (MkdirPrivate).
package safefile
