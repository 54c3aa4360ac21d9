//! Making a compaction: its range widened around existing summaries, the covered event ids
//! looked up, and the before/after estimates `--dry-run` prints. Pure: events in, values out.

use chrono::{DateTime, Utc};

use crate::compaction::digest;
use crate::compaction::range::{Bound, BoundSyntaxError, End as RangeEnd, RangeError, Turns};
use crate::compaction::{Compaction, ReasoningPolicy, Summary, ToolCallPolicy};
use crate::config::{Config, Profile, SummaryPolicyName};
use crate::event::outline::Outlined;
use crate::event::{Event, Outline, Shape};
use crate::projection::{self, Estimate, ProjectionError};
use crate::store::subject::thousands;

/// A conversation as planning reads it: its outlines, and its events once something needs
/// their text (a digest; the estimate of a truncation). Planning from outlines alone says
/// so ([`PlanError::NeedsEvents`]) where it would need them, and the caller reads them.
#[derive(Debug, Clone, Copy)]
pub struct Conversation<'a> {
    pub outlined: &'a Outlined,
    pub events: Option<&'a [Event]>,
}

impl<'a> Conversation<'a> {
    pub fn full(outlined: &'a Outlined, events: &'a [Event]) -> Self {
        Conversation { outlined, events: Some(events) }
    }

    pub fn outlined(outlined: &'a Outlined) -> Self {
        Conversation { outlined, events: None }
    }

    fn events(&self, why: &'static str) -> Result<&'a [Event], PlanError> {
        self.events.ok_or(PlanError::NeedsEvents { why })
    }
}

/// What the projected view costs now and with `candidate` appended (as event `id` at `ts`):
/// from the outlines, or where a truncation needs the text, from the events.
pub fn estimate(c: Conversation, candidate: &Compaction, id: &str, ts: &str) -> Result<Estimate, PlanError> {
    match projection::estimate_outlined(c.outlined, candidate, id, ts)? {
        Some(estimate) => Ok(estimate),
        None => Ok(projection::estimate(c.events("a truncation's size")?, candidate, id, ts)?),
    }
}

/// The per-type policies of a compaction, from a profile and flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policies {
    pub summary: Option<Summary>,
    pub reasoning: Option<ReasoningPolicy>,
    pub tool_calls: Option<ToolCallPolicy>,
    pub min_bytes: Option<u64>,
    pub max_lines: Option<u64>,
}

impl Policies {
    pub fn is_empty(&self) -> bool {
        self.summary.is_none() && self.reasoning.is_none() && self.tool_calls.is_none() && self.max_lines.is_none()
    }
}

/// The compaction of events `start..=end` (indices into `events`), covering them by id.
pub fn build(
    outlined: &Outlined,
    (start, end): (usize, usize),
    policies: Policies,
    tools: std::collections::BTreeMap<String, crate::compaction::ToolHint>,
    profile: Option<String>,
) -> Compaction {
    let turns = outlined.turns();
    let events = &outlined.outlines;
    let turn = |i: usize| turns[i].unwrap_or(0);
    Compaction {
        from_turn: turn(start),
        to_turn: turn(end),
        from_event: events[start].id.to_string(),
        to_event: events[end].id.to_string(),
        summary: policies.summary,
        reasoning: policies.reasoning,
        tool_calls: policies.tool_calls,
        min_bytes: policies.min_bytes,
        max_lines: policies.max_lines,
        tools,
        keep_args: None,
        profile,
        tokens: None,
        laid_with: None,
    }
}

/// Summary ranges never partially overlap: widen `[from, to]` to swallow every summary range
/// it intersects (containment included), until nothing changes.
pub fn widen(mut from: usize, mut to: usize, summaries: &[(usize, usize)]) -> (usize, usize) {
    loop {
        let (a, b) = summaries
            .iter()
            .filter(|(s, e)| *s <= to && from <= *e)
            .fold((from, to), |(a, b), (s, e)| (a.min(*s), b.max(*e)));
        if (a, b) == (from, to) {
            return (from, to);
        }
        (from, to) = (a, b);
    }
}

