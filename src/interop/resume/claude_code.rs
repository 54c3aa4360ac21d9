//! A Claude Code session file (`~/.claude/projects/<project>/<session>.jsonl`), as its
//! `--resume` reads it: one line per API message, chained by `parentUuid`. Consecutive
//! events of one side make one message (an assistant's thinking, text and tool calls; the
//! results and text of a user turn), as the API is sent them. A compaction is Claude Code's
//! own: a `compact_boundary` system line, then the summary as an `isCompactSummary` user
//! line, after which it sends only the summary and what follows.

use std::io::Write;

use serde_json::{Map, Value, json};

use super::{Agent, AsText, Part, Session, written_call_id};
use crate::event::Kind;
use crate::interop::{AGENT_RECORDS, SOURCE_LINKS, SOURCE_PARENT};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
}

struct Writer<'s, 'w> {
    session: &'s Session<'s>,
    out: &'w mut dyn Write,
    fresh: &'w mut dyn FnMut() -> String,
    parent: Option<String>,
    pending: Option<Pending>,
    messages: u64,
    /// The events the importer makes of what was written, and whether a user event is among
    /// them yet (a compaction with nothing before it makes none).
    drafts: u64,
    users: bool,
    /// A native hand-over: the uuid each source line was written as, the links of the
    /// source lines convo keeps no event of, and the last source line written. A line that
    /// continued from an earlier line than the one before it (a rewind) is chained here to
    /// the line written for that one, so Claude Code takes the same branch from convo's file
    /// as from its own.
    written: std::collections::HashMap<String, String>,
    links: std::collections::HashMap<String, String>,
    last_source: Option<String>,
}

/// The line being gathered: one side's blocks, from one source line where the events say
/// which (a native hand-over keeps Claude Code's own line structure, which it joins back
/// into API messages itself).
struct Pending {
    role: Role,
    blocks: Vec<Value>,
    ts: String,
    line: Option<String>,
    model: Option<String>,
    message_id: Option<String>,
    /// A line Claude Code wrote itself (`isMeta`).
    meta: bool,
    /// The tasks a result's call started (`toolUseResult`), which Claude Code reads back.
    task: Option<Value>,
}

/// The source line an event came from: importers name an event of a line's nth block
/// `<uuid>.<n>`.
fn source_line(event: &crate::event::Event) -> Option<String> {
    let id = event.extra.get("source_id").and_then(Value::as_str).unwrap_or(&event.id);
    Some(id.split('.').next().unwrap_or(id).to_owned())
}

impl Writer<'_, '_> {
    fn line(&mut self, mut fields: Map<String, Value>, ts: &str) -> std::io::Result<String> {
        let uuid = (self.fresh)();
        let mut line = Map::new();
        line.insert("parentUuid".into(), self.parent.clone().map(Value::String).unwrap_or(Value::Null));
        line.insert("isSidechain".into(), Value::Bool(false));
        line.insert("userType".into(), json!("external"));
        line.insert("cwd".into(), json!(self.session.cwd));
        line.insert("sessionId".into(), json!(self.session.id));
        line.insert("version".into(), json!(VERSION));
        line.insert("gitBranch".into(), json!(""));
        line.append(&mut fields);
        line.insert("uuid".into(), json!(uuid));
        line.insert("timestamp".into(), json!(ts));
        serde_json::to_writer(&mut *self.out, &line)?;
        self.out.write_all(b"\n")?;
        self.parent = Some(uuid.clone());
        Ok(uuid)
    }

    /// One of the agent's own records (an attachment), in the chain where it was.
    fn record(&mut self, record: &Value) -> std::io::Result<()> {
        let Value::Object(fields) = record else { return Ok(()) };
        let mut fields = fields.clone();
        let ts = fields.get("timestamp").and_then(Value::as_str).unwrap_or(self.session.created).to_owned();
        let source = fields.get("uuid").and_then(Value::as_str).map(str::to_owned);
        if let Some(parent) = fields.get("parentUuid").and_then(Value::as_str) {
            self.continue_from(parent);
        }
        for chained in ["parentUuid", "uuid", "sessionId", "cwd", "timestamp", "isSidechain"] {
            fields.remove(chained);
        }
        let uuid = self.line(fields, &ts)?;
        self.wrote(source, uuid);
        Ok(())
    }

