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
//! - under a compaction that keeps the trail (`keep_args`), a stripped request keeps its short
//!   identifying arguments and a response reads [`trail_line`]; a part whose placeholder
//!   would be no shorter than it stays as it is (a short error is its own trail);
//! - system, config and unknown events pass through where they are; compaction events are
//!   stream metadata and never part of the view;
//! - an agent's scaffolding in the user's place (Codex's environment, Claude Code's `isMeta`
//!   lines: [`crate::event::scaffolding`]) is context, not a turn: it passes through where it
//!   is, as a system event does, and takes no side, so no `[no reply]` is made after it;
//! - the result is always valid to send: every result has its call before it, every call its
//!   result, and user and assistant alternate (placeholders are inserted where needed).

use std::collections::BTreeMap;
use std::sync::Arc;

// Seeded and several times faster than SipHash: keys are ids from the conversation, which
// may come from anyone, so a fixed-seed hash would let crafted ids collide.
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use chrono::{DateTime, FixedOffset};
use serde_json::{Map, Value};

use crate::compaction::{self, Compaction, FieldMode, Record, ToolCallPolicy};
use crate::event::outline::Outlined;
use crate::event::{Event, Kind, Outline, Shape, tokens, turn_numbers};

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
    id: Arc<str>,
    compaction: Compaction,
    start: usize,
    end: usize,
}

impl Overlay {
    fn covers(&self, index: usize) -> bool {
        (self.start..=self.end).contains(&index)
    }
}

/// One event of the view, decided from outlines alone: a raw event (as it is, or with one
/// part replaced) or one the projection makes up.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Raw {
        index: usize,
        edit: Edit,
        turn: Option<u64>,
    },
    /// Boxed: there are few, and a view of a long conversation holds many raw items.
    Synthetic(Box<Made>),
}

/// An event the projection makes up: a summary pair (`by` the compaction) or a placeholder.
#[derive(Debug, Clone, PartialEq)]
pub struct Made {
    pub kind: Kind,
    pub id: String,
    pub ts: String,
    pub by: Option<String>,
    pub turn: Option<u64>,
}

/// What a compaction replaces in a raw event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    None,
    /// A call's arguments, with `{}`, or (a compaction that keeps the trail) with the short
    /// arguments `kept` that identify the call.
    EmptyArguments {
        by: Arc<str>,
        kept: Option<Arc<Kept>>,
    },
    /// A result's content, with a placeholder `line`: [`status_line`] of its call's tool, or
    /// (a compaction that keeps the trail) [`trail_line`].
    StatusLine {
        by: Arc<str>,
        line: Arc<str>,
    },
    /// A result's content cut to `max_lines` (see [`truncated`]), if it is longer: only
    /// the text can tell.
    Truncate {
        by: Arc<str>,
        max_lines: u64,
    },
}

/// The arguments a stripped call keeps, and their characters as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub arguments: Value,
    pub chars: u64,
}

/// `[compacted] Bash: success`: what a stripped result reads under a compaction made
/// before placeholders kept the trail (its recorded view does not change).
pub fn status_line(name: &str, is_error: bool) -> String {
    format!("[compacted] {name}: {}", status_word(is_error))
}

fn status_word(is_error: bool) -> &'static str {
    if is_error { "error" } else { "success" }
}

/// The user side of a summary pair: under a compaction that keeps the trail, it names the
/// first and last event the summary stands for, so they can be asked for whole.
fn summary_request(c: &Compaction) -> String {
    match c.keep_args {
        Some(_) => format!(
            "{}: events …{} to …{}]",
            SUMMARY_REQUEST.trim_end_matches(']'),
            id_tail(&c.from_event),
            id_tail(&c.to_event)
        ),
        None => SUMMARY_REQUEST.to_owned(),
    }
}

/// The end of an event id a placeholder names it by: enough to tell it from the others of
/// its conversation (ids end in their random part), and what `show --event` and the MCP
/// `events` tool accept.
pub fn id_tail(id: &str) -> &str {
    const TAIL: usize = 8;
    match id.char_indices().rev().nth(TAIL - 1) {
        Some((at, _)) if at > 0 => &id[at..],
        _ => id,
    }
}