/// Ranges (raw event indices) of the summaries in force.
pub fn summary_ranges(outlined: &Outlined) -> Result<Vec<(usize, usize)>, ProjectionError> {
    Ok(projection::in_force_outlined(outlined)?
        .iter()
        .filter(|c| c.compaction.summary.is_some())
        .map(|c| (c.start, c.end))
        .collect())
}

/// The highest turn covered by a compaction in force: what `last` counts from.
pub fn compacted_to(outlined: &Outlined) -> Result<Option<u64>, ProjectionError> {
    Ok(projection::in_force_outlined(outlined)?.into_iter().filter_map(|c| c.last_turn).max())
}

/// What `convo compact` was asked for; `None` means "from config".
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub profile: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub keep_last: Option<u64>,
    pub reasoning: Option<ReasoningPolicy>,
    pub tool_calls: Option<ToolCallPolicy>,
    /// A summary written by the user.
    pub summary: Option<String>,
    /// Have a model write the summary (`--summarize`), even if the profile does not.
    pub summarize: bool,
    /// Over the profile's `keep_first`, `keep_recent_tools`, `min_bytes`, `max_lines`.
    pub keep_first: Option<u64>,
    pub keep_recent_tools: Option<u64>,
    pub min_bytes: Option<u64>,
    pub max_lines: Option<u64>,
    /// Have convo write the summary, one line per turn (`--digest`), even if the profile
    /// does not.
    pub digest: bool,
    /// `--budget TOKENS`: the least compaction that fits (see [`super::budget`]).
    pub budget: Option<u64>,
    /// How the budget was given, for messages (`--budget 5000`, or the automatic trigger).
    pub budget_label: Option<String>,
    /// With a budget no compaction reaches, apply the one that gets closest instead of
    /// failing (automatic compaction: the request that follows fails on its own if it must).
    pub closest_over_budget: bool,
    /// A budget's digest leaves the room its lines leave unfilled (automatic compaction:
    /// the view after the turn must stay under the trigger, and a view filled to its budget
    /// would be compacted again at every turn).
    pub budget_headroom: bool,
    /// The range ends at this raw event index at the latest, before any widening: how a
    /// budget covers only the oldest part it needs, or gives up part of the protected tail.
    pub end_by: Option<usize>,
}

/// A summary still to be written by a model: the compaction's range is final, its text not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSummary {
    /// From the profile's `summary.model`, if it names one.
    pub model: Option<String>,
    /// From the profile's `summary.instructions`, if any.
    pub instructions: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Range(#[from] RangeError),
    #[error("{flag} {input}: {source}")]
    Bound {
        flag: &'static str,
        input: String,
        #[source]
        source: BoundSyntaxError,
    },
    #[error("unknown profile `{name}` (profiles: {known})")]
    UnknownProfile { name: String, known: String },
    #[error("nothing to do: no summary, reasoning or tool call policy")]
    NothingToDo,
    /// The bounds leave nothing to compact: not a mistake, so callers say so and succeed.
    #[error("nothing to compact: {why}")]
    NothingInRange { why: String },
    #[error(transparent)]
    Projection(#[from] ProjectionError),
    /// Planning from outlines reached something only the text can tell.
    #[error("planning needs the events' text ({why})")]
    NeedsEvents { why: &'static str },
    /// `--budget` with no step, at any size of the protected tail, that brings the view under
    /// it; `smallest` is the smallest view reachable, and `how` the compaction that reaches it.
    #[error(
        "no compaction brings the view (~{} tokens) under the budget of {}: the smallest reachable is ~{} tokens ({how})",
        thousands(*now), thousands(*budget), thousands(*smallest)
    )]
    OverBudget { budget: u64, now: u64, smallest: u64, how: String },
}

/// A compaction ready to append (but for a pending model summary), and the range that was
/// asked for before any widening.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub compaction: Compaction,
    /// The turns asked for, before widening.
    pub requested: (u64, u64),
    /// Whether the range grew to swallow a summary it partly overlapped.
    pub widened: bool,
    pub pending: Option<PendingSummary>,
}

