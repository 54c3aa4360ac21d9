//! Gemini CLI chat sessions (`~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`; a
//! subagent's in `chats/<parent session>/<id>.jsonl`): a header line
//! (`sessionId`, `projectHash`, `startTime`, `kind`), then records that change a list of
//! messages, which Gemini CLI replays to resume:
//! - a message record (`id`, `type` user | gemini | info | error | warning) adds the
//!   message, or replaces the one of that id in place (Gemini CLI writes a message again as
//!   its tool calls, their results and its token count come in);
//! - `$rewindTo` drops that message and every one after it (`/rewind`);
//! - `$set` sets metadata (`summary`, `directories`, ...), and with `messages` replaces the
//!   whole list (when a session starts, resumes, compresses its history, or takes back a
//!   request that failed);
//! - the older single-document form (`session-*.json`: the header's fields with `messages`)
//!   reads as that header followed by its messages.
//!
//! convo keeps an append-only line per conversation, so the list is followed as it grows:
//! each record adds the parts of its message not imported yet (a message's thoughts are
//! reasoning, its text an assistant event, each tool call a call and its `result` the
//! call's result; a user message's text a user event), so a message written five times
//! makes its events once, and a file read line by line (`import --follow`, `watch`) gives
//! the events one read of the whole file gives. A message's `tokens` are its model call's
//! usage ([`Usage::from_gemini`]), with its `model`, on its first event.
//!
//! What Gemini CLI keeps but does not send as the user's words is the agent's own record,
//! kept with the next event (`agent_records`) so that `convo resume` writes it back: the
//! `<session_context>` message it opens a session with (it makes a fresh one when it
//! resumes), `info`/`error`/`warning` notices, and the user message with the tool responses
//! it sends, which repeats each call's `result` (kept as a reference to the calls when it
//! repeats them exactly, so a long output is not stored twice).
//!
//! A change that takes messages away does not lose them: a `$rewindTo`, or a `$set` of a
//! list without some of them and with nothing new (a request taken back), leaves the
//! conversation as it was, and the session goes on in a new conversation, a fork of it,
//! made of the messages the list kept and what follows (as `pull` keeps a line that
//! diverged). Which messages each fork starts with is what a first pass over the file
//! finds ([`copies`]), so a message is made into the events of every conversation that has
//! it as it is read. Memory holds the ids of the messages in the list (and of those a fork
//! copies), tens of bytes each, never their content. A file with such a
//! fork has no checkpoint: a follow reads it whole and skips what it imported before, as a
//! Claude Code session with subagents. A follow that meets one past its checkpoint starts
//! again from the top ([`super::InteropError::ReadWhole`]).
//!
//! A `$set` of a list that drops messages and adds new ones is Gemini CLI's compression: its
//! first new user message is the summary (the model's `<state_snapshot>`), and with the
//! model's answer after it, becomes a convo compaction of every turn so far, recorded as the
//! messages Gemini CLI put in place of the history (`agent_history`, which `convo resume`
//! writes back as its `$set`); the messages it kept after them are recorded again, with new
//! ids, and come in again after the compaction, as in the file. A `$set` that restates the
//! list with more messages (a resume rewrites every message in the form it sends, with the
//! tool responses as messages of their own) adds the new ones at its end; those it put
//! among the others are left out (counted): they repeat tool results already imported.
//!
//! The title is the session's `summary` (but not a subagent's, whose `summary` is the report
//! it returned), else its first prompt that is not a command (`/`, `?`); the directory is the
//! first workspace directory of the `<session_context>`, else of the header's `directories`.
//! A subagent's session file is its own conversation, linked to its parent's by
//! `ops::subagent_files`. A line that is not JSON refuses the file, as for the other
//! agents (Gemini CLI skips it).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{
    Builder, EMIT_BATCH, Emit, Format, Imported, InteropError, Lines, Outcome, Place, Report, json_line, skip, text_of,
    title,
};
use crate::clock::Clock;
use crate::event::{IdSet, Kind, Usage};

/// Who wrote a compaction's summary, as convo records it.
pub const BY: &str = "gemini-cli";

/// What Gemini CLI answers a compression's summary with (the model side of its pair).
pub const ACK: &str = "Got it. Thanks for the additional context!";

/// The agent record that stands for a user message of tool responses repeating each call's
/// `result` exactly: `{"gemini_responses": {"id", "timestamp", "calls": [call ids]}}`.
pub const RESPONSES: &str = "gemini_responses";

/// How many recent messages' imported parts are remembered (Gemini CLI writes again only
/// its latest message; a few more cover a notice recorded between).
const RECENT: usize = 4;

/// What was imported of a message so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parts {
    pub id: String,
    /// Events made of it (the next one's id is `<id>.<events>`).
    #[serde(default)]
    pub events: u64,
    #[serde(default)]
    pub thoughts: u64,
    /// Parts of its `content` taken (a string counts one).
    #[serde(default)]
    pub content: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<String>,
    /// A hash of each call's one-part `result`, by call id: what a user message of tool
    /// responses is compared with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hashes: Vec<(String, u64)>,
    /// Its usage is on an event.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counted: bool,
    /// It is no message of the line: the summary of a compression, or a record kept whole.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub done: bool,
}

/// A session's state for a read carrying on from a [`super::Checkpoint`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The latest messages' imported parts, newest last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent: Vec<Parts>,
}

impl State {
    pub fn is_empty(&self) -> bool {
        self.recent.is_empty()
    }
}

