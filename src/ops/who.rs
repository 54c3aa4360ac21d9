//! Who had a hand in what: the people, agents and models of a conversation's commits
//! (`log`), and the conversations a person recorded in or committed to (`--author`). The
//! events are the source ([`crate::event::who`]), so what a rewrite of history keeps (the
//! events) still says it; a commit's author counts too, for events recorded before events
//! named their person.

use std::collections::{HashMap, HashSet};

use crate::event::who::{Author, Who};
use crate::store::{LogEntry, Store, StoreError, Summary};

/// [`attribute`] for the store's log (`log --all`, newest first): each commit is named as
/// the logs of the conversations it changed name it (an import of a folder, several), so
/// `log --all` and `log ID` agree. Each conversation's log comes from its index (one small
/// file); only those holding a commit shown have their events read. The commits of a
/// conversation HEAD no longer holds stay unnamed.
pub fn attribute_all(store: &Store, entries: &mut [LogEntry]) -> Result<(), StoreError> {
    let shown: HashSet<String> = entries.iter().map(|e| e.commit.clone()).collect();
    let mut by: HashMap<String, Who> = HashMap::new();
    for id in store.conversation_ids()? {
        let mut own = store.log(&id, None)?;
        if !own.iter().any(|e| shown.contains(&e.commit)) {
            continue;
        }
        attribute(store, &id, &mut own, true)?;
        for entry in own.into_iter().filter(|e| shown.contains(&e.commit)) {
            let who = by.entry(entry.commit).or_default();
            for (all, more) in [
                (&mut who.people, entry.who.people),
                (&mut who.agents, entry.who.agents),
                (&mut who.models, entry.who.models),
            ] {
                for one in more {
                    if !all.contains(&one) {
                        all.push(one);
                    }
                }
            }
        }
    }
    for entry in entries {
        if let Some(who) = by.remove(&entry.commit) {
            entry.who = who;
        }
    }
    Ok(())
}

/// Name on `entries` (conversation `id`'s log, newest first) who and what made the events
/// each added. `whole`: the entries go back to the conversation's first commit.
pub fn attribute(store: &Store, id: &str, entries: &mut [LogEntry], whole: bool) -> Result<(), StoreError> {
    if entries.is_empty() {
        return Ok(());
    }
    // A commit that says no count (an import's) is counted from its tree.
    let mut counts = Vec::with_capacity(entries.len());
    for entry in entries.iter() {
        counts.push(match entry.events {
            Some(n) => Some(n),
            None => Some(store.events_at(id, &entry.commit)?.len() as u64),
        });
    }
    crate::store::attribute(entries, &counts, &store.events(id)?, whole);
    Ok(())
}

/// Whether a log entry is `author`'s: by its commit's author, or by the person of an event
/// it added (once [`attribute`]d).
pub fn entry_by(entry: &LogEntry, author: &Author) -> bool {
    author.matches(&entry.author) || entry.who.people.iter().any(|p| author.matches(p))
}

/// The conversations of `summaries` that `author` recorded an event in or committed to.
pub fn conversations_by(store: &Store, summaries: Vec<Summary>, author: &Author) -> Result<Vec<Summary>, StoreError> {
    let mut kept = Vec::new();
    for summary in summaries {
        let by = store.events(&summary.id)?.iter().any(|e| author.matches_event(e))
            || store.log(&summary.id, None)?.iter().any(|e| author.matches(&e.author));
        if by {
            kept.push(summary);
        }
    }
    Ok(kept)
}
