//! An opencode session, as `opencode run --session ID` and the TUI read it: rows of its
//! SQLite database (`<data>/opencode/opencode.db`), one in `session`, one per message in
//! `message` and one per part of a message in `part`, each row's `data` the JSON opencode
//! keeps. opencode loads a session's messages ordered by creation time and id, and a
//! message's parts by id, and turns them into the model's messages itself; its sync log
//! (`event`) is not needed to read a session.
//!
//! Ids are opencode's own shape (`ses_`, `msg_`, `prt_`, twelve hex digits of the
//! millisecond and a counter, fourteen random characters), ascending for messages and
//! parts so that what opencode adds after them sorts after them; a session's id counts
//! down, as opencode's do. Times are the events' own, kept rising and never later than
//! the hand-over, so the turns opencode adds come after convo's.
//!
//! A conversation from opencode goes back as opencode recorded it: each message's data
//! (`opencode_message`), each event's part (`opencode_part`, its text, call input, output or
//! error filled back in from the event) and the parts and messages that made no event
//! (`agent_records`: a step's start and end, a patch), under new ids, `parentID`s renamed
//! with them; a part kept with the next event belongs to the message made before it (ids
//! sort by time). Its compaction is the two messages opencode recorded. What would reach
//! outside the session is not written back: the directory a message ran in is the one the
//! caller names, and a file part that names a file or URL (opencode would read it) is left out.
//!
//! Anything else is written as opencode writes a session: a user message of text parts, or
//! an assistant message of one step (`step-start`, its text and tool parts, `step-finish`)
//! that a tool's result ends; tool calls and results as text the model reads (the call on
//! the assistant's side, the result on the user's), reasoning left out. A compaction
//! (`--compacted`'s summary) is opencode's own: a user message with a `compaction` part and
//! the summary as the assistant's `summary` answer to it, after which opencode sends only
//! those and what follows.
//!
//! Everything is written in the caller's transaction: nothing is there until it commits.

use std::collections::HashMap;

use rusqlite::{Connection, params};
use serde_json::{Map, Value, json};

use super::{AsText, Part, Session, Side, written_call_id};
use crate::event::{Event, Kind, Usage};
use crate::interop::AGENT_RECORDS;
use crate::interop::opencode::{MESSAGE, PART};

/// The model named on messages when neither the conversation nor the caller names one.
const MODEL: (&str, &str) = ("convo", "convo");

/// opencode's agent that runs a session's turns by default.
const AGENT: &str = "build";

/// The longest title made of the first prompt (opencode's own titles are short).
const TITLE_CHARS: usize = 100;

/// Where the session is written, as opencode finds it for the directory.
#[derive(Debug, Clone)]
pub struct Place {
    /// opencode's project: the repository's first root commit, or `global`.
    pub project: String,
    /// The project's directory (`/` for `global`), which `path` is relative to.
    pub worktree: String,
    /// `git` when the directory is in a repository.
    pub vcs: Option<String>,
    /// The model the user's opencode config names (`provider/model`): what convo's messages
    /// name when the conversation does not say.
    pub model: Option<String>,
}

/// opencode's database, opened to write (never made), waiting for a running opencode's
/// writes rather than failing at once.
pub fn open(path: &std::path::Path) -> rusqlite::Result<Connection> {
    use rusqlite::OpenFlags;
    let db = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    db.busy_timeout(std::time::Duration::from_secs(10))?;
    Ok(db)
}

/// Whether `db` has the tables a session is written to: convo writes into opencode's
/// schema, never makes one.
pub fn is_opencodes(db: &Connection) -> rusqlite::Result<bool> {
    let tables: i64 = db.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('session', 'message', 'part', 'project')",
        [],
        |r| r.get(0),
    )?;
    Ok(tables == 4)
}

/// Whether a session `id` is in the database. Asked inside the write transaction, which
/// holds the database's write lock, no other writer can add it before convo's rows.
pub fn has_session(db: &Connection, id: &str) -> rusqlite::Result<bool> {
    let n: i64 = db.query_row("SELECT count(*) FROM session WHERE id = ?1", [id], |r| r.get(0))?;
    Ok(n > 0)
}