/// A record of the file, as Gemini CLI tells them apart (in its order of checks).
enum Record<'a> {
    Rewind(&'a str),
    Message(&'a Value),
    Set(&'a Map<String, Value>),
    Header(&'a Value),
    Other,
}

fn record(line: &Value) -> Record<'_> {
    if let Some(target) = line.get("$rewindTo").and_then(Value::as_str) {
        return Record::Rewind(target);
    }
    if line.get("id").is_some_and(Value::is_string) {
        return Record::Message(line);
    }
    if let Some(set) = line.get("$set").and_then(Value::as_object) {
        return Record::Set(set);
    }
    if line.get("sessionId").is_some_and(Value::is_string) && line.get("projectHash").is_some_and(Value::is_string) {
        return Record::Header(line);
    }
    Record::Other
}

fn id_of(message: &Value) -> &str {
    message.get("id").and_then(Value::as_str).unwrap_or_default()
}

/// What a `$set` of the message list does to it.
enum Replace {
    /// Every message is still there: the new ones, each with whether it comes after all the
    /// old ones (and so can be appended).
    Extend(Vec<(usize, bool)>),
    /// Some are gone and none is new: the line goes on in a fork of the ones kept.
    Cut(Vec<Key>),
    /// Some are gone and some are new: the history was replaced (compressed); the new ones.
    Compress(Vec<usize>),
}

/// The message list as Gemini CLI rebuilds it, by id, and the lines convo keeps of it: what
/// both passes follow alike.
struct Replay {
    ids: Vec<Key>,
    at: HashMap<Key, usize>,
    /// Lines made so far, and the one the session is on.
    lines: usize,
    line: usize,
}

impl Default for Replay {
    fn default() -> Self {
        Replay { ids: Vec::new(), at: HashMap::new(), lines: 1, line: 0 }
    }
}

/// A message id as the replay keeps it ([`IdSet::key`], so ids are told apart as an
/// `IdSet` tells them): 16 bytes however long the id (a session holds many).
type Key = u128;

/// How [`copies`] names a message: its key in hex.
fn copy_key(id: &str) -> String {
    format!("{:032x}", IdSet::key(id))
}

impl Replay {
    /// A message record: whether its id is new to the list.
    fn message(&mut self, id: &str) -> bool {
        let k = IdSet::key(id);
        if self.at.contains_key(&k) {
            return false;
        }
        self.at.insert(k, self.ids.len());
        self.ids.push(k);
        true
    }

    fn set(&mut self, ids: Vec<Key>) {
        self.at = ids.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        self.ids = ids;
    }

    /// `$rewindTo`: the messages before `target` (none when it is not there, as Gemini CLI
    /// then drops them all), on a new line; `None` when nothing goes.
    fn rewind(&mut self, target: &str) -> Option<Vec<Key>> {
        let keep = self.at.get(&IdSet::key(target)).copied().unwrap_or(0);
        if keep == self.ids.len() {
            return None;
        }
        let kept = self.ids[..keep].to_vec();
        self.set(kept.clone());
        self.new_line();
        Some(kept)
    }

    fn new_line(&mut self) {
        self.line = self.lines;
        self.lines += 1;
    }

    /// `$set` of the list to `messages`. One of no message Gemini CLI would resume (its
    /// context alone) is a chat starting: in a file that has messages, a resume that began
    /// a new recording in the same file (same minute, same session), whose next `$set`
    /// restates them; it cuts nothing.
    fn replace(&mut self, messages: &[Value]) -> Replace {
        let ids: Vec<Key> = messages.iter().map(|m| IdSet::key(id_of(m))).collect();
        let new: Vec<usize> = (0..ids.len()).filter(|i| !self.at.contains_key(&ids[*i])).collect();
        if !messages.iter().any(resumable) {
            for i in &new {
                self.message(id_of(&messages[*i]));
            }
            return Replace::Extend(new.iter().map(|i| (*i, true)).collect());
        }
        let kept: std::collections::HashSet<&Key> = ids.iter().collect();
        let dropped = self.ids.iter().any(|k| !kept.contains(k));
        let last_old = (0..ids.len()).rev().find(|i| self.at.contains_key(&ids[*i]));
        let change = match (dropped, new.is_empty()) {
            (false, _) => Replace::Extend(new.iter().map(|i| (*i, last_old.is_none_or(|last| *i > last))).collect()),
            (true, true) => Replace::Cut(ids.clone()),
            (true, false) => Replace::Compress(new),
        };
        self.set(ids);
        if let Replace::Cut(_) = change {
            self.new_line();
        }
        change
    }
}

/// Whether Gemini CLI would resume a session for this message: the user's words (not its
/// context or a command), or a model message with anything in it.
fn resumable(m: &Value) -> bool {
    match m.get("type").and_then(Value::as_str) {
        Some("user") => {
            let text = verbose_text(m.get("content").unwrap_or(&Value::Null));
            let text = text.trim();
            !(text.is_empty() || text.starts_with('/') || text.starts_with('?') || context(text))
        }
        Some("gemini") => {
            let some = |key: &str| m.get(key).and_then(Value::as_array).is_some_and(|a| !a.is_empty());
            !verbose_text(m.get("content").unwrap_or(&Value::Null)).trim().is_empty()
                || some("toolCalls")
                || some("thoughts")
        }
        _ => false,
    }
}

/// A content as Gemini CLI reads it when it decides what to resume: text, and a word for
/// each part that is not text.
fn verbose_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p.get("text").and_then(Value::as_str) {
                Some(text) if p.get("thought").is_none() => text.to_owned(),
                _ if p.is_object() => "[part]".to_owned(),
                _ => text_of(p),
            })
            .collect(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The messages of `messages` that are records of the list (a string `id`).
fn listed(messages: &[Value]) -> Vec<Value> {
    messages.iter().filter(|m| m.get("id").is_some_and(Value::is_string)).cloned().collect()
}

/// First pass: which later lines (forks after a rewind) each message is part of, by its
/// id's key ([`copy_key`]): `"1,3"`. Only messages that forks keep are in it.
pub fn copies(lines: Lines) -> Result<HashMap<String, String>, InteropError> {
    let mut replay = Replay::default();
    let mut into: HashMap<Key, Vec<usize>> = HashMap::new();
    let mut note = |kept: &[Key], line: usize| {
        for k in kept {
            into.entry(*k).or_default().push(line);
        }
    };
    for (i, line) in lines.enumerate() {
        let line = line?;
        // Most lines are messages, which Gemini CLI writes id first: their id is all this
        // pass needs (the second pass reads them whole, and refuses a broken one).
        if let Some(id) = line.strip_prefix("{\"id\":\"").and_then(|rest| rest.split_once('"')).map(|(id, _)| id)
            && !id.contains('\\')
        {
            replay.message(id);
            continue;
        }
        let Some(line) = json_line(i + 1, &line)? else { continue };
        match record(&line) {
            Record::Message(m) => {
                replay.message(id_of(m));
            }
            Record::Rewind(target) => {
                if let Some(kept) = replay.rewind(target) {
                    note(&kept, replay.line);
                }
            }
            Record::Set(set) => {
                if let Some(messages) = set.get("messages").and_then(Value::as_array)
                    && let Replace::Cut(kept) = replay.replace(&listed(messages))
                {
                    note(&kept, replay.line);
                }
            }
            Record::Header(h) => {
                if let Some(messages) = h.get("messages").and_then(Value::as_array) {
                    for m in listed(messages) {
                        replay.message(id_of(&m));
                    }
                }
            }
            Record::Other => {}
        }
    }
    Ok(into
        .into_iter()
        .map(|(k, lines)| (format!("{k:032x}"), lines.iter().map(usize::to_string).collect::<Vec<_>>().join(",")))
        .collect())
}

pub fn parse(text: &str, clock: &Clock) -> Result<Imported, InteropError> {
    let lines = document_lines(text).unwrap_or_else(|| text.lines().map(str::to_owned).collect());
    let copies = copies(&mut lines.iter().map(|l| Ok(l.clone())))?;
    let mut drafts = Vec::new();
    let outcome = parse_lines(&mut lines.iter().map(|l| Ok(l.clone())), &copies, None, clock, &mut drafts)?;
    Ok(super::collected(outcome, drafts))
}

/// The older single-document form as the lines it stands for: its header, then its messages.
fn document_lines(text: &str) -> Option<Vec<String>> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        return None;
    }
    let Value::Object(mut doc) = serde_json::from_str::<Value>(trimmed).ok()? else { return None };
    let messages = match doc.shift_remove("messages") {
        Some(Value::Array(messages)) => messages,
        _ => return None,
    };
    doc.get("sessionId").filter(|s| s.is_string())?;
    let mut lines = vec![Value::Object(doc).to_string()];
    lines.extend(messages.iter().map(Value::to_string));
    Some(lines)
}