/// Turn a request into a compaction of `events`: profile and flags give the policies,
/// bounds (or `compaction.keep_last`) the range, widened around existing summaries.
pub fn prepare(
    conversation: Conversation,
    config: &Config,
    request: &Request,
    now: DateTime<Utc>,
) -> Result<Prepared, PlanError> {
    let (name, profile) = profile_of(config, request)?;
    let choice = Choice::of(request, profile);
    if choice.policies.is_empty() && choice.pending.is_none() && !choice.digest {
        return Err(PlanError::NothingToDo);
    }
    place(conversation, config, request, &name, choice, now)
}

/// The profile `request` names (or `compaction.default_profile`), with its name.
pub fn profile_of<'c>(config: &'c Config, request: &Request) -> Result<(String, &'c Profile), PlanError> {
    let name = request.profile.clone().unwrap_or_else(|| config.compaction.default_profile.clone());
    let profile = config.compaction.profiles.get(&name).ok_or_else(|| PlanError::UnknownProfile {
        name: name.clone(),
        known: config.compaction.profiles.keys().cloned().collect::<Vec<_>>().join(", "),
    })?;
    Ok((name, profile))
}

/// What a compaction does, before its range is known: per-type policies, and whether a
/// model (`pending`) or convo (`digest`) writes a summary once it is.
#[derive(Debug, Clone, Default)]
pub struct Choice {
    pub policies: Policies,
    pub pending: Option<PendingSummary>,
    pub digest: bool,
    /// What the digest may take, over `compaction.max_summary_tokens`: a budget lets it use
    /// what the rest of the view leaves.
    pub digest_tokens: Option<u64>,
    /// The digest fills `digest_tokens` with the end of its range as it was when its lines
    /// leave room ([`digest::filled`]): a budget's view then spends what it is given.
    pub digest_fill: bool,
}

impl Choice {
    /// Flags over the profile.
    pub fn of(request: &Request, profile: &Profile) -> Choice {
        let mut policies = Policies {
            summary: None,
            reasoning: request.reasoning.or(profile.reasoning),
            tool_calls: request.tool_calls.or(profile.tool_calls.map(|t| t.0)),
            min_bytes: request.min_bytes.or(profile.min_bytes),
            max_lines: request.max_lines.or(profile.max_lines),
        };
        let mut pending = None;
        // The digest is written once the range is final (in `place`): widening changes what
        // it covers.
        let mut digest = false;
        let profile_policy = profile.summary.as_ref().map(|s| s.policy);
        // A summary replaces the whole range: the profile's per-type policies would have
        // nothing to act on, so only explicit flags are kept.
        let explicit_only = Policies {
            summary: None,
            reasoning: request.reasoning,
            tool_calls: request.tool_calls,
            min_bytes: request.min_bytes,
            max_lines: request.max_lines,
        };
        match (&request.summary, &profile.summary) {
            (Some(text), _) => {
                policies = Policies {
                    summary: Some(Summary { text: text.clone(), by: "user".into(), usage: None, agent_history: None }),
                    ..explicit_only
                };
            }
            // A flag beats the profile: --digest on a summarizing profile calls no model.
            (None, _)
                if request.digest || (!request.summarize && profile_policy == Some(SummaryPolicyName::Digest)) =>
            {
                policies = explicit_only;
                digest = true;
            }
            (None, from_profile) if request.summarize || profile_policy == Some(SummaryPolicyName::Summarize) => {
                policies = explicit_only;
                pending = Some(PendingSummary {
                    model: from_profile.as_ref().and_then(|s| s.model.clone()),
                    instructions: from_profile.as_ref().and_then(|s| s.instructions.clone()),
                });
            }
            _ => {}
        }
        Choice { policies, pending, digest, digest_tokens: None, digest_fill: false }
    }
}

