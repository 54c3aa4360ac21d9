//! Codex CLI rollout JSONL: `{timestamp, type, payload}` records. `response_item`s are the
//! conversation; `event_msg`s repeat them for the UI and are skipped (counted); a
//! `compacted` record becomes a compaction with its summary. A `function_call`'s
//! `arguments` string that is not JSON is kept as a string. Codex writes no title: a
//! session is titled by its first user message that is not Codex's own (environment,
//! instructions); the first `session_meta` says where it ran (`cwd`, `git`).

use serde_json::Value;

use super::{
    Builder, EMIT_BATCH, Emit, Format, Imported, InteropError, Lines, Outcome, Place, Report, arguments, json_line,
    skip, text_of, title,
};
use crate::clock::Clock;
use crate::event::Kind;

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
    let mut report = Report::default();
    let mut b = match from {
        Some(c) => Builder::from_checkpoint(clock, c),
        None => Builder::new(clock),
    };
    let mut recognised = from.is_some();
    let mut place = Place::default();
    let mut seen_meta = false;
    let mut first_prompt = None;
    for (i, line) in lines.enumerate() {
        let Some(line) = json_line(i + 1, &line?)? else { continue };
        report.records += 1;
        if line.get("payload").is_some() && line.get("type").is_some() {
            recognised = true;
        } else if !recognised && report.records >= 20 {
            return Err(InteropError::NotThisFormat("no `{timestamp, type, payload}` record"));
        }
        let ts = line.get("timestamp").and_then(Value::as_str);
        let payload = line.get("payload").cloned().unwrap_or_default();
        match line.get("type").and_then(Value::as_str).unwrap_or("") {
            "response_item" => {
                if first_prompt.is_none()
                    && payload.get("type").and_then(Value::as_str) == Some("message")
                    && payload.get("role").and_then(Value::as_str) == Some("user")
                {
                    first_prompt = title::from_prompt(&text_of(payload.get("content").unwrap_or(&Value::Null)));
                }
                response_item(&mut b, &mut report, &payload, ts)
            }
            // The first one is the session's; later ones describe subagents or forks.
            "session_meta" if !seen_meta => {
                seen_meta = true;
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
    let checkpoint = Some(b.checkpoint());
    emit.drafts(0, b.take())?;
    Ok(Outcome { format: Format::Codex, conversations: vec![(first_prompt, None)], report, place, checkpoint })
}

fn response_item(b: &mut Builder, report: &mut Report, p: &Value, ts: Option<&str>) {
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
            Kind::ToolResult { call_id: call_id(), content, is_error: false }
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
    if !b.push_with(report, kind, id, ts, extra) {
        skip(report, "tool result without its call");
    }
}
