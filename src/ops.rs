//! Operations that combine the store, config and compaction: what several commands share
//! (`compact`, `fork --compact`, `config set`). Commands parse and print; the work is here.

use crate::clock::Clock;
use crate::compaction::plan::{self, Estimate, PlanError, Prepared, Request};
use crate::compaction::range::{Bound, Turns};
use crate::compaction::{Compaction, Record, Summary, TokenUsage, summary};
use crate::config::{self, ConfigError, Layer, Resolved, Source};
use crate::event::{Draft, Event, Kind, turn_numbers};
use crate::projection::{self, ProjectionError};
use crate::store::{Appended, Created, ForkedFrom, Lock, Store, StoreError, Subject};

#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Projection(#[from] ProjectionError),
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T, E = OpsError> = std::result::Result<T, E>;

/// The configuration for conversation `events` in `store`: the caller's `base` layers
/// (defaults, user file, command line) plus the store's `convo.toml` and the conversation's
/// `config` events. Those two are content: they may name providers only when the user
/// trusts the store (`store_trusted`, the caller's decision); what they may not set is left
/// out and listed in [`Resolved::ignored`].
pub fn resolve_config(store: &Store, events: &[Event], base: &[Layer], store_trusted: bool) -> Result<Resolved> {
    let mut layers = base.to_vec();
    if let Some(bytes) = store.head_file(STORE_CONFIG)? {
        let text = String::from_utf8_lossy(&bytes);
        layers.push(config::parse_layer(Source::Store, STORE_CONFIG, &text)?);
    }
    layers.extend(config::conversation_layers(events)?);
    Ok(Resolved::with_trust(layers, store_trusted)?)
}

/// The store's shared, committed configuration file.
pub const STORE_CONFIG: &str = "convo.toml";

/// A compaction worked out but not yet appended, with what it would save.
pub struct Planned {
    pub prepared: Prepared,
    pub estimate: Estimate,
    /// The id and timestamp the compaction event will have.
    pub id: String,
    pub ts: String,
}

/// Work out the compaction `request` asks for, without writing anything (`--dry-run`).
pub fn plan_compaction(events: &[Event], config: &Resolved, request: &Request, clock: &Clock) -> Result<Planned> {
    let prepared = plan::prepare(events, &config.config, request, clock.now())?;
    let (id, ts) = (clock.new_id(), clock.timestamp());
    // A summary still to be written counts as empty: the estimate is a lower bound until then.
    let mut candidate = prepared.compaction.clone();
    if prepared.pending.is_some() {
        candidate.summary = Some(Summary { text: String::new(), by: String::new(), usage: None });
    }
    let estimate = plan::estimate(events, &candidate, &id, &ts)?;
    Ok(Planned { prepared, estimate, id, ts })
}

/// A summary for a model to write: the model, the instructions, and the raw events of the
/// range as transcript chunks that each fit the model's window.
pub struct SummaryJob {
    pub model: crate::llm::Model,
    pub instructions: String,
    pub chunks: Vec<String>,
    /// Estimated tokens sent, all calls together.
    pub input_tokens: u64,
}

/// Work out the summary `planned` still needs. `model` (a flag) wins over the profile's
/// `summary.model`, which wins over `llm.model`.
pub fn summary_job(
    events: &[Event],
    planned: &Planned,
    config: &Resolved,
    model: Option<&str>,
    focus: Option<&str>,
) -> Result<SummaryJob> {
    let pending = planned.prepared.pending.as_ref().ok_or_else(|| OpsError::Invalid("no summary to write".into()))?;
    let name = model.map(str::to_owned).or_else(|| pending.model.clone());
    let model =
        crate::llm::resolve_model(&config.config, name.as_deref()).map_err(|e| OpsError::Invalid(e.to_string()))?;
    let instructions = summary::instructions(pending.instructions.as_deref(), focus);
    let c = &planned.prepared.compaction;
    let turns = summary::transcript(events, (c.from_turn, c.to_turn));
    // Leave 40% of the window for the instructions, the answer and the estimate's error.
    // (Never below 1 KiB a chunk, however small the window claims to be.)
    let max_chars = model
        .context_window
        .map(|w| ((w as f64 * 0.6) as usize).saturating_mul(4).saturating_sub(instructions.len()).max(1024));
    let chunks = summary::chunks(&turns, max_chars);
    let chars: usize = chunks.iter().map(|c| c.len() + instructions.len()).sum();
    Ok(SummaryJob { model, instructions, chunks, input_tokens: crate::event::tokens(chars as u64) })
}

