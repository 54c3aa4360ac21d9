//! The projection: a pure function from a conversation's raw events to the view an LLM is
//! sent. No I/O, no config: everything a compaction needs (its range, policies and the tool
//! hints in force when it was made) is in its event.
//!
//! Semantics:
//! - per event and content type, the latest covering compaction with an opinion on that type
//!   wins (later timestamp; equal timestamps: later in the stream);
//! - a summary beats per-type policies and replaces every provider-visible event of its range
//!   with one synthetic user/assistant pair where the range starts;
//! - stripped requests keep name and call id with arguments `{}`; stripped responses read
//!   `[compacted] <tool>: success|error`; a tool hint `keep` exempts that part; `omit` drops
//!   call and result together, decided by the call;
//! - system, config and unknown events pass through where they are; compaction events are
//!   stream metadata and never part of the view;
//! - the result is always valid to send: every result has its call before it, every call its
//!   result, and user and assistant alternate (placeholders are inserted where needed).

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, FixedOffset};
use serde_json::{Map, Value};

use crate::compaction::{self, Compaction, FieldMode, Record, ToolCallPolicy};
use crate::event::{Event, Kind, tokens, turn_numbers};

pub const SUMMARY_REQUEST: &str = "[Summary of previous conversation]";
/// Stands in for a missing assistant reply between two user messages.
pub const NO_REPLY: &str = "[no reply]";
/// Stands in for the user message a view must start with.
pub const CONTINUED: &str = "[conversation continued]";

/// Where a projected event comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A raw event, unchanged.
    Raw,
    /// A raw event with content stripped by compaction `by`.
    Rewritten { by: String },
    /// Made up by the projection: a summary pair (`by` the compaction) or a placeholder.
    Synthetic { by: Option<String> },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Projected {
    pub event: Event,
    pub origin: Origin,
    /// The raw turn this event stands for (a summary pair: the first turn it replaces).
    pub raw_turn: Option<u64>,
}

/// Why a conversation's events cannot be projected.
#[derive(Debug, thiserror::Error)]
pub enum ProjectionError {
    #[error(transparent)]
    Compaction(#[from] compaction::MalformedCompaction),
}

/// Why a view cannot be sent to a provider as it is (see [`check_valid`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidView {
    #[error("event {index}: result for `{call_id}` without its call")]
    ResultWithoutCall { index: usize, call_id: String },
    #[error("event {index}: two user messages in a row")]
    TwoUserMessages { index: usize },
    #[error("event {index}: the view starts with the assistant")]
    StartsWithAssistant { index: usize },
    #[error("call `{call_id}` has no result")]
    CallWithoutResult { call_id: String },
}

/// A compaction in force, placed on the raw events.
struct Overlay {
    id: String,
    compaction: Compaction,
    start: usize,
    end: usize,
}

impl Overlay {
    fn covers(&self, index: usize) -> bool {
        (self.start..=self.end).contains(&index)
    }
}

