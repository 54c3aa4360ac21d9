//! opencode's sessions, from its SQLite database (`~/.local/share/opencode/opencode.db`,
//! under `$XDG_DATA_HOME` when set). opencode keeps a session (`session`: id `ses_…`, its
//! `parent_id` when a subagent's, `title`, `directory`) as messages (`message`: id `msg_…`,
//! `data` JSON with `role` user | assistant, `tokens`, `modelID`, ...) made of parts
//! (`part`: id `prt_…`, `data` JSON with a `type`). Ids sort by time, as does the
//! `(time_created, id)` index this reads messages by.
//!
//! Each session is its own conversation; a subagent's (`parent_id`) is linked to its
//! parent's by the caller. A message's parts become events in order, each keeping its part
//! id as the event id:
//! - a user message's `text` is a user event (a `synthetic` one, which opencode writes and
//!   sends as the user's, too: it says so in its part record);
//! - an assistant's `text` is an assistant event, `reasoning` a reasoning event, and a `tool`
//!   part a call (`callID`, `tool`, `state.input`) followed, once the tool finished, by its
//!   result (id `<part id>.result`; `state.output`, or `state.error` with `is_error` when the
//!   state is `error`; the shell's exit code as `exit_code`);
//! - the message's `tokens` and `modelID` are the usage and model of its first event.
//!
//! What `convo resume` needs to write a session back as opencode wrote it travels with the
//! events: the first event of a message has the message (`opencode_message`: its id and
//! `data`), every event its part (`opencode_part`: id and `data` without what the event
//! holds: `text`, a tool state's `input`, `output` and `error`, and its `metadata.output`
//! when that repeats `output`). Parts that make no event (`step-start`, `step-finish`,
//! `patch`, `file`, `agent`, ...) and messages that make none are kept, in order, with the
//! next event (`agent_records`).
//!
//! opencode's compaction is a user message with a `compaction` part, then an assistant
//! message marked `summary` whose text is the summary: a convo compaction of every turn so
//! far with that summary, recording both messages (`agent_history`), which opencode sends
//! in place of the history.
//!
//! A message is read once it is complete (an assistant message with `time.completed` or an
//! `error`, or any message with a later one after it): one still being written is left for
//! the next read, which carries on after the last message read ([`State`]), so a capture
//! reads only what is new. A message or part whose `data` is not JSON is skipped whole and
//! counted. The database is opened read-only, in one read transaction (WAL readers do not
//! block opencode's writes).
//!
//! A revert (`/undo`, the server's `revert`) takes messages back: opencode deletes them once
//! the session goes on, and carries on from the message before them. What was imported of
//! them stays where it is (convo's line is append-only); when the last message read is gone
//! and new ones follow ([`taken_back`]), the caller reads the session whole into a fork
//! ([`read_fork`]): the messages the revert kept, then the new line, as opencode sends it.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{
    Builder, Checkpoint, EMIT_BATCH, Emit, Format, InteropError, Outcome, Place, Report, skip, text_of, title,
};
use crate::clock::Clock;
use crate::event::{Kind, Usage};

/// Who wrote a compaction's summary, as convo records it.
pub const BY: &str = "opencode";

/// The key of the message record on a message's first event.
pub const MESSAGE: &str = "opencode_message";

/// The key of the part record on each event made of a part.
pub const PART: &str = "opencode_part";

/// The tables an opencode database has.
const TABLES: [&str; 3] = ["session", "message", "part"];

