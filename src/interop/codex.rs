//! Codex CLI rollout JSONL: `{timestamp, type, payload}` records. `response_item`s are the
//! conversation; `event_msg`s repeat them for the UI and are skipped (counted); a
//! `compacted` record becomes a compaction with its summary. A `function_call`'s
//! `arguments` string that is not JSON is kept as a string. Codex writes no title: a
//! session is titled by its first user message that is not Codex's own (environment,
//! instructions); the first `session_meta` says where it ran (`cwd`, `git`). A tool's
//! output carries no error flag: it is an error result when the exit status it reports
//! (`Exit code: 1`, `Process exited with code 1`, or its JSON's `exit_code`) is not 0, read
//! as compaction's placeholders read it ([`crate::event::trail::exit_status`]).
//!
//! Usage: Codex records each model call's tokens as a running total with the call's own
//! counts beside it (`event_msg` `token_count`: `info.total_token_usage`,
//! `info.last_token_usage`; since 0.16x also a `token_usage_record`: `thread_token_usage`,
//! `usage`). A record whose total did not move (Codex repeats one at a turn's end, and a
//! `token_count` follows each `token_usage_record`) counts nothing, so the counted calls
//! add up to the last total; nor does one whose call used no token. OpenAI's
//! `input_tokens` includes the cached prompt: convo's input is the rest
//! ([`Usage::from_openai`]). The call's usage goes on the first assistant-side event
//! (reasoning, message, tool call) of the response it counts, with the model of the latest
//! `turn_context`.
//!
//! Where that event is depends on the order Codex wrote, which changed: 0.39 wrote a
//! call's count BEFORE the items it counts (after the stream, with the items recorded
//! then), later versions write it AFTER them (the items as they stream; 0.169 writes the
//! `token_count` even after the tool outputs that follow). Events are append-only, and a
//! session captured line by line (`import --follow`, `watch`) must give the events one read
//! of the whole file gives, so a count is never put on an event already emitted:
//! - a session's first count decides its order: AFTER if assistant items came before it
//!   (kept back, see below), else BEFORE;
//! - BEFORE: the count waits (in the checkpoint) and goes on the next assistant item;
//! - AFTER: a response's events are kept back from its first assistant item
//!   ([`super::Builder::keep_back`], kept in the checkpoint) until its count comes, which
//!   goes on the first of them, and they go out together. A record that ends the response
//!   without a count (a user or developer message, a `turn_context`, a compaction, a task
//!   started, complete or aborted) lets them go without one;
//! - before the first count, responses are kept back as in AFTER only in a session that
//!   marks its turns (`task_started`, `task_complete`, `turn_aborted`: the versions that
//!   write counts after the items), where every turn's end lets them go. In one that does
//!   not (0.39, a file another tool wrote) nothing is kept back, so a session without counts
//!   loses no event: read as BEFORE, a count that comes after its items goes on the next.
//!
//! A count with no response to go on (a compaction's call, an aborted response's) waits
//! and is added to the next call's, so sums stay exact. A file that ends inside a response
//! whose count has not been written yet (a session being written, one killed mid-response)
//! gives that response's events to the read that goes on past it (a follow), not to this
//! one: they are never emitted without the count a later read would give them. Nothing is
//! invented: an event carries only counts Codex wrote.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    Builder, EMIT_BATCH, Emit, Format, Imported, InteropError, Lines, Outcome, Place, Report, arguments, json_line,
    skip, text_of, title,
};
use crate::clock::Clock;
use crate::event::trail::exit_status;
use crate::event::{Kind, Usage};

/// What a session's token counts said so far: what a read carrying on from a
/// [`super::Checkpoint`] needs to count as a read of the whole file does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The model of the latest `turn_context`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The running total of the last count taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Value>,
    /// Counted and not on an event yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Usage>,
    /// Whether the session writes a call's count before or after its items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
    /// The session marks where its turns start and end (`task_started`, ...).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub marks_turns: bool,
}

/// Where Codex writes a call's count: before the items it counts (0.39) or after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Before,
    After,
}