/// Take session `session` out of the database at `path` again (convo wrote it, and its own
/// commit did not land).
pub fn delete_session(path: &std::path::Path, session: &str) -> rusqlite::Result<()> {
    let mut db = open(path)?;
    let tx = db.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute("DELETE FROM part WHERE session_id = ?1", [session])?;
    tx.execute("DELETE FROM message WHERE session_id = ?1", [session])?;
    tx.execute("DELETE FROM session WHERE id = ?1", [session])?;
    tx.commit()
}

/// opencode's ids: a prefix, the millisecond times 4096 plus a counter (48 bits, in hex),
/// and fourteen random characters.
pub struct Ids<'a> {
    fresh: &'a mut dyn FnMut() -> String,
    last_ms: i64,
    counter: i64,
}

impl<'a> Ids<'a> {
    /// `fresh` gives a new ULID each call, whose random end makes an id's random end.
    pub fn new(fresh: &'a mut dyn FnMut() -> String) -> Self {
        Ids { fresh, last_ms: 0, counter: 0 }
    }

    fn stamp(&mut self, ms: i64) -> u64 {
        if ms != self.last_ms {
            self.last_ms = ms;
            self.counter = 0;
        }
        self.counter += 1;
        (ms.wrapping_mul(0x1000).wrapping_add(self.counter) as u64) & 0xffff_ffff_ffff
    }

    /// Fourteen base-62 characters of a fresh ULID's digest: all of its bits count (a
    /// ULID's random part alone repeats between runs of a sealed clock).
    fn random(&mut self) -> String {
        use sha2::Digest;
        const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        let digest = sha2::Sha256::digest((self.fresh)().as_bytes());
        digest.iter().take(14).map(|b| char::from(BASE62[usize::from(*b) % 62])).collect()
    }

    /// An id that sorts after every one made before it (in a later or the same millisecond).
    pub fn ascending(&mut self, prefix: &str, ms: i64) -> String {
        let n = self.stamp(ms);
        format!("{prefix}_{n:012x}{}", self.random())
    }

    /// An id that sorts before those made earlier: opencode lists newer sessions first.
    pub fn descending(&mut self, prefix: &str, ms: i64) -> String {
        let n = !self.stamp(ms) & 0xffff_ffff_ffff;
        format!("{prefix}_{n:012x}{}", self.random())
    }
}

/// The message being gathered.
struct Message {
    id: String,
    side: Side,
    created: i64,
    updated: i64,
    /// The message's data as opencode recorded it (without its id): written back as it
    /// was, for a conversation from opencode.
    recorded: Option<Map<String, Value>>,
    /// The parts' data with the millisecond each was made.
    parts: Vec<(i64, Value)>,
    /// Tool parts waiting for their result, by the call's convo id: the part's index.
    calls: HashMap<String, usize>,
    /// A tool's result arrived: the model's next words are a new step, a new message.
    answered: bool,
    usage: Option<Usage>,
}

impl Message {
    fn new(id: String, side: Side, ms: i64) -> Message {
        Message {
            id,
            side,
            created: ms,
            updated: ms,
            recorded: None,
            parts: Vec::new(),
            calls: HashMap::new(),
            answered: false,
            usage: None,
        }
    }
}

/// An opencode session written a message at a time into a transaction.
pub struct Stream<'a> {
    db: &'a Connection,
    session: &'a Session<'a>,
    place: &'a Place,
    ids: Ids<'a>,
    /// The hand-over's time: no message is made later than it.
    now: i64,
    /// The latest time given to a message.
    last: i64,
    begun: bool,
    pending: Option<Message>,
    /// opencode's parts kept with the next event that belong to no message yet (a step's
    /// end, the next step's start): the message they were made in takes them.
    loose: Vec<Value>,
    last_user: Option<String>,
    /// The ids written for opencode's own message ids (what `parentID` names).
    renamed: HashMap<String, String>,
    text: AsText,
    /// The first prompt, for a title when the conversation has none.
    first_prompt: Option<String>,
    messages: u64,
    last_message: Option<(String, i64)>,
}

/// What a finished stream wrote.
#[derive(Debug, Clone, Default)]
pub struct Written {
    pub messages: u64,
    /// The id of the last message written, and its time: what opencode adds later sorts
    /// after it.
    pub last_message: Option<String>,
    pub last_time: i64,
}

