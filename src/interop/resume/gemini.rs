//! A Gemini CLI chat session (`<gemini home>/tmp/<project>/chats/session-<time>-<id>.jsonl`),
//! as its `--resume` reads it: a header naming the session and the project (`projectHash`,
//! the SHA-256 of the directory), then one record per message, which it replays as its
//! history (it makes its `<session_context>` afresh and leaves notices out).
//!
//! Consecutive events of one message make one record: for a session from Gemini CLI, the
//! message the importer made them of (`<message id>` and `<message id>.<n>`), with its
//! thoughts, text, tool calls and their results, token count and the fields Gemini CLI
//! recorded; for another, consecutive events of one side (tool calls and results as text).
//! The agent's own records kept with an event (its context, notices, the user message of
//! tool responses it sends) are written back before it. A compaction is Gemini CLI's own:
//! a `$set` of the message list to what it put in place of the history (the summary as a
//! user message and its answer), after which it sends only those and what follows.

use std::collections::{HashMap, HashSet};
use std::io::Write;

use serde_json::{Map, Value, json};

use super::{AsText, Part, Session, Side, written_call_id};
use crate::event::{Event, Kind, Usage};
use crate::interop::AGENT_RECORDS;
use crate::interop::gemini::{self, ACK, RESPONSES};

/// The model named on a model message the source named none for.
const MODEL: &str = "convo";

/// How many model messages' results are kept for the references that follow them (the
/// importer makes them for its latest few messages).
const RECENT_RESULTS: usize = 4;

/// The message being gathered.
struct Message {
    id: String,
    side: Side,
    ts: String,
    /// The content as Gemini CLI recorded it, when it kept it whole (`gemini_content`).
    recorded: Option<Value>,
    texts: Vec<String>,
    /// Parts that are not text (function calls and responses in the form Gemini CLI sends).
    parts: Vec<Value>,
    thoughts: Vec<Value>,
    calls: Vec<Value>,
    display: Option<Value>,
    usage: Option<Usage>,
    model: Option<String>,
    /// Made of Gemini CLI's own events: another agent's go in a message of their own.
    native: bool,
}

/// A Gemini CLI session written a part at a time (see [`super::Writer`]).
pub struct Stream<'a> {
    session: &'a Session<'a>,
    out: &'a mut dyn Write,
    fresh: &'a mut dyn FnMut() -> String,
    begun: bool,
    pending: Option<Message>,
    text: AsText,
    /// Call ids as written (the source's own where the importer renamed one), with names.
    ids: HashMap<String, (String, String)>,
    /// Calls written without their result yet, by written id (what the importer answers
    /// with a tool response in a user message).
    open: HashSet<String>,
    /// Each written call's one-part result, by written id: what a reference to the tool
    /// responses Gemini CLI sent stands for.
    /// Those of the latest few model messages only (a reference names the calls just made),
    /// so memory does not grow with the conversation.
    results: std::collections::VecDeque<HashMap<String, Value>>,
    /// Message ids written, so that none is written twice (Gemini CLI would take the second
    /// for the first).
    written: HashSet<String>,
    /// Events convo's importer makes of what was written, and whether a user event is among
    /// them yet (a compaction with nothing before it makes none).
    drafts: u64,
    users: bool,
    /// Messages are in the list: a `$set` of it now replaces them.
    listed: bool,
}

impl<'a> Stream<'a> {
    pub fn new(session: &'a Session<'a>, fresh: &'a mut dyn FnMut() -> String, out: &'a mut dyn Write) -> Self {
        Stream {
            session,
            out,
            fresh,
            begun: false,
            pending: None,
            text: AsText::default(),
            ids: HashMap::new(),
            open: HashSet::new(),
            results: Default::default(),
            written: HashSet::new(),
            drafts: 0,
            users: false,
            listed: false,
        }
    }

    fn line(&mut self, value: &Value) -> std::io::Result<()> {
        serde_json::to_writer(&mut *self.out, value)?;
        self.out.write_all(b"\n")
    }

    fn begin(&mut self) -> std::io::Result<()> {
        if self.begun {
            return Ok(());
        }
        self.begun = true;
        let s = self.session;
        let header = json!({"sessionId": s.id, "projectHash": project_hash(s.cwd), "startTime": s.created,
                            "lastUpdated": s.created, "kind": "main"});
        self.line(&header)
    }