/// What a stripped result reads when its compaction keeps the trail:
/// `[compacted …1a2b3c4d] exit 101 — error[E0308]: mismatched types`. The exit status when
/// the agent printed one, else the error flag; for a failure, or a command (`runs`: its call
/// has a `command`), the first line that reads like an error (a failure's first line) — in a
/// file's text such a line is code, not news; the commits git reported. The event's id tail
/// says what to ask for to read it whole. The tool is not named: its call, just before, does
/// (and with its identifying arguments), in either wire format.
pub fn trail_line(id: &str, is_error: bool, runs: bool, outcome: Option<&crate::event::trail::Outcome>) -> String {
    let mut line = format!("[compacted …{}] ", id_tail(id));
    match outcome.and_then(|o| o.exit) {
        Some(code) => line.push_str(&format!("exit {code}")),
        None => line.push_str(status_word(is_error)),
    }
    if let Some(o) = outcome {
        if let Some(error) = o.error_line.as_ref().filter(|_| runs || o.failed(is_error)) {
            line.push_str(" — ");
            line.push_str(error);
        }
        for commit in &o.commits {
            line.push_str(" · commit ");
            line.push_str(commit);
        }
    }
    line
}

/// The short arguments of a call (its outline's) whose keys are in `keys`, as the stripped
/// call's arguments; `None` when it has none of them.
fn kept_arguments(outline: &Outline, keys: &[String]) -> Option<Arc<Kept>> {
    let args = crate::event::outline::Brief::args(&outline.brief);
    let map: Map<String, Value> = args
        .iter()
        .filter(|(key, _)| keys.iter().any(|k| k == key))
        .map(|(key, value)| (key.clone(), Value::String(value.clone())))
        .collect();
    if map.is_empty() {
        return None;
    }
    let arguments = Value::Object(map);
    let chars = arguments.to_string().chars().count() as u64;
    Some(Arc::new(Kept { arguments, chars }))
}

impl Item {
    /// The raw turn the item stands for (a summary pair: the first turn it replaces).
    pub fn turn(&self) -> Option<u64> {
        match self {
            Item::Raw { turn, .. } => *turn,
            Item::Synthetic(made) => made.turn,
        }
    }

    /// Characters a provider is sent for this item; `None` for a truncation, which only the
    /// text can tell.
    pub fn chars(&self, outlines: &[Outline]) -> Option<u64> {
        match self {
            Item::Raw { index, edit: Edit::None, .. } => Some(outlines[*index].chars),
            Item::Raw { index, edit: Edit::EmptyArguments { kept, .. }, .. } => match &outlines[*index].shape {
                Shape::ToolCall { name, .. } => {
                    Some(name.chars().count() as u64 + kept.as_ref().map_or(2, |k| k.chars))
                }
                _ => Some(outlines[*index].chars),
            },
            Item::Raw { edit: Edit::StatusLine { line, .. }, .. } => Some(line.chars().count() as u64),
            Item::Raw { edit: Edit::Truncate { .. }, .. } => None,
            Item::Synthetic(made) => Some(
                Event { id: String::new(), ts: String::new(), kind: made.kind.clone(), extra: Map::new() }
                    .visible_chars(),
            ),
        }
    }
}

/// The projected view of `events`.
pub fn project(events: &[Event]) -> Result<Vec<Projected>, ProjectionError> {
    let outlined = Outlined::of(events);
    Ok(materialise(&view(&outlined)?, events))
}

/// The view of an outlined conversation, as items to materialise from its events (or its
/// stored lines).
pub fn view(outlined: &Outlined) -> Result<Vec<Item>, ProjectionError> {
    view_with(outlined, None)
}

/// [`view`] with one more compaction event (`extra`, appended after every event): what a
/// planned compaction would make of the view, without copying the outlines.
fn view_with(outlined: &Outlined, extra: Option<&Event>) -> Result<Vec<Item>, ProjectionError> {
    view_into(outlined, extra, Vec::new())
}