/// `choice` placed on `events`: the range from the request's bounds and profile `name`,
/// widened around summaries when it writes one, and the digest written.
pub fn place(
    conversation: Conversation,
    config: &Config,
    request: &Request,
    name: &str,
    choice: Choice,
    now: DateTime<Utc>,
) -> Result<Prepared, PlanError> {
    let Choice { mut policies, pending, digest, digest_tokens, digest_fill } = choice;
    let profile = config.compaction.profiles.get(name).cloned().unwrap_or_default();
    let outlined = conversation.outlined;
    let mut requested = Bounds::of(request, config, &profile, name).resolve(outlined, now)?;
    if let Some(limit) = request.end_by
        && limit < requested.1
    {
        requested = (requested.0 <= limit)
            .then(|| unsplit(outlined, requested.0, limit))
            .flatten()
            .ok_or_else(|| PlanError::NothingInRange { why: "the range ends before it starts".into() })?;
    }
    let summarizing = policies.summary.is_some() || pending.is_some() || digest;
    let range = if summarizing { widen(requested.0, requested.1, &summary_ranges(outlined)?) } else { requested };
    let turns = outlined.turns();
    if digest {
        let events = conversation.events("a digest")?;
        // From the raw events: a summary in force over part of them does not hide what
        // happened there.
        let span = range.0..range.1 + 1;
        let text = match digest_tokens {
            Some(cap) if digest_fill => digest::filled(&events[span.clone()], &turns[span], cap),
            Some(cap) => digest::fitted(&events[span.clone()], &turns[span], cap),
            None => digest::digest(&events[span.clone()], &turns[span], config.compaction.max_summary_tokens),
        };
        policies.summary = Some(Summary { text, by: digest::BY.into(), usage: None, agent_history: None });
    }
    let turn = |i: usize| turns[i].unwrap_or(0);
    let mut compaction = build(outlined, range, policies, config.tool_hints(), Some(name.to_owned()));
    compaction.keep_args = Some(config.compaction.keep_args.clone());
    Ok(Prepared { compaction, requested: (turn(requested.0), turn(requested.1)), widened: range != requested, pending })
}

/// Where a compaction's range comes from, each bound with the flag or config key that set
/// it, so a range that holds nothing can say why in the user's own terms.
struct Bounds {
    from: (String, String),
    keep_first: Option<(u64, String)>,
    /// An explicit end (`--to`, `--keep-last`, `--keep-recent-tools`), or the ones from config:
    /// before the profile's last `keep_recent_tools` tool calls when the conversation has
    /// more, else before the last `keep_last` turns. (In an agent session the recent work is
    /// its last tool calls, wherever the turns fall: three turns may hold dozens of calls, or
    /// be `/exit` and its output.)
    ends: Vec<End>,
}

enum End {
    Turn { input: String, label: String },
    RecentTools { n: u64, label: String },
}

impl Bounds {
    fn of(request: &Request, config: &Config, profile: &Profile, name: &str) -> Bounds {
        let from = match &request.from {
            Some(f) => (f.clone(), format!("--from {f}")),
            None => ("0".into(), "--from 0".into()),
        };
        let keep_first = match (request.keep_first, profile.keep_first) {
            (Some(n), _) => Some((n, format!("--keep-first {n}"))),
            (None, Some(n)) => Some((n, format!("compaction.profiles.{name}.keep_first = {n}"))),
            (None, None) => None,
        };
        let before_last = |n: u64, label: String| End::Turn { input: format!("-{n}"), label };
        let ends = if let Some(to) = &request.to {
            vec![End::Turn { input: to.clone(), label: format!("--to {to}") }]
        } else if let Some(n) = request.keep_last {
            vec![before_last(n, format!("--keep-last {n}"))]
        } else if let Some(n) = request.keep_recent_tools {
            vec![End::RecentTools { n, label: format!("--keep-recent-tools {n}") }]
        } else {
            let n = config.compaction.keep_last;
            let mut ends = vec![before_last(n, format!("compaction.keep_last = {n}"))];
            if let Some(t) = profile.keep_recent_tools {
                ends.push(End::RecentTools {
                    n: t,
                    label: format!("compaction.profiles.{name}.keep_recent_tools = {t}"),
                });
            }
            ends
        };
        Bounds { from, keep_first, ends }
    }