impl<'a> Stream<'a> {
    /// `now` is the hand-over's time in milliseconds; the session's id is `session.id`
    /// (made by [`session_id`]); `fresh` gives a new ULID each call.
    pub fn new(
        db: &'a Connection,
        session: &'a Session<'a>,
        place: &'a Place,
        fresh: &'a mut dyn FnMut() -> String,
        now: i64,
    ) -> Self {
        Stream {
            db,
            session,
            place,
            ids: Ids::new(fresh),
            now,
            last: 0,
            begun: false,
            pending: None,
            loose: Vec::new(),
            last_user: None,
            renamed: HashMap::new(),
            text: AsText::default(),
            first_prompt: None,
            messages: 0,
            last_message: None,
        }
    }

    fn model(&self) -> (String, String) {
        let configured = self.place.model.as_deref().and_then(|m| m.split_once('/'));
        let (p, m) = configured.unwrap_or(MODEL);
        (p.to_owned(), m.to_owned())
    }

    fn begin(&mut self) -> rusqlite::Result<()> {
        if self.begun {
            return Ok(());
        }
        self.begun = true;
        let s = self.session;
        let created = millis(s.created).unwrap_or(self.now);
        let title = s.title.map(str::to_owned).unwrap_or_else(|| placeholder_title(s.created));
        let path = relative(&self.place.worktree, s.cwd);
        let slug = format!("convo-{}", self.ids.random().to_ascii_lowercase().get(..6).unwrap_or_default());
        self.db.execute(
            "INSERT OR IGNORE INTO project (id, worktree, vcs, time_created, time_updated, sandboxes)
             VALUES (?1, ?2, ?3, ?4, ?4, '[]')",
            params![self.place.project, self.place.worktree, self.place.vcs, created],
        )?;
        self.db.execute(
            "INSERT INTO session (id, project_id, slug, directory, path, title, version, time_created, time_updated)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
            params![s.id, self.place.project, slug, s.cwd, path, title, version(self.db), created],
        )?;
        Ok(())
    }

    /// The time for a message made at `ms`: its own, rising, never after now.
    fn time_ms(&mut self, ms: Option<i64>) -> i64 {
        let t = ms.unwrap_or(self.last).min(self.now).max(self.last);
        self.last = t;
        t
    }

    fn time(&mut self, ts: &str) -> i64 {
        self.time_ms(millis(ts))
    }

    pub fn part(&mut self, part: Part<'_>) -> rusqlite::Result<()> {
        self.begin()?;
        let event = match part {
            Part::Compacted { summary, agent_history, ts } => {
                return match agent_history.filter(|_| self.session.native) {
                    Some(history) if history[0].is_object() => self.recorded_pair(history),
                    _ => self.compacted(summary, ts),
                };
            }
            Part::Event(event) if part.is_sent_to(super::Agent::Opencode, self.session) => event,
            Part::Event(_) => return Ok(()),
        };
        // Another agent's event reaches opencode converted, never as that agent's records.
        if self.session.native_for(super::Agent::Opencode, event) {
            for record in event.extra.get(AGENT_RECORDS).and_then(Value::as_array).into_iter().flatten() {
                self.record(record)?;
            }
            if let Some(Value::Object(message)) = event.extra.get(MESSAGE) {
                self.open(message, Some(&event.ts))?;
            }
            if self.own(event) {
                return Ok(());
            }
        }
        self.other(event)
    }

    /// One of opencode's records kept with an event: a message that made no event, or a
    /// part that made none (a step's start or end, a patch, a file).
    fn record(&mut self, record: &Value) -> rusqlite::Result<()> {
        if let Some(Value::Object(message)) = record.get(MESSAGE) {
            return self.open(message, None);
        }
        if let Some(Value::Object(part)) = record.get(PART).filter(|p| !reaches_out(p)) {
            self.loose.push(Value::Object(part.clone()));
        }
        if let Some(history) = record.get("opencode_compaction") {
            self.flush()?;
            return self.recorded_pair(history);
        }
        Ok(())
    }