    /// A message id not written yet: the one given, else a fresh one.
    fn unique(&mut self, id: &str) -> String {
        let id = if id.is_empty() || self.written.contains(id) { (self.fresh)() } else { id.to_owned() };
        self.written.insert(id.clone());
        id
    }

    pub fn part(&mut self, part: Part<'_>) -> std::io::Result<()> {
        self.begin()?;
        let event = match part {
            Part::Compacted { summary, agent_history, ts } => return self.compacted(summary, agent_history, ts),
            Part::Event(event) if part.is_sent_to(super::Agent::GeminiCli, self.session) => event,
            Part::Event(_) => return Ok(()),
        };
        // Another agent's event reaches Gemini CLI converted, never as that agent's records.
        let native = self.session.native_for(super::Agent::GeminiCli, event);
        if native && let Some(Value::Array(records)) = event.extra.get(AGENT_RECORDS) {
            self.flush()?;
            for record in records {
                self.record(record)?;
            }
        }
        let (side, id) = match (&event.kind, native) {
            (Kind::User { .. }, _) => (Side::User, message_of(event)),
            (Kind::ToolResult { .. }, true) if event.extra.get("gemini_part").is_some() => {
                (Side::User, message_of(event))
            }
            (Kind::ToolResult { .. }, false) => (Side::User, None),
            (Kind::Assistant { .. } | Kind::ToolCall { .. } | Kind::ToolResult { .. }, _) => {
                (Side::Model, message_of(event))
            }
            (Kind::Reasoning { .. }, true) => (Side::Model, message_of(event)),
            // Reasoning is the provider's own; system prompts are Gemini CLI's.
            _ => return Ok(()),
        };
        let id = if native { id } else { None };
        if self
            .pending
            .as_ref()
            .is_some_and(|m| m.side != side || m.native != native || (native && Some(&m.id) != id.as_ref()))
        {
            self.flush()?;
        }
        if self.pending.is_none() {
            if side == Side::Model {
                self.results.push_back(HashMap::new());
                if self.results.len() > RECENT_RESULTS {
                    self.results.pop_front();
                }
            }
            let id = self.unique(id.as_deref().unwrap_or_default());
            let recorded = event.extra.get("gemini_content").filter(|_| native).cloned();
            self.pending = Some(Message {
                id,
                side,
                ts: event.ts.clone(),
                recorded,
                texts: Vec::new(),
                parts: Vec::new(),
                thoughts: Vec::new(),
                calls: Vec::new(),
                display: event.extra.get("gemini_display").filter(|_| native).cloned(),
                usage: None,
                model: None,
                native,
            });
        }
        let m = self.pending.as_mut().expect("made above");
        if m.usage.is_none() {
            m.usage = Usage::recorded(event);
        }
        if m.model.is_none() {
            m.model = event.extra.get("model").and_then(Value::as_str).map(str::to_owned);
        }
        let in_content = event.extra.get("gemini_part").is_some() || m.recorded.is_some();
        match &event.kind {
            Kind::User { content } | Kind::Assistant { content } => m.texts.push(content.clone()),
            Kind::Reasoning { content } => {
                if m.recorded.is_none() {
                    let mut thought = Map::new();
                    if let Some(subject) = event.extra.get("subject") {
                        thought.insert("subject".into(), subject.clone());
                    }
                    thought.insert("description".into(), json!(content));
                    let ts = event.extra.get("thought_ts").cloned().unwrap_or_else(|| json!(event.ts));
                    thought.insert("timestamp".into(), ts);
                    m.thoughts.push(Value::Object(thought));
                }
            }
            Kind::ToolCall { call_id, name, arguments } if native => {
                let id = written_call_id(event, call_id);
                self.ids.insert(call_id.clone(), (id.clone(), name.clone()));
                if in_content {
                    if m.recorded.is_none() {
                        m.parts.push(json!({"functionCall": {"id": id, "name": name, "args": arguments}}));
                    }
                } else {
                    let mut call = Map::new();
                    call.insert("id".into(), json!(id));
                    call.insert("name".into(), json!(name));
                    call.insert("args".into(), arguments.clone());
                    if let Some(Value::Object(meta)) = event.extra.get("gemini_call") {
                        call.extend(meta.iter().map(|(k, v)| (k.clone(), v.clone())));
                    }
                    m.calls.push(Value::Object(call));
                }
            }
            Kind::ToolCall { call_id, name, arguments } => m.texts.push(self.text.call(call_id, name, arguments)),
            Kind::ToolResult { call_id, content, is_error } if native => {
                let (id, name) = self.ids.get(call_id).cloned().unwrap_or_else(|| (call_id.clone(), "unknown".into()));
                let result = match event.extra.get("gemini_result") {
                    Some(recorded) => recorded.clone(),
                    None => {
                        let key = if *is_error { "error" } else { "output" };
                        json!([{"functionResponse": {"id": id, "name": name, "response": {key: content}}}])
                    }
                };
                if let [one] = result.as_array().map(Vec::as_slice).unwrap_or_default()
                    && let Some(latest) = self.results.back_mut()
                {
                    latest.insert(id.clone(), one.clone());
                }
                if in_content && m.side == Side::User {
                    if m.recorded.is_none() {
                        m.parts.extend(result.as_array().cloned().unwrap_or_default());
                    }
                } else if let Some(call) = m.calls.iter_mut().rev().find(|c| c["id"] == json!(id)) {
                    call["result"] = result;
                }
            }
            Kind::ToolResult { call_id, content, is_error } => {
                m.texts.push(self.text.result(call_id, content, *is_error))
            }
            Kind::System { .. } | Kind::Config { .. } | Kind::Compaction | Kind::Other(_) => {}
        }
        Ok(())
    }