/// The second pass: the events of every line, emitted as they are made (line `n` is
/// conversation `n`). From a [`super::Checkpoint`], of the lines after it.
pub fn parse_lines(
    lines: Lines,
    copies: &HashMap<String, String>,
    from: Option<&super::Checkpoint>,
    clock: &Clock,
    emit: &mut dyn Emit,
) -> Result<Outcome, InteropError> {
    let emit = &mut super::Stamped::new(super::resume::Agent::GeminiCli, emit);
    let mut s = Session {
        clock,
        report: Report::default(),
        builders: vec![
            match from {
                Some(c) => Builder::from_checkpoint(clock, c),
                None => Builder::new(clock),
            }
            .stable_renames(),
        ],
        replay: Replay::default(),
        state: from.map(|c| c.gemini.clone()).unwrap_or_default(),
        copies,
        forks: Vec::new(),
        source_line: 0,
    };
    let mut recognised = from.is_some();
    let mut seen = Seen::default();
    for (i, line) in lines.enumerate() {
        let Some(line) = json_line(i + 1, &line?)? else { continue };
        s.report.records += 1;
        s.source_line = i + 1;
        for b in &mut s.builders {
            b.at_line(i + 1);
        }
        let record = record(&line);
        match &record {
            Record::Header(_) | Record::Set(_) | Record::Rewind(_) => recognised = true,
            Record::Message(m) if m.get("type").and_then(Value::as_str) == Some("gemini") => recognised = true,
            _ if !recognised && s.report.records >= 20 => {
                return Err(InteropError::NotThisFormat("no Gemini CLI session header or `$set` record"));
            }
            _ => {}
        }
        match record {
            Record::Message(m) => {
                seen.note(m);
                let recent = s.state.recent.iter().any(|p| p.id == id_of(m));
                // From a checkpoint the list is not known: a message is new unless it is a recent one.
                let new = if from.is_none() { s.replay.message(id_of(m)) } else { !recent };
                if new || recent {
                    s.message(m, false);
                } else {
                    skip(&mut s.report, "earlier message written again (its parts were imported)");
                }
            }
            Record::Rewind(target) => {
                if from.is_some() {
                    return Err(InteropError::ReadWhole);
                }
                let was = s.replay.line;
                match s.replay.rewind(target) {
                    Some(_) => {
                        s.fork(was);
                        skip(&mut s.report, "`$rewindTo` record (what follows goes on in a fork)");
                    }
                    None => skip(&mut s.report, "`$rewindTo` record with nothing to take back"),
                }
            }
            Record::Set(set) => {
                if let Some(messages) = set.get("messages").and_then(Value::as_array) {
                    if from.is_some() {
                        return Err(InteropError::ReadWhole);
                    }
                    let messages = listed(messages);
                    messages.iter().for_each(|m| seen.note(m));
                    let was = s.replay.line;
                    match s.replay.replace(&messages) {
                        Replace::Extend(new) => s.extend(&messages, &new),
                        Replace::Cut(_) => {
                            s.fork(was);
                            skip(&mut s.report, "`$set` of the messages without some (what follows goes on in a fork)");
                        }
                        Replace::Compress(new) => s.compress(&messages, &new),
                    }
                }
                seen.metadata(set.get("summary"), set.get("directories"));
                skip(&mut s.report, "`$set` record");
            }
            Record::Header(h) => {
                seen.subagent = h.get("kind").and_then(Value::as_str) == Some("subagent");
                seen.metadata(h.get("summary"), h.get("directories"));
                skip(&mut s.report, "session header");
                if let Some(messages) = h.get("messages").and_then(Value::as_array) {
                    for m in listed(messages) {
                        seen.note(&m);
                        if s.replay.message(id_of(&m)) {
                            s.message(&m, false);
                        }
                    }
                }
            }
            Record::Other => skip(&mut s.report, "record of no kind Gemini CLI reads"),
        }
        for (n, b) in s.builders.iter_mut().enumerate() {
            if b.drafts.len() >= EMIT_BATCH {
                emit.drafts(n, b.take())?;
            }
        }
    }
    if !recognised {
        return Err(InteropError::NotThisFormat("no Gemini CLI session header or `$set` record"));
    }
    // A fork carries on from what it was forked from: no read of part of the file can.
    let checkpoint = (s.builders.len() == 1 && s.replay.lines == 1)
        .then(|| super::Checkpoint { gemini: s.state.clone(), ..s.builders[0].checkpoint() });
    let title = seen.summary.or(seen.prompt).or(seen.command);
    let place = Place { cwd: seen.context_dir.or(seen.directory), ..Place::default() };
    let mut conversations = Vec::new();
    for (n, b) in s.builders.iter_mut().enumerate() {
        emit.drafts(n, b.take())?;
        conversations.push((if n == 0 { title.clone() } else { None }, None));
    }
    Ok(Outcome { format: Format::GeminiCli, conversations, report: s.report, checkpoint, place, forks: s.forks })
}

