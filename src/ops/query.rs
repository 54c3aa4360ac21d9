//! `query`: send the projected view and a message to a model, record both sides.

use std::time::Duration;

use crate::clock::Clock;
use crate::event::{Draft, Event, Kind};
use crate::llm::client::{Endpoint, Secret};
use crate::projection;
use crate::store::{Appended, StoreError, Subject, subject};

use super::OpsError;

/// The endpoint for `model`, with its key (when its provider names one) looked up through
/// `key` now: the library reads no environment itself.
pub fn endpoint(model: &crate::llm::Model, key: &dyn Fn(&str) -> Option<String>) -> Result<Endpoint, OpsError> {
    let key = match &model.api_key_env {
        None => None,
        Some(var) => match key(var) {
            Some(key) if !key.is_empty() => Some(Secret::new(key)),
            _ => return Err(OpsError::MissingKey { var: var.clone(), model: model.name.clone() }),
        },
    };
    Ok(Endpoint {
        label: model.name.clone(),
        kind: model.kind,
        base_url: model.base_url.clone(),
        key,
        timeout: Duration::from_secs(model.timeout_secs),
    })
}

/// A request estimated larger than the model's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    /// The projected view with the new message.
    pub view: u64,
    /// How `view` was estimated.
    pub basis: Basis,
    /// The cap on the answer, which the window must hold too.
    pub max_output: u64,
    pub window: u64,
}

impl Overflow {
    /// What the conversation's view may take for the request to fit, `message` aside.
    pub fn budget(&self, message: &str) -> u64 {
        self.window.saturating_sub(self.max_output).saturating_sub(crate::event::tokens(message.len() as u64))
    }
}

/// Whether `message` after the projected view of `events`, plus `model`'s output cap, is
/// estimated over its window (`None`: it fits, or the window is unknown).
pub fn overflow(events: &[Event], message: &str, model: &crate::llm::Model) -> Result<Option<Overflow>, OpsError> {
    let Some(window) = model.context_window else { return Ok(None) };
    let (view, basis) = estimate_request(events, message, &model.name)?;
    let overflow = Overflow { view, basis, max_output: model.max_output_tokens, window };
    Ok((overflow.view + overflow.max_output > window).then_some(overflow))
}

/// How a request's size was estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Characters / 4 of the whole view.
    Chars,
    /// The prompt tokens the model reported for this conversation's last answer, plus
    /// characters / 4 of what was added since.
    Calibrated,
}

impl Basis {
    pub fn label(self) -> &'static str {
        match self {
            Basis::Chars => "chars/4",
            Basis::Calibrated => "calibrated",
        }
    }
}

/// The projected view of `events` with `message` after it, estimated (chars/4).
pub fn view_tokens(events: &[Event], message: &str) -> Result<u64, OpsError> {
    let view = projection::project(events)?;
    let chars: u64 = projection::chars_by_turn(&view).values().sum::<u64>() + message.len() as u64;
    Ok(crate::event::tokens(chars))
}

/// [`view_tokens`], started from what `model` reported where it can be: the prompt of the
/// conversation's last answer by `model` (input + cache read + cache write), plus chars/4
/// of the events after that answer's question and of `message`. Not after a compaction that
/// came later (the view it measured is gone), nor from another model's tokenizer.
pub fn estimate_request(events: &[Event], message: &str, model: &str) -> Result<(u64, Basis), OpsError> {
    let view = projection::project(events)?;
    let reported = events.iter().enumerate().rev().find_map(|(i, e)| {
        let usage = crate::event::Usage::recorded(e)?;
        let by = e.extra.get("model").and_then(serde_json::Value::as_str)?;
        Some((i, usage.prompt_tokens()?, by))
    });
    let calibrated =
        reported.filter(|(i, _, by)| *by == model && !events[*i..].iter().any(|e| matches!(e.kind, Kind::Compaction)));
    let Some((i, prompt, _)) = calibrated else {
        return Ok((view_tokens(events, message)?, Basis::Chars));
    };
    // What the prompt did not hold: the answer that reported it, from its first event (the
    // first of its API message, when an agent wrote one message as several events; else
    // the first after the question it answered), and all after.
    let start = match events[i].extra.get("message_id").filter(|m| m.is_string()) {
        Some(message) => events.iter().position(|e| e.extra.get("message_id") == Some(message)).unwrap_or(i),
        None => events[..i].iter().rposition(|e| matches!(e.kind, Kind::User { .. })).unwrap_or(0) + 1,
    };
    let since: std::collections::HashSet<&str> = events[start..].iter().map(|e| e.id.as_str()).collect();
    let added: u64 = view.iter().filter(|p| since.contains(p.event.id.as_str())).map(|p| p.event.visible_chars()).sum();
    Ok((prompt + crate::event::tokens(added + message.len() as u64), Basis::Calibrated))
}