impl Tokens {
    pub fn is_empty(&self) -> bool {
        *self == Tokens::default()
    }

    /// The call a record with running total `total` and the call's own counts `last`
    /// counts: none when the total did not move, or the call used nothing. Without the
    /// call's counts, what the total grew by.
    fn count(&mut self, total: Option<&Value>, last: Option<&Value>) -> Option<Usage> {
        let total = total.filter(|t| t.is_object())?;
        if self.total.as_ref() == Some(total) {
            return None;
        }
        let usage = match last.filter(|l| l.is_object()) {
            Some(last) => Usage::from_openai(last),
            None => {
                let grown = |key: &str| {
                    let was = self.total.as_ref().and_then(|t| t.get(key)).and_then(Value::as_u64).unwrap_or(0);
                    total.get(key).and_then(Value::as_u64).map(|now| now.saturating_sub(was))
                };
                let keys = [
                    "input_tokens",
                    "cached_input_tokens",
                    "cache_write_input_tokens",
                    "output_tokens",
                    "reasoning_output_tokens",
                ];
                let delta: serde_json::Map<String, Value> =
                    keys.into_iter().filter_map(|k| Some((k.to_owned(), Value::from(grown(k)?)))).collect();
                Usage::from_openai(&Value::Object(delta))
            }
        };
        self.total = Some(total.clone());
        let used = |u: &Usage| {
            [u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens]
                .iter()
                .flatten()
                .any(|n| *n > 0)
        };
        usage.filter(used)
    }

    /// A call's `usage` was counted: on the response kept back for it, or held for the next.
    fn counted(&mut self, b: &mut Builder, usage: Usage) {
        self.pending.get_or_insert_with(Usage::default).add(&usage);
        if b.keeping() {
            self.order.get_or_insert(Order::After);
            if let Some(first) = b.kept_mut().iter_mut().find(|d| assistant_side(&d.kind)) {
                self.put_on(&mut first.extra);
            }
            b.release();
        } else {
            self.order.get_or_insert(Order::Before);
        }
    }

    /// Put the usage held (with the model) on an event's extra fields.
    fn put_on(&mut self, extra: &mut serde_json::Map<String, Value>) {
        let Some(usage) = self.pending.take() else { return };
        extra.insert("usage".into(), serde_json::to_value(usage).unwrap_or_default());
        if let Some(model) = &self.model {
            extra.insert("model".into(), Value::String(model.clone()));
        }
    }
}

/// The events a model call makes, which its usage goes on.
fn assistant_side(kind: &Kind) -> bool {
    matches!(kind, Kind::Assistant { .. } | Kind::Reasoning { .. } | Kind::ToolCall { .. })
}

pub fn parse(text: &str, clock: &Clock) -> Result<Imported, InteropError> {
    let mut drafts = Vec::new();
    let outcome = parse_lines(&mut super::text_lines(text), None, clock, &mut drafts)?;
    Ok(super::collected(outcome, drafts))
}