/// The projected view of `events`.
pub fn project(events: &[Event]) -> Result<Vec<Projected>, ProjectionError> {
    let turns = turn_numbers(events);
    let overlays = overlays(events, &turns)?;
    // Every call of each id, in order: a result answers the latest call with its id before it
    // (an id can be used twice).
    let mut calls: HashMap<&str, Vec<(usize, &str)>> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if let Kind::ToolCall { call_id, name, .. } = &e.kind {
            calls.entry(call_id.as_str()).or_default().push((i, name.as_str()));
        }
    }
    let call_before = |call_id: &str, index: usize| {
        calls.get(call_id).and_then(|list| list.iter().rev().find(|(i, _)| *i < index)).copied()
    };
    // Latest first, so the first overlay found with an opinion wins.
    let winner = |index: usize, has_opinion: &dyn Fn(&Compaction) -> bool| {
        overlays.iter().rev().find(|o| o.covers(index) && has_opinion(&o.compaction))
    };

    let mut out = Vec::with_capacity(events.len());
    let mut summarised: HashSet<&str> = HashSet::new();
    for (index, event) in events.iter().enumerate() {
        let turn = turns[index];
        let raw = || Projected { event: event.clone(), origin: Origin::Raw, raw_turn: turn };
        match &event.kind {
            Kind::Compaction => continue,
            Kind::System { .. } | Kind::Config { .. } | Kind::Other(_) => {
                out.push(raw());
                continue;
            }
            _ => {}
        }
        if let Some(o) = winner(index, &|c| c.summary.is_some()) {
            if summarised.insert(o.id.as_str())
                && let Some(summary) = &o.compaction.summary
            {
                let turn = turns[o.start];
                out.push(synthetic(
                    Kind::User { content: SUMMARY_REQUEST.into() },
                    event,
                    Some(&o.id),
                    "summary-user",
                    turn,
                ));
                out.push(synthetic(
                    Kind::Assistant { content: summary.text.clone() },
                    event,
                    Some(&o.id),
                    "summary",
                    turn,
                ));
            }
            continue;
        }
        match &event.kind {
            Kind::Reasoning { .. } => {
                if winner(index, &|c| c.reasoning.is_some()).is_none() {
                    out.push(raw());
                }
            }
            Kind::ToolCall { call_id, name, arguments } => {
                match tool_decision(winner(index, &|c| c.has_tool_policy()), name) {
                    Decision::Keep => out.push(raw()),
                    Decision::Omit => {}
                    Decision::Strip { request, by, min_bytes, .. }
                        if request && larger(arguments_len(arguments), min_bytes) =>
                    {
                        let mut stripped = event.clone();
                        stripped.kind = Kind::ToolCall {
                            call_id: call_id.clone(),
                            name: name.clone(),
                            arguments: Value::Object(Map::new()),
                        };
                        out.push(Projected {
                            event: stripped,
                            origin: Origin::Rewritten { by: by.into() },
                            raw_turn: turn,
                        });
                    }
                    Decision::Strip { .. } => out.push(raw()),
                }
            }
            Kind::ToolResult { call_id, is_error, content } => {
                // A result follows its call's fate, so a pair is never split.
                let Some((call_index, name)) = call_before(call_id, index) else { continue };
                match tool_decision(winner(call_index, &|c| c.has_tool_policy()), name) {
                    Decision::Keep => out.push(raw()),
                    Decision::Omit => {}
                    Decision::Strip { response, by, min_bytes, .. }
                        if response && larger(content.len() as u64, min_bytes) =>
                    {
                        let mut stripped = event.clone();
                        let status = if *is_error { "error" } else { "success" };
                        stripped.kind = Kind::ToolResult {
                            call_id: call_id.clone(),
                            content: format!("[compacted] {name}: {status}"),
                            is_error: *is_error,
                        };
                        out.push(Projected {
                            event: stripped,
                            origin: Origin::Rewritten { by: by.into() },
                            raw_turn: turn,
                        });
                    }
                    Decision::Strip { max_lines: Some(n), by, min_bytes, keep_response: false, .. }
                        if larger(content.len() as u64, min_bytes) =>
                    {
                        match truncated(content, n) {
                            Some(cut) => {
                                let mut shortened = event.clone();
                                shortened.kind =
                                    Kind::ToolResult { call_id: call_id.clone(), content: cut, is_error: *is_error };
                                out.push(Projected {
                                    event: shortened,
                                    origin: Origin::Rewritten { by: by.into() },
                                    raw_turn: turn,
                                });
                            }
                            None => out.push(raw()),
                        }
                    }
                    Decision::Strip { .. } => out.push(raw()),
                }
            }
            _ => out.push(raw()),
        }
    }
    Ok(make_valid(out))
}

/// The raw events as a view (compaction events left out), to compare with a projection.
pub fn raw_view(events: &[Event]) -> Vec<Projected> {
    events
        .iter()
        .zip(turn_numbers(events))
        .filter(|(e, _)| !matches!(e.kind, Kind::Compaction))
        .map(|(e, turn)| Projected { event: e.clone(), origin: Origin::Raw, raw_turn: turn })
        .collect()
}

/// A compaction in force and the turns it covers in the conversation's current numbering.
#[derive(Debug, Clone, PartialEq)]
pub struct InForce {
    pub id: String,
    pub compaction: Compaction,
    pub first_turn: Option<u64>,
    pub last_turn: Option<u64>,
    /// Indices of the first and last raw event it covers.
    pub start: usize,
    pub end: usize,
}

/// The compactions in force (not revoked, placeable), oldest to latest.
pub fn in_force(events: &[Event]) -> Result<Vec<InForce>, ProjectionError> {
    let turns = turn_numbers(events);
    Ok(overlays(events, &turns)?
        .into_iter()
        .map(|o| InForce {
            first_turn: turns[o.start],
            last_turn: turns[o.end],
            start: o.start,
            end: o.end,
            id: o.id,
            compaction: o.compaction,
        })
        .collect())
}

/// Characters per raw turn of a view (`None`: before the first turn), the basis of every
/// per-turn token estimate.
pub fn chars_by_turn(view: &[Projected]) -> std::collections::BTreeMap<Option<u64>, u64> {
    let mut out = std::collections::BTreeMap::new();
    for p in view {
        *out.entry(p.raw_turn).or_insert(0) += p.event.visible_chars();
    }
    out
}