/// [`view_with`] into `out`'s allocation (cleared first): a second view of the same
/// conversation then reuses the pages the first one faulted in.
fn view_into(outlined: &Outlined, extra: Option<&Event>, mut out: Vec<Item>) -> Result<Vec<Item>, ProjectionError> {
    let outlines = &outlined.outlines;
    let turns = outlined.turns();
    let overlays = overlays(outlined, &turns, extra)?;
    let numbers = outlined.calls();
    // The latest call of each id so far, by the id's number: a result answers the latest
    // call with its id before it (an id can be used twice).
    let mut latest: Vec<usize> = vec![usize::MAX; numbers.count];
    // Latest first, so the first overlay found with an opinion wins.
    let winner = |index: usize, has_opinion: &dyn Fn(&Compaction) -> bool| {
        overlays.iter().rev().find(|o| o.covers(index) && has_opinion(&o.compaction))
    };

    out.clear();
    out.reserve(outlines.len());
    let mut summarised: HashSet<&str> = HashSet::new();
    for (index, outline) in outlines.iter().enumerate() {
        let turn = turns[index];
        let raw = |edit: Edit| Item::Raw { index, edit, turn };
        if let Shape::ToolCall { .. } = &outline.shape {
            latest[numbers.of[index] as usize] = index;
        }
        match &outline.shape {
            Shape::Compaction => continue,
            Shape::System | Shape::Config | Shape::Other => {
                out.push(raw(Edit::None));
                continue;
            }
            Shape::User if outline.meta => {
                out.push(raw(Edit::None));
                continue;
            }
            _ => {}
        }
        if let Some(o) = winner(index, &|c| c.summary.is_some()) {
            if summarised.insert(&*o.id)
                && let Some(summary) = &o.compaction.summary
            {
                let turn = turns[o.start];
                let at = (outline.ts.as_str(), Some(&*o.id), turn);
                let request = summary_request(&o.compaction);
                out.push(synthetic(Kind::User { content: request }, &outline.id, at, "summary-user"));
                out.push(synthetic(Kind::Assistant { content: summary.text.clone() }, &outline.id, at, "summary"));
            }
            continue;
        }
        match &outline.shape {
            Shape::Reasoning => {
                if winner(index, &|c| c.reasoning.is_some()).is_none() {
                    out.push(raw(Edit::None));
                }
            }
            Shape::ToolCall { name, .. } => match tool_decision(winner(index, &|c| c.has_tool_policy()), name) {
                Decision::Keep => out.push(raw(Edit::None)),
                Decision::Omit => {}
                Decision::Strip { request, by, min_bytes, keep_args, .. }
                    if request && larger(outline.size, min_bytes) =>
                {
                    let kept = keep_args.and_then(|keys| kept_arguments(outline, keys));
                    // A placeholder that keeps the trail never costs more than the call.
                    let saves = keep_args.is_none()
                        || name.chars().count() as u64 + kept.as_ref().map_or(2, |k| k.chars) < outline.chars;
                    out.push(raw(if saves { Edit::EmptyArguments { by: by.clone(), kept } } else { Edit::None }));
                }
                Decision::Strip { .. } => out.push(raw(Edit::None)),
            },
            Shape::ToolResult { .. } => {
                // A result follows its call's fate, so a pair is never split.
                let call_index = latest[numbers.of[index] as usize];
                if call_index == usize::MAX {
                    continue;
                }
                // Tool names are shared by every item that names them.
                let name = numbers.names[numbers.name_of[call_index] as usize].clone();
                match tool_decision(winner(call_index, &|c| c.has_tool_policy()), &name) {
                    Decision::Keep => out.push(raw(Edit::None)),
                    Decision::Omit => {}
                    Decision::Strip { response, by, min_bytes, keep_args, .. }
                        if response && larger(outline.size, min_bytes) =>
                    {
                        let is_error = matches!(outline.shape, Shape::ToolResult { is_error: true, .. });
                        let line = match keep_args {
                            Some(_) => {
                                let outcome = crate::event::outline::Brief::outcome(&outline.brief);
                                let runs = crate::event::outline::Brief::args(&outlines[call_index].brief)
                                    .iter()
                                    .any(|(key, _)| crate::event::trail::COMMAND_KEYS.contains(&key.as_str()));
                                trail_line(&outline.id, is_error, runs, outcome)
                            }
                            None => status_line(&name, is_error),
                        };
                        // A placeholder that keeps the trail never costs more than the output
                        // (a short error, said whole, is its own trail).
                        if keep_args.is_some() && line.chars().count() as u64 >= outline.chars {
                            out.push(raw(Edit::None));
                        } else {
                            out.push(raw(Edit::StatusLine { by: by.clone(), line: Arc::from(line) }));
                        }
                    }
                    Decision::Strip { max_lines: Some(n), by, min_bytes, keep_response: false, .. }
                        if larger(outline.size, min_bytes) =>
                    {
                        out.push(raw(Edit::Truncate { by: by.clone(), max_lines: n }));
                    }
                    Decision::Strip { .. } => out.push(raw(Edit::None)),
                }
            }
            _ => out.push(raw(Edit::None)),
        }
    }
    Ok(make_valid(out, outlines, numbers))
}

