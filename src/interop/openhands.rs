//! OpenHands event arrays: user and agent `message` actions are the dialogue; other agent
//! actions (`run`, `edit`, ...) are tool calls whose observation (linked by `cause`) is the
//! result; environment events are counted and skipped.

use serde_json::Value;

use super::{Builder, Format, Imported, InteropError, Report, skip};
use crate::clock::Clock;
use crate::event::Kind;

pub fn parse(text: &str, clock: &Clock) -> Result<Imported, InteropError> {
    let value: Value = serde_json::from_str(text).map_err(InteropError::NotJson)?;
    let items = value.as_array().ok_or(InteropError::NotThisFormat("not a JSON array of events"))?;
    if !items.iter().any(|e| e.get("source").is_some() && (e.get("action").is_some() || e.get("observation").is_some()))
    {
        return Err(InteropError::NotThisFormat("no event with `source` and `action` or `observation`"));
    }
    let mut report = Report { records: items.len(), ..Default::default() };
    let mut b = Builder::new(clock);
    for e in items {
        let source = e.get("source").and_then(Value::as_str).unwrap_or("");
        let ts = e
            .get("timestamp")
            .and_then(Value::as_str)
            .map(|t| if t.ends_with('Z') || t.contains('+') { t.to_owned() } else { format!("{t}Z") });
        let id =
            e.get("id").map(|i| format!("oh-{}", i.as_u64().map(|n| n.to_string()).unwrap_or_else(|| i.to_string())));
        let message = e.get("message").and_then(Value::as_str).unwrap_or("").to_owned();
        let kind = match (source, e.get("action").and_then(Value::as_str), e.get("observation").and_then(Value::as_str))
        {
            ("user", Some("message"), _) => Kind::User {
                content: e.pointer("/args/content").and_then(Value::as_str).map(str::to_owned).unwrap_or(message),
            },
            ("agent", Some("message"), _) => Kind::Assistant {
                content: e.pointer("/args/content").and_then(Value::as_str).map(str::to_owned).unwrap_or(message),
            },
            ("agent", Some(action), _) if action != "change_agent_state" => Kind::ToolCall {
                call_id: id.clone().unwrap_or_default(),
                name: action.to_owned(),
                arguments: e.get("args").cloned().unwrap_or_default(),
            },
            (_, _, Some(obs)) if obs != "null" && obs != "agent_state_changed" && e.get("cause").is_some() => {
                let cause = e
                    .get("cause")
                    .map(|c| format!("oh-{}", c.as_u64().map(|n| n.to_string()).unwrap_or_else(|| c.to_string())));
                let content = e.get("content").and_then(Value::as_str).unwrap_or(&message).to_owned();
                let is_error = e.pointer("/extras/exit_code").and_then(Value::as_i64).is_some_and(|c| c != 0);
                Kind::ToolResult { call_id: cause.unwrap_or_default(), content, is_error }
            }
            _ => {
                skip(
                    &mut report,
                    format!(
                        "{source} `{}` event",
                        e.get("action").or(e.get("observation")).and_then(Value::as_str).unwrap_or("?")
                    ),
                );
                continue;
            }
        };
        if !b.push(&mut report, kind, id.as_deref(), ts.as_deref()) {
            skip(&mut report, "observation without its action");
        }
    }
    Ok(Imported::one(Format::Openhands, b.drafts, report))
}