/// The events, emitted as they are made; from a [`super::Checkpoint`], of the lines after it.
pub fn parse_lines(
    lines: Lines,
    from: Option<&super::Checkpoint>,
    clock: &Clock,
    emit: &mut dyn Emit,
) -> Result<Outcome, InteropError> {
    let emit = &mut super::Stamped::new(super::resume::Agent::Codex, emit);
    let mut report = Report::default();
    let mut b = match from {
        Some(c) => Builder::from_checkpoint(clock, c),
        None => Builder::new(clock),
    };
    emit.version = from.and_then(|c| c.agent_version.clone());
    let mut tokens = from.map(|c| c.tokens.clone()).unwrap_or_default();
    let mut recognised = from.is_some();
    let mut place = Place::default();
    let mut seen_meta = false;
    let mut first_prompt = None;
    for (i, line) in lines.enumerate() {
        let Some(line) = json_line(i + 1, &line?)? else { continue };
        report.records += 1;
        b.at_line(i + 1);
        if line.get("payload").is_some() && line.get("type").is_some() {
            recognised = true;
        } else if !recognised && report.records >= 20 {
            return Err(InteropError::NotThisFormat("no `{timestamp, type, payload}` record"));
        }
        let ts = line.get("timestamp").and_then(Value::as_str);
        let payload = line.get("payload").cloned().unwrap_or_default();
        let record = line.get("type").and_then(Value::as_str).unwrap_or("");
        let event = payload.get("type").and_then(Value::as_str).filter(|_| record == "event_msg");
        // A record that ends a response: what was kept back for its count goes without one.
        let role = payload.get("role").and_then(Value::as_str);
        let turn_mark = matches!(event, Some("task_started" | "task_complete" | "turn_aborted"));
        if turn_mark
            || matches!(record, "turn_context" | "compacted")
            || (record == "response_item" && role.is_some_and(|r| r != "assistant"))
        {
            b.release();
        }
        tokens.marks_turns |= turn_mark;
        if record == "turn_context" {
            tokens.model = Place::field(payload.get("model")).or(tokens.model.take());
        }
        match record {
            "response_item" => {
                if first_prompt.is_none()
                    && payload.get("type").and_then(Value::as_str) == Some("message")
                    && role == Some("user")
                {
                    first_prompt = title::from_prompt(&text_of(payload.get("content").unwrap_or(&Value::Null)));
                }
                response_item(&mut b, &mut report, &payload, ts, &mut tokens)
            }
            "event_msg" if event == Some("token_count") => {
                let info = payload.get("info");
                let total = info.and_then(|i| i.get("total_token_usage"));
                match tokens.count(total, info.and_then(|i| i.get("last_token_usage"))) {
                    Some(usage) => {
                        tokens.counted(&mut b, usage);
                        skip(&mut report, "token_count (kept as its call's usage)");
                    }
                    None => skip(&mut report, "token_count with no new tokens"),
                }
            }
            "token_usage_record" => match tokens.count(payload.get("thread_token_usage"), payload.get("usage")) {
                Some(usage) => {
                    tokens.counted(&mut b, usage);
                    skip(&mut report, "`token_usage_record` record (kept as its call's usage)");
                }
                None => skip(&mut report, "`token_usage_record` record with no new tokens"),
            },
            // The first one is the session's; later ones describe subagents or forks.
            "session_meta" if !seen_meta => {
                seen_meta = true;
                emit.version = Place::field(payload.get("cli_version")).or(emit.version.take());
                place.cwd = Place::field(payload.get("cwd")).or(place.cwd);
                place.branch = Place::field(payload.pointer("/git/branch"));
                place.remote = Place::field(payload.pointer("/git/repository_url"));
                b.hold(line.clone());
            }
            "turn_context" if place.cwd.is_none() => {
                place.cwd = Place::field(payload.get("cwd"));
                b.hold(line.clone());
            }
            "compacted" => {
                let mut summary = payload.get("message").and_then(Value::as_str).unwrap_or("").to_owned();
                if summary.trim().is_empty() {
                    // The replacement history is what Codex sent instead: its messages are the summary.
                    summary = payload
                        .get("replacement_history")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
                        .map(|i| text_of(i.get("content").unwrap_or(&Value::Null)))
                        .filter(|t| !t.trim().is_empty())
                        .collect::<Vec<_>>()
                        .join("\n\n");
                }
                // What Codex's resume sends in place of the history, when it recorded it.
                let history = payload.get("replacement_history").filter(|h| h.is_array()).cloned();
                if !b.compaction_with(&mut report, &summary, "codex", ts, history) {
                    skip(&mut report, "compacted record with nothing to cover");
                }
            }
            // What Codex compares the session's context against when it resumes: kept with
            // the next event, so a resume does not inject the context a second time.
            "turn_context" | "world_state" | "session_meta" => b.hold(line.clone()),
            "event_msg" if payload.get("type").and_then(Value::as_str) == Some("thread_settings_applied") => {
                b.hold(line.clone())
            }
            "event_msg" => skip(&mut report, "event_msg (repeats a response item)"),
            "" => skip(&mut report, "record without a type"),
            other => skip(&mut report, format!("`{other}` record")),
        }
        if b.drafts.len() >= EMIT_BATCH {
            emit.drafts(0, b.take())?;
        }
    }
    if !recognised {
        return Err(InteropError::NotThisFormat("no `{timestamp, type, payload}` record"));
    }
    let checkpoint = Some(super::Checkpoint { tokens, agent_version: emit.version.clone(), ..b.checkpoint() });
    emit.drafts(0, b.take())?;
    Ok(Outcome {
        format: Format::Codex,
        conversations: vec![(first_prompt, None)],
        report,
        place,
        checkpoint,
        forks: Vec::new(),
    })
}

