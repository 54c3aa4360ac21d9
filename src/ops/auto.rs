//! Automatic compaction: after a turn (`append`, `query`, the MCP `append` tool), when the
//! conversation nears its model's window, and before a request that would not fit. One
//! path for every front-end: the plan comes from `compaction.auto`, a model summary that
//! fails falls back to the digest (a hook's veto does not: it is the user's word), and the
//! compaction itself goes through the caller's [`Apply`], which runs the user's hooks and
//! calls no one it should not.

use crate::clock::Clock;
use crate::config::Resolved;
use crate::event::Event;
use crate::event::outline::Outlined;
use crate::ops::plan::Conversation;
use crate::ops::{OpsError, Planned, QueryError, compact};
use crate::store::{Appended, Store};

/// What automatic compaction needs from the program running it.
pub trait Apply {
    /// The configuration in force for a conversation with `events` (the user's layers
    /// are the caller's to read).
    fn config(&self, store: &Store, events: &[Event]) -> Result<Resolved, OpsError>;
    /// Append a planned compaction, with the user's hooks around it and no question asked.
    fn compact(
        &mut self,
        store: &Store,
        id: &str,
        conversation: Conversation,
        config: &Resolved,
        planned: Planned,
    ) -> Result<(Appended, Planned), QueryError>;
}

/// An automatic compaction that landed.
#[derive(Debug)]
pub struct Compacted {
    pub appended: Appended,
    pub planned: Planned,
    /// Why the model summary planned first failed, when the digest was written instead.
    pub fell_back: Option<QueryError>,
}

/// After a turn: with `compaction.auto.enabled`, compact when the conversation nears the
/// window of `model` (or llm.model) ([`compact::auto_plan`]). `None`: off, or not needed.
/// Enabled is checked first without the conversation's own `config` events, which would
/// cost a read of every event on each append.
pub fn after_turn(
    store: &Store,
    id: &str,
    model: Option<&str>,
    apply: &mut dyn Apply,
    clock: &Clock,
) -> Result<Option<Compacted>, QueryError> {
    if !apply.config(store, &[])?.config.compaction.auto.enabled {
        return Ok(None);
    }
    let events = store.events(id)?;
    let outlined = Outlined::of(&events);
    let conversation = Conversation::full(&outlined, &events);
    let config = apply.config(store, &events)?;
    let window = crate::llm::resolve_model(&config.config, model).ok().and_then(|m| m.context_window);
    let Some(planned) = compact::auto_plan(conversation, &config, window, clock)? else {
        return Ok(None);
    };
    land(store, id, conversation, &config, planned, apply, clock).map(Some)
}

/// Before a request that would not fit (or after the server said it did not): with
/// `compaction.auto.enabled`, compact until the view is under `budget` (`why` names the
/// reason in the plan's label). `None`: off, or nothing was left to compact.
pub fn to_fit(
    store: &Store,
    id: &str,
    budget: u64,
    why: &str,
    apply: &mut dyn Apply,
    clock: &Clock,
) -> Result<Option<Compacted>, QueryError> {
    let events = store.events(id)?;
    let config = apply.config(store, &events)?;
    if !config.config.compaction.auto.enabled {
        return Ok(None);
    }
    let label = format!("what fits the window ({why})");
    let outlined = Outlined::of(&events);
    let conversation = Conversation::full(&outlined, &events);
    let Some(planned) = compact::plan_under(conversation, &config, budget, label, clock)? else {
        return Ok(None);
    };
    land(store, id, conversation, &config, planned, apply, clock).map(Some)
}

/// Apply what automatic compaction planned; a model summary that fails falls back to the
/// digest.
fn land(
    store: &Store,
    id: &str,
    conversation: Conversation,
    config: &Resolved,
    planned: Planned,
    apply: &mut dyn Apply,
    clock: &Clock,
) -> Result<Compacted, QueryError> {
    let summarizing = planned.prepared.pending.is_some();
    match apply.compact(store, id, conversation, config, planned) {
        Ok((appended, planned)) => Ok(Compacted { appended, planned, fell_back: None }),
        // A hook's veto is the user's word, not a fault to work around.
        Err(e) if summarizing && !matches!(e, QueryError::Ops(OpsError::Vetoed { .. })) => {
            let Some(fallback) = compact::auto_fallback(conversation, config, clock)? else {
                return Err(e);
            };
            let (appended, planned) = apply.compact(store, id, conversation, config, fallback)?;
            Ok(Compacted { appended, planned, fell_back: Some(e) })
        }
        Err(e) => Err(e),
    }
}