    /// The next line continues from source line `parent`: from the line written for it, or
    /// for the nearest line it continued from that was written, when that is not the last
    /// one written (a rewind). A parent convo cannot place leaves the chain as it is.
    fn continue_from(&mut self, parent: &str) {
        let mut at = parent;
        // Bounded: links come from a file anyone may have written, and may loop.
        for _ in 0..=self.links.len() {
            if let Some(written) = self.written.get(at) {
                if self.last_source.as_deref() != Some(at) {
                    self.parent = Some(written.clone());
                }
                return;
            }
            match self.links.get(at) {
                Some(up) => at = up,
                None => return,
            }
        }
    }

    fn wrote(&mut self, source: Option<String>, uuid: String) {
        if let Some(source) = source {
            self.written.insert(source.clone(), uuid);
            self.last_source = Some(source);
        }
    }

    fn block(&mut self, role: Role, block: Value, event: &crate::event::Event) -> std::io::Result<()> {
        let line = if self.session.native_for(Agent::ClaudeCode, event) { source_line(event) } else { None };
        if self.pending.as_ref().is_some_and(|p| p.role != role || p.line != line) {
            self.flush()?;
        }
        let text = |key: &str| event.extra.get(key).and_then(Value::as_str).map(str::to_owned);
        let pending = self.pending.get_or_insert_with(|| Pending {
            role,
            blocks: Vec::new(),
            ts: event.ts.clone(),
            line,
            model: text("model"),
            message_id: text("message_id"),
            meta: matches!(event.kind, Kind::User { .. })
                && (event.is_scaffolding() || event.extra.get(crate::event::CLAUDE_META) == Some(&Value::Bool(true))),
            task: None,
        });
        if pending.task.is_none() {
            pending.task = event.extra.get("claude_task").filter(|t| t.is_object()).cloned();
        }
        pending.blocks.push(block);
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let Some(Pending { role, blocks, ts, model, message_id, line, meta, task }) = self.pending.take() else {
            return Ok(());
        };
        let mut fields = Map::new();
        // What the importer makes of the line: an event per block, except that a user
        // line's texts become one event (none when they are blank).
        self.drafts += match role {
            Role::Assistant => blocks.len() as u64,
            Role::User => {
                let results = blocks.iter().filter(|b| b["type"] == "tool_result").count() as u64;
                let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
                let user = !text.trim().is_empty();
                self.users |= user;
                results + u64::from(user)
            }
        };
        match role {
            Role::User => {
                // A prompt alone is a string, as Claude Code writes what was typed.
                let content = match blocks.as_slice() {
                    [one] if one["type"] == "text" => one["text"].clone(),
                    _ => Value::Array(blocks),
                };
                fields.insert("type".into(), json!("user"));
                if meta {
                    fields.insert("isMeta".into(), json!(true));
                }
                fields.insert("message".into(), json!({"role": "user", "content": content}));
                if let Some(task) = task {
                    fields.insert("toolUseResult".into(), task);
                }
            }
            Role::Assistant => {
                self.messages += 1;
                let stop = if blocks.iter().any(|b| b["type"] == "tool_use") { "tool_use" } else { "end_turn" };
                fields.insert("type".into(), json!("assistant"));
                fields.insert(
                    "message".into(),
                    json!({
                        "id": message_id.unwrap_or_else(|| format!("msg_convo_{:06}", self.messages)),
                        "type": "message",
                        "role": "assistant",
                        "model": model.unwrap_or_else(|| MODEL.to_owned()),
                        "content": blocks,
                        "stop_reason": stop,
                        "stop_sequence": null,
                        "usage": {"input_tokens": 0, "output_tokens": 0},
                    }),
                );
            }
        }
        let uuid = self.line(fields, &ts)?;
        self.wrote(line, uuid);
        Ok(())
    }

    fn compacted(&mut self, summary: &str, ts: &str) -> std::io::Result<()> {
        self.flush()?;
        self.drafts += u64::from(self.users && !summary.trim().is_empty());
        let logical = self.parent.take();
        let mut boundary = Map::new();
        boundary.insert("logicalParentUuid".into(), logical.map(Value::String).unwrap_or(Value::Null));
        boundary.insert("type".into(), json!("system"));
        boundary.insert("subtype".into(), json!("compact_boundary"));
        boundary.insert("content".into(), json!("Conversation compacted"));
        boundary.insert("isMeta".into(), json!(false));
        boundary.insert("level".into(), json!("info"));
        boundary.insert("compactMetadata".into(), json!({"trigger": "manual", "preTokens": 0}));
        self.line(boundary, ts)?;
        let mut line = Map::new();
        line.insert("type".into(), json!("user"));
        line.insert("message".into(), json!({"role": "user", "content": summary}));
        line.insert("isVisibleInTranscriptOnly".into(), json!(true));
        line.insert("isCompactSummary".into(), json!(true));
        self.line(line, ts)?;
        Ok(())
    }
}