/// The projected view of `events`, estimated from the latest usage any model reported for
/// it (see [`estimate_request`]) where there is one, else chars/4: what `show` says a
/// conversation costs.
pub fn view_estimate(events: &[Event]) -> Result<(u64, Basis), OpsError> {
    let latest = events.iter().rev().find_map(|e| {
        e.extra.get("usage")?;
        e.extra.get("model").and_then(serde_json::Value::as_str)
    });
    match latest {
        Some(model) => estimate_request(events, "", model),
        None => Ok((view_tokens(events, "")?, Basis::Chars)),
    }
}

/// What a `query` turn recorded.
pub struct Queried {
    pub appended: Appended,
    pub reply: crate::llm::client::Reply,
}

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error(transparent)]
    Ops(#[from] OpsError),
    #[error(transparent)]
    Llm(#[from] crate::llm::client::LlmError),
    /// The request is estimated larger than the model's window: not sent.
    #[error(
        "~{} tokens ({}) of conversation and message plus {} for the answer (max_tokens) exceed {model}'s window of {}: not sent",
        .overflow.view, .overflow.basis.label(), .overflow.max_output, .overflow.window
    )]
    Overflow { model: String, overflow: Overflow },
    /// A summary the model stopped writing at its cap, also after the one retry the window
    /// allows (or with no room for one).
    #[error(
        "{model}: the summary was cut off at max_tokens {max_tokens}{}",
        if *retried { " (also after a retry with the larger cap)" } else { "" }
    )]
    SummaryTruncated { model: String, max_tokens: u64, retried: bool },
}

impl From<StoreError> for QueryError {
    fn from(e: StoreError) -> Self {
        QueryError::Ops(e.into())
    }
}

/// What [`ask`] did on the way to an answer, for the caller to say.
#[derive(Debug)]
pub enum Step {
    /// Automatic compaction made the conversation fit (before sending, or after the server
    /// said it did not fit).
    Compacted(Box<crate::ops::auto::Compacted>),
    /// The server found the conversation over its context: compacted, sent once more.
    Resending,
}