    /// Begin the message opencode recorded as `message` (with its id): the loose parts made
    /// before it (by their ids, which sort by time) end the message before it.
    fn open(&mut self, message: &Map<String, Value>, ts: Option<&str>) -> rusqlite::Result<()> {
        let source_id = message.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        let key = |id: &str| id.split_once('_').map(|(_, rest)| rest.to_owned()).unwrap_or_default();
        let (before, after): (Vec<Value>, Vec<Value>) = std::mem::take(&mut self.loose)
            .into_iter()
            .partition(|p| p.get("id").and_then(Value::as_str).is_some_and(|id| key(id) < key(&source_id)));
        self.loose = before;
        self.flush()?;
        self.loose = after;
        let mut data = message.clone();
        data.shift_remove("id");
        // Where it ran is where it runs now: the recorded directory is another machine's.
        if data.contains_key("path") {
            data.insert("path".into(), json!({"cwd": self.session.cwd, "root": self.place.worktree}));
        }
        let recorded_ms = data.get("time").and_then(|t| t.get("created")).and_then(Value::as_i64);
        let ms = self.time_ms(recorded_ms.or_else(|| ts.and_then(millis)));
        let side = if data.get("role").and_then(Value::as_str) == Some("user") { Side::User } else { Side::Model };
        let id = self.ids.ascending("msg", ms);
        self.renamed.insert(source_id, id.clone());
        let mut m = Message::new(id, side, ms);
        m.recorded = Some(data);
        self.pending = Some(m);
        Ok(())
    }

    /// An event of a message opencode recorded, into that message as the part it was:
    /// false when it is not one (an event added in convo), which is then written as any.
    fn own(&mut self, event: &Event) -> bool {
        let Some(m) = self.pending.as_mut().filter(|m| m.recorded.is_some()) else { return false };
        let loose = std::mem::take(&mut self.loose);
        m.parts.extend(loose.into_iter().map(|p| (m.created, p)));
        let part = match event.extra.get(PART) {
            Some(Value::Object(part)) => part,
            _ => {
                // A result goes into its call's part; anything else without a part record
                // is convo's, not opencode's.
                let Kind::ToolResult { call_id, content, is_error } = &event.kind else { return false };
                let Some(&i) = m.calls.get(call_id) else { return false };
                if let Some((_, part)) = m.parts.get_mut(i) {
                    // As opencode recorded it: a command that exited non-zero is a failure to
                    // convo, and `completed` with its output to opencode.
                    let recorded = part["state"]["status"].as_str().map(|s| s == "error");
                    let key = if recorded.unwrap_or(*is_error) { "error" } else { "output" };
                    part["state"][key] = json!(content);
                }
                m.calls.remove(call_id);
                return true;
            }
        };
        let mut part = part.clone();
        match &event.kind {
            Kind::User { content } | Kind::Assistant { content } | Kind::Reasoning { content } => {
                part.insert("text".into(), json!(content));
                if self.first_prompt.is_none() && matches!(event.kind, Kind::User { .. }) {
                    self.first_prompt = Some(content.chars().take(TITLE_CHARS).collect());
                }
            }
            Kind::ToolCall { call_id, arguments, .. } => {
                if let Some(Value::Object(state)) = part.get_mut("state") {
                    state.insert("input".into(), arguments.clone());
                }
                m.calls.insert(call_id.clone(), m.parts.len());
            }
            _ => return false,
        }
        part.shift_remove("id");
        m.parts.push((m.created, Value::Object(part)));
        true
    }