/// Compactions in force, placed on the events by their event ids (falling back to turn
/// numbers when an id is gone), ordered oldest to latest.
fn overlays(events: &[Event], turns: &[Option<u64>]) -> Result<Vec<Overlay>, ProjectionError> {
    let records = compaction::records(events)?;
    let revoked = compaction::revoked(&records);
    let index_of: HashMap<&str, usize> = events.iter().enumerate().map(|(i, e)| (e.id.as_str(), i)).collect();
    let mut placed: Vec<(Option<DateTime<FixedOffset>>, usize, Overlay)> = Vec::new();
    for (seq, (event, record)) in records.into_iter().enumerate() {
        let Record::Apply(compaction) = record else { continue };
        if revoked.contains(&event.id) {
            continue;
        }
        let start = index_of
            .get(compaction.from_event.as_str())
            .copied()
            .or_else(|| turns.iter().position(|t| *t == Some(compaction.from_turn)));
        let end = index_of
            .get(compaction.to_event.as_str())
            .copied()
            .or_else(|| turns.iter().rposition(|t| *t == Some(compaction.to_turn)));
        if let (Some(start), Some(end)) = (start, end)
            && start <= end
        {
            let ts = DateTime::parse_from_rfc3339(&event.ts).ok();
            placed.push((ts, seq, Overlay { id: event.id.clone(), compaction, start, end }));
        }
    }
    placed.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    Ok(placed.into_iter().map(|(_, _, o)| o).collect())
}

enum Decision<'a> {
    Keep,
    Omit,
    Strip {
        request: bool,
        response: bool,
        /// A `keep` hint on the response: not even truncated.
        keep_response: bool,
        min_bytes: Option<u64>,
        max_lines: Option<u64>,
        by: &'a str,
    },
}

/// Whether a part of `len` bytes is over a compaction's `min_bytes` (any size without one).
fn larger(len: u64, min_bytes: Option<u64>) -> bool {
    min_bytes.is_none_or(|min| len > min)
}

/// A tool call's arguments as the size they are sent at.
fn arguments_len(arguments: &Value) -> u64 {
    match arguments {
        Value::Object(map) if map.is_empty() => 0,
        other => other.to_string().len() as u64,
    }
}

/// `text` cut to `max` lines, the first half and the last kept around one marker line saying
/// how many were cut; `None` when it already fits.
pub fn truncated(text: &str, max: u64) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let max = max as usize;
    if lines.len() <= max.max(1) {
        return None;
    }
    let head = max.div_ceil(2);
    let tail = max - head;
    let cut = lines.len() - head - tail;
    let mut out: Vec<String> = lines[..head].iter().map(|l| (*l).to_owned()).collect();
    out.push(format!("[… {cut} lines cut by compaction …]"));
    out.extend(lines[lines.len() - tail..].iter().map(|l| (*l).to_owned()));
    Some(out.join("\n"))
}

/// What the winning compaction (if any) does to a call of tool `name`, hints applied.
fn tool_decision<'a>(winner: Option<&'a Overlay>, name: &str) -> Decision<'a> {
    let Some(o) = winner else { return Decision::Keep };
    let c = &o.compaction;
    let hint = c.tools.get(name).copied().unwrap_or_default();
    let apply = |profile: bool, hint: Option<FieldMode>| match hint {
        Some(FieldMode::Keep) => false,
        Some(FieldMode::Strip) => true,
        None => profile,
    };
    let (request, response) = match c.tool_calls {
        Some(ToolCallPolicy::Omit) => return Decision::Omit,
        Some(ToolCallPolicy::Strip { request, response }) => (request, response),
        None => (false, false),
    };
    Decision::Strip {
        request: apply(request, hint.request),
        response: apply(response, hint.response),
        keep_response: hint.response == Some(FieldMode::Keep),
        min_bytes: c.min_bytes,
        max_lines: c.max_lines,
        by: &o.id,
    }
}