    /// One of the agent's own records: a message as it recorded it, or the user message of
    /// tool responses that repeated the calls' results, made again from them.
    fn record(&mut self, record: &Value) -> std::io::Result<()> {
        let record = match record.get(RESPONSES) {
            Some(reference) => {
                let calls = reference.get("calls").and_then(Value::as_array).cloned().unwrap_or_default();
                let content: Vec<Value> =
                    calls.iter().filter_map(|c| c.as_str()).filter_map(|c| self.result(c)).collect();
                let mut message = Map::new();
                message.insert("id".into(), reference.get("id").cloned().unwrap_or_else(|| json!((self.fresh)())));
                if let Some(ts) = reference.get("timestamp") {
                    message.insert("timestamp".into(), ts.clone());
                }
                message.insert("type".into(), json!("user"));
                message.insert("content".into(), Value::Array(content));
                Value::Object(message)
            }
            None => record.clone(),
        };
        let Some(id) = record.get("id").and_then(Value::as_str) else { return Ok(()) };
        if self.written.contains(id) {
            return Ok(());
        }
        self.written.insert(id.to_owned());
        self.message(&record)
    }

    /// A recent call's one-part result, as written.
    fn result(&self, call: &str) -> Option<Value> {
        self.results.iter().rev().find_map(|r| r.get(call).cloned())
    }