/// What the session says of its title and directory.
#[derive(Default)]
struct Seen {
    /// The last `summary`.
    summary: Option<String>,
    /// The session is a subagent's (header `kind`): its `summary` is the report it
    /// returned, not a title.
    subagent: bool,
    /// The first prompt that is not a command, and the first command.
    prompt: Option<String>,
    command: Option<String>,
    /// The first workspace directory of the first `<session_context>`, and of `directories`.
    context_dir: Option<String>,
    directory: Option<String>,
}

impl Seen {
    fn note(&mut self, m: &Value) {
        if m.get("type").and_then(Value::as_str) != Some("user") {
            return;
        }
        let text = user_text(m.get("content").unwrap_or(&Value::Null));
        let text = text.trim_start();
        if context(text) {
            self.context_dir = self.context_dir.take().or_else(|| workspace(text));
        } else if text.starts_with('/') || text.starts_with('?') {
            self.command = self.command.take().or_else(|| title::from_record(text));
        } else if self.prompt.is_none() {
            self.prompt = title::from_prompt(text);
        }
    }

    fn metadata(&mut self, summary: Option<&Value>, directories: Option<&Value>) {
        if let Some(text) = summary.and_then(Value::as_str).filter(|_| !self.subagent) {
            self.summary = title::from_record(text).or(self.summary.take());
        }
        self.directory = self.directory.take().or_else(|| first_directory(directories));
    }
}

/// A user message Gemini CLI sends as context of its own, not the user's words (and skips
/// when it resumes).
fn context(text: &str) -> bool {
    text.starts_with("<session_context>") || text.starts_with("<hook_context>")
}

/// The first workspace directory a `<session_context>` lists.
fn workspace(text: &str) -> Option<String> {
    let after = &text[text.find("Workspace Directories:")?..];
    let line = after.lines().skip(1).map(str::trim).find(|l| !l.is_empty())?;
    let dir = line.strip_prefix("- ")?;
    Place::field(Some(&Value::String(dir.to_owned())))
}

fn first_directory(value: Option<&Value>) -> Option<String> {
    Place::field(value?.as_array()?.first())
}

/// The text parts of a user message's content, joined as Gemini CLI joins them.
fn user_text(content: &Value) -> String {
    match content {
        Value::Array(parts) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect(),
        other => text_of(other),
    }
}

/// The id of the `n`th event of message `id`.
fn part_id(id: &str, n: u64) -> String {
    if n == 0 { id.to_owned() } else { format!("{id}.{n}") }
}

fn hash(value: &Value) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    value.to_string().hash(&mut h);
    h.finish()
}

/// One thing a message makes, for each line that has it.
#[derive(Clone)]
enum Made {
    Event { kind: Kind, id: String, ts: Option<String>, extra: Map<String, Value> },
    Hold(Value),
}

/// Where a fork is: conversation `conversation` goes on from `from`, sharing its first
/// `turn` turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fork {
    pub conversation: usize,
    pub from: usize,
    pub turn: u64,
}

struct Session<'a, 'c> {
    clock: &'c Clock,
    report: Report,
    /// One per line, by line number.
    builders: Vec<Builder<'c>>,
    replay: Replay,
    state: State,
    copies: &'a HashMap<String, String>,
    forks: Vec<Fork>,
    /// The line of the file being read (see [`Builder::at_line`]).
    source_line: usize,
}

impl Session<'_, '_> {
    /// The lines a message of the current line goes into: this one, and the forks still to
    /// come that keep it.
    fn targets(&mut self, id: &str) -> Vec<usize> {
        let now = self.replay.line;
        let mut lines = vec![now];
        // Most sessions have no fork: no key to make then.
        if !self.copies.is_empty()
            && let Some(list) = self.copies.get(&copy_key(id))
        {
            lines.extend(list.split(',').filter_map(|n| n.parse::<usize>().ok()).filter(|n| *n > now));
        }
        if let Some(max) = lines.iter().max() {
            while self.builders.len() <= *max {
                let mut b = Builder::new(self.clock).stable_renames();
                b.at_line(self.source_line);
                self.builders.push(b);
            }
        }
        lines
    }

    /// The line left at `was` goes on in a new one: a fork of it.
    fn fork(&mut self, was: usize) {
        let now = self.replay.line;
        while self.builders.len() <= now {
            let mut b = Builder::new(self.clock).stable_renames();
            b.at_line(self.source_line);
            self.builders.push(b);
        }
        let turn = self.builders[now].turns();
        self.forks.push(Fork { conversation: now, from: was, turn });
    }

    /// The parts of the message `id` imported so far (a new record of none yet).
    fn parts(&mut self, id: &str) -> Parts {
        match self.state.recent.iter().position(|p| p.id == id) {
            Some(i) => self.state.recent.remove(i),
            None => Parts { id: id.to_owned(), ..Default::default() },
        }
    }

    fn keep(&mut self, parts: Parts) {
        self.state.recent.push(parts);
        if self.state.recent.len() > RECENT {
            self.state.recent.remove(0);
        }
    }

    /// A message record: what it adds to the message of its id, into every line that has it.
    fn message(&mut self, m: &Value, inserted: bool) {
        let id = id_of(m).to_owned();
        let mut parts = self.parts(&id);
        if parts.done {
            self.keep(parts);
            return;
        }
        let targets = self.targets(&id);
        let made = if inserted {
            skip(&mut self.report, "message Gemini CLI put among earlier ones (a tool response already imported)");
            Vec::new()
        } else {
            let open = |call: &str| self.builders[targets[0]].is_open(call);
            let results: HashMap<String, u64> =
                self.state.recent.iter().flat_map(|p| p.hashes.iter().cloned()).collect();
            match m.get("type").and_then(Value::as_str) {
                Some("user") => user(m, &mut parts, (&open, &results), &mut self.report),
                Some("gemini") => gemini(m, &mut parts, &mut self.report),
                Some(kind @ ("info" | "error" | "warning")) => {
                    if parts.events == 0 && !parts.done {
                        parts.done = true;
                        skip(&mut self.report, format!("`{kind}` message (kept with the next event)"));
                        vec![Made::Hold(m.clone())]
                    } else {
                        Vec::new()
                    }
                }
                Some(other) => {
                    skip(&mut self.report, format!("`{other}` message"));
                    Vec::new()
                }
                None => {
                    skip(&mut self.report, "message without a type");
                    Vec::new()
                }
            }
        };
        self.keep(parts);
        self.put(&targets, made);
    }