    /// An event of a conversation from elsewhere (or one added in convo): into a message
    /// of its side, tool calls and results as text unless the conversation is opencode's.
    fn other(&mut self, event: &Event) -> rusqlite::Result<()> {
        let native = self.session.native_for(super::Agent::Opencode, event);
        let side = match (&event.kind, native) {
            (Kind::User { .. }, _) | (Kind::ToolResult { .. }, false) => Side::User,
            (Kind::Assistant { .. } | Kind::ToolCall { .. } | Kind::ToolResult { .. }, _) => Side::Model,
            (Kind::Reasoning { .. }, true) => Side::Model,
            // Reasoning is the provider's own; the system prompt is opencode's.
            _ => return Ok(()),
        };
        let result = matches!(event.kind, Kind::ToolResult { .. });
        let new_step =
            |m: &Message| m.side != side || m.recorded.is_some() || (side == Side::Model && m.answered && !result);
        if self.pending.as_ref().is_some_and(new_step) {
            self.flush()?;
        }
        let ms = self.time(&event.ts);
        let m = match self.pending.take() {
            Some(m) => self.pending.insert(m),
            None => {
                let id = self.ids.ascending("msg", ms);
                self.pending.insert(Message::new(id, side, ms))
            }
        };
        m.updated = ms;
        if m.usage.is_none() {
            m.usage = Usage::recorded(event);
        }
        match &event.kind {
            Kind::User { content } => {
                if self.first_prompt.is_none() && !content.trim().is_empty() {
                    self.first_prompt = Some(content.chars().take(TITLE_CHARS).collect());
                }
                m.parts.push((ms, json!({"type": "text", "text": content})));
            }
            Kind::Assistant { content } => push_text(m, ms, content, native),
            Kind::Reasoning { content } => {
                m.parts.push((ms, json!({"type": "reasoning", "text": content, "time": {"start": ms, "end": ms}})));
            }
            Kind::ToolCall { call_id, name, arguments } if native => {
                let state = json!({"status": "running", "input": arguments, "time": {"start": ms}});
                let id = written_call_id(event, call_id);
                m.calls.insert(call_id.clone(), m.parts.len());
                m.parts.push((ms, json!({"type": "tool", "tool": name, "callID": id, "state": state})));
            }
            Kind::ToolCall { call_id, name, arguments } => {
                push_text(m, ms, &self.text.call(call_id, name, arguments), false)
            }
            Kind::ToolResult { call_id, content, is_error } if native => {
                m.answered = true;
                if let Some(&i) = m.calls.get(call_id)
                    && let Some((_, part)) = m.parts.get_mut(i)
                {
                    let input = part["state"]["input"].take();
                    let start = part["state"]["time"]["start"].take();
                    let time = json!({"start": start, "end": ms});
                    part["state"] = if *is_error {
                        json!({"status": "error", "input": input, "error": content, "time": time})
                    } else {
                        json!({"status": "completed", "input": input, "output": content, "title": "",
                               "metadata": {}, "time": time})
                    };
                    m.calls.remove(call_id);
                }
            }
            Kind::ToolResult { call_id, content, is_error } => {
                let text = self.text.result(call_id, content, *is_error);
                m.parts.push((ms, json!({"type": "text", "text": text})));
            }
            Kind::System { .. } | Kind::Config { .. } | Kind::Compaction | Kind::Other(_) => {}
        }
        Ok(())
    }

    /// Write the gathered message and its parts.
    fn flush(&mut self) -> rusqlite::Result<()> {
        let Some(mut m) = self.pending.take() else {
            // Parts with no message to go to (none was recorded before them) are dropped:
            // they make nothing opencode sends.
            return Ok(());
        };
        let loose = std::mem::take(&mut self.loose);
        m.parts.extend(loose.into_iter().map(|p| (m.created, p)));
        if let Some(mut data) = m.recorded.take() {
            let parent = data.get("parentID").and_then(Value::as_str).and_then(|p| self.renamed.get(p)).cloned();
            if let Some(parent) = parent {
                data.insert("parentID".into(), json!(parent));
            } else if data.contains_key("parentID") {
                data.insert("parentID".into(), json!(self.last_user.clone().unwrap_or_else(|| m.id.clone())));
            }
            if m.side == Side::User {
                self.last_user = Some(m.id.clone());
            }
            return self.insert(&m.id, m.created, m.created, &Value::Object(data), &m.parts);
        }
        let (provider, model) = self.model();
        let data = match m.side {
            Side::User => {
                self.last_user = Some(m.id.clone());
                json!({"role": "user", "time": {"created": m.created}, "agent": AGENT,
                       "model": {"providerID": provider, "modelID": model}})
            }
            Side::Model => {
                // A call never answered is one opencode itself records as interrupted.
                for &i in m.calls.values() {
                    if let Some((_, part)) = m.parts.get_mut(i) {
                        let input = part["state"]["input"].take();
                        let start = part["state"]["time"]["start"].take();
                        part["state"] = json!({"status": "error", "input": input,
                            "error": "[Tool execution was interrupted]", "time": {"start": start, "end": m.updated}});
                    }
                }
                let tools = m.parts.iter().any(|(_, p)| p["type"] == "tool");
                let finish = if tools { "tool-calls" } else { "stop" };
                let tokens = tokens(m.usage.as_ref());
                m.parts.insert(0, (m.created, json!({"type": "step-start"})));
                m.parts
                    .push((m.updated, json!({"type": "step-finish", "reason": finish, "tokens": tokens, "cost": 0})));
                json!({"parentID": self.last_user.clone().unwrap_or_else(|| m.id.clone()), "role": "assistant",
                       "mode": AGENT, "agent": AGENT, "path": {"cwd": self.session.cwd, "root": self.place.worktree},
                       "cost": 0, "tokens": tokens, "modelID": model, "providerID": provider,
                       "time": {"created": m.created, "completed": m.updated}, "finish": finish})
            }
        };
        self.insert(&m.id, m.created, m.updated, &data, &m.parts)
    }