/// A user event's text split back into the blocks it was imported from (`claude_texts`,
/// their byte lengths, joined by newlines), when they still add up to it: text changed
/// since (a redaction) is sent as one block.
fn text_blocks<'t>(content: &'t str, lengths: Option<&Value>) -> Option<Vec<&'t str>> {
    let lengths = lengths?.as_array()?;
    let mut parts = Vec::with_capacity(lengths.len());
    let mut rest = content;
    for (i, length) in lengths.iter().enumerate() {
        let length = usize::try_from(length.as_u64()?).ok()?;
        if i > 0 {
            rest = rest.strip_prefix('\n')?;
        }
        if !rest.is_char_boundary(length) {
            return None;
        }
        let (part, after) = rest.split_at(length);
        parts.push(part);
        rest = after;
    }
    rest.is_empty().then_some(parts)
}

/// The version written in each line: Claude Code reads lines of any version it knows.
const VERSION: &str = "2.1.0";
/// The model named on an assistant message the source did not name one for.
const MODEL: &str = "convo";

/// A Claude Code session written a part at a time (see [`super::Writer`]).
pub struct Stream<'a> {
    w: Writer<'a, 'a>,
    text: AsText,
    /// Call ids as written (the source's own where the importer renamed one), for results.
    ids: std::collections::HashMap<String, String>,
}

impl<'a> Stream<'a> {
    pub fn new(session: &'a Session<'a>, fresh: &'a mut dyn FnMut() -> String, out: &'a mut dyn Write) -> Self {
        let w = Writer {
            session,
            out,
            fresh,
            parent: None,
            pending: None,
            messages: 0,
            drafts: 0,
            users: false,
            written: Default::default(),
            links: Default::default(),
            last_source: None,
        };
        Stream { w, text: AsText::default(), ids: Default::default() }
    }