/// Why a database cannot be read as opencode's.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("not an opencode database (no `{0}` table)")]
    NotOpencode(&'static str),
    #[error("not a readable SQLite database ({0})")]
    Sqlite(#[source] rusqlite::Error),
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}

/// The first bytes of every SQLite database file.
pub const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Whether `head` (a file's first bytes) starts an SQLite database.
pub fn is_sqlite(head: &[u8]) -> bool {
    head.starts_with(SQLITE_HEADER)
}

/// An opencode database, open read-only in one read transaction: every read sees the same
/// state of it.
pub struct Db {
    conn: Connection,
}

/// A session as its row says, data from the database (never a path or id convo trusts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: String,
    pub parent: Option<String>,
    /// Its title, unless opencode's placeholder (`New session - <time>`).
    pub title: Option<String>,
    pub directory: Option<String>,
    /// The opencode version that made the session.
    pub version: Option<String>,
}

impl Db {
    pub fn open(path: &Path) -> Result<Db, DbError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)?;
        // opencode may be writing: a reader waits out a lock it meets instead of failing.
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        for table in TABLES {
            let found: Option<i64> = conn
                .query_row("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", [table], |r| r.get(0))
                .optional()?;
            if found.is_none() {
                return Err(DbError::NotOpencode(table));
            }
        }
        conn.execute_batch("BEGIN")?;
        Ok(Db { conn })
    }

    /// Every session, oldest first (a parent before its subagents).
    pub fn sessions(&self) -> Result<Vec<Session>, DbError> {
        // An older (or hand-made) table without `version` reads as no version.
        let versioned: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM pragma_table_info('session') WHERE name = 'version'",
            [],
            |r| r.get(0),
        )?;
        let version = if versioned > 0 { "version" } else { "NULL" };
        let mut stmt = self.conn.prepare(&format!(
            "SELECT id, parent_id, title, directory, {version} FROM session ORDER BY time_created, id"
        ))?;
        let rows = stmt.query_map([], |r| {
            Ok(Session {
                id: r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                parent: r.get(1)?,
                title: r.get::<_, Option<String>>(2)?.filter(|t| !placeholder(t)),
                directory: r.get(3)?,
                version: r.get::<_, Option<String>>(4)?.filter(|v| !v.is_empty()),
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

/// opencode's title before it has one (`New session - 2026-…`, `Child session - …`).
fn placeholder(title: &str) -> bool {
    let t = title.trim();
    t.is_empty()
        || ["New session - ", "Child session - "]
            .iter()
            .any(|p| t.strip_prefix(p).is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit())))
}

/// Where a read of a session stopped: the last message read, by its place in the index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub last_time: i64,
    /// A compaction asked for whose summary has not come yet: the message asking it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compacting: Option<Value>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl State {
    pub fn is_empty(&self) -> bool {
        self.last.is_none() && self.compacting.is_none()
    }
}

/// A message and its parts as read, data still text.
struct Row {
    id: String,
    time: i64,
    data: String,
    parts: Vec<(String, String)>,
}

/// Whether a revert took back messages read before (`read`: where the read stopped) and
/// the session went on after it: the last message read is gone and a later one is there.
pub fn taken_back(db: &Db, session: &Session, read: &State) -> Result<bool, DbError> {
    let Some(last) = &read.last else { return Ok(false) };
    let there: Option<i64> =
        db.conn.query_row("SELECT 1 FROM message WHERE id = ?1", [last], |row| row.get(0)).optional()?;
    if there.is_some() {
        return Ok(false);
    }
    let after: Option<i64> = db
        .conn
        .query_row(
            "SELECT 1 FROM message WHERE session_id = ?1 AND (time_created, id) > (?2, ?3) LIMIT 1",
            params![session.id, read.last_time, last],
            |row| row.get(0),
        )
        .optional()?;
    Ok(after.is_some())
}

/// Import session `session` of `db`, after the messages a [`Checkpoint`] says were read.
pub fn read_session(
    db: &Db,
    session: &Session,
    from: Option<&Checkpoint>,
    clock: &Clock,
    emit: &mut dyn Emit,
) -> Result<Outcome, InteropError> {
    read(db, session, from, None, clock, emit).map(|(outcome, _)| outcome)
}

/// Import session `session` of `db` whole, after a revert took back messages read up to
/// `kept`: the outcome, and the turns of the messages the revert kept (those at or before
/// `kept`'s point still there), which the fork shares with the conversation it goes on from.
pub fn read_fork(
    db: &Db,
    session: &Session,
    kept: &State,
    clock: &Clock,
    emit: &mut dyn Emit,
) -> Result<(Outcome, u64), InteropError> {
    read(db, session, None, Some(kept), clock, emit)
}

fn read(
    db: &Db,
    session: &Session,
    from: Option<&Checkpoint>,
    kept: Option<&State>,
    clock: &Clock,
    emit: &mut dyn Emit,
) -> Result<(Outcome, u64), InteropError> {
    let emit = &mut super::Stamped::new(super::resume::Agent::Opencode, emit);
    emit.version = session.version.clone();
    let kept_until = kept.map(|k| (k.last_time, k.last.clone().unwrap_or_default()));
    let mut kept_turns = 0;
    let mut r = Reader {
        b: match from {
            Some(c) => Builder::from_checkpoint(clock, c),
            None => Builder::new(clock),
        },
        report: Report::default(),
        state: from.map(|c| c.opencode.clone()).unwrap_or_default(),
        prompt: None,
    };
    let (after_time, after_id) = (r.state.last_time, r.state.last.clone().unwrap_or_default());
    // Messages a revert took back with nothing after them yet (once something follows, the
    // caller reads a fork instead): what was imported of them stays, and the report says so.
    if r.state.last.is_some() {
        let there: Option<i64> = db
            .conn
            .query_row("SELECT 1 FROM message WHERE id = ?1", [&after_id], |row| row.get(0))
            .optional()
            .map_err(DbError::from)?;
        if there.is_none() {
            skip(&mut r.report, "opencode messages taken back (reverted) after they were imported: kept");
        }
    }
    let mut stmt = db
        .conn
        .prepare_cached(
            "SELECT m.id, m.time_created, m.data, p.id, p.data FROM message m \
             LEFT JOIN part p ON p.message_id = m.id \
             WHERE m.session_id = ?1 AND (m.time_created, m.id) > (?2, ?3) \
             ORDER BY m.time_created, m.id, p.id",
        )
        .map_err(DbError::from)?;
    let mut rows = stmt.query(params![session.id, after_time, after_id]).map_err(DbError::from)?;
    let mut current: Option<Row> = None;
    while let Some(row) = rows.next().map_err(DbError::from)? {
        let id: String = row.get(0).map_err(DbError::from)?;
        if current.as_ref().is_none_or(|c| c.id != id) {
            if let Some(done) = current.take() {
                let at = (done.time, done.id.clone());
                r.message(done, true);
                if kept_until.as_ref().is_some_and(|k| at <= *k) {
                    kept_turns = r.b.turns();
                }
                emit.drafts(0, r.b.take())?;
            }
            let data = text_column(row.get_ref(2).map_err(DbError::from)?);
            current = Some(Row { id, time: row.get(1).map_err(DbError::from)?, data, parts: Vec::new() });
        }
        if let (Some(c), Some(part)) = (current.as_mut(), row.get::<_, Option<String>>(3).map_err(DbError::from)?) {
            c.parts.push((part, text_column(row.get_ref(4).map_err(DbError::from)?)));
        }
        if r.b.drafts_len() >= EMIT_BATCH {
            emit.drafts(0, r.b.take())?;
        }
    }
    if let Some(last) = current.take() {
        let at = (last.time, last.id.clone());
        r.message(last, false);
        if kept_until.as_ref().is_some_and(|k| at <= *k) {
            kept_turns = r.b.turns();
        }
    }
    emit.drafts(0, r.b.take())?;
    let mut checkpoint = r.b.checkpoint();
    checkpoint.opencode = r.state;
    let title = session.title.clone().or(r.prompt);
    let place = Place { cwd: Place::field(session.directory.as_ref().map(|d| json!(d)).as_ref()), ..Place::default() };
    let outcome = Outcome {
        format: Format::Opencode,
        conversations: vec![(title, None)],
        report: r.report,
        checkpoint: Some(checkpoint),
        place,
        forks: Vec::new(),
    };
    Ok((outcome, kept_turns))
}

/// A text column as text (a blob of UTF-8 reads the same; anything else is no JSON).
fn text_column(value: rusqlite::types::ValueRef<'_>) -> String {
    match value {
        rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
            String::from_utf8_lossy(t).into_owned()
        }
        _ => String::new(),
    }
}