/// [`query`], fitted to the window: a request the estimate says is too large is refused
/// before anything is sent, or with automatic compaction on, compacted first ([`Step`]);
/// the server has the last word, and an overflow it reports is compacted to half the view
/// (and half of what the window leaves beside the answer) and sent once more.
#[allow(clippy::too_many_arguments)]
pub fn ask(
    store: &crate::store::Store,
    id: &str,
    message: String,
    model: &crate::llm::Model,
    endpoint: &crate::llm::client::Endpoint,
    apply: &mut dyn crate::ops::auto::Apply,
    on_delta: &mut dyn FnMut(crate::llm::client::Delta),
    on_step: &mut dyn FnMut(Step),
    stop: &dyn Fn() -> bool,
    clock: &Clock,
) -> Result<Queried, QueryError> {
    use crate::ops::auto;
    let events = store.events(id)?;
    if let Some(over) = overflow(&events, &message, model)? {
        let auto = apply.config(store, &events)?.config.compaction.auto;
        if !auto.enabled {
            return Err(QueryError::Overflow { model: model.name.clone(), overflow: over });
        }
        let over_by = over.view + over.max_output - over.window;
        let why = format!("~{over_by} tokens over");
        // A budget spends what it is given: aimed at the window itself, the turn would end
        // past the automatic trigger and compact again at once. Aim under the trigger, with
        // room for the message and the answer, where that leaves anything.
        let trigger = (over.window as f64 * auto.trigger_ratio) as u64;
        let settled = trigger.saturating_sub(over.max_output + crate::event::tokens(message.len() as u64));
        let budget = match over.budget(&message) {
            fits if settled > 0 => fits.min(settled),
            fits => fits,
        };
        if let Some(compacted) = auto::to_fit(store, id, budget, &why, apply, clock)? {
            on_step(Step::Compacted(Box::new(compacted)));
        }
    }
    match query(store, id, message.clone(), model, endpoint, on_delta, stop, clock) {
        Err(QueryError::Llm(e)) if e.is_context_overflow() => {
            let view = view_tokens(&store.events(id)?, "")?;
            let room = model.context_window.map_or(u64::MAX, |w| w.saturating_sub(model.max_output_tokens));
            let budget = view.min(room) / 2;
            let compacted = match budget {
                0 => None,
                budget => auto::to_fit(store, id, budget, "the server said it does not", apply, clock)?,
            };
            let Some(compacted) = compacted else { return Err(QueryError::Llm(e)) };
            on_step(Step::Compacted(Box::new(compacted)));
            on_step(Step::Resending);
            query(store, id, message, model, endpoint, on_delta, stop, clock)
        }
        other => other,
    }
}