    fn insert(
        &mut self,
        id: &str,
        created: i64,
        updated: i64,
        data: &Value,
        parts: &[(i64, Value)],
    ) -> rusqlite::Result<()> {
        self.db.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, self.session.id, created, updated, data.to_string()],
        )?;
        let mut insert = self.db.prepare_cached(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)
             VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
        )?;
        for (ms, part) in parts {
            let ms = (*ms).clamp(created, updated.max(created));
            let part_id = self.ids.ascending("prt", ms);
            insert.execute(params![part_id, id, self.session.id, ms, part.to_string()])?;
        }
        self.messages += 1;
        self.last_message = Some((id.to_owned(), created));
        Ok(())
    }

    /// A compaction opencode made, written back as it recorded it: the message asking for
    /// it and the summary answering, each with its parts (`[{message, parts}, ...]`).
    fn recorded_pair(&mut self, history: &Value) -> rusqlite::Result<()> {
        self.flush()?;
        for entry in history.as_array().into_iter().flatten() {
            let Some(Value::Object(message)) = entry.get("message") else { continue };
            self.open(message, None)?;
            if let Some(m) = self.pending.as_mut() {
                for part in
                    entry.get("parts").and_then(Value::as_array).into_iter().flatten().filter(|p| !reaches_out(p))
                {
                    let mut part = part.clone();
                    if let Value::Object(p) = &mut part {
                        p.shift_remove("id");
                    }
                    m.parts.push((m.created, part));
                }
            }
            self.flush()?;
        }
        Ok(())
    }

    /// opencode's compaction: a user message asking for it and the summary as the answer.
    fn compacted(&mut self, summary: &str, ts: &str) -> rusqlite::Result<()> {
        self.flush()?;
        let ms = self.time(ts);
        let (provider, model) = self.model();
        let ask = self.ids.ascending("msg", ms);
        let data = json!({"role": "user", "time": {"created": ms}, "agent": AGENT,
                          "model": {"providerID": provider, "modelID": model}});
        self.insert(&ask, ms, ms, &data, &[(ms, json!({"type": "compaction", "auto": false}))])?;
        let answer = self.ids.ascending("msg", ms);
        let tokens = tokens(None);
        let data = json!({"parentID": ask, "role": "assistant", "mode": "compaction", "agent": "compaction",
                          "path": {"cwd": self.session.cwd, "root": self.place.worktree}, "summary": true,
                          "cost": 0, "tokens": tokens, "modelID": model, "providerID": provider,
                          "time": {"created": ms, "completed": ms}, "finish": "stop"});
        let parts = [
            (ms, json!({"type": "step-start"})),
            (ms, json!({"type": "text", "text": summary, "time": {"start": ms, "end": ms}})),
            (ms, json!({"type": "step-finish", "reason": "stop", "tokens": tokens, "cost": 0})),
        ];
        self.insert(&answer, ms, ms, &data, &parts)?;
        self.last_user = Some(ask);
        Ok(())
    }

    /// Write what is gathered; title a conversation without one by its first prompt, as
    /// opencode would (so it makes no title request of its own).
    pub fn finish(mut self) -> rusqlite::Result<Written> {
        self.begin()?;
        self.flush()?;
        let updated = self.last.max(millis(self.session.created).unwrap_or(self.now));
        let title = match (self.session.title, &self.first_prompt) {
            (None, Some(prompt)) => Some(prompt.clone()),
            _ => None,
        };
        self.db.execute(
            "UPDATE session SET time_updated = ?2, title = coalesce(?3, title) WHERE id = ?1",
            params![self.session.id, updated, title],
        )?;
        // opencode runs the next turn with the model of the last user message. One recorded
        // on another machine (a teammate's, a pulled conversation's) may name a provider this
        // machine lacks, and opencode then refuses to go on: the user's own model, when their
        // config names one, carries the session on, as Claude Code and Codex resume with the
        // model configured now.
        if let (Some((provider, model)), Some(last_user)) =
            (self.place.model.as_deref().and_then(|m| m.split_once('/')), &self.last_user)
        {
            let named = json!({"providerID": provider, "modelID": model}).to_string();
            self.db.execute(
                "UPDATE message SET data = json_set(data, '$.model', json(?3)) WHERE id = ?1 AND session_id = ?2",
                params![last_user, self.session.id, named],
            )?;
        }
        let (last_message, last_time) = self.last_message.map_or((None, 0), |(id, t)| (Some(id), t));
        Ok(Written { messages: self.messages, last_message, last_time })
    }
}

