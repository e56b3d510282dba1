// write.js drives claude-mem's own SessionStore (the class its worker writes
// the database with) so that bottled's tests read a database written by the
// real writer, not by a Go imitation of it.
//
// Usage: bun write.js <path to SessionStore.js> <db path> <ops.json | ->
//
// The ops file is {"ops":[...]}; "-" reads it from stdin. The ops run in order
// against one SessionStore that is opened once and closed at the end. Running
// again against the same database appends. One JSON line per op result goes
// to stdout; any error stops the run with a message on stderr and exit code 1.
// A final {"op":"kill"} ends the run with SIGKILL instead, leaving the last
// commits in the WAL as a running (or killed) worker would.
// The op reference is the package doc of internal/memwriter.
//
// CLAUDE_MEM_DATA_DIR must be set: SessionStore writes its log files there,
// and falls back to ~/.claude-mem when it is unset.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

// Claude Code's sessions are platform 'claude'; a content session id is
// unique only together with the platform.
const PLATFORM = "claude";

// Fields each op accepts; anything else is refused so that a typo in a test
// fails loudly instead of silently writing a default.
const FIELDS = {
  session: ["content", "project", "prompt"],
  register: ["content", "memory"],
  prompt: ["content", "number", "text"],
  observation: [
    "content", "prompt_number", "type", "title", "subtitle", "narrative",
    "facts", "concepts", "files_read", "files_modified", "created_at_epoch",
    "generated_by_model", "tool_use_ids",
  ],
  tool_use: [
    "content", "tool_use_id", "tool_name", "tool_input", "tool_response",
    "prompt_number", "created_at_epoch", "cwd", "agent_type", "agent_id",
  ],
  summary: [
    "content", "prompt_number", "request", "investigated", "learned",
    "completed", "next_steps", "notes", "files_read", "files_edited",
    "created_at_epoch",
  ],
  checkpoint: ["mode"],
  kill: [],
};

const CHECKPOINT_MODES = ["PASSIVE", "FULL", "RESTART", "TRUNCATE"];

// Failure is thrown, not process.exit()ed, so that the store is closed and
// the results already written to stdout are flushed.
class Failure extends Error {}

function fail(msg) {
  throw new Failure(msg);
}

function str(op, key, { optional = false } = {}) {
  const v = op[key];
  if (v === undefined || v === null) {
    if (optional) return null;
    throw new Error(`missing "${key}"`);
  }
  if (typeof v !== "string") throw new Error(`"${key}" must be a string`);
  return v;
}

function int(op, key, { optional = false } = {}) {
  const v = op[key];
  if (v === undefined || v === null) {
    if (optional) return undefined;
    throw new Error(`missing "${key}"`);
  }
  if (!Number.isSafeInteger(v)) throw new Error(`"${key}" must be an integer`);
  return v;
}

function strings(op, key) {
  const v = op[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) {
    throw new Error(`"${key}" must be an array of strings`);
  }
  return v;
}

// session looks up the sdk_sessions row of a content session the way
// claude-mem resolves Claude Code sessions (empty platform means claude).
function session(store, content) {
  const row = store.db
    .query(
      `SELECT id, memory_session_id, project FROM sdk_sessions
       WHERE COALESCE(NULLIF(platform_source, ''), ?) = ? AND content_session_id = ?`,
    )
    .get(PLATFORM, PLATFORM, content);
  if (!row) throw new Error(`no sdk_sessions row for content session "${content}" (add a "session" op first)`);
  return row;
}

function memorySession(store, content) {
  const row = session(store, content);
  if (!row.memory_session_id) {
    throw new Error(`content session "${content}" has no memory_session_id yet (add a "register" op first)`);
  }
  return row;
}