/// Have the model write the summary: one call per chunk, then one to combine them. An empty
/// answer is an error, like any other fault: nothing is written.
pub fn write_summary(
    job: &SummaryJob,
    endpoint: &crate::llm::client::Endpoint,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(String, TokenUsage), QueryError> {
    let ask = |instructions: &str, text: &str, usage: &mut TokenUsage| -> Result<String, QueryError> {
        let message = |kind| Event { id: "m".into(), ts: String::new(), kind, extra: Default::default() };
        let view =
            [message(Kind::System { content: instructions.into() }), message(Kind::User { content: text.into() })];
        let body = crate::llm::request_body(&job.model, &view, false);
        let reply = endpoint.complete(&body, &mut |_| {}, &|| false)?;
        usage.input_tokens += reply.usage.input_tokens;
        usage.output_tokens += reply.usage.output_tokens;
        let text = reply.text.trim().to_owned();
        if text.is_empty() {
            return Err(crate::llm::client::LlmError::Malformed {
                endpoint: job.model.name.clone(),
                message: "the model returned an empty summary".into(),
            }
            .into());
        }
        Ok(text)
    };
    let mut usage = TokenUsage::default();
    let total = job.chunks.len() + usize::from(job.chunks.len() > 1);
    let mut parts = Vec::new();
    for (i, chunk) in job.chunks.iter().enumerate() {
        progress(i, total);
        parts.push(ask(&job.instructions, chunk, &mut usage)?);
    }
    let text = if parts.len() == 1 {
        parts.remove(0)
    } else {
        progress(total - 1, total);
        let numbered: Vec<String> = parts.iter().enumerate().map(|(i, p)| format!("Part {}:\n{p}", i + 1)).collect();
        ask(summary::COMBINE_INSTRUCTIONS, &numbered.join("\n\n"), &mut usage)?
    };
    Ok((text, usage))
}

/// Put a written summary into the planned compaction and estimate it anew.
pub fn fill_summary(events: &[Event], planned: &mut Planned, text: String, usage: TokenUsage, by: &str) -> Result<()> {
    planned.prepared.compaction.summary = Some(Summary { text, by: by.to_owned(), usage: Some(usage) });
    planned.prepared.pending = None;
    planned.estimate = plan::estimate(events, &planned.prepared.compaction, &planned.id, &planned.ts)?;
    Ok(())
}

/// Append a planned compaction as one commit:
/// `compact: "fix login" turns 0-9 [strip reasoning, strip tool calls] ~48,210 -> 9,874 tokens`.
pub fn apply_compaction(
    store: &Store,
    lock: &Lock,
    conversation: &str,
    planned: &Planned,
    clock: &Clock,
) -> Result<Appended> {
    if planned.prepared.pending.is_some() {
        return Err(OpsError::Invalid("the profile summarizes with a model: use `convo compact --summarize`".into()));
    }
    let c = &planned.prepared.compaction;
    let title = store.meta(conversation)?.title;
    let text = format!(
        "compact: {} turns {}-{} {} ~{} -> {} tokens",
        crate::store::subject_name(conversation, title.as_deref()),
        c.from_turn,
        c.to_turn,
        c.describe(),
        crate::render::thousands(planned.estimate.before),
        crate::render::thousands(planned.estimate.after),
    );
    let mut draft = Record::Apply(c.clone()).to_draft();
    draft.id = Some(planned.id.clone());
    draft.ts = Some(planned.ts.clone());
    let subject = Subject { text, compaction: Some(planned.id.clone()) };
    Ok(store.append_as(lock, conversation, vec![draft], clock, Some(subject))?)
}

/// What `compact --undo` withdrew.
pub struct Undone {
    pub appended: Appended,
    pub target: String,
    pub compaction: Compaction,
    pub estimate: Estimate,
}

/// Withdraw compaction `target` (an id or unique prefix; default: the latest in force) by
/// appending a revocation. Nothing is deleted.
pub fn undo_compaction(
    store: &Store,
    lock: &Lock,
    conversation: &str,
    target: Option<&str>,
    clock: &Clock,
) -> Result<Undone> {
    let events = store.events(conversation)?;
    let in_force = projection::in_force(&events)?;
    let chosen = match target {
        None => {
            in_force.last().ok_or_else(|| OpsError::Invalid("no compaction to undo in this conversation".into()))?
        }
        Some(prefix) => {
            let matches: Vec<_> = in_force.iter().filter(|c| c.id.starts_with(prefix)).collect();
            match matches.as_slice() {
                [one] => *one,
                [] => {
                    let known: Vec<&str> = in_force.iter().map(|c| c.id.as_str()).collect();
                    return Err(OpsError::Invalid(format!(
                        "no compaction `{prefix}` in force (in force: {})",
                        if known.is_empty() { "none".into() } else { known.join(", ") }
                    )));
                }
                _ => return Err(OpsError::Invalid(format!("`{prefix}` names {} compactions", matches.len()))),
            }
        }
    };
    let (id, ts) = (clock.new_id(), clock.timestamp());
    let mut draft = Record::Revoke { target: chosen.id.clone() }.to_draft();
    draft.id = Some(id);
    draft.ts = Some(ts.clone());
    let before = projection::project(&events)?;
    let mut with = events.clone();
    with.push(draft.clone().into_event(String::new(), ts));
    let estimate = plan::compare(&before, &projection::project(&with)?);
    let c = &chosen.compaction;
    let title = store.meta(conversation)?.title;
    let text = format!(
        "compact: {} undo {} turns {}-{} {} ~{} -> {} tokens",
        crate::store::subject_name(conversation, title.as_deref()),
        &chosen.id[..chosen.id.len().min(10)],
        c.from_turn,
        c.to_turn,
        c.describe(),
        crate::render::thousands(estimate.before),
        crate::render::thousands(estimate.after),
    );
    let appended = store.append_as(lock, conversation, vec![draft], clock, Some(Subject { text, compaction: None }))?;
    Ok(Undone { appended, target: chosen.id.clone(), compaction: c.clone(), estimate })
}

/// Which turns of a conversation a fork takes.
pub enum ForkRange {
    All,
    Last(u64),
    Bounds { from: String, to: String },
}

/// Fork turns of `source` into a new conversation. Events keep their ids; system and config
/// events up to the end of the range come along; so do compactions (and their undos) whose
/// range lies inside the fork.
pub fn fork(
    store: &Store,
    lock: &Lock,
    source: &str,
    range: ForkRange,
    title: Option<&str>,
    clock: &Clock,
) -> Result<Created> {
    let events = store.events(source)?;
    let turns = turn_numbers(&events);
    let count = turns.iter().flatten().max().map_or(0, |t| t + 1);
    let (from, to) = match range {
        ForkRange::All => (0, count.saturating_sub(1)),
        ForkRange::Last(n) if n == 0 || n > count => {
            return Err(OpsError::Invalid(format!(
                "--last {n}: expected 1 to {count} (the conversation has {count} turns)"
            )));
        }
        ForkRange::Last(n) => (count - n, count - 1),
        ForkRange::Bounds { from, to } => {
            let parse = |flag: &'static str, input: &str| {
                Bound::parse(input).map_err(|message| PlanError::Bound { flag, input: input.to_owned(), message })
            };
            let (a, b) = (parse("--from", &from)?, parse("--to", &to)?);
            let t = Turns {
                starts: plan::turn_starts(&events),
                compacted_to: plan::compacted_to(&events)?,
                now: clock.now(),
            };
            t.resolve_range((&a, &from), (&b, &to)).map_err(PlanError::from)?
        }
    };
    let end = turns.iter().rposition(|t| t.is_some_and(|t| t <= to)).unwrap_or(events.len());
    let in_range = |i: usize| turns[i].is_some_and(|t| (from..=to).contains(&t));
    let kept_ids: std::collections::HashSet<&str> =
        events.iter().enumerate().filter(|(i, _)| in_range(*i)).map(|(_, e)| e.id.as_str()).collect();
    let records = crate::compaction::records(&events).map_err(|m| OpsError::Projection(ProjectionError(m)))?;
    let kept_compactions: std::collections::HashSet<&str> = records
        .iter()
        .filter_map(|(e, r)| match r {
            Record::Apply(c) if kept_ids.contains(c.from_event.as_str()) && kept_ids.contains(c.to_event.as_str()) => {
                Some(e.id.as_str())
            }
            _ => None,
        })
        .collect();
    let keep = |i: usize, e: &Event| match &e.kind {
        Kind::System { .. } | Kind::Config { .. } => i <= end,
        Kind::Compaction => match Record::from_event(e) {
            Ok(Record::Apply(_)) => kept_compactions.contains(e.id.as_str()),
            Ok(Record::Revoke { target }) => kept_compactions.contains(target.as_str()),
            Err(_) => false,
        },
        _ => in_range(i),
    };
    let forked_from = ForkedFrom { id: source.to_owned(), turn: from };
    Ok(store.fork(lock, source, &keep, title, forked_from, clock)?)
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
}