/// Add the model's words to the message. opencode sends a message's text parts run
/// together, so text from another agent (its words, then a call as text) joins the text
/// before it on a line of its own.
fn push_text(m: &mut Message, ms: i64, text: &str, native: bool) {
    if !native && let Some((_, last)) = m.parts.last_mut().filter(|(_, p)| p["type"] == "text") {
        let joined = format!("{}\n{text}", last["text"].as_str().unwrap_or_default());
        last["text"] = json!(joined);
        last["time"]["end"] = json!(ms);
        return;
    }
    m.parts.push((ms, json!({"type": "text", "text": text, "time": {"start": ms, "end": ms}})));
}

/// A file part that names something outside the session (a `file://` or web URL, not the
/// `data:` opencode keeps an attachment in): opencode would read or fetch it when it sends
/// the history, so one from a pulled conversation is not written back.
fn reaches_out(part: &Value) -> bool {
    part.get("type").and_then(Value::as_str) == Some("file")
        && !part.get("url").and_then(Value::as_str).is_some_and(|u| u.starts_with("data:"))
}

/// A new session's id, made at `ms` (see [`Ids`]).
pub fn session_id(ms: i64, fresh: &mut dyn FnMut() -> String) -> String {
    Ids::new(fresh).descending("ses", ms)
}

/// The title of a session whose conversation has neither a title nor a prompt: one that is
/// not opencode's placeholder, which it would replace by asking the model for one.
fn placeholder_title(created: &str) -> String {
    format!("convo session {created}")
}

/// The version of opencode the database's latest session was made by: what convo's
/// session claims to be of.
fn version(db: &Connection) -> String {
    db.query_row("SELECT version FROM session ORDER BY time_created DESC LIMIT 1", [], |r| r.get::<_, String>(0))
        .unwrap_or_else(|_| "0.0.0".to_owned())
}

/// An RFC 3339 time in milliseconds since the epoch.
pub fn millis(ts: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(ts).ok().map(|t| t.timestamp_millis())
}

/// `dir` relative to `root` (opencode's `path`): empty when they are one.
fn relative(root: &str, dir: &str) -> String {
    let root = root.trim_end_matches('/');
    match dir.strip_prefix(root) {
        Some("") => String::new(),
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/').to_owned(),
        _ => dir.to_owned(),
    }
}