fn response_item(b: &mut Builder, report: &mut Report, p: &Value, ts: Option<&str>, tokens: &mut Tokens) {
    let id = p.get("id").and_then(Value::as_str);
    let call_id = || p.get("call_id").and_then(Value::as_str).unwrap_or("").to_owned();
    let name = || p.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
    // What `convo resume --in codex` needs to write the item back as Codex wrote it.
    let mut extra = serde_json::Map::new();
    let item_type = p.get("type").and_then(Value::as_str).unwrap_or("");
    if matches!(item_type, "custom_tool_call" | "custom_tool_call_output" | "tool_search_call" | "tool_search_output") {
        extra.insert("codex_type".into(), Value::String(item_type.to_owned()));
    }
    let kind = match item_type {
        "message" => {
            let content = text_of(p.get("content").unwrap_or(&Value::Null));
            // Codex finds its context blocks by the part they start (`<permissions
            // instructions>`): a resume writes the parts back apart.
            if let Some(parts) = p.get("content").and_then(Value::as_array).filter(|parts| parts.len() > 1) {
                extra.insert("codex_content".into(), Value::Array(parts.clone()));
            }
            // Codex's own context (its environment, permissions, instructions): kept, for
            // Codex, as the scaffolding it is.
            if crate::event::is_codex_block(&content) {
                extra.insert(crate::event::META.into(), Value::Bool(true));
            }
            match p.get("role").and_then(Value::as_str) {
                Some("user") => Kind::User { content },
                Some("assistant") => Kind::Assistant { content },
                Some(role @ ("system" | "developer")) => {
                    extra.insert("codex_role".into(), Value::String(role.to_owned()));
                    Kind::System { content }
                }
                _ => {
                    skip(report, "message with an unknown role");
                    return;
                }
            }
        }
        "agent_message" => Kind::Assistant { content: text_of(p.get("content").unwrap_or(&Value::Null)) },
        "reasoning" => {
            // Sent back to the provider on a resume, which checks it: kept as it came.
            if let Some(encrypted) = p.get("encrypted_content").filter(|e| e.is_string()) {
                extra.insert("encrypted_content".into(), encrypted.clone());
            }
            let summary = text_of(p.get("summary").unwrap_or(&Value::Null));
            let content = text_of(p.get("content").unwrap_or(&Value::Null));
            Kind::Reasoning { content: if content.is_empty() { summary } else { content } }
        }
        "function_call" => {
            Kind::ToolCall { call_id: call_id(), name: name(), arguments: arguments(p.get("arguments")) }
        }
        "custom_tool_call" => Kind::ToolCall { call_id: call_id(), name: name(), arguments: arguments(p.get("input")) },
        "tool_search_call" => {
            Kind::ToolCall { call_id: call_id(), name: "tool_search".into(), arguments: arguments(p.get("arguments")) }
        }
        "function_call_output" | "custom_tool_call_output" => {
            let output = p.get("output").cloned().unwrap_or_default();
            let content = match &output {
                Value::Object(o) => {
                    o.get("text").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| output.to_string())
                }
                other => text_of(other),
            };
            // Codex writes no error flag: a command failed when the exit status its output
            // reports (a line of the text, or its JSON's `exit_code`) is not 0.
            let is_error = exit_status(&content).is_some_and(|code| code != 0);
            Kind::ToolResult { call_id: call_id(), content, is_error }
        }
        "tool_search_output" => Kind::ToolResult {
            call_id: call_id(),
            content: p.get("tools").map(Value::to_string).unwrap_or_default(),
            is_error: false,
        },
        other => {
            skip(report, format!("response item `{other}`"));
            return;
        }
    };
    if assistant_side(&kind) {
        match tokens.order {
            // Its count came before it.
            Some(Order::Before) => tokens.put_on(&mut extra),
            // Its count comes after it, or may: kept back until then (a session that marks
            // its turns ends each, so nothing waits past the turn).
            Some(Order::After) if !b.keeping() => b.keep_back(),
            None if tokens.marks_turns && !b.keeping() => b.keep_back(),
            _ => {}
        }
    }
    if !b.push_with(report, kind, id, ts, extra) {
        skip(report, "tool result without its call");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether each result of a session whose calls gave `outputs` is an error, in order.
    fn errors(outputs: &[Value]) -> Vec<bool> {
        let mut lines = vec![
            serde_json::json!({"timestamp": "2026-11-28T06:03:43.000Z", "type": "session_meta", "payload": {"cwd": "/w"}}),
        ];
        for (i, output) in outputs.iter().enumerate() {
            let call = serde_json::json!({"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"make\"}", "call_id": format!("c{i}")});
            let result =
                serde_json::json!({"type": "function_call_output", "call_id": format!("c{i}"), "output": output});
            for payload in [call, result] {
                lines.push(serde_json::json!({"timestamp": "2026-11-28T06:03:43.000Z", "type": "response_item", "payload": payload}));
            }
        }
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let imported = parse(&text, &Clock::fixed(chrono::DateTime::UNIX_EPOCH)).unwrap();
        imported.conversations[0]
            .drafts
            .iter()
            .filter_map(|d| match &d.kind {
                Kind::ToolResult { is_error, .. } => Some(*is_error),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_result_is_an_error_when_its_printed_exit_status_is_not_zero() {
        let said = |code: i64| {
            format!(
                "Chunk ID: 696d42\nWall time: 0.0000 seconds\nProcess exited with code {code}\nOriginal token count: 5\nOutput:\nx\n"
            )
        };
        let older =
            |code: i64| format!("Exit code: {code}\nWall time: 0.2 seconds\nOutput:\nmake: *** [all] Error {code}\n");
        let outputs = [said(0), said(1), said(-9), older(0), older(2), "Process exited with code 127".to_owned()];
        let outputs: Vec<Value> = outputs.into_iter().map(Value::String).collect();
        assert_eq!(errors(&outputs), [false, true, true, false, true, true]);
    }

    #[test]
    fn a_result_is_an_error_when_its_json_exit_code_is_not_zero() {
        let outputs = [
            r#"{"output":"ok\n","metadata":{"exit_code":0,"duration_seconds":0.1}}"#,
            r#"{"output":"cc a.c\nerror: no main\n","metadata":{"exit_code":2,"duration_seconds":0.1}}"#,
            r#"{"output":"ok\n","exit_code":0}"#,
            r#"{"output":"no such file\n","exit_code":1,"wall_time_seconds":0.1}"#,
            r#"{"exit_code":1}"#,
        ];
        let outputs: Vec<Value> = outputs.into_iter().map(|o| Value::String(o.into())).collect();
        assert_eq!(errors(&outputs), [false, true, false, true, true]);
    }

    /// Without an exit status a result stays a success, as Codex wrote it: a tool that is
    /// not a command, a command still running, an output as an object.
    #[test]
    fn a_result_without_an_exit_status_is_not_an_error() {
        let outputs = [
            Value::String("Plan updated".into()),
            Value::String("Chunk ID: 1\nWall time: 10.0 seconds\nProcess running with session ID 3\nOutput:\n".into()),
            Value::String(r#"{"output":"error: not a status\n","metadata":{"duration_seconds":0.1}}"#.into()),
            Value::String("a.txt\nb.txt\nc.txt\nExit code: 1 (a file's text, below the top lines)\n".into()),
            serde_json::json!({"type": "input_text", "text": "a.txt\n"}),
        ];
        assert_eq!(errors(&outputs), [false, false, false, false, false]);
    }
}