/// The view's items as events, from the raw `events` they were decided on.
pub fn materialise(items: &[Item], events: &[Event]) -> Vec<Projected> {
    materialise_from(items, events, 0)
}

/// [`materialise`] from the raw events starting at index `first` (a part of the
/// conversation read alone); every raw item's index must fall in it.
pub fn materialise_from(items: &[Item], events: &[Event], first: usize) -> Vec<Projected> {
    items
        .iter()
        .map(|item| match item {
            Item::Raw { index, edit, turn } => apply(edit, *turn, &events[*index - first]),
            Item::Synthetic(made) => Projected {
                event: Event { id: made.id.clone(), ts: made.ts.clone(), kind: made.kind.clone(), extra: Map::new() },
                origin: Origin::Synthetic { by: made.by.clone() },
                raw_turn: made.turn,
            },
        })
        .collect()
}

/// A raw event in the view: `event` with `edit` made (a truncation only where it is longer).
pub fn apply(edit: &Edit, turn: Option<u64>, event: &Event) -> Projected {
    let (kind, by) = match (edit, &event.kind) {
        (Edit::EmptyArguments { by, kept }, Kind::ToolCall { call_id, name, .. }) => {
            let arguments = kept.as_ref().map_or_else(|| Value::Object(Map::new()), |k| k.arguments.clone());
            (Some(Kind::ToolCall { call_id: call_id.clone(), name: name.clone(), arguments }), by)
        }
        (Edit::StatusLine { by, line }, Kind::ToolResult { call_id, is_error, .. }) => {
            let content = line.to_string();
            (Some(Kind::ToolResult { call_id: call_id.clone(), content, is_error: *is_error }), by)
        }
        (Edit::Truncate { by, max_lines }, Kind::ToolResult { call_id, content, is_error }) => {
            let cut = truncated(content, *max_lines);
            (cut.map(|content| Kind::ToolResult { call_id: call_id.clone(), content, is_error: *is_error }), by)
        }
        _ => (None, &Arc::from("")),
    };
    match kind {
        Some(kind) => Projected {
            event: Event { kind, ..event.clone() },
            origin: Origin::Rewritten { by: by.to_string() },
            raw_turn: turn,
        },
        None => Projected { event: event.clone(), origin: Origin::Raw, raw_turn: turn },
    }
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
    in_force_outlined(&Outlined::of(events))
}

/// [`in_force`] of an outlined conversation.
pub fn in_force_outlined(outlined: &Outlined) -> Result<Vec<InForce>, ProjectionError> {
    let turns = outlined.turns();
    Ok(overlays(outlined, &turns, None)?
        .into_iter()
        .map(|o| InForce {
            first_turn: turns[o.start],
            last_turn: turns[o.end],
            start: o.start,
            end: o.end,
            id: o.id.to_string(),
            compaction: o.compaction,
        })
        .collect())
}

/// Characters per raw turn of a view (`None`: before the first turn), the basis of every
/// per-turn token estimate.
pub fn chars_by_turn(view: &[Projected]) -> BTreeMap<Option<u64>, u64> {
    let mut out = BTreeMap::new();
    for p in view {
        *out.entry(p.raw_turn).or_insert(0) += p.event.visible_chars();
    }
    out
}

