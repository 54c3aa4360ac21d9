//! Part of a conversation to read (`show --turn`, `--turns`, `--event`): a turn or a range
//! of turns, numbered as `show` heads them (a user message starts one, the first is 0), or
//! events by their ids, each as a prefix or an end (`…1a2b3c4d`, how a compacted view's
//! placeholders name the events they stand for) no other event of the conversation shares.

/// What to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Turns `from` to `to`, both kept; `None`: that side is open.
    Turns { from: Option<u64>, to: Option<u64> },
    /// The events with these ids, or the one whose id starts or ends with each.
    Events(Vec<String>),
}

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// A turn asked for is past the last.
    #[error("turn {asked} is out of range: {}", have(*count))]
    NoSuchTurn { asked: u64, count: u64 },
    /// A range whose first turn is after its last.
    #[error("turns {from}..{to}: the first is after the last")]
    Backwards { from: u64, to: u64 },
    #[error("no event {0} in this conversation")]
    NoSuchEvent(String),
    #[error("event {prefix} is ambiguous: {count} events start or end with it")]
    Ambiguous { prefix: String, count: usize },
}

/// "the conversation has 4 turns (0-3)": what a turn out of range is measured against.
fn have(count: u64) -> String {
    match count {
        0 => "the conversation has no turns".to_owned(),
        1 => "the conversation has 1 turn (0)".to_owned(),
        n => format!("the conversation has {n} turns (0-{})", n - 1),
    }
}

/// The places of the events `selection` keeps, in order, given each event's id and turn
/// (`None`: before the first user message). A range from turn 0 keeps what comes before it
/// too (a system prompt): that is where the conversation starts.
pub fn select(ids: &[&str], turns: &[Option<u64>], selection: &Selection) -> Result<Vec<usize>, SelectError> {
    match selection {
        Selection::Turns { from, to } => {
            let count = turns.iter().flatten().max().map_or(0, |t| t + 1);
            for asked in [from, to].into_iter().flatten() {
                if *asked >= count {
                    return Err(SelectError::NoSuchTurn { asked: *asked, count });
                }
            }
            let (from, to) = (from.unwrap_or(0), to.unwrap_or(count.saturating_sub(1)));
            if from > to {
                return Err(SelectError::Backwards { from, to });
            }
            let kept = |turn: Option<u64>| match turn {
                Some(t) => (from..=to).contains(&t),
                None => from == 0,
            };
            Ok((0..turns.len()).filter(|i| kept(turns[*i])).collect())
        }
        Selection::Events(queries) => {
            let mut kept = Vec::with_capacity(queries.len());
            for query in queries {
                kept.push(event(ids, query)?);
            }
            kept.sort_unstable();
            kept.dedup();
            Ok(kept)
        }
    }
}

/// The conversation holding the one event `query` names ([`select`]'s rule), searched
/// from `first` (the active conversation) on: an event id names its conversation, so `show
/// --event` needs none given (a fresh clone has no active one). `None`: no conversation
/// holds it, or more than one does.
pub fn conversation_of(
    store: &crate::store::Store,
    first: Option<&str>,
    query: &str,
) -> Result<Option<String>, crate::store::StoreError> {
    let holds = |id: &str| -> Result<bool, crate::store::StoreError> {
        let at = store.outlined(id)?;
        let ids: Vec<&str> = at.outlined.outlines.iter().map(|o| o.id.as_ref()).collect();
        Ok(event(&ids, query).is_ok())
    };
    if let Some(first) = first
        && holds(first)?
    {
        return Ok(Some(first.to_owned()));
    }
    let mut found = None;
    for id in store.conversation_ids()? {
        if Some(id.as_str()) != first && holds(&id)? {
            if found.is_some() {
                return Ok(None);
            }
            found = Some(id);
        }
    }
    Ok(found)
}

/// The place of the one event `query` names: its id, or a unique prefix or end (a leading
/// `…` or `...`, as placeholders write it, is not part of it).
fn event(ids: &[&str], query: &str) -> Result<usize, SelectError> {
    if let Some(at) = ids.iter().position(|id| *id == query) {
        return Ok(at);
    }
    let part = query.trim_start_matches('…').trim_start_matches("...");
    let matching: Vec<usize> =
        (0..ids.len()).filter(|i| !part.is_empty() && (ids[*i].starts_with(part) || ids[*i].ends_with(part))).collect();
    match matching[..] {
        [] => Err(SelectError::NoSuchEvent(query.to_owned())),
        [one] => Ok(one),
        _ => Err(SelectError::Ambiguous { prefix: query.to_owned(), count: matching.len() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_and_events() {
        let ids = ["s", "a1", "a2", "b1", "b2"];
        let turns = [None, Some(0), Some(0), Some(1), Some(1)];
        let turn = |from, to| Selection::Turns { from, to };
        assert_eq!(select(&ids, &turns, &turn(Some(1), Some(1))).unwrap(), [3, 4]);
        assert_eq!(select(&ids, &turns, &turn(Some(0), Some(0))).unwrap(), [0, 1, 2]);
        assert_eq!(select(&ids, &turns, &turn(Some(1), None)).unwrap(), [3, 4]);
        assert!(matches!(
            select(&ids, &turns, &turn(Some(2), Some(2))),
            Err(SelectError::NoSuchTurn { asked: 2, count: 2 })
        ));
        assert!(matches!(select(&ids, &turns, &turn(Some(1), Some(0))), Err(SelectError::Backwards { .. })));
        let events = |q: &[&str]| Selection::Events(q.iter().map(|s| s.to_string()).collect());
        assert_eq!(
            select(&ids, &turns, &events(&["b"])).map_err(|e| e.to_string()).unwrap_err(),
            "event b is ambiguous: 2 events start or end with it"
        );
        assert_eq!(select(&ids, &turns, &events(&["b2"])).unwrap(), [4]);
        assert_eq!(select(&ids, &turns, &events(&["s"])).unwrap(), [0]);
        assert!(matches!(select(&ids, &turns, &events(&["z"])), Err(SelectError::NoSuchEvent(_))));
        // By its end, as a placeholder names it; several, in the conversation's order, once.
        assert_eq!(select(&ids, &turns, &events(&["…b1", "a2", "s", "b1"])).unwrap(), [0, 2, 3]);
        assert!(matches!(select(&ids, &turns, &events(&["…2"])), Err(SelectError::Ambiguous { .. })));
    }
}
