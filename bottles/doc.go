// Package bottles owns the data directory's bottles, as methods of one
// Store (bottles.Open(dataDir, now, loc)) that carries the directory, the
// clock and the time zone: where they are (BottlesDir, BottlePath,
// ArchiveDir, Store.Path), making one from the sources on disk (Load,
// Store.FromDisk), writing it atomically and never backwards (Store.Write,
// Store.Put, which says what it did, Store.NewBatch with its deferred
// syncs and crash marker, Store.CleanTemp), whether one is fresh against
// its sources (CheckState, Store.Check, Store.Ensure), the archives of
// cleared sessions (Store.Archive, Store.ArchiveLatest), the search
// index's purge marker, which every
// write that drops what the bottle it replaces showed leaves before its
// rename (the writes do, under the directory's lock, and their Result
// says so; the index takes it with Store.TakePurge; Store.AskPurge leaves
// one by itself), and finding a
// session's bottle by the start of its id (Store.FindSession,
// Store.EnsureRead, and Reader, which carries what an interface that reads
// bottles while it runs needs for both). It also reads the data directory's redaction patterns
// (LoadRules), which every render takes.
//
// The bytes of a bottle are package render's, which touches no file; every
// file here is written and opened through package safefile. Data flows one
// way: sources and render come before it; the search index, the daemon,
// the hooks, the MCP server and the commands use it.
package bottles