    /// The first and last event index in range, and the turns asked for.
    fn resolve(&self, outlined: &Outlined, now: DateTime<Utc>) -> Result<(usize, usize), PlanError> {
        let events = &outlined.outlines;
        let turns = outlined.turns();
        let in_force = projection::in_force_outlined(outlined)?;
        let nothing = |why: String| PlanError::NothingInRange { why };
        let resolver =
            Turns { starts: turn_starts(events), compacted_to: in_force.iter().filter_map(|c| c.last_turn).max(), now };
        let first_of = |turn: u64| turns.iter().position(|t| *t == Some(turn));
        let last_of = |turn: u64| turns.iter().rposition(|t| *t == Some(turn));
        let count = resolver.starts.len() as u64;
        let parse = |flag: &'static str, input: &str| {
            Bound::parse(input).map_err(|source| PlanError::Bound { flag, input: input.to_owned(), source })
        };

        let (from_input, from_label) = &self.from;
        let from_bound = parse("--from", from_input)?;
        let mut start = match from_bound.clone() {
            // One past the last event any compaction in force covers: a range may end
            // inside a turn, and the rest of that turn is still to do.
            Bound::Last => {
                let next = in_force.iter().map(|c| c.end + 1).max().unwrap_or(0);
                let next = next.max(first_of(0).unwrap_or(events.len()));
                if next >= events.len() {
                    return Err(nothing(format!("everything is already compacted ({from_label})")));
                }
                next
            }
            bound => {
                let turn = resolver.resolve(&bound, RangeEnd::From, from_input)?;
                first_of(turn).unwrap_or(events.len())
            }
        };
        if let Some((k, label)) = &self.keep_first
            && *k > 0
        {
            match first_of(*k) {
                Some(i) => start = start.max(i),
                None => {
                    return Err(nothing(format!(
                        "the first {k} turns stay as they are ({label}) and the conversation has {}",
                        plural(count, "turn")
                    )));
                }
            }
        }

        let mut ends = Vec::new();
        let mut recent = None;
        let mut kept = Vec::new();
        for end in &self.ends {
            match end {
                End::Turn { input, label } => match parse("--to", input)? {
                    Bound::BeforeLast(n) if n >= count => {
                        kept.push(format!("the last {} stay as they are ({label})", plural(n, "turn")));
                    }
                    bound => {
                        let turn = resolver.resolve(&bound, RangeEnd::To, input)?;
                        ends.extend(last_of(turn));
                    }
                },
                End::RecentTools { n, label } => match recent_tools_end(events, *n) {
                    Some(end) => recent = Some(end),
                    None => kept.push(format!("the last {} stay whole ({label})", plural(*n, "tool call"))),
                },
            }
        }
        let end = recent.or_else(|| ends.into_iter().max());
        let Some(end) = end else {
            let calls = events.iter().filter(|e| matches!(e.shape, Shape::ToolCall { .. })).count() as u64;
            return Err(nothing(format!(
                "the conversation has {} and {}; {}",
                plural(count, "turn"),
                plural(calls, "tool call"),
                kept.join(", and ")
            )));
        };
        // Two turn numbers the wrong way round are a mistake; relative bounds that cross
        // (`--from last` past `-3`) just leave nothing to do.
        if let ([End::Turn { input, .. }], Bound::Turn(a)) = (self.ends.as_slice(), &from_bound)
            && let Ok(Bound::Turn(b)) = Bound::parse(input)
            && a > &b
        {
            return Err(RangeError {
                flag: "--from".into(),
                input: from_input.clone(),
                message: format!("turn {a} is after --to {input} (turn {b})"),
            }
            .into());
        }
        if end < start {
            let to = self
                .ends
                .iter()
                .map(|e| match e {
                    End::Turn { label, .. } | End::RecentTools { label, .. } => label.as_str(),
                })
                .collect::<Vec<_>>()
                .join(", ");
            return Err(nothing(format!(
                "the range would start at turn {} ({from_label}) but ends before it ({to})",
                turns[start.min(events.len() - 1)].unwrap_or(0)
            )));
        }
        unsplit(outlined, start, end)
            .ok_or_else(|| nothing(format!("the range holds only part of one tool call and its result ({from_label})")))
    }
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}

