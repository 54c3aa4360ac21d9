//! Making a compaction: its range widened around existing summaries, the covered event ids
//! looked up, and the before/after estimates `--dry-run` prints. Pure: events in, values out.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::compaction::digest;
use crate::compaction::range::{Bound, BoundSyntaxError, RangeError, Turns};
use crate::compaction::{Compaction, ReasoningPolicy, Summary, ToolCallPolicy, ToolHint};
use crate::config::{Config, SummaryPolicyName};
use crate::event::{Event, Kind, turn_numbers};
use crate::projection::{self, ProjectionError};

/// The per-type policies of a compaction, from a profile and flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policies {
    pub summary: Option<Summary>,
    pub reasoning: Option<ReasoningPolicy>,
    pub tool_calls: Option<ToolCallPolicy>,
}

impl Policies {
    pub fn is_empty(&self) -> bool {
        self.summary.is_none() && self.reasoning.is_none() && self.tool_calls.is_none()
    }
}

/// Summary ranges never partially overlap: widen `[from, to]` to swallow every summary range
/// it intersects (containment included), until nothing changes.
pub fn widen(mut from: u64, mut to: u64, summaries: &[(u64, u64)]) -> (u64, u64) {
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

/// Ranges (current turn numbers) of the summaries in force.
pub fn summary_ranges(events: &[Event]) -> Result<Vec<(u64, u64)>, ProjectionError> {
    Ok(projection::in_force(events)?
        .into_iter()
        .filter(|c| c.compaction.summary.is_some())
        .filter_map(|c| Some((c.first_turn?, c.last_turn?)))
        .collect())
}

/// The highest turn covered by a compaction in force: what `last` counts from.
pub fn compacted_to(events: &[Event]) -> Result<Option<u64>, ProjectionError> {
    Ok(projection::in_force(events)?.into_iter().filter_map(|c| c.last_turn).max())
}

/// The compaction of turns `from..=to` of `events`, covering them by event id.
pub fn build(
    events: &[Event],
    (from, to): (u64, u64),
    policies: Policies,
    summary_pending: bool,
    tools: BTreeMap<String, ToolHint>,
    profile: Option<String>,
) -> Result<Compaction, PlanError> {
    if policies.is_empty() && !summary_pending {
        return Err(PlanError::NothingToDo);
    }
    let turns = turn_numbers(events);
    let first = turns.iter().position(|t| *t == Some(from));
    let last = turns.iter().rposition(|t| *t == Some(to));
    let (Some(first), Some(last)) = (first, last) else {
        return Err(PlanError::NotInConversation { from, to });
    };
    Ok(Compaction {
        from_turn: from,
        to_turn: to,
        from_event: events[first].id.clone(),
        to_event: events[last].id.clone(),
        summary: policies.summary,
        reasoning: policies.reasoning,
        tool_calls: policies.tool_calls,
        tools,
        profile,
    })
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
    /// Have convo write the summary, one line per turn (`--digest`), even if the profile
    /// does not.
    pub digest: bool,
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
    #[error("turns {from}-{to} are not in the conversation")]
    NotInConversation { from: u64, to: u64 },
    #[error(transparent)]
    Projection(#[from] ProjectionError),
}

/// A compaction ready to append (but for a pending model summary), and the range that was
/// asked for before any widening.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub compaction: Compaction,
    pub requested: (u64, u64),
    pub pending: Option<PendingSummary>,
}

/// Turn a request into a compaction of `events`: profile and flags give the policies,
/// bounds (or `compaction.keep_last`) the range, widened around existing summaries.
pub fn prepare(
    events: &[Event],
    config: &Config,
    request: &Request,
    now: DateTime<Utc>,
) -> Result<Prepared, PlanError> {
    let name = request.profile.clone().unwrap_or_else(|| config.compaction.default_profile.clone());
    let profile = config.compaction.profiles.get(&name).ok_or_else(|| PlanError::UnknownProfile {
        name: name.clone(),
        known: config.compaction.profiles.keys().cloned().collect::<Vec<_>>().join(", "),
    })?;
    let mut policies = Policies {
        summary: None,
        reasoning: request.reasoning.or(profile.reasoning),
        tool_calls: request.tool_calls.or(profile.tool_calls.map(|t| t.0)),
    };
    let mut pending = None;
    // The digest is written once the range is final (below): widening changes what it covers.
    let mut digesting = false;
    let profile_policy = profile.summary.as_ref().map(|s| s.policy);
    match (&request.summary, &profile.summary) {
        (Some(text), _) => {
            // A summary replaces the whole range: the profile's per-type policies would have
            // nothing to act on, so only explicit flags are kept.
            policies = Policies {
                summary: Some(Summary { text: text.clone(), by: "user".into(), usage: None }),
                reasoning: request.reasoning,
                tool_calls: request.tool_calls,
            };
        }
        // A flag beats the profile: --digest on a summarizing profile calls no model.
        (None, _) if request.digest || (!request.summarize && profile_policy == Some(SummaryPolicyName::Digest)) => {
            policies = Policies { summary: None, reasoning: request.reasoning, tool_calls: request.tool_calls };
            digesting = true;
        }
        (None, from_profile) if request.summarize || profile_policy == Some(SummaryPolicyName::Summarize) => {
            policies = Policies { summary: None, reasoning: request.reasoning, tool_calls: request.tool_calls };
            pending = Some(PendingSummary {
                model: from_profile.as_ref().and_then(|s| s.model.clone()),
                instructions: from_profile.as_ref().and_then(|s| s.instructions.clone()),
            });
        }
        _ => {}
    }

    let parse = |flag: &'static str, input: &str| {
        Bound::parse(input).map_err(|source| PlanError::Bound { flag, input: input.to_owned(), source })
    };
    let from_input = request.from.clone().unwrap_or_else(|| "0".into());
    let to_input = match &request.to {
        Some(to) => to.clone(),
        None => format!("-{}", request.keep_last.unwrap_or(config.compaction.keep_last)),
    };
    let (from, to) = (parse("--from", &from_input)?, parse("--to", &to_input)?);
    let turns = Turns { starts: turn_starts(events), compacted_to: compacted_to(events)?, now };
    let requested = turns.resolve_range((&from, &from_input), (&to, &to_input))?;
    let summarizing = policies.summary.is_some() || pending.is_some() || digesting;
    let range = if summarizing { widen(requested.0, requested.1, &summary_ranges(events)?) } else { requested };
    if digesting {
        policies.summary = Some(digest_of(events, range, config.compaction.max_summary_tokens));
    }
    let compaction = build(events, range, policies, pending.is_some(), config.tool_hints(), Some(name))?;
    Ok(Prepared { compaction, requested, pending })
}

/// The digest of turns `from..=to` of `events`, from their raw events (a summary in force
/// over part of them does not hide what happened there).
fn digest_of(events: &[Event], (from, to): (u64, u64), max_tokens: u64) -> Summary {
    let turns = turn_numbers(events);
    let inside = |t: &Option<u64>| t.is_some_and(|t| (from..=to).contains(&t));
    let span = match (turns.iter().position(inside), turns.iter().rposition(inside)) {
        (Some(first), Some(last)) => first..last + 1,
        _ => 0..0,
    };
    let text = digest::digest(&events[span.clone()], &turns[span], max_tokens);
    Summary { text, by: digest::BY.into(), usage: None }
}

/// When each turn started: the timestamp of its user event.
pub fn turn_starts(events: &[Event]) -> Vec<DateTime<chrono::FixedOffset>> {
    events
        .iter()
        .filter(|e| matches!(e.kind, Kind::User { .. }))
        .map(|e| DateTime::parse_from_rfc3339(&e.ts).unwrap_or_default())
        .collect()
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