impl From<StoreError> for QueryError {
    fn from(e: StoreError) -> Self {
        QueryError::Ops(e.into())
    }
}

/// Send `message` after the projected view of conversation `id` to `endpoint`, streaming the
/// answer to `on_delta`, then append the user message and the answer as one commit. A failed
/// call writes nothing; a stream that ends early (or `stop`) keeps what arrived, marked
/// `"interrupted": true`. The lock is taken only to commit, not while the model thinks.
#[allow(clippy::too_many_arguments)]
pub fn query(
    store: &Store,
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
    let user = Draft::new(Kind::User { content: message });
    let mut with = events.clone();
    with.push(user.clone().into_event(clock.new_id(), clock.timestamp()));
    let view: Vec<Event> = projection::project(&with).map_err(OpsError::from)?.into_iter().map(|p| p.event).collect();
    let body = crate::llm::request_body(model, &view, true);
    let reply = endpoint.complete(&body, on_delta, stop)?;

    let mut drafts = vec![user];
    if !reply.reasoning.is_empty() {
        drafts.push(Draft::new(Kind::Reasoning { content: reply.reasoning.clone() }));
    }
    if !reply.text.is_empty() || (reply.tool_calls.is_empty()) {
        drafts.push(Draft::new(Kind::Assistant { content: reply.text.clone() }));
    }
    for crate::llm::client::ToolCall { id: call_id, name, arguments } in &reply.tool_calls {
        // Provider ids are not always usable as convo ids (empty, too long, odd characters):
        // store such a call under a new id and keep the provider's beside it.
        let usable = crate::event::validate_event_id(call_id).is_ok();
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
        last.extra.insert("usage".into(), serde_json::to_value(reply.usage).unwrap_or_default());
        if reply.interrupted {
            last.extra.insert("interrupted".into(), Value::Bool(true));
        }
    }
    let lock = store.lock()?;
    let title = store.meta(id)?.title;
    let turn = crate::event::Stats::of(&events).turns;
    let text = format!(
        "query: {} turn {turn} (+{} events) via {}{}",
        crate::store::subject_name(id, title.as_deref()),
        drafts.len(),
        model.name,
        if reply.interrupted { " (interrupted)" } else { "" }
    );
    let appended = store.append_as(&lock, id, drafts, clock, Some(Subject { text, compaction: None }))?;
    Ok(Queried { appended, reply })
}