/// A usage as opencode records a message's `tokens`.
fn tokens(usage: Option<&Usage>) -> Value {
    let n = |v: Option<u64>| v.unwrap_or(0);
    let u = usage.cloned().unwrap_or_default();
    let (input, output, reasoning) = (n(u.input_tokens), n(u.output_tokens), n(u.reasoning_tokens));
    let (read, write) = (n(u.cache_read_tokens), n(u.cache_write_tokens));
    let mut t = Map::new();
    t.insert("total".into(), json!(input + output + read + write));
    t.insert("input".into(), json!(input));
    t.insert("output".into(), json!(output));
    t.insert("reasoning".into(), json!(reasoning));
    t.insert("cache".into(), json!({"write": write, "read": read}));
    Value::Object(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_opencodes_shape_and_order() {
        let mut n = 0u32;
        let mut fresh = || {
            n += 1;
            format!("01J0000000000000000000000{}", n % 10)
        };
        let mut ids = Ids::new(&mut fresh);
        // opencode 1.18.33 made msg_22164174b001… at 1795856537419 ms, its first that millisecond.
        let first = ids.ascending("msg", 1_795_856_537_419);
        assert_eq!(&first[..16], "msg_22164174b001");
        assert_eq!(first.len(), 30);
        let second = ids.ascending("msg", 1_795_856_537_419);
        assert!(second > first, "{second} {first}");
        assert!(ids.ascending("prt", 1_795_856_537_420)[4..] > second[4..]);
        // And ses_dde9be917ffe… at 1795856537320 ms: sessions count down.
        let mut ids = Ids::new(&mut fresh);
        assert_eq!(&ids.descending("ses", 1_795_856_537_320)[..16], "ses_dde9be917ffe");
    }

    fn event(id: &str, kind: Kind, extra: Value) -> Event {
        let Value::Object(extra) = extra else { panic!("an object") };
        Event { id: id.into(), ts: "2026-01-01T00:00:00Z".into(), kind, extra }
    }

    /// A pulled opencode conversation's message names another machine's directory and a
    /// file part names a local file: neither is written back.
    #[test]
    fn a_recorded_directory_and_a_file_reaching_out_are_not_written_back() {
        let db = Connection::open_in_memory().unwrap();
        db.execute_batch(include_str!("../../../tests/fixtures/opencode-1.18.33-session-tables.sql")).unwrap();
        let session = Session {
            id: "ses_x",
            cwd: "/here",
            created: "2026-02-01T00:00:00Z",
            title: None,
            native: true,
            provider: "",
        };
        let place = Place { project: "global".into(), worktree: "/".into(), vcs: None, model: None };
        let mut n = 0u32;
        let mut fresh = || {
            n += 1;
            format!("01J{n:023}")
        };
        let mut stream = Stream::new(&db, &session, &place, &mut fresh, 1_800_000_000_000);
        let user = json!({"id": "msg_1", "role": "user", "time": {"created": 1}, "agent": "build",
                          "model": {"providerID": "p", "modelID": "m"}});
        let file =
            json!({"opencode_part": {"id": "prt_0", "type": "file", "mime": "image/png", "url": "file:///etc/passwd"}});
        let asked = event(
            "e1",
            Kind::User { content: "hi".into() },
            json!({"agent_records": [file], "opencode_message": user, "opencode_part": {"id": "prt_1", "type": "text"}}),
        );
        stream.part(Part::Event(&asked)).unwrap();
        let answer = json!({"id": "msg_2", "parentID": "msg_1", "role": "assistant", "path": {"cwd": "/elsewhere", "root": "/"},
                            "time": {"created": 2, "completed": 3}, "finish": "stop"});
        let said = event(
            "e2",
            Kind::Assistant { content: "hello".into() },
            json!({"opencode_message": answer, "opencode_part": {"id": "prt_2", "type": "text"}}),
        );
        stream.part(Part::Event(&said)).unwrap();
        let written = stream.finish().unwrap();
        assert_eq!(written.messages, 2);
        let data: Vec<String> = db
            .prepare("SELECT data FROM part ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(data, [r#"{"type":"text","text":"hi"}"#, r#"{"type":"text","text":"hello"}"#]);
        let (user_id, answer_data): (String, String) = db
            .query_row(
                "SELECT (SELECT min(id) FROM message), (SELECT data FROM message ORDER BY id DESC LIMIT 1)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let answer: Value = serde_json::from_str(&answer_data).unwrap();
        assert_eq!(answer["path"], json!({"cwd": "/here", "root": "/"}));
        assert_eq!(answer["parentID"], json!(user_id), "the answer names the user message under its new id");
        assert!(user_id.starts_with("msg_") && user_id != "msg_1");
    }

    #[test]
    fn the_path_is_the_directory_under_the_project() {
        assert_eq!(relative("/", "/tmp/x/proj"), "tmp/x/proj");
        assert_eq!(relative("/repo", "/repo"), "");
        assert_eq!(relative("/repo", "/repo/sub/dir"), "sub/dir");
        assert_eq!(relative("/repo", "/repository"), "/repository");
    }
}