fn synthetic(kind: Kind, at: &Event, by: Option<&str>, suffix: &str, turn: Option<u64>) -> Projected {
    let id = match by {
        Some(by) => format!("{by}-{suffix}"),
        None => format!("{}-{suffix}", at.id),
    };
    Projected {
        event: Event { id, ts: at.ts.clone(), kind, extra: Map::new() },
        origin: Origin::Synthetic { by: by.map(str::to_owned) },
        raw_turn: turn,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    User,
    Assistant,
}

fn side(kind: &Kind) -> Option<Side> {
    match kind {
        Kind::User { .. } => Some(Side::User),
        Kind::Assistant { .. } | Kind::Reasoning { .. } | Kind::ToolCall { .. } | Kind::ToolResult { .. } => {
            Some(Side::Assistant)
        }
        _ => None,
    }
}

/// Make the view sendable: drop results without an earlier call and calls that never got a
/// result, and keep user and assistant turns alternating, starting with the user.
fn make_valid(view: Vec<Projected>) -> Vec<Projected> {
    // Pair by occurrence: a result answers the earliest unanswered call with its id; results
    // with no such call, and calls never answered, are left out.
    let mut pending: HashMap<String, std::collections::VecDeque<usize>> = HashMap::new();
    let mut answered: HashSet<usize> = HashSet::new();
    let mut keep = vec![true; view.len()];
    for (i, p) in view.iter().enumerate() {
        match &p.event.kind {
            Kind::ToolCall { call_id, .. } => pending.entry(call_id.clone()).or_default().push_back(i),
            Kind::ToolResult { call_id, .. } => match pending.get_mut(call_id).and_then(|q| q.pop_front()) {
                Some(call) => {
                    answered.insert(call);
                }
                None => keep[i] = false,
            },
            _ => {}
        }
    }
    let kept: Vec<Projected> = view
        .into_iter()
        .enumerate()
        .filter(|(i, p)| keep[*i] && (!matches!(p.event.kind, Kind::ToolCall { .. }) || answered.contains(i)))
        .map(|(_, p)| p)
        .collect();

    let mut out: Vec<Projected> = Vec::with_capacity(kept.len());
    let mut last: Option<Side> = None;
    for p in kept {
        match (last, side(&p.event.kind)) {
            (Some(Side::User), Some(Side::User)) => {
                out.push(synthetic(
                    Kind::Assistant { content: NO_REPLY.into() },
                    &p.event,
                    None,
                    "no-reply",
                    p.raw_turn,
                ));
            }
            (None, Some(Side::Assistant)) => {
                out.push(synthetic(Kind::User { content: CONTINUED.into() }, &p.event, None, "continued", p.raw_turn));
            }
            _ => {}
        }
        if let Some(s) = side(&p.event.kind) {
            last = Some(s);
        }
        out.push(p);
    }
    out
}

/// Whether `view` can be sent to a provider as it is; the reason if not. Tests hold every
/// projection to this.
pub fn check_valid(view: &[Event]) -> Result<(), InvalidView> {
    // Calls waiting for their result, by id, counted per occurrence.
    let mut pending: HashMap<&str, usize> = HashMap::new();
    let mut last: Option<Side> = None;
    for (i, event) in view.iter().enumerate() {
        match &event.kind {
            Kind::ToolCall { call_id, .. } => *pending.entry(call_id.as_str()).or_default() += 1,
            Kind::ToolResult { call_id, .. } => match pending.get_mut(call_id.as_str()) {
                Some(n) if *n > 0 => *n -= 1,
                _ => return Err(InvalidView::ResultWithoutCall { index: i, call_id: call_id.clone() }),
            },
            _ => {}
        }
        match (last, side(&event.kind)) {
            (Some(Side::User), Some(Side::User)) => return Err(InvalidView::TwoUserMessages { index: i }),
            (None, Some(Side::Assistant)) => return Err(InvalidView::StartsWithAssistant { index: i }),
            _ => {}
        }
        if let Some(s) = side(&event.kind) {
            last = Some(s);
        }
    }
    match pending.iter().find(|(_, n)| **n > 0) {
        Some((call, _)) => Err(InvalidView::CallWithoutResult { call_id: (*call).to_owned() }),
        None => Ok(()),
    }
}

/// Estimated tokens of one turn before and after a compaction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TurnEstimate {
    /// `None`: events before the first turn (a system prompt).
    pub turn: Option<u64>,
    pub before: u64,
    pub after: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Estimate {
    pub turns: Vec<TurnEstimate>,
    pub before: u64,
    pub after: u64,
}

/// What the projected view costs now and with `candidate` appended (as event `id` at `ts`).
pub fn estimate(events: &[Event], candidate: &Compaction, id: &str, ts: &str) -> Result<Estimate, ProjectionError> {
    let before = project(events)?;
    let mut with = events.to_vec();
    with.push(Record::Apply(candidate.clone()).to_draft().into_event(id.into(), ts.into()));
    let after = project(&with)?;
    Ok(compare(&before, &after))
}

/// Per-turn and total tokens of two views of the same conversation.
pub fn compare(before: &[Projected], after: &[Projected]) -> Estimate {
    let (b, a) = (chars_by_turn(before), chars_by_turn(after));
    let mut keys: Vec<Option<u64>> = b.keys().chain(a.keys()).copied().collect();
    keys.sort();
    keys.dedup();
    let turns = keys
        .into_iter()
        .map(|turn| TurnEstimate {
            turn,
            before: tokens(b.get(&turn).copied().unwrap_or(0)),
            after: tokens(a.get(&turn).copied().unwrap_or(0)),
        })
        .collect();
    Estimate { turns, before: tokens(b.values().sum()), after: tokens(a.values().sum()) }
}