/// [`chars_by_turn`] of a view's items; `None` when one is a truncation, which only the
/// text can measure.
pub fn item_chars_by_turn(items: &[Item], outlines: &[Outline]) -> Option<BTreeMap<Option<u64>, u64>> {
    let mut out = BTreeMap::new();
    // Items come a turn at a time: sum a run, then add it.
    let mut run: Option<(Option<u64>, u64)> = None;
    for item in items {
        let (turn, chars) = (item.turn(), item.chars(outlines)?);
        match &mut run {
            Some((t, sum)) if *t == turn => *sum += chars,
            _ => {
                if let Some((t, sum)) = run.replace((turn, chars)) {
                    *out.entry(t).or_insert(0) += sum;
                }
            }
        }
    }
    if let Some((t, sum)) = run {
        *out.entry(t).or_insert(0) += sum;
    }
    Some(out)
}

/// Compactions in force, placed on the events by their event ids (falling back to turn
/// numbers when an id is gone), ordered oldest to latest.
fn overlays(
    outlined: &Outlined,
    turns: &[Option<u64>],
    extra: Option<&Event>,
) -> Result<Vec<Overlay>, ProjectionError> {
    let mut events: Vec<&Event> = outlined.compactions.iter().map(|(_, e)| e).collect();
    events.extend(extra);
    let records = compaction::records_of(&events)?;
    let revoked = compaction::revoked(&records);
    // Only the ids compactions name are looked up: one pass finds them all, without a map
    // of every id (a fifth of planning on a 38,000-event conversation).
    // (The last event of an id, as a map of every id would give.)
    let mut index_of: HashMap<String, usize> = HashMap::new();
    for (_, record) in &records {
        if let Record::Apply(c) = record {
            index_of.insert(c.from_event.clone(), usize::MAX);
            index_of.insert(c.to_event.clone(), usize::MAX);
        }
    }
    if !index_of.is_empty() {
        for (i, o) in outlined.outlines.iter().enumerate() {
            if let Some(slot) = index_of.get_mut(o.id.as_str()) {
                *slot = i;
            }
        }
    }
    index_of.retain(|_, i| *i != usize::MAX);
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
            placed.push((ts, seq, Overlay { id: Arc::from(event.id.as_str()), compaction, start, end }));
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
        by: &'a Arc<str>,
        /// The argument keys a stripped call keeps; `None`: placeholders without the trail
        /// (a compaction made before they kept it).
        keep_args: Option<&'a [String]>,
    },
}

/// Whether a part of `len` bytes is over a compaction's `min_bytes` (any size without one).
fn larger(len: u64, min_bytes: Option<u64>) -> bool {
    min_bytes.is_none_or(|min| len > min)
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
    let hint = c.tools.get(name).cloned().unwrap_or_default();
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
        keep_args: c
            .keep_args
            .as_deref()
            .map(|keys| c.tools.get(name).and_then(|h| h.keep_args.as_deref()).unwrap_or(keys)),
    }
}

