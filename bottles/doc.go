// Package bottles owns the data directory's bottles: where they are
// (BottlesDir, BottlePath, ArchiveDir), making one from the sources on disk
// (Load, FromDisk), writing it atomically and never backwards (Write,
// Batch with its deferred syncs and crash marker, CleanTemp), whether one
// is fresh against its sources (Check, Ensure), the archives of cleared
// sessions (Archive, ArchiveLatest), the search index's purge marker
// (AskPurge, TakePurge), and finding a session's bottle by the start of
// its id (FindSession, EnsureRead). The bytes of a bottle are package
// render's; every file is written and opened through package safefile.
//
// Data flows one way: sources and render come before it; the search
// index, the daemon, the hooks, the MCP server and the commands use it.
package bottles