    fn put(&mut self, targets: &[usize], made: Vec<Made>) {
        for (n, target) in targets.iter().enumerate() {
            // The report counts what the session has once, not once per line.
            let mut scratch = Report::default();
            let report = if n == 0 { &mut self.report } else { &mut scratch };
            let b = &mut self.builders[*target];
            for m in &made {
                match m.clone() {
                    Made::Hold(record) => b.hold(record),
                    Made::Event { kind, id, ts, extra } => {
                        if !b.push_with(report, kind, Some(&id), ts.as_deref(), extra) {
                            skip(report, "tool result without its call");
                        }
                    }
                }
            }
        }
    }

    /// A `$set` that keeps every message: the new ones that come after all the others.
    fn extend(&mut self, messages: &[Value], new: &[(usize, bool)]) {
        // The others are there already, written again in the form Gemini CLI sends them.
        for (i, appended) in new {
            self.message(&messages[*i], !appended);
        }
    }

    /// A `$set` that replaced the history: the summary pair becomes a compaction of each line
    /// that has turns (in one that has none, the pair itself), what follows it comes again.
    fn compress(&mut self, messages: &[Value], new: &[usize]) {
        let is_summary = |m: &Value| {
            m.get("type").and_then(Value::as_str) == Some("user") && {
                let text = user_text(m.get("content").unwrap_or(&Value::Null));
                !text.trim().is_empty() && !context(text.trim_start())
            }
        };
        let at = new.iter().position(|i| is_summary(&messages[*i]));
        let Some(at) = at else {
            skip(&mut self.report, "`$set` that replaced the messages without a summary");
            for i in new {
                self.message(&messages[*i], false);
            }
            return;
        };
        let summary = &messages[new[at]];
        let ack = new
            .get(at + 1)
            .map(|i| &messages[*i])
            .filter(|m| m.get("type").and_then(Value::as_str) == Some("gemini") && new[at + 1] == new[at] + 1);
        for i in &new[..at] {
            self.message(&messages[*i], false);
        }
        let text = user_text(summary.get("content").unwrap_or(&Value::Null));
        let ts = summary.get("timestamp").and_then(Value::as_str);
        let pair: Vec<Value> = std::iter::once(summary).chain(ack).cloned().collect();
        let targets = self.targets(id_of(summary));
        for (n, target) in targets.iter().enumerate() {
            let mut scratch = Report::default();
            let report = if n == 0 { &mut self.report } else { &mut scratch };
            let b = &mut self.builders[*target];
            if b.turns() > 0 && b.compaction_with(report, &text, BY, ts, Some(Value::Array(pair.clone()))) {
                continue;
            }
            b.push(report, Kind::User { content: text.clone() }, Some(id_of(summary)), ts);
            if let Some(ack) = ack {
                let content = text_of(ack.get("content").unwrap_or(&Value::Null));
                let ts = ack.get("timestamp").and_then(Value::as_str);
                b.push(report, Kind::Assistant { content }, Some(id_of(ack)), ts);
            }
        }
        for m in std::iter::once(summary).chain(ack) {
            let parts = Parts { id: id_of(m).to_owned(), done: true, ..Default::default() };
            self.keep(parts);
        }
        let after = at + 1 + usize::from(ack.is_some());
        for i in &new[after..] {
            self.message(&messages[*i], false);
        }
    }
}

/// What the importer makes of a message record read on its own: how many events, and
/// whether one of them is the user's words. `open` says which calls wait for a result.
pub fn events_of(record: &Value, open: &dyn Fn(&str) -> bool) -> (u64, bool) {
    let mut parts = Parts { id: id_of(record).to_owned(), ..Default::default() };
    let mut report = Report::default();
    let made = match record.get("type").and_then(Value::as_str) {
        Some("user") => user(record, &mut parts, (open, &HashMap::new()), &mut report),
        Some("gemini") => gemini(record, &mut parts, &mut report),
        _ => Vec::new(),
    };
    let events = made.iter().filter(|m| matches!(m, Made::Event { .. })).count() as u64;
    let words = made.iter().any(|m| matches!(m, Made::Event { kind: Kind::User { .. }, .. }));
    (events, words)
}

/// The next event of a message: its id, and on its first event its usage and model.
fn event(m: &Value, parts: &mut Parts, kind: Kind, mut extra: Map<String, Value>) -> Made {
    let id = part_id(id_of(m), parts.events);
    parts.events += 1;
    if !parts.counted
        && let Some(usage) = m.get("tokens").and_then(Usage::from_gemini)
    {
        parts.counted = true;
        extra.insert("usage".into(), serde_json::to_value(usage).unwrap_or_default());
        if let Some(model) = m.get("model").filter(|v| v.is_string()) {
            extra.insert("model".into(), model.clone());
        }
    }
    let ts = m.get("timestamp").and_then(Value::as_str).map(str::to_owned);
    Made::Event { kind, id, ts, extra }
}

fn content_parts(content: &Value) -> Vec<Value> {
    match content {
        Value::Array(parts) => parts.clone(),
        Value::String(s) if s.is_empty() => Vec::new(),
        Value::String(s) => vec![json!({"text": s})],
        Value::Null => Vec::new(),
        other => vec![json!({"text": other.to_string()})],
    }
}

/// A user message: its words, the tool responses it carries for calls still open, and
/// otherwise (context, responses repeated) the message itself, kept with the next event.
/// What a user message is read against: whether a call still waits for its result, and
/// the hash of each recent call's one-part result.
type Calls<'a> = (&'a dyn Fn(&str) -> bool, &'a HashMap<String, u64>);