/// The last index before the `n` most recent tool calls, so that they and their results stay
/// whole; `None` when the conversation has no more than `n` calls.
fn recent_tools_end(events: &[Outline], n: u64) -> Option<usize> {
    let calls: Vec<usize> =
        events.iter().enumerate().filter(|(_, e)| matches!(e.shape, Shape::ToolCall { .. })).map(|(i, _)| i).collect();
    let n = usize::try_from(n).ok()?;
    if n == 0 {
        return events.len().checked_sub(1);
    }
    if calls.len() <= n {
        return None;
    }
    calls[calls.len() - n].checked_sub(1)
}

/// The range `start..=end` shrunk until it holds every tool call it holds a result of and
/// the reverse: a range never separates a result from its call (a summary would swallow
/// one and leave the other). `None` when nothing is left.
pub fn unsplit(outlined: &Outlined, mut start: usize, mut end: usize) -> Option<(usize, usize)> {
    // Each call's result: the first result with its id after it (ids can repeat). Calls
    // are paired by their id's number, not by hashing the ids again.
    let numbers = outlined.calls();
    let none = usize::MAX;
    let n = outlined.outlines.len();
    // The calls still waiting for a result, per id number, oldest first: a queue linked
    // through `next`, from `first` to `last` (a queue allocated per id cost 19,000
    // allocations on a long conversation).
    let (mut first, mut last) = (vec![none; numbers.count], vec![none; numbers.count]);
    let mut next = vec![none; n];
    let mut result_of: Vec<usize> = vec![none; n];
    let mut call_of: Vec<usize> = vec![none; n];
    for (i, e) in outlined.outlines.iter().enumerate() {
        let number = numbers.of[i] as usize;
        match &e.shape {
            Shape::ToolCall { .. } => {
                match last[number] {
                    l if l == none => first[number] = i,
                    l => next[l] = i,
                }
                last[number] = i;
            }
            Shape::ToolResult { .. } if first[number] != none => {
                let call = first[number];
                first[number] = next[call];
                if first[number] == none {
                    last[number] = none;
                }
                result_of[call] = i;
                call_of[i] = call;
            }
            _ => {}
        }
    }
    let call_of = |i: &usize| Some(call_of[*i]).filter(|c| *c != usize::MAX);
    let result_of = |i: &usize| Some(result_of[*i]).filter(|r| *r != usize::MAX);
    while start <= end {
        if let Some(result) = (start..=end).rev().find(|i| call_of(i).is_some_and(|c| c < start)) {
            start = result + 1;
        } else if let Some(call) = (start..=end).find(|i| result_of(i).is_some_and(|r| r > end)) {
            end = call.checked_sub(1)?;
        } else {
            return Some((start, end));
        }
    }
    None
}

/// When each turn started: the timestamp of its user event.
pub fn turn_starts(events: &[Outline]) -> Vec<DateTime<chrono::FixedOffset>> {
    events.iter().filter(|e| e.starts_turn()).map(|e| DateTime::parse_from_rfc3339(&e.ts).unwrap_or_default()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_widen_until_no_partial_overlap_remains() {
        // Partial overlap on the left, then the widened range touches another.
        assert_eq!(widen(5, 12, &[(3, 6), (12, 15)]), (3, 15));
        // Containment counts as intersection.
        assert_eq!(widen(4, 5, &[(0, 10)]), (0, 10));
        // Disjoint ranges stay apart.
        assert_eq!(widen(5, 8, &[(0, 4), (9, 10)]), (5, 8));
        // A chain: widening into one range reaches the next.
        assert_eq!(widen(10, 11, &[(8, 10), (6, 8), (0, 2)]), (6, 11));
    }
}