    pub fn part(&mut self, part: Part<'_>) -> std::io::Result<()> {
        let w = &mut self.w;
        let event = match part {
            Part::Compacted { summary, ts, .. } => return w.compacted(summary, ts),
            Part::Event(event) if part.is_sent_to(Agent::ClaudeCode, w.session) => event,
            Part::Event(_) => return Ok(()),
        };
        // Another agent's event reaches Claude Code converted, never as that agent's records.
        let native = w.session.native_for(Agent::ClaudeCode, event);
        if native && let Some(Value::Array(links)) = event.extra.get(SOURCE_LINKS) {
            for link in links {
                if let (Some(line), Some(parent)) = (link[0].as_str(), link[1].as_str()) {
                    w.links.insert(line.to_owned(), parent.to_owned());
                }
            }
        }
        if native && let Some(Value::Array(records)) = event.extra.get(AGENT_RECORDS) {
            w.flush()?;
            for record in records {
                w.record(record)?;
            }
        }
        if native && let Some(parent) = event.extra.get(SOURCE_PARENT).and_then(Value::as_str) {
            w.flush()?;
            w.continue_from(parent);
        }
        match &event.kind {
            Kind::User { content } => {
                let parts = if native { text_blocks(content, event.extra.get("claude_texts")) } else { None };
                for part in parts.unwrap_or_else(|| vec![content.as_str()]) {
                    w.block(Role::User, json!({"type": "text", "text": part}), event)?;
                }
            }
            Kind::Assistant { content } => w.block(Role::Assistant, json!({"type": "text", "text": content}), event)?,
            Kind::Reasoning { content } => {
                if let (true, Some(signature)) = (native, event.extra.get("signature")) {
                    let block = json!({"type": "thinking", "thinking": content, "signature": signature});
                    w.block(Role::Assistant, block, event)?;
                }
            }
            Kind::ToolCall { call_id, name, arguments } if native => {
                let input = match arguments {
                    Value::Object(_) => arguments.clone(),
                    other => json!({ "input": other }),
                };
                let id = self.ids.entry(call_id.clone()).or_insert_with(|| written_call_id(event, call_id));
                let mut block = json!({"type": "tool_use", "id": id, "name": name, "input": input});
                if let Some(caller) = event.extra.get("claude_caller") {
                    block["caller"] = caller.clone();
                }
                w.block(Role::Assistant, block, event)?;
            }
            Kind::ToolCall { call_id, name, arguments } => {
                let block = json!({"type": "text", "text": self.text.call(call_id, name, arguments)});
                w.block(Role::Assistant, block, event)?;
            }
            Kind::ToolResult { call_id, content, is_error } if native => {
                let id = self.ids.get(call_id.as_str()).map(String::as_str).unwrap_or(call_id);
                let content = event.extra.get("claude_content").cloned().unwrap_or_else(|| json!(content));
                let mut block = json!({"type": "tool_result", "tool_use_id": id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                w.block(Role::User, block, event)?;
            }
            Kind::ToolResult { call_id, content, is_error } => {
                let block = json!({"type": "text", "text": self.text.result(call_id, content, *is_error)});
                w.block(Role::User, block, event)?;
            }
            // Claude Code's system prompt is its own.
            Kind::System { .. } | Kind::Config { .. } | Kind::Compaction | Kind::Other(_) => {}
        }
        Ok(())
    }

    /// The last line, and the title; the number of events convo's importer makes of it all.
    pub fn finish(mut self) -> std::io::Result<u64> {
        let w = &mut self.w;
        w.flush()?;
        if let (Some(title), Some(leaf)) = (w.session.title, w.parent.clone()) {
            let line = json!({"type": "summary", "summary": title, "leafUuid": leaf});
            serde_json::to_writer(&mut *w.out, &line)?;
            w.out.write_all(b"\n")?;
        }
        Ok(w.drafts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Draft, Event};

    fn event(id: &str, kind: Kind, extra: Value) -> Event {
        let mut e = Draft::new(kind).into_event(id.into(), "2026-01-01T00:00:00Z".into());
        if let Value::Object(map) = extra {
            e.extra.extend(map);
        }
        e
    }

    /// The lines written: (uuid, parentUuid), in order.
    fn chain(events: &[Event]) -> Vec<(String, Option<String>)> {
        let session =
            Session { id: "s", cwd: "/p", created: "2026-01-01T00:00:00Z", title: None, native: true, provider: "" };
        let mut n = 0;
        let mut fresh = || {
            n += 1;
            format!("w{n}")
        };
        let mut out = Vec::new();
        let mut stream = Stream::new(&session, &mut fresh, &mut out);
        for e in events {
            stream.part(Part::Event(e)).unwrap();
        }
        stream.finish().unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|l| (l["uuid"].as_str().unwrap().to_owned(), l["parentUuid"].as_str().map(str::to_owned)))
            .collect()
    }

    #[test]
    fn a_user_line_of_several_text_blocks_is_split_back_while_they_add_up() {
        let lengths = json!([3, 5]);
        assert_eq!(text_blocks("one\nsé x", Some(&lengths)), Some(vec!["one", "sé x"]));
        // Redacted since, or lengths from a hostile file: one block.
        assert_eq!(text_blocks("one\n[REDACTED]", Some(&lengths)), None);
        assert_eq!(text_blocks("one sé x", Some(&lengths)), None);
        assert_eq!(text_blocks("one\nsé", Some(&json!([3, 2]))), None, "inside a character");
        assert_eq!(text_blocks("one", Some(&json!([99]))), None);
        assert_eq!(text_blocks("one", None), None);
    }

    #[test]
    fn a_rewind_is_written_back_as_a_branch_through_lines_convo_skipped() {
        let user = |text: &str| Kind::User { content: text.into() };
        let said = |text: &str| Kind::Assistant { content: text.into() };
        let events = [
            event("a", user("one"), json!({})),
            event("b", said("two"), json!({})),
            event("c", user("three"), json!({"source_links": [["s", "b"]]})),
            event("d", said("four"), json!({})),
            // Back to after `b`, through the skipped line `s`.
            event("e", user("three again"), json!({"source_parent": "s"})),
        ];
        let lines = chain(&events);
        assert_eq!(lines[4], ("w5".to_owned(), Some("w2".to_owned())), "{lines:?}");
        // Links that loop, or lead nowhere convo wrote, leave the chain as it is.
        let looped = [
            event("a", user("one"), json!({})),
            event("b", said("two"), json!({"source_links": [["x", "y"], ["y", "x"]]})),
            event("c", user("three"), json!({"source_parent": "x"})),
            event("d", said("four"), json!({"source_parent": "nowhere"})),
        ];
        let lines = chain(&looped);
        assert_eq!(lines[2].1.as_deref(), Some("w2"));
        assert_eq!(lines[3].1.as_deref(), Some("w3"));
    }
}