fn user(m: &Value, parts: &mut Parts, (open, results): Calls<'_>, report: &mut Report) -> Vec<Made> {
    if parts.events > 0 || parts.done {
        return Vec::new();
    }
    let content = m.get("content").unwrap_or(&Value::Null);
    let text = user_text(content);
    if context(text.trim_start()) {
        parts.done = true;
        skip(report, "Gemini CLI's context message (kept with the next event)");
        return vec![Made::Hold(m.clone())];
    }
    let list = content_parts(content);
    let responses: Vec<&Value> = list.iter().filter_map(|p| p.get("functionResponse")).collect();
    let answering: Vec<&&Value> =
        responses.iter().filter(|r| r.get("id").and_then(Value::as_str).is_some_and(open)).collect();
    let mut made = Vec::new();
    if responses.is_empty() || !answering.is_empty() {
        for r in answering {
            let mut extra = Map::new();
            extra.insert("gemini_part".into(), json!("content"));
            let (content, is_error) = response_text(r.get("response").unwrap_or(&Value::Null));
            let is_error = is_error || failed_command(&content);
            let call_id = r.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
            if standard_response(r, &call_id, &content, is_error).is_none() {
                extra.insert("gemini_result".into(), json!([{"functionResponse": r}]));
            }
            made.push(event(m, parts, Kind::ToolResult { call_id, content, is_error }, extra));
        }
        let plain = matches!(content, Value::String(_))
            || (list.len() == 1 && list[0].as_object().is_some_and(|o| o.len() == 1 && o.contains_key("text")));
        if !text.trim().is_empty() || (!plain && responses.is_empty() && !list.is_empty()) {
            let mut extra = Map::new();
            if !plain && responses.is_empty() {
                extra.insert("gemini_content".into(), content.clone());
            }
            if let Some(display) = m.get("displayContent").filter(|d| !d.is_null()) {
                extra.insert("gemini_display".into(), display.clone());
            }
            made.push(event(m, parts, Kind::User { content: text }, extra));
        }
        if made.is_empty() {
            skip(report, "empty user message");
        }
        return made;
    }
    // Responses to calls answered already: Gemini CLI's own copy of what it sent, kept
    // as a reference to those calls' results when it repeats them exactly.
    parts.done = true;
    skip(report, "tool responses repeating the calls' results (kept with the next event)");
    let calls: Vec<&str> = responses.iter().filter_map(|r| r.get("id").and_then(Value::as_str)).collect();
    let repeats = list.len() == calls.len()
        && list.iter().zip(&calls).all(|(part, call)| results.get(*call).is_some_and(|h| *h == hash(part)));
    if !repeats {
        return vec![Made::Hold(m.clone())];
    }
    let mut reference = Map::new();
    reference.insert("id".into(), json!(id_of(m)));
    if let Some(ts) = m.get("timestamp") {
        reference.insert("timestamp".into(), ts.clone());
    }
    reference.insert("calls".into(), json!(calls));
    vec![Made::Hold(json!({RESPONSES: reference}))]
}

/// A tool response's text and whether it is an error: `output` or `error` when it is a
/// string, else the whole response as JSON.
/// A shell command's result that says it exited non-zero: Gemini CLI records it as a
/// success (the tool ran), with `Exit Code: N` in its output.
fn failed_command(content: &str) -> bool {
    crate::event::trail::exit_status(content).is_some_and(|code| code != 0)
}

fn response_text(response: &Value) -> (String, bool) {
    if let Some(o) = response.as_object()
        && o.len() == 1
    {
        if let Some(Value::String(s)) = o.get("output") {
            return (s.clone(), false);
        }
        if let Some(Value::String(s)) = o.get("error") {
            return (s.clone(), true);
        }
    }
    (response.to_string(), response.get("error").is_some())
}

/// The `functionResponse` Gemini CLI records for a call's result of `content`, when `r`
/// is exactly that.
fn standard_response(r: &Value, call_id: &str, content: &str, is_error: bool) -> Option<Value> {
    let key = if is_error { "error" } else { "output" };
    let name = r.get("name").cloned().unwrap_or(Value::Null);
    let made = json!({"id": call_id, "name": name, "response": {key: content}});
    (&made == r).then_some(made)
}

