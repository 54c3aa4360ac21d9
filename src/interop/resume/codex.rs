//! A Codex rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl`), as
//! `codex resume` reads it: a `session_meta` record naming the session, the working
//! directory and the provider (Codex refuses a rollout of another provider than its
//! config's), then `response_item`s, which are the history it sends, with the `event_msg`s
//! its picker and transcript show. A compaction is Codex's own `compacted` record, with the
//! history Codex replaces the range with where the source recorded one.

use std::io::Write;

use serde_json::{Value, json};

use super::{Agent, AsText, Part, Session, written_call_id};
use crate::event::{Event, Kind};
use crate::interop::AGENT_RECORDS;

/// The Codex version written in `session_meta`.
const CLI_VERSION: &str = "0.169.0";

/// Records numbered from 0 (`ordinal`), as Codex numbers those it pages through.
struct Out<'w> {
    out: &'w mut dyn Write,
    ordinal: u64,
    /// The events the importer makes of what was written (a response item each, a
    /// compaction once a user message is before it), and whether one is yet.
    drafts: u64,
    users: bool,
}

impl Out<'_> {
    fn record(&mut self, ts: &str, kind: &str, payload: Value) -> std::io::Result<()> {
        match kind {
            "response_item" => {
                self.drafts += 1;
                self.users |= payload["role"] == "user";
            }
            "compacted" => {
                let summary = payload["message"].as_str().unwrap_or_default();
                self.drafts += u64::from(self.users && !summary.trim().is_empty());
            }
            _ => {}
        }
        let line = json!({"timestamp": ts, "ordinal": self.ordinal, "type": kind, "payload": payload});
        self.ordinal += 1;
        serde_json::to_writer(&mut *self.out, &line)?;
        self.out.write_all(b"\n")
    }
}

fn message(role: &str, part: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": part, "text": text}]})
}

/// A message of the event's text, in the parts Codex wrote it in when they still make that
/// text (Codex recognises its context blocks by the part they start).
fn message_of(event: &crate::event::Event, role: &str, part: &str, text: &str) -> Value {
    match event.extra.get("codex_content") {
        Some(parts @ Value::Array(_)) if crate::interop::text_of(parts) == text => {
            json!({"type": "message", "role": role, "content": parts})
        }
        _ => message(role, part, text),
    }
}

/// A Codex rollout written a part at a time (see [`super::Writer`]).
pub struct Stream<'a> {
    session: &'a Session<'a>,
    out: Out<'a>,
    /// The `session_meta` line is written with the first part, which may carry the
    /// source's own.
    begun: bool,
    text: AsText,
    /// Call ids as written (the source's own where the importer renamed one), for results.
    ids: std::collections::HashMap<String, String>,
}

impl<'a> Stream<'a> {
    pub fn new(session: &'a Session<'a>, out: &'a mut dyn Write) -> Self {
        let out = Out { out, ordinal: 0, drafts: 0, users: false };
        Stream { session, out, begun: false, text: AsText::default(), ids: Default::default() }
    }