struct Reader<'c> {
    b: Builder<'c>,
    report: Report,
    state: State,
    /// The first prompt read, a title when the session has none.
    prompt: Option<String>,
}

/// What a part becomes.
enum Made {
    Event { kind: Kind, id: String, ts: Option<String>, extra: Map<String, Value> },
    Record(Value),
}

impl Reader<'_> {
    /// One message with its parts; `complete` when a later one follows it. One still being
    /// written is left unread (the state stays before it).
    fn message(&mut self, row: Row, complete: bool) {
        let Ok(Value::Object(data)) = serde_json::from_str::<Value>(&row.data) else {
            self.report.records += 1 + row.parts.len();
            skip(&mut self.report, "opencode message whose data is not a JSON object (with its parts)");
            self.advance(&row);
            return;
        };
        let role = data.get("role").and_then(Value::as_str).unwrap_or_default().to_owned();
        let done = match role.as_str() {
            "assistant" => {
                data.get("error").is_some()
                    || data.get("time").and_then(|t| t.get("completed")).is_some_and(|c| !c.is_null())
            }
            _ => !row.parts.is_empty(),
        };
        if !complete && !done {
            // Said, so that an import of a database opencode stopped writing mid-message
            // (a crash, a copy) does not lose its last message silently.
            skip(&mut self.report, "opencode message still being written (the next import reads it once complete)");
            return;
        }
        self.report.records += 1 + row.parts.len();
        self.advance(&row);
        let mut record = Map::new();
        record.insert("id".into(), Value::String(row.id.clone()));
        record.extend(data.clone());
        let record = Value::Object(record);
        let mut parts = Vec::new();
        for (id, text) in &row.parts {
            match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(part)) => {
                    let mut p = Map::new();
                    p.insert("id".into(), Value::String(id.clone()));
                    p.extend(part);
                    parts.push(p);
                }
                _ => skip(&mut self.report, "opencode part whose data is not a JSON object"),
            }
        }
        let ts = millis(data.get("time").and_then(|t| t.get("created")));
        match role.as_str() {
            "user" => self.user(record, parts, ts),
            "assistant" if data.get("summary").and_then(Value::as_bool) == Some(true) => {
                self.summary(record, parts, ts)
            }
            "assistant" => self.assistant(record, parts, ts),
            _ => skip(&mut self.report, "opencode message of no known role"),
        }
    }

    fn advance(&mut self, row: &Row) {
        self.state.last = Some(row.id.clone());
        self.state.last_time = row.time;
    }

    fn user(&mut self, record: Value, parts: Vec<Map<String, Value>>, ts: Option<String>) {
        if parts.iter().any(|p| p.get("type").and_then(Value::as_str) == Some("compaction")) {
            let parts: Vec<Value> = parts.into_iter().map(Value::Object).collect();
            self.state.compacting = Some(json!({"message": record, "parts": parts}));
            return;
        }
        let mut made = Vec::new();
        for mut part in parts {
            match part.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = part.shift_remove("text").map(|t| text_of(&t)).unwrap_or_default();
                    if text.trim().is_empty() {
                        part.insert("text".into(), Value::String(text));
                        made.push(Made::Record(json!({PART: part})));
                        continue;
                    }
                    let synthetic = part.get("synthetic").and_then(Value::as_bool) == Some(true);
                    if !synthetic && self.prompt.is_none() {
                        self.prompt = title::from_prompt(&text);
                    }
                    made.push(event(&part, Kind::User { content: text }, part_ts(&part).or(ts.clone()), None));
                }
                _ => made.push(Made::Record(json!({PART: part}))),
            }
        }
        self.put(record, made, None);
    }

    fn assistant(&mut self, record: Value, parts: Vec<Map<String, Value>>, ts: Option<String>) {
        let mut made = Vec::new();
        for mut part in parts {
            let ts = part_ts(&part).or(ts.clone());
            match part.get("type").and_then(Value::as_str) {
                Some(kind @ ("text" | "reasoning")) => {
                    let kind = kind.to_owned();
                    let text = part.shift_remove("text").map(|t| text_of(&t)).unwrap_or_default();
                    if text.is_empty() {
                        part.insert("text".into(), Value::String(text));
                        made.push(Made::Record(json!({PART: part})));
                        continue;
                    }
                    let kind = if kind == "text" {
                        Kind::Assistant { content: text }
                    } else {
                        Kind::Reasoning { content: text }
                    };
                    made.push(event(&part, kind, ts, None));
                }
                Some("tool") => made.extend(self.tool(part, ts)),
                _ => made.push(Made::Record(json!({PART: part}))),
            }
        }
        let usage = record.get("tokens").and_then(usage);
        self.put(record, made, usage);
    }

    /// A tool part: its call, and its result once the tool finished.
    fn tool(&mut self, mut part: Map<String, Value>, ts: Option<String>) -> Vec<Made> {
        let id = part.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        let call_id = part.get("callID").and_then(Value::as_str).filter(|c| !c.is_empty()).unwrap_or(&id).to_owned();
        let name = part.get("tool").and_then(Value::as_str).unwrap_or("unknown").to_owned();
        let mut state = match part.shift_remove("state") {
            Some(Value::Object(state)) => state,
            _ => Map::new(),
        };
        let arguments = state.shift_remove("input").unwrap_or_else(|| json!({}));
        let output = state.shift_remove("output");
        let error = state.shift_remove("error");
        if let (Some(Value::Object(meta)), Some(out)) = (state.get_mut("metadata"), &output)
            && meta.get("output") == Some(out)
        {
            meta.shift_remove("output");
        }
        let status = state.get("status").and_then(Value::as_str).unwrap_or_default().to_owned();
        let exit = state.get("metadata").and_then(|m| m.get("exit")).filter(|e| e.is_i64()).cloned();
        part.insert("state".into(), Value::Object(state));
        let mut made =
            vec![event(&part, Kind::ToolCall { call_id: call_id.clone(), name, arguments }, ts.clone(), None)];
        let (content, is_error) = match status.as_str() {
            // A command that ran and exited non-zero is opencode's `completed`: a failure.
            "completed" => (
                output.as_ref().map(text_of).unwrap_or_default(),
                exit.as_ref().and_then(Value::as_i64).is_some_and(|e| e != 0),
            ),
            "error" => (error.as_ref().or(output.as_ref()).map(text_of).unwrap_or_default(), true),
            _ => {
                skip(&mut self.report, "opencode tool call that never finished (no result)");
                return made;
            }
        };
        let mut extra = Map::new();
        if let Some(exit) = exit {
            extra.insert("exit_code".into(), exit);
        }
        let end = millis(part.get("state").and_then(|s| s.get("time")).and_then(|t| t.get("end"))).or(ts);
        made.push(Made::Event {
            kind: Kind::ToolResult { call_id, content, is_error },
            id: format!("{id}.result"),
            ts: end,
            extra,
        });
        made
    }

    /// The summary of a compaction asked for before: a compaction of every turn so far.
    fn summary(&mut self, record: Value, parts: Vec<Map<String, Value>>, ts: Option<String>) {
        let text: Vec<String> = parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str).map(str::to_owned))
            .collect();
        let asked = self.state.compacting.take().unwrap_or(Value::Null);
        let parts: Vec<Value> = parts.into_iter().map(Value::Object).collect();
        let history = json!([asked, {"message": record, "parts": parts}]);
        if !self.b.compaction_with(&mut self.report, &text.join("\n"), BY, ts.as_deref(), Some(history.clone())) {
            skip(&mut self.report, "opencode compaction summary with no turn before it, or no text");
            self.b.hold(json!({"opencode_compaction": history}));
        }
    }

    /// A message's events and records, in order: the message record on its first event (or,
    /// if it made none, held as a record itself, first), its usage and model there too.
    fn put(&mut self, record: Value, made: Vec<Made>, usage: Option<Usage>) {
        let mut model = record.get("modelID").filter(|m| m.is_string()).cloned();
        let mut record = Some(record);
        if !made.iter().any(|m| matches!(m, Made::Event { .. }))
            && let Some(r) = record.take()
        {
            self.b.hold(json!({MESSAGE: r}));
        }
        let mut usage = usage;
        for m in made {
            match m {
                Made::Record(r) => self.b.hold(r),
                Made::Event { kind, id, ts, mut extra } => {
                    if let Some(r) = record.take() {
                        extra.insert(MESSAGE.into(), r);
                    }
                    if let Some(u) = usage.take() {
                        extra.insert("usage".into(), serde_json::to_value(u).unwrap_or_default());
                    }
                    // The model as the message says it, with or without a count of tokens.
                    if let Some(model) = model.take() {
                        extra.insert("model".into(), model);
                    }
                    if !self.b.push_with(&mut self.report, kind, Some(&id), ts.as_deref(), extra) {
                        skip(&mut self.report, "opencode tool result of no call");
                    }
                }
            }
        }
    }
}

