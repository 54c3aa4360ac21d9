//! `fork`: a new conversation from (part of) another.

use crate::clock::Clock;
use crate::compaction::Record;
use crate::compaction::range::{Bound, Turns};
use crate::event::outline::Outlined;
use crate::event::{Event, Kind, turn_numbers};
use crate::ops::plan::{self, PlanError};
use crate::projection::ProjectionError;
use crate::store::{Created, ForkedFrom, Store, Transaction};

use super::{OpsError, Result};

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
    tx: Transaction<'_>,
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
                "--last {n}: expected 1 to {count} (the conversation has {count} turn{})",
                if count == 1 { "" } else { "s" }
            )));
        }
        ForkRange::Last(n) => (count - n, count - 1),
        ForkRange::Bounds { from, to } => {
            let parse = |flag: &'static str, input: &str| {
                Bound::parse(input).map_err(|source| PlanError::Bound { flag, input: input.to_owned(), source })
            };
            let (a, b) = (parse("--from", &from)?, parse("--to", &to)?);
            let outlined = Outlined::of(&events);
            let t = Turns {
                starts: plan::turn_starts(&outlined.outlines),
                compacted_to: plan::compacted_to(&outlined)?,
                now: clock.now(),
            };
            t.resolve_range((&a, &from), (&b, &to)).map_err(PlanError::from)?
        }
    };
    let end = turns.iter().rposition(|t| t.is_some_and(|t| t <= to)).unwrap_or(events.len());
    let in_range = |i: usize| turns[i].is_some_and(|t| (from..=to).contains(&t));
    let kept_ids: std::collections::HashSet<&str> =
        events.iter().enumerate().filter(|(i, _)| in_range(*i)).map(|(_, e)| e.id.as_str()).collect();
    let records = crate::compaction::records(&events).map_err(|m| OpsError::Projection(ProjectionError::from(m)))?;
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
    Ok(store.fork(tx, source, &keep, title, forked_from, clock)?)
}