/// A model message: its thoughts, text, calls and their results, as far as not imported yet.
fn gemini(m: &Value, parts: &mut Parts, report: &mut Report) -> Vec<Made> {
    let mut made = Vec::new();
    let thoughts = m.get("thoughts").and_then(Value::as_array).cloned().unwrap_or_default();
    for t in thoughts.iter().skip(parts.thoughts as usize) {
        let mut extra = Map::new();
        for (key, field) in [("subject", "subject"), ("thought_ts", "timestamp")] {
            if let Some(v) = t.get(field).filter(|v| v.is_string()) {
                extra.insert(key.into(), v.clone());
            }
        }
        let content = t.get("description").and_then(Value::as_str).unwrap_or_default().to_owned();
        made.push(event(m, parts, Kind::Reasoning { content }, extra));
    }
    parts.thoughts = thoughts.len() as u64;
    let content = m.get("content").unwrap_or(&Value::Null);
    let list = content_parts(content);
    for (n, part) in list.iter().enumerate().skip(parts.content as usize) {
        let mut extra = Map::new();
        if n == 0 && content.is_array() {
            extra.insert("gemini_content".into(), content.clone());
        }
        let kind = if let Some(call) = part.get("functionCall") {
            extra.insert("gemini_part".into(), json!("content"));
            let call_id = call.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
            if parts.calls.contains(&call_id) {
                continue;
            }
            parts.calls.push(call_id.clone());
            let name = call.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
            Kind::ToolCall { call_id, name, arguments: call.get("args").cloned().unwrap_or_else(|| json!({})) }
        } else if let Some(text) = part.get("text").and_then(Value::as_str) {
            if part.get("thought") == Some(&Value::Bool(true)) {
                Kind::Reasoning { content: text.to_owned() }
            } else {
                Kind::Assistant { content: text.to_owned() }
            }
        } else {
            skip(report, "model message part of no kind convo keeps");
            continue;
        };
        made.push(event(m, parts, kind, extra));
    }
    parts.content = parts.content.max(list.len() as u64);
    let calls = m.get("toolCalls").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut results = Vec::new();
    for call in &calls {
        let call_id = call.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        let name = call.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
        if !parts.calls.contains(&call_id) {
            let mut meta = call.as_object().cloned().unwrap_or_default();
            for key in ["id", "name", "args", "result"] {
                meta.shift_remove(key);
            }
            let mut extra = Map::new();
            extra.insert("gemini_call".into(), Value::Object(meta));
            let arguments = call.get("args").cloned().unwrap_or_else(|| json!({}));
            made.push(event(
                m,
                parts,
                Kind::ToolCall { call_id: call_id.clone(), name: name.clone(), arguments },
                extra,
            ));
            parts.calls.push(call_id.clone());
        }
        if let Some(result) = call.get("result").filter(|r| !r.is_null())
            && !parts.results.contains(&call_id)
        {
            results.push((call_id, name, call.get("status").and_then(Value::as_str).map(str::to_owned), result));
        }
    }
    for (call_id, _, status, result) in results {
        let list = content_parts(result);
        let response = match list.as_slice() {
            [one] => one.get("functionResponse"),
            _ => None,
        };
        let (content, mut is_error) = match response {
            Some(r) => response_text(r.get("response").unwrap_or(&Value::Null)),
            None => (text_of(result), false),
        };
        is_error |= status.as_deref() == Some("error") || failed_command(&content);
        let mut extra = Map::new();
        if response.and_then(|r| standard_response(r, &call_id, &content, is_error)).is_none() {
            extra.insert("gemini_result".into(), result.clone());
        }
        if let [one] = list.as_slice() {
            parts.hashes.push((call_id.clone(), hash(one)));
        }
        parts.results.push(call_id.clone());
        made.push(event(m, parts, Kind::ToolResult { call_id, content, is_error }, extra));
    }
    made
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Draft;

    fn clock() -> Clock {
        Clock::fixed(chrono::DateTime::UNIX_EPOCH)
    }

    fn user(id: &str, text: &str) -> Value {
        json!({"id": id, "timestamp": "2026-01-01T00:00:00Z", "type": "user", "content": [{"text": text}]})
    }

    fn model(id: &str, text: &str) -> Value {
        json!({"id": id, "timestamp": "2026-01-01T00:00:01Z", "type": "gemini", "content": text, "thoughts": [],
               "tokens": {"input": 100, "output": 5, "cached": 40, "thoughts": 2, "tool": 0, "total": 107},
               "model": "gemini-test"})
    }

    fn header() -> Value {
        json!({"sessionId": "s1", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"})
    }

    fn text(lines: &[Value]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Each conversation's events as `type id`, and the outcome.
    fn read(lines: &[Value]) -> (Vec<Vec<String>>, Outcome) {
        let text = text(lines);
        let copies = copies(&mut super::super::text_lines(&text)).unwrap();
        let mut drafts: Vec<Vec<Draft>> = Vec::new();
        let outcome = parse_lines(&mut super::super::text_lines(&text), &copies, None, &clock(), &mut drafts).unwrap();
        (drafts.iter().map(|c| c.iter().map(shown).collect()).collect(), outcome)
    }

    fn shown(d: &Draft) -> String {
        let kind = serde_json::to_value(d.clone().into_event(String::new(), String::new()).to_value()).unwrap();
        format!("{} {}", kind["type"].as_str().unwrap(), d.id.as_deref().unwrap_or("-"))
    }

    #[test]
    fn a_message_written_again_as_its_calls_come_in_makes_its_events_once() {
        let call = |result: Option<&str>| {
            let mut call = json!({"id": "c1", "name": "read_file", "args": {"file_path": "a"}, "status": "executing"});
            if let Some(out) = result {
                call["status"] = json!("success");
                call["result"] =
                    json!([{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": out}}}]);
            }
            call
        };
        let mut g1 = model("g1", "");
        let mut g1_called = g1.clone();
        g1_called["toolCalls"] = json!([call(None)]);
        let mut g1_done = g1.clone();
        g1_done["toolCalls"] = json!([call(Some("hello"))]);
        g1["thoughts"] = json!([{"subject": "Looking", "description": "at a", "timestamp": "2026-01-01T00:00:00Z"}]);
        let responses = json!({"id": "r1", "timestamp": "2026-01-01T00:00:02Z", "type": "user",
            "content": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "hello"}}}]});
        let context = user("env", "<session_context>\nWorkspace Directories:\n  - /work/p\n</session_context>");
        let lines = [
            header(),
            json!({"$set": {"messages": [context]}}),
            user("u1", "read a"),
            g1,
            g1_called.clone(),
            g1_done.clone(),
            g1_done,
            responses,
            model("g2", "it says hello"),
        ];
        let (events, outcome) = read(&lines);
        assert_eq!(events, [["user u1", "reasoning g1", "tool_call g1.1", "tool_result g1.2", "assistant g2"]]);
        assert_eq!(outcome.place.cwd.as_deref(), Some("/work/p"));
        assert_eq!(outcome.conversations[0].0.as_deref(), Some("read a"));
        let mut drafts: Vec<Vec<Draft>> = Vec::new();
        let t = text(&lines);
        parse_lines(&mut super::super::text_lines(&t), &HashMap::new(), None, &clock(), &mut drafts).unwrap();
        // The context before the prompt; the repeated responses, by reference, before the answer.
        assert_eq!(drafts[0][0].extra["agent_records"][0]["id"], "env");
        assert_eq!(
            drafts[0][4].extra["agent_records"],
            json!([{RESPONSES: {"id": "r1", "timestamp": "2026-01-01T00:00:02Z", "calls": ["c1"]}}])
        );
        // The usage once, on the first event of the model's message.
        assert_eq!(
            drafts[0][1].extra["usage"],
            json!({"input_tokens": 60, "output_tokens": 7, "cache_read_tokens": 40, "reasoning_tokens": 2})
        );
        assert!(drafts[0][2].extra.get("usage").is_none());
        assert_eq!(drafts[0][1].extra["subject"], "Looking");
        assert!(drafts[0][3].extra.get("gemini_result").is_none(), "a standard result is not kept twice");
    }

    #[test]
    fn a_rewind_goes_on_in_a_fork_that_keeps_what_came_before() {
        let lines = [
            header(),
            user("u1", "first"),
            model("g1", "one"),
            user("u2", "second"),
            model("g2", "two"),
            json!({"$rewindTo": "u2"}),
            user("u3", "other"),
            model("g3", "three"),
        ];
        let (events, outcome) = read(&lines);
        assert_eq!(events[0], ["user u1", "assistant g1", "user u2", "assistant g2"]);
        assert_eq!(events[1], ["user u1", "assistant g1", "user u3", "assistant g3"]);
        assert_eq!(outcome.forks, [Fork { conversation: 1, from: 0, turn: 1 }]);
        assert!(outcome.checkpoint.is_none(), "a fork cannot be carried on from part of the file");
        // Each message counted once, however many conversations have it.
        assert_eq!(outcome.report.events["user"], 3);

        // A read carrying on from before the rewind is told to read the file whole.
        let (head, tail) = lines.split_at(5);
        let (_, first) = read(head);
        let t = text(tail);
        let mut drafts: Vec<Vec<Draft>> = Vec::new();
        let err = parse_lines(
            &mut super::super::text_lines(&t),
            &HashMap::new(),
            first.checkpoint.as_ref(),
            &clock(),
            &mut drafts,
        )
        .unwrap_err();
        assert!(matches!(err, InteropError::ReadWhole), "{err:?}");
    }

    #[test]
    fn a_request_taken_back_and_a_second_rewind_fork_again() {
        let lines = [
            header(),
            user("u1", "first"),
            model("g1", "one"),
            user("u2", "failed"),
            json!({"$set": {"messages": [user("u1", "first"), model("g1", "one")]}}),
            user("u3", "again"),
            model("g3", "three"),
            json!({"$rewindTo": "g3"}),
            model("g4", "four"),
        ];
        let (events, outcome) = read(&lines);
        assert_eq!(events[0], ["user u1", "assistant g1", "user u2"]);
        assert_eq!(events[1], ["user u1", "assistant g1", "user u3", "assistant g3"]);
        assert_eq!(events[2], ["user u1", "assistant g1", "user u3", "assistant g4"]);
        let forks: Vec<(usize, usize)> = outcome.forks.iter().map(|f| (f.conversation, f.from)).collect();
        assert_eq!(forks, [(1, 0), (2, 1)]);
    }

    #[test]
    fn a_compression_is_a_compaction_with_the_summary_and_what_it_kept_comes_again() {
        let context = user("env", "<session_context>\n</session_context>");
        let mut ack = model("ack", "");
        ack["content"] = json!([{"text": ACK}]);
        let lines = [
            header(),
            json!({"$set": {"messages": [context.clone()]}}),
            user("u1", "first"),
            model("g1", "one"),
            user("u2", "second"),
            model("g2", "two"),
            json!({"$set": {"messages": [context, user("sum", "<state_snapshot>all</state_snapshot>"), ack, user("u2b", "second"), model("g2b", "two")]}}),
            user("u3", "third"),
        ];
        let (events, outcome) = read(&lines);
        let kinds: Vec<&str> = events[0].iter().map(|e| e.split(' ').next().unwrap()).collect();
        assert_eq!(kinds, ["user", "assistant", "user", "assistant", "compaction", "user", "assistant", "user"]);
        assert_eq!(outcome.report.compactions, 1);
        assert!(outcome.forks.is_empty());
        let t = text(&lines);
        let mut drafts: Vec<Vec<Draft>> = Vec::new();
        parse_lines(&mut super::super::text_lines(&t), &HashMap::new(), None, &clock(), &mut drafts).unwrap();
        let summary = &drafts[0][4].extra["summary"];
        assert_eq!(summary["text"], "<state_snapshot>all</state_snapshot>");
        assert_eq!(summary["by"], BY);
        let history: Vec<&str> =
            summary["agent_history"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
        assert_eq!(history, ["sum", "ack"]);
    }

    /// Gemini CLI resumed within the minute its session began writes a new chat's start
    /// into the same file, then restates the list: nothing is cut, nothing comes twice.
    #[test]
    fn a_resume_that_restates_the_list_in_the_same_file_adds_only_what_is_new() {
        let context = user("env", "<session_context>\n</session_context>");
        let mut g1_sent = model("g1", "");
        g1_sent["content"] = json!([{"text": "one"}]);
        let inserted = json!({"id": "g1_response", "timestamp": "2026-01-01T00:00:03Z", "type": "user",
            "content": [{"functionResponse": {"id": "x", "name": "n", "response": {"output": "o"}}}]});
        let lines = [
            header(),
            json!({"$set": {"messages": [context.clone()]}}),
            user("u1", "first"),
            model("g1", "one"),
            header(),
            json!({"$set": {"messages": [context.clone()]}}),
            json!({"$set": {"sessionId": "s1"}}),
            json!({"$set": {"messages": [context, user("u1", "first"), g1_sent, inserted]}}),
            user("u2", "second"),
        ];
        let (events, outcome) = read(&lines);
        assert_eq!(events, [["user u1", "assistant g1", "user u2"]]);
        assert!(outcome.forks.is_empty());
        assert!(outcome.checkpoint.is_some());
    }

    /// A read that stops after any line and carries on from its checkpoint makes the events
    /// one read of the whole makes.
    #[test]
    fn reading_on_from_a_checkpoint_after_any_line_equals_one_read_of_the_whole() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/corpus-current/gemini-cli/vibecodingtracker__gemini.jsonl");
        let source = std::fs::read_to_string(corpus).unwrap();
        let lines: Vec<Value> = source.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let whole = |lines: &[Value]| -> Vec<Draft> {
            let t = text(lines);
            let mut drafts: Vec<Vec<Draft>> = Vec::new();
            parse_lines(&mut super::super::text_lines(&t), &HashMap::new(), None, &clock(), &mut drafts).unwrap();
            drafts.concat()
        };
        let all = whole(&lines);
        assert!(all.len() > 20);
        for cut in 1..lines.len() {
            let (head, tail) = lines.split_at(cut);
            let t = text(head);
            let mut first: Vec<Vec<Draft>> = Vec::new();
            let outcome =
                parse_lines(&mut super::super::text_lines(&t), &HashMap::new(), None, &clock(), &mut first).unwrap();
            // Through JSON, as `meta.json` keeps it.
            let checkpoint: super::super::Checkpoint =
                serde_json::from_value(serde_json::to_value(outcome.checkpoint.unwrap()).unwrap()).unwrap();
            let t = text(tail);
            let mut rest: Vec<Vec<Draft>> = Vec::new();
            parse_lines(&mut super::super::text_lines(&t), &HashMap::new(), Some(&checkpoint), &clock(), &mut rest)
                .unwrap();
            let line = |d: &Draft| Draft { line: 0, ..d.clone() };
            let joined: Vec<Draft> = first.concat().iter().chain(rest.concat().iter()).map(line).collect();
            assert_eq!(joined, all.iter().map(line).collect::<Vec<_>>(), "cut after line {cut}");
        }
    }

    #[test]
    fn the_older_single_document_reads_as_its_header_and_messages() {
        let doc = json!({"sessionId": "s1", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z",
            "summary": "Fix the login", "messages": [user("u1", "first"), model("g1", "one")]});
        let imported = parse(&serde_json::to_string_pretty(&doc).unwrap(), &clock()).unwrap();
        assert_eq!(imported.conversations[0].title.as_deref(), Some("Fix the login"));
        assert_eq!(imported.conversations[0].drafts.len(), 2);
    }

    #[test]
    fn other_formats_are_not_taken_for_gemini_cli() {
        let claude = r#"{"type":"user","uuid":"a","message":{"role":"user","content":"hi"}}"#;
        let convo = r#"{"id":"a","type":"user","content":"hi"}"#;
        for text in [claude, convo] {
            let lines: String = std::iter::repeat_n(format!("{text}\n"), 25).collect();
            assert!(parse(&lines, &clock()).is_err(), "{text}");
        }
    }
}