/// The event a part makes, keeping the part's record (what is left of it).
fn event(part: &Map<String, Value>, kind: Kind, ts: Option<String>, extra: Option<Map<String, Value>>) -> Made {
    let id = part.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut extra = extra.unwrap_or_default();
    extra.insert(PART.into(), Value::Object(part.clone()));
    Made::Event { kind, id, ts, extra }
}

/// When a part began (`time.start`), if it says.
fn part_ts(part: &Map<String, Value>) -> Option<String> {
    millis(part.get("time").and_then(|t| t.get("start")))
}

/// Milliseconds since the epoch as an RFC 3339 time.
fn millis(value: Option<&Value>) -> Option<String> {
    let ms = value?.as_i64()?;
    let t = chrono::DateTime::from_timestamp_millis(ms)?;
    Some(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// opencode's `tokens` of an assistant message (`input` outside the cache, `output` without
/// `reasoning`, `cache.read`, `cache.write`) as convo's usage; `None` when all are zero.
fn usage(tokens: &Value) -> Option<Usage> {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64);
    let cache = tokens.get("cache");
    let reasoning = n(tokens.get("reasoning")).filter(|r| *r > 0);
    let output = match (n(tokens.get("output")), reasoning) {
        (None, None) => None,
        (o, r) => Some(o.unwrap_or(0) + r.unwrap_or(0)),
    };
    let u = Usage {
        input_tokens: n(tokens.get("input")),
        output_tokens: output,
        cache_read_tokens: n(cache.and_then(|c| c.get("read"))).filter(|c| *c > 0),
        cache_write_tokens: n(cache.and_then(|c| c.get("write"))).filter(|c| *c > 0),
        reasoning_tokens: reasoning,
    };
    let counted =
        [u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens].iter().flatten().sum::<u64>();
    (counted > 0).then_some(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opencodes_tokens_are_convos_usage_with_reasoning_part_of_the_output() {
        let tokens =
            json!({"total": 1240, "input": 200, "output": 20, "reasoning": 20, "cache": {"write": 3, "read": 1000}});
        let u = usage(&tokens).unwrap();
        assert_eq!(
            (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.reasoning_tokens),
            (Some(200), Some(40), Some(1000), Some(3), Some(20))
        );
        let none = json!({"total": 0, "input": 0, "output": 0, "reasoning": 0, "cache": {"write": 0, "read": 0}});
        assert!(usage(&none).is_none(), "a message that made no call counts nothing");
    }

    #[test]
    fn opencodes_placeholder_titles_are_no_titles() {
        assert!(placeholder("New session - 2026-11-28T09:01:23.737Z"));
        assert!(placeholder("Child session - 2026-11-28T09:01:23.737Z"));
        assert!(placeholder("  "));
        assert!(!placeholder("New session - the login page"));
        assert!(!placeholder("Fix the login flow"));
    }
}