    /// `session_meta`: the source's own (its instructions, originator, ...) when it came
    /// from Codex and `first` carries it, under this session's id, directory and provider.
    fn begin(&mut self, first: Option<&Event>) -> std::io::Result<()> {
        self.begun = true;
        let session = self.session;
        let recorded = first
            .filter(|e| session.native_for(Agent::Codex, e))
            .and_then(|e| e.extra.get(AGENT_RECORDS)?.as_array()?.iter().find(|r| r["type"] == "session_meta"));
        let mut meta = recorded
            .and_then(|r| r.get("payload"))
            .cloned()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({"originator": "convo", "cli_version": CLI_VERSION, "source": "cli"}));
        for (key, value) in [
            ("id", json!(session.id)),
            ("session_id", json!(session.id)),
            ("timestamp", json!(session.created)),
            ("cwd", json!(session.cwd)),
            ("model_provider", json!(session.provider)),
        ] {
            meta[key] = value;
        }
        self.out.record(session.created, "session_meta", meta)
    }

    pub fn part(&mut self, part: Part<'_>) -> std::io::Result<()> {
        if !self.begun {
            let first = match part {
                Part::Event(e) => Some(e),
                Part::Compacted { .. } => None,
            };
            self.begin(first)?;
        }
        let (session, out, text) = (self.session, &mut self.out, &mut self.text);
        let event = match part {
            Part::Compacted { summary, agent_history, ts } => {
                let mut payload = json!({"message": summary});
                if let Some(history) = agent_history {
                    payload["replacement_history"] = history.clone();
                }
                return out.record(ts, "compacted", payload);
            }
            Part::Event(event) if part.is_sent_to(Agent::Codex, session) => event,
            Part::Event(_) => return Ok(()),
        };
        let ts = event.ts.as_str();
        // Another agent's event reaches Codex converted, never as that agent's records.
        let native = session.native_for(Agent::Codex, event);
        if native {
            agent_records(out, session, event.extra.get(AGENT_RECORDS), ts)?;
        }
        let item = |out: &mut Out<'_>, payload: Value| out.record(ts, "response_item", payload);
        let codex_type = event.extra.get("codex_type").and_then(Value::as_str);
        match &event.kind {
            Kind::System { content } => {
                let role = event.extra.get("codex_role").and_then(Value::as_str).unwrap_or("developer");
                item(out, message_of(event, role, "input_text", content))?;
            }
            Kind::User { content } => {
                item(out, message_of(event, "user", "input_text", content))?;
                let shown = json!({"type": "user_message", "message": content, "images": []});
                out.record(ts, "event_msg", shown)?;
            }
            Kind::Assistant { content } => {
                item(out, message_of(event, "assistant", "output_text", content))?;
                out.record(ts, "event_msg", json!({"type": "agent_message", "message": content}))?;
            }
            Kind::Reasoning { content } => {
                if native {
                    let encrypted = event.extra.get("encrypted_content").cloned().unwrap_or(Value::Null);
                    let summary =
                        if content.is_empty() { json!([]) } else { json!([{"type": "summary_text", "text": content}]) };
                    let payload = json!({"type": "reasoning", "summary": summary, "content": null, "encrypted_content": encrypted});
                    item(out, payload)?;
                }
            }
            Kind::ToolCall { call_id, name, arguments } if native => {
                let id = self.ids.entry(call_id.clone()).or_insert_with(|| written_call_id(event, call_id)).clone();
                let as_string = match arguments {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let payload = match codex_type {
                    Some("custom_tool_call") => {
                        json!({"type": "custom_tool_call", "status": "completed", "call_id": id, "name": name, "input": as_string})
                    }
                    _ => json!({"type": "function_call", "name": name, "arguments": as_string, "call_id": id}),
                };
                item(out, payload)?;
            }
            Kind::ToolCall { call_id, name, arguments } => {
                item(out, message("assistant", "output_text", &text.call(call_id, name, arguments)))?;
            }
            Kind::ToolResult { call_id, content, .. } if native => {
                let id = self.ids.get(call_id.as_str()).cloned().unwrap_or_else(|| call_id.clone());
                let kind = match codex_type {
                    Some("custom_tool_call_output") => "custom_tool_call_output",
                    _ => "function_call_output",
                };
                item(out, json!({"type": kind, "call_id": id, "output": content}))?;
            }
            Kind::ToolResult { call_id, content, is_error } => {
                item(out, message("user", "input_text", &text.result(call_id, content, *is_error)))?;
            }
            Kind::Config { .. } | Kind::Compaction | Kind::Other(_) => {}
        }
        Ok(())
    }

    /// The number of events convo's importer makes of what was written.
    pub fn finish(mut self) -> std::io::Result<u64> {
        if !self.begun {
            self.begin(None)?;
        }
        Ok(self.out.drafts)
    }
}

/// The source's own records kept with an event (its turn context and settings), written
/// back for Codex, with the directory the agent runs in now rather than the recorded one.
fn agent_records(out: &mut Out<'_>, session: &Session<'_>, records: Option<&Value>, ts: &str) -> std::io::Result<()> {
    let Some(Value::Array(records)) = records else { return Ok(()) };
    for r in records.iter().filter(|r| r["type"] != "session_meta") {
        let mut payload = r.get("payload").cloned().unwrap_or_default();
        if payload.get("cwd").is_some() {
            payload["cwd"] = json!(session.cwd);
        }
        if let Some(settings) = payload.get_mut("thread_settings").filter(|t| t.get("cwd").is_some()) {
            settings["cwd"] = json!(session.cwd);
        }
        let kind = r.get("type").and_then(Value::as_str).unwrap_or("turn_context");
        out.record(r.get("timestamp").and_then(Value::as_str).unwrap_or(ts), kind, payload)?;
    }
    Ok(())
}