/// Send `message` after the projected view of conversation `id` to `endpoint`, streaming the
/// answer to `on_delta`, then append the user message and the answer as one commit. A failed
/// call writes nothing; a stream that ends early (or `stop`) keeps what arrived, marked
/// `"interrupted": true`. The lock is taken only to commit, not while the model thinks.
#[allow(clippy::too_many_arguments)]
pub fn query(
    store: &crate::store::Store,
    id: &str,
    message: String,
    model: &crate::llm::Model,
    endpoint: &crate::llm::client::Endpoint,
    on_delta: &mut dyn FnMut(crate::llm::client::Delta),
    stop: &dyn Fn() -> bool,
    clock: &Clock,
) -> Result<Queried, QueryError> {
    use serde_json::Value;
    let events = store.events(id)?;
    // The message is stamped when it is sent, the answer when it has arrived.
    let mut user = Draft::new(Kind::User { content: message });
    user.ts = Some(clock.timestamp());
    let mut with = events.clone();
    with.push(user.clone().into_event(clock.new_id(), clock.timestamp()));
    let view: Vec<Event> = projection::project(&with).map_err(OpsError::from)?.into_iter().map(|p| p.event).collect();
    let body = crate::llm::request_body(model, &view, true, model.max_output_tokens);
    let reply = endpoint.complete(&body, on_delta, stop)?;

    let mut drafts = vec![user];
    if !reply.reasoning.is_empty() {
        drafts.push(Draft::new(Kind::Reasoning { content: reply.reasoning.clone() }));
    }
    if !reply.text.is_empty() || (reply.tool_calls.is_empty()) {
        drafts.push(Draft::new(Kind::Assistant { content: reply.text.clone() }));
    }
    // A provider may reuse a call id across turns (a local server's `call_0`): a call id
    // must be new to the conversation, so such a call is renamed too.
    let mut taken: std::collections::HashSet<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::ToolCall { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    for crate::llm::client::ToolCall { id: call_id, name, arguments } in &reply.tool_calls {
        // Provider ids are not always usable as convo ids (empty, too long, odd characters):
        // store such a call under a new id and keep the provider's beside it.
        let usable = crate::event::validate_event_id(call_id).is_ok() && taken.insert(call_id.clone());
        let mut draft = Draft::new(Kind::ToolCall {
            call_id: if usable { call_id.clone() } else { format!("call_{}", clock.new_id()) },
            name: if name.trim().is_empty() { "unknown".into() } else { name.clone() },
            arguments: arguments.clone(),
        });
        if !usable {
            draft.extra.insert("source_call_id".into(), Value::String(call_id.clone()));
        }
        drafts.push(draft);
    }
    // Who answered, what it cost, and whether the answer is whole: on the last event.
    if let Some(last) = drafts.last_mut() {
        last.extra.insert("model".into(), Value::String(model.name.clone()));
        // Unknown usage (a stream cut before the provider counted) is absent, never zeros.
        if !reply.usage.is_empty() {
            last.extra.insert("usage".into(), serde_json::to_value(reply.usage).unwrap_or_default());
        }
        if let Some(raw) = &reply.usage_raw {
            last.extra.insert("usage_raw".into(), raw.clone());
        }
        if reply.interrupted {
            last.extra.insert("interrupted".into(), Value::Bool(true));
        }
        // Cut off at the cap: kept as the provider said it, so the answer never reads as whole.
        if let Some(reason) = reply.finish_reason.as_ref().filter(|_| reply.truncated()) {
            last.extra.insert("finish_reason".into(), Value::String(reason.clone()));
        }
    }
    let tx = store.transaction()?;
    let title = store.meta(id)?.title;
    let turn = crate::event::Stats::of(&events).turns;
    let name = subject::name(id, title.as_deref());
    let text = subject::query(&name, turn, drafts.len(), &model.name, reply.interrupted);
    let appended = store.append_as(tx, id, drafts, clock, Some(Subject { text, compaction: None }))?;
    Ok(Queried { appended, reply })
}

/// The provider request body `query` would send for `view` (`show`/`export --format openai`
/// or `anthropic`), naming `model` or `llm.model`; a model config cannot resolve (an
/// unknown provider) still gets a body, with its name as given.
pub fn provider_body(
    config: &crate::config::Resolved,
    view: &[Event],
    anthropic: bool,
    model: Option<&str>,
) -> serde_json::Value {
    let model_name = model.map(str::to_owned).or_else(|| config.config.llm.model.clone());
    let model = model_name.as_deref().and_then(|n| crate::llm::resolve_model(&config.config, Some(n)).ok());
    let options = crate::llm::wire::BodyOptions {
        model: model.as_ref().map(|m| m.model.clone()).or_else(|| model_name.clone()),
        stream: true,
        max_tokens: model.as_ref().map_or(crate::llm::DEFAULT_MAX_OUTPUT_TOKENS, |m| m.max_output_tokens),
    };
    if anthropic { crate::llm::wire::anthropic(view, &options) } else { crate::llm::wire::openai(view, &options) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Draft;

    /// Claude Code's session: one question, two API calls with a tool's output between
    /// them. The last call's prompt held that output: only its own answer is added.
    #[test]
    fn a_calibrated_estimate_adds_only_what_the_reporting_call_did_not_see() {
        let event = |n: usize, kind: Kind, message: Option<&str>, prompt: Option<u64>| {
            let mut e = Draft::new(kind).into_event(format!("e{n}"), "2026-01-01T00:00:00.000Z".into());
            if let Some(m) = message {
                e.extra.insert("message_id".into(), serde_json::json!(m));
                e.extra.insert("model".into(), serde_json::json!("claude-x"));
            }
            if let Some(p) = prompt {
                e.extra.insert("usage".into(), serde_json::json!({"input_tokens": p, "output_tokens": 1}));
            }
            e
        };
        let call =
            |id: &str| Kind::ToolCall { call_id: id.into(), name: "Read".into(), arguments: serde_json::json!({}) };
        let events = vec![
            event(0, Kind::User { content: "read it".into() }, None, None),
            event(1, call("c1"), Some("m1"), Some(100)),
            event(
                2,
                Kind::ToolResult { call_id: "c1".into(), content: "x".repeat(40_000), is_error: false },
                None,
                None,
            ),
            event(3, Kind::Assistant { content: "abcd".repeat(10) }, Some("m2"), Some(10_100)),
        ];
        let (estimate, basis) = estimate_request(&events, "", "claude-x").unwrap();
        assert_eq!(basis, Basis::Calibrated);
        // 10,100 reported, plus the 40 characters of the answer that reported it.
        assert_eq!(estimate, 10_100 + 10);
    }
}