    /// Write a message record, counting the events convo's importer makes of it, and which
    /// calls it leaves waiting for their results.
    fn message(&mut self, record: &Value) -> std::io::Result<()> {
        let open = &self.open;
        let (events, words) = gemini::events_of(record, &|call| open.contains(call));
        self.drafts += events;
        self.users |= words;
        self.listed = true;
        let id = |v: &Value| v.get("id").and_then(Value::as_str).map(str::to_owned);
        for call in record.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
            if call.get("result").is_none_or(Value::is_null) {
                self.open.extend(id(call));
            }
        }
        for part in record.get("content").and_then(Value::as_array).into_iter().flatten() {
            if let Some(call) = part.get("functionCall") {
                self.open.extend(id(call));
            }
            if let Some(response) = part.get("functionResponse").and_then(id) {
                self.open.remove(&response);
            }
        }
        self.line(record)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let Some(m) = self.pending.take() else { return Ok(()) };
        let mut record = Map::new();
        record.insert("id".into(), json!(m.id));
        record.insert("timestamp".into(), json!(m.ts));
        match m.side {
            Side::User => {
                let content = m.recorded.unwrap_or_else(|| {
                    let texts = m.texts.iter().map(|t| json!({"text": t}));
                    Value::Array(texts.chain(m.parts).collect())
                });
                record.insert("type".into(), json!("user"));
                record.insert("content".into(), content);
                if let Some(display) = m.display {
                    record.insert("displayContent".into(), display);
                }
            }
            Side::Model => {
                let content = m.recorded.unwrap_or_else(|| {
                    if m.parts.is_empty() {
                        json!(m.texts.join("\n"))
                    } else {
                        let texts = m.texts.iter().filter(|t| !t.is_empty()).map(|t| json!({"text": t}));
                        Value::Array(texts.chain(m.parts).collect())
                    }
                });
                record.insert("type".into(), json!("gemini"));
                record.insert("content".into(), content);
                record.insert("thoughts".into(), Value::Array(m.thoughts));
                if let Some(usage) = &m.usage {
                    record.insert("tokens".into(), tokens(usage));
                }
                record.insert("model".into(), json!(m.model.as_deref().unwrap_or(MODEL)));
                if !m.calls.is_empty() {
                    record.insert("toolCalls".into(), Value::Array(m.calls));
                }
            }
        }
        self.message(&Value::Object(record))
    }

    /// Gemini CLI's compression: the list set to what it put in place of the history, the
    /// summary and its answer.
    fn compacted(&mut self, summary: &str, history: Option<&Value>, ts: &str) -> std::io::Result<()> {
        self.flush()?;
        let pair = match history.filter(|h| self.session.native && h.as_array().is_some_and(|a| !a.is_empty())) {
            Some(history) => history.clone(),
            None => json!([
                {"id": (self.fresh)(), "timestamp": ts, "type": "user", "content": [{"text": summary}]},
                {"id": (self.fresh)(), "timestamp": ts, "type": "gemini", "content": [{"text": ACK}],
                 "thoughts": [], "model": MODEL},
            ]),
        };
        // The importer makes a compaction of it when it replaces messages there were and
        // turns came before it, else the pair's own events.
        self.drafts += if self.listed && self.users {
            u64::from(!summary.trim().is_empty())
        } else {
            pair.as_array().map_or(0, |a| a.len() as u64)
        };
        for m in pair.as_array().into_iter().flatten() {
            if let Some(id) = m.get("id").and_then(Value::as_str) {
                self.written.insert(id.to_owned());
            }
        }
        self.users = true;
        self.listed = true;
        self.line(&json!({"$set": {"messages": pair}}))
    }

    /// The title, as Gemini CLI records a session's summary; the number of events convo's
    /// importer makes of it all.
    pub fn finish(mut self) -> std::io::Result<u64> {
        self.begin()?;
        self.flush()?;
        if let Some(title) = self.session.title {
            self.line(&json!({"$set": {"summary": title}}))?;
        }
        Ok(self.drafts)
    }
}

/// The message an event was made of: its id before the part number (`<id>.<n>`).
fn message_of(event: &Event) -> Option<String> {
    let id = event.extra.get("source_id").and_then(Value::as_str).unwrap_or(&event.id);
    Some(id.split('.').next().unwrap_or(id).to_owned())
}

/// A usage as Gemini CLI records a message's `tokens` ([`Usage::from_gemini`] backwards).
fn tokens(u: &Usage) -> Value {
    let n = |v: Option<u64>| v.unwrap_or(0);
    let (cached, thoughts) = (n(u.cache_read_tokens), n(u.reasoning_tokens));
    let input = n(u.input_tokens) + cached + n(u.cache_write_tokens);
    let output = n(u.output_tokens).saturating_sub(thoughts);
    json!({"input": input, "output": output, "cached": cached, "thoughts": thoughts, "tool": 0,
           "total": input + output + thoughts})
}

/// Gemini CLI's `projectHash`: the SHA-256 of the project's directory, in hex.
pub fn project_hash(dir: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(dir.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_hash_is_the_sha256_of_the_directory() {
        // Gemini CLI 0.61 recorded this hash for /tmp/gx/proj.
        assert_eq!(project_hash("/tmp/gx/proj"), "dec139b8e5dc1ab2a225e3b6c346b771776d0a60326ed80f47ee9868f99e3e27");
    }

    #[test]
    fn tokens_read_back_as_the_usage_they_were_made_of() {
        let recorded = json!({"input": 1200, "output": 30, "cached": 1024, "thoughts": 20, "tool": 0, "total": 1250});
        let usage = Usage::from_gemini(&recorded).unwrap();
        assert_eq!(tokens(&usage), recorded);
    }
}