/// After a turn: compact from `last` to `-keep_last` with `compaction.auto.profile` when the
/// projected view passes `trigger_ratio` of the model's window and there are more than
/// `min_turns` turns. `None` when it did not fire (or cannot: the window is unknown).
pub fn auto_compact(
    store: &Store,
    lock: &Lock,
    id: &str,
    config: &Resolved,
    context_window: Option<u64>,
    clock: &Clock,
) -> Result<Option<(Appended, Planned)>> {
    let auto = &config.config.compaction.auto;
    let Some(window) = context_window.filter(|_| auto.enabled == Some(true)) else { return Ok(None) };
    let events = store.events(id)?;
    let turns = crate::event::Stats::of(&events).turns;
    if turns <= auto.min_turns.unwrap_or(5) {
        return Ok(None);
    }
    let view = projection::project(&events)?;
    let tokens = crate::event::tokens(view.iter().map(|p| p.event.visible_chars()).sum());
    if (tokens as f64) <= window as f64 * auto.trigger_ratio.unwrap_or(0.75) {
        return Ok(None);
    }
    let request = Request { profile: auto.profile.clone(), from: Some("last".into()), ..Default::default() };
    let planned = match plan_compaction(&events, config, &request, clock) {
        Ok(planned) => planned,
        // Nothing left to compact (everything but the kept turns already is): not an error.
        Err(OpsError::Plan(PlanError::Range(_))) => return Ok(None),
        Err(e) => return Err(e),
    };
    let appended = apply_compaction(store, lock, id, &planned, clock)?;
    Ok(Some((appended, planned)))
}