const handlers = {
  session(store, op) {
    const id = store.createSDKSession(str(op, "content"), str(op, "project"), str(op, "prompt"));
    return { id: Number(id) };
  },

  register(store, op) {
    const row = session(store, str(op, "content"));
    // Register-once: the returned id is the one stored, which is the first
    // one ever offered for this session.
    const memory = store.ensureMemorySessionIdRegistered(row.id, str(op, "memory"));
    return { id: row.id, memory };
  },

  prompt(store, op) {
    const content = str(op, "content");
    const row = session(store, content);
    const id = store.saveUserPrompt(content, int(op, "number"), str(op, "text"), row.id);
    return { id: Number(id) };
  },

  observation(store, op) {
    const content = str(op, "content");
    const row = memorySession(store, content);
    const obs = {
      type: str(op, "type"),
      title: str(op, "title"),
      subtitle: str(op, "subtitle", { optional: true }),
      narrative: str(op, "narrative", { optional: true }),
      facts: strings(op, "facts"),
      concepts: strings(op, "concepts"),
      files_read: strings(op, "files_read"),
      files_modified: strings(op, "files_modified"),
    };
    const res = store.storeObservation(
      row.memory_session_id, row.project, obs,
      int(op, "prompt_number", { optional: true }) ?? null,
      0,
      int(op, "created_at_epoch", { optional: true }),
      str(op, "generated_by_model", { optional: true }) ?? undefined,
    );
    const out = { id: Number(res.id), created_at_epoch: res.createdAtEpoch };
    const toolUseIds = strings(op, "tool_use_ids");
    if (toolUseIds.length > 0) {
      // As the worker does after storing a batch: the tool calls the batch
      // came from point at its (first) observation; first link wins.
      out.linked = store.linkToolUsesToObservation({
        toolUseIds,
        observationId: out.id,
        memorySessionId: row.memory_session_id,
        contentSessionId: content,
      });
    }
    return out;
  },

  tool_use(store, op) {
    const content = str(op, "content");
    const row = session(store, content);
    // The worker's ingest route JSON-encodes the hook's tool_input and
    // tool_response ("{}" when absent) before storing them. It also runs its
    // tag stripper over that JSON, which SessionStore does not export: pass
    // payloads that need stripping already stripped.
    const payload = (v) => (v === undefined ? "{}" : JSON.stringify(v));
    const id = store.upsertToolUse({
      toolUseId: str(op, "tool_use_id"),
      contentSessionId: content,
      sessionDbId: row.id,
      project: row.project,
      platformSource: PLATFORM,
      toolName: str(op, "tool_name"),
      toolInput: payload(op.tool_input),
      toolResponse: payload(op.tool_response),
      cwd: str(op, "cwd", { optional: true }),
      promptNumber: int(op, "prompt_number", { optional: true }) ?? null,
      agentType: str(op, "agent_type", { optional: true }),
      agentId: str(op, "agent_id", { optional: true }),
      createdAtEpoch: int(op, "created_at_epoch", { optional: true }),
    });
    // null: claude-mem skipped the call (its own memory tools are not stored).
    return { id: id === null ? null : Number(id) };
  },

  summary(store, op) {
    const row = memorySession(store, str(op, "content"));
    const sum = {
      request: str(op, "request", { optional: true }),
      investigated: str(op, "investigated", { optional: true }),
      learned: str(op, "learned", { optional: true }),
      completed: str(op, "completed", { optional: true }),
      next_steps: str(op, "next_steps", { optional: true }),
      notes: str(op, "notes", { optional: true }),
      files_read: op.files_read === undefined ? undefined : strings(op, "files_read"),
      files_edited: op.files_edited === undefined ? undefined : strings(op, "files_edited"),
    };
    const res = store.storeSummary(
      row.memory_session_id, row.project, sum,
      int(op, "prompt_number", { optional: true }) ?? null,
      0,
      int(op, "created_at_epoch", { optional: true }),
    );
    return { id: Number(res.id), created_at_epoch: res.createdAtEpoch };
  },

  checkpoint(store, op) {
    const mode = (str(op, "mode", { optional: true }) ?? "TRUNCATE").toUpperCase();
    if (!CHECKPOINT_MODES.includes(mode)) {
      throw new Error(`"mode" must be one of ${CHECKPOINT_MODES.join(", ")}`);
    }
    const r = store.db.query(`PRAGMA wal_checkpoint(${mode})`).get();
    return { busy: r.busy, log: r.log, checkpointed: r.checkpointed };
  },

  // kill is handled by main: it must be the last op.
  kill() {
    return {};
  },
};

function readOps(arg) {
  let text;
  try {
    text = fs.readFileSync(arg === "-" ? 0 : arg, "utf8");
  } catch (e) {
    fail(`read ops from ${arg === "-" ? "stdin" : arg}: ${e.message}`);
  }
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    fail(`parse ops: ${e.message}`);
  }
  if (!doc || !Array.isArray(doc.ops)) fail('ops must be a JSON object {"ops":[...]}');
  return doc.ops;
}

function main() {
  const [storePath, dbPath, opsArg] = process.argv.slice(2);
  if (!storePath || !dbPath || !opsArg) {
    fail("usage: bun write.js <path to SessionStore.js> <db path> <ops.json | ->");
  }
  if (!process.env.CLAUDE_MEM_DATA_DIR) {
    fail("CLAUDE_MEM_DATA_DIR is not set; refusing to let claude-mem write to ~/.claude-mem");
  }
  const ops = readOps(opsArg);

  // The module reads CLAUDE_MEM_DATA_DIR when it loads, so load it only now.
  let SessionStore;
  try {
    ({ SessionStore } = require(path.resolve(storePath)));
  } catch (e) {
    fail(`load SessionStore from ${storePath}: ${e.message}`);
  }
  if (typeof SessionStore !== "function") fail(`${storePath} does not export SessionStore`);

  fs.mkdirSync(path.dirname(path.resolve(dbPath)), { recursive: true });
  let store;
  try {
    store = new SessionStore(dbPath, { syncOpsEnabled: false });
  } catch (e) {
    fail(`open ${dbPath}: ${e.message}`);
  }

  try {
    ops.forEach((op, i) => {
      const kind = op && typeof op === "object" ? op.op : undefined;
      const where = `op #${i + 1} (${kind === undefined ? "?" : JSON.stringify(kind)})`;
      const handler = Object.hasOwn(handlers, kind) ? handlers[kind] : undefined;
      if (!handler) {
        fail(`${where}: unknown op; want one of ${Object.keys(handlers).join(", ")}`);
      }
      const unknown = Object.keys(op).filter((k) => k !== "op" && !FIELDS[kind].includes(k));
      if (unknown.length > 0) fail(`${where}: unknown field(s) ${unknown.join(", ")}`);
      if (kind === "kill" && i !== ops.length - 1) fail(`${where}: must be the last op`);
      let res;
      try {
        res = handler(store, op);
      } catch (e) {
        fail(`${where}: ${e.message}`);
      }
      // Synchronous, so that nothing is lost when the op is kill.
      fs.writeSync(1, JSON.stringify({ op: kind, ...res }) + "\n");
      if (kind === "kill") {
        // Closing the store (which bun does even on process.exit) would
        // checkpoint the WAL into the database file. A live worker keeps its
        // connection open, so its last commits sit in the WAL: die the way a
        // killed worker does to leave them there.
        process.kill(process.pid, "SIGKILL");
      }
    });
  } finally {
    store.close();
  }
}

try {
  main();
} catch (e) {
  process.stderr.write(`write.js: ${e instanceof Failure ? e.message : e.stack}\n`);
  process.exitCode = 1;
}