/// A made-up event standing at raw event `at_id`: `(ts, by, turn)` are its time, the
/// compaction that made it (none: a placeholder) and the raw turn it stands for.
fn synthetic(kind: Kind, at_id: &str, (ts, by, turn): (&str, Option<&str>, Option<u64>), suffix: &str) -> Item {
    let id = match by {
        Some(by) => format!("{by}-{suffix}"),
        None => format!("{at_id}-{suffix}"),
    };
    Item::Synthetic(Box::new(Made { kind, id, ts: ts.to_owned(), by: by.map(str::to_owned), turn }))
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

/// The side an event takes in the alternation: none for a user message that is scaffolding,
/// which is context rather than the user's turn.
fn event_side(event: &Event) -> Option<Side> {
    match event.kind {
        Kind::User { .. } if event.is_scaffolding() => None,
        _ => side(&event.kind),
    }
}

/// [`event_side`] of an outline.
fn outline_side(outline: &Outline) -> Option<Side> {
    match outline.shape {
        Shape::User if outline.meta => None,
        _ => shape_side(&outline.shape),
    }
}

fn shape_side(shape: &Shape) -> Option<Side> {
    match shape {
        Shape::User => Some(Side::User),
        Shape::Assistant | Shape::Reasoning | Shape::ToolCall { .. } | Shape::ToolResult { .. } => {
            Some(Side::Assistant)
        }
        _ => None,
    }
}

/// Calls waiting for their result under one id, earliest first.
enum Waiting {
    None,
    One(usize),
    Many(std::collections::VecDeque<usize>),
}

impl Waiting {
    fn push(&mut self, call: usize) {
        *self = match std::mem::replace(self, Waiting::None) {
            Waiting::None => Waiting::One(call),
            Waiting::One(first) => Waiting::Many([first, call].into()),
            Waiting::Many(mut queue) => {
                queue.push_back(call);
                Waiting::Many(queue)
            }
        };
    }

    fn pop(&mut self) -> Option<usize> {
        match std::mem::replace(self, Waiting::None) {
            Waiting::None => None,
            Waiting::One(call) => Some(call),
            Waiting::Many(mut queue) => {
                let call = queue.pop_front();
                if !queue.is_empty() {
                    *self = Waiting::Many(queue);
                }
                call
            }
        }
    }
}

/// Make the view sendable: drop results without an earlier call and calls that never got a
/// result, and keep user and assistant turns alternating, starting with the user.
fn make_valid(view: Vec<Item>, outlines: &[Outline], numbers: &crate::event::outline::Calls) -> Vec<Item> {
    let shape = |item: &Item| match item {
        Item::Raw { index, .. } => Some(&outlines[*index].shape),
        Item::Synthetic(_) => None,
    };
    let item_side = |item: &Item| match item {
        Item::Raw { index, .. } => outline_side(&outlines[*index]),
        Item::Synthetic(made) => side(&made.kind),
    };
    // Pair by occurrence: a result answers the earliest unanswered call with its id; results
    // with no such call, and calls never answered, are left out.
    // Ids are almost always used once: a queue is made only for an id that waits twice.
    let mut pending: Vec<Waiting> = (0..numbers.count).map(|_| Waiting::None).collect();
    let number = |item: &Item| match item {
        Item::Raw { index, .. } => numbers.of[*index] as usize,
        Item::Synthetic(_) => usize::MAX,
    };
    // Calls start out dropped until answered; everything else kept until found orphaned.
    let mut keep: Vec<bool> = view.iter().map(|item| !matches!(shape(item), Some(Shape::ToolCall { .. }))).collect();
    for (i, item) in view.iter().enumerate() {
        match shape(item) {
            Some(Shape::ToolCall { .. }) => pending[number(item)].push(i),
            Some(Shape::ToolResult { .. }) => match pending[number(item)].pop() {
                Some(call) => keep[call] = true,
                None => keep[i] = false,
            },
            _ => {}
        }
    }
    let mut kept = view;
    let mut i = 0;
    kept.retain(|_| {
        i += 1;
        keep[i - 1]
    });

    // Placeholders are rare (two user messages in a row, an assistant first): without one,
    // the kept items are the view, and no second vector is made. For 38,000 items that is
    // 2.7 MB of fresh pages faulted in, a tenth of a `compact --dry-run`.
    let mut side_before: Option<Side> = None;
    let placeholder_needed = kept.iter().any(|item| {
        let side = item_side(item);
        let needed =
            matches!((side_before, side), (Some(Side::User), Some(Side::User)) | (None, Some(Side::Assistant)));
        side_before = side.or(side_before);
        needed
    });
    if !placeholder_needed {
        return kept;
    }
    let mut out: Vec<Item> = Vec::with_capacity(kept.len() + 1);
    let mut last: Option<Side> = None;
    let mut last_turn: Option<u64> = None;
    for item in kept {
        let (at_id, ts) = match &item {
            Item::Raw { index, .. } => (outlines[*index].id.as_str(), outlines[*index].ts.as_str()),
            Item::Synthetic(made) => (made.id.as_str(), made.ts.as_str()),
        };
        let at = (ts, None, item.turn());
        match (last, item_side(&item)) {
            // The reply that is missing is the turn before's: it stands in that turn.
            (Some(Side::User), Some(Side::User)) => {
                let at = (ts, None, last_turn);
                out.push(synthetic(Kind::Assistant { content: NO_REPLY.into() }, at_id, at, "no-reply"));
            }
            (None, Some(Side::Assistant)) => {
                out.push(synthetic(Kind::User { content: CONTINUED.into() }, at_id, at, "continued"));
            }
            _ => {}
        }
        if let Some(s) = item_side(&item) {
            last = Some(s);
            last_turn = item.turn();
        }
        out.push(item);
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
        match (last, event_side(event)) {
            (Some(Side::User), Some(Side::User)) => return Err(InvalidView::TwoUserMessages { index: i }),
            (None, Some(Side::Assistant)) => return Err(InvalidView::StartsWithAssistant { index: i }),
            _ => {}
        }
        if let Some(s) = event_side(event) {
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

/// [`estimate`] from outlines alone; `None` when either view truncates a result, which only
/// the text can measure.
pub fn estimate_outlined(
    outlined: &Outlined,
    candidate: &Compaction,
    id: &str,
    ts: &str,
) -> Result<Option<Estimate>, ProjectionError> {
    let before = view(outlined)?;
    let Some(b) = item_chars_by_turn(&before, &outlined.outlines) else { return Ok(None) };
    let event = Record::Apply(candidate.clone()).to_draft().into_event(id.into(), ts.into());
    let after = view_into(outlined, Some(&event), before)?;
    let Some(a) = item_chars_by_turn(&after, &outlined.outlines) else { return Ok(None) };
    Ok(Some(compare_chars(&b, &a)))
}

/// Per-turn and total tokens of two views of the same conversation.
pub fn compare(before: &[Projected], after: &[Projected]) -> Estimate {
    compare_chars(&chars_by_turn(before), &chars_by_turn(after))
}

/// [`compare`] of two views' characters per turn.
pub fn compare_chars(b: &BTreeMap<Option<u64>, u64>, a: &BTreeMap<Option<u64>, u64>) -> Estimate {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: &str, kind: Kind) -> Event {
        crate::event::Draft::new(kind).into_event(id.into(), "2026-01-01T00:00:00Z".into())
    }

    fn strip_all(keep_args: Option<Vec<String>>) -> Event {
        let c = Compaction {
            from_turn: 0,
            to_turn: 0,
            from_event: "u".into(),
            to_event: "r2".into(),
            tool_calls: Some(compaction::ToolCallPolicy::Strip { request: true, response: true }),
            tools: [("Read".to_owned(), compaction::ToolHint { keep_args: Some(vec![]), ..Default::default() })].into(),
            keep_args,
            ..Compaction::default()
        };
        compaction::Record::Apply(c).to_draft().into_event("k".into(), "2026-01-01T00:00:01Z".into())
    }

    #[test]
    fn placeholders_keep_the_trail_never_grow_a_part_and_are_measured_as_they_read() {
        let mut events = vec![
            event("u", Kind::User { content: "fix it".into() }),
            event(
                "c1",
                Kind::ToolCall {
                    call_id: "t1".into(),
                    name: "Bash".into(),
                    arguments: serde_json::json!({"command": "cargo test -p store", "timeout": 5}),
                },
            ),
            event(
                "01J0000000000000000000R1XY",
                Kind::ToolResult {
                    call_id: "t1".into(),
                    content: "Exit code 101\n   Compiling store\nerror[E0308]: mismatched types\n  --> src/a.rs:3:5"
                        .into(),
                    is_error: true,
                },
            ),
            // Kept whole: its placeholder would say as much in as many characters or more.
            event(
                "c3",
                Kind::ToolCall {
                    call_id: "t3".into(),
                    name: "Bash".into(),
                    arguments: serde_json::json!({"command": "ls"}),
                },
            ),
            event(
                "r3",
                Kind::ToolResult { call_id: "t3".into(), content: "ls: x: No such file".into(), is_error: true },
            ),
            event(
                "c2",
                Kind::ToolCall {
                    call_id: "t2".into(),
                    name: "Read".into(),
                    arguments: serde_json::json!({"file_path": "src/a.rs"}),
                },
            ),
            event(
                "r2",
                Kind::ToolResult {
                    call_id: "t2".into(),
                    content: "fn main() {\n    println!(\"hi\");\n}".into(),
                    is_error: false,
                },
            ),
        ];
        events.push(strip_all(Some(vec!["command".into(), "file_path".into()])));
        let view = project(&events).unwrap();
        let kinds: Vec<&Kind> = view.iter().map(|p| &p.event.kind).collect();
        assert!(
            matches!(kinds[1], Kind::ToolCall { arguments, .. } if *arguments == serde_json::json!({"command": "cargo test -p store"}))
        );
        assert!(
            matches!(kinds[2], Kind::ToolResult { content, .. }
                if content == "[compacted …0000R1XY] exit 101 — error[E0308]: mismatched types"),
            "{kinds:?}"
        );
        assert_eq!((kinds[3], kinds[4]), (&events[3].kind, &events[4].kind), "no placeholder longer than the part");
        assert_eq!((&view[3].origin, &view[4].origin), (&Origin::Raw, &Origin::Raw));
        // A tool's own empty list keeps nothing of its arguments.
        assert!(matches!(kinds[5], Kind::ToolCall { arguments, .. } if *arguments == serde_json::json!({})));
        assert!(matches!(kinds[6], Kind::ToolResult { content, .. } if content == "[compacted …r2] success"));
        // The estimate from outlines is what the view measures.
        let outlined = Outlined::of(&events);
        let items = view_of(&outlined);
        for (item, projected) in items.iter().zip(&view) {
            assert_eq!(item.chars(&outlined.outlines), Some(projected.event.visible_chars()), "{item:?}");
        }
        // A compaction made before placeholders kept the trail reads as it did.
        *events.last_mut().unwrap() = strip_all(None);
        let old = project(&events).unwrap();
        assert!(matches!(&old[1].event.kind, Kind::ToolCall { arguments, .. } if *arguments == serde_json::json!({})));
        assert!(matches!(&old[2].event.kind, Kind::ToolResult { content, .. } if content == "[compacted] Bash: error"));
    }

    fn view_of(outlined: &Outlined) -> Vec<Item> {
        view(outlined).unwrap()
    }

    /// An agent's environment or caveat in the user's place is context: no `[no reply]` is
    /// made after it, and the view is still one a provider takes.
    #[test]
    fn scaffolding_takes_no_side_and_gets_no_placeholder() {
        let mut caveat = event("m", Kind::User { content: "Caveat: local commands".into() });
        caveat.extra.insert(crate::event::META.into(), Value::Bool(true));
        let events = vec![
            event("s", Kind::System { content: "<permissions instructions>".into() }),
            event("e", Kind::User { content: "<environment_context>\n</environment_context>".into() }),
            event("u", Kind::User { content: "hi".into() }),
            event("a", Kind::Assistant { content: "hello".into() }),
            caveat,
            event("u2", Kind::User { content: "/exit".into() }),
        ];
        let view = project(&events).unwrap();
        let ids: Vec<&str> = view.iter().map(|p| p.event.id.as_str()).collect();
        assert_eq!(ids, ["s", "e", "u", "a", "m", "u2"]);
        assert_eq!(
            view.iter().map(|p| p.raw_turn).collect::<Vec<_>>(),
            [None, None, Some(0), Some(0), Some(0), Some(1)]
        );
        check_valid(&view.into_iter().map(|p| p.event).collect::<Vec<_>>()).unwrap();
    }

    #[test]
    fn an_id_tail_is_its_last_eight_characters() {
        assert_eq!(id_tail("01J0000000000000000000R1XY"), "0000R1XY");
        assert_eq!(id_tail("toolu_01ÄbcdefghIJ"), "cdefghIJ");
        assert_eq!(id_tail("short"), "short");
        assert_eq!(id_tail("12345678"), "12345678");
    }
}
