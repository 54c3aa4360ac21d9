//! Which conversations a push leaves out (issue 43): those made private with `convo
//! private`, and those no one chose for that the hub does not have yet when
//! `share.default` keeps them back (`none`, or `project-with-remote` for a conversation
//! whose recorded project names no remote). A conversation the hub already has stays
//! shared until made private: a store keeps publishing what it published, whatever the
//! setting says later. The choices are local state (`store::sharing`); the setting is
//! the user's own (a `USER_ONLY_KEYS` key: a pulled `convo.toml` cannot publish what the
//! user keeps back).
//!
//! The default is decided at each push, not recorded at capture: every way a conversation
//! arrives (a capture, `watch`, an import, a fork, `new`) is covered by the one rule, and
//! a conversation captured before the setting changed and never pushed follows the new
//! setting.
//!
//! What came from a conversation kept back (a fork of it, a subagent's work in it) is kept
//! back with it, unless shared by name or on the hub already: a fork copies its events.

use std::collections::BTreeSet;

use crate::config::ShareDefault;
use crate::store::{Project, Store, StoreError};
use crate::sync::{self, SyncError, Withheld};

/// The conversations a push to `remote` leaves out, from the last fetch of it.
pub fn withheld(store: &Store, remote: &str, default: ShareDefault) -> Result<Withheld, SyncError> {
    let sharing = store.sharing()?;
    let mut withheld = sharing.private;
    if default == ShareDefault::All && withheld.is_empty() {
        return Ok(withheld);
    }
    let on_hub = match sync::remote_tip(store, remote)? {
        Some(tip) => store.conversations_at(tip)?,
        None => BTreeSet::new(),
    };
    let summaries = store.summaries()?;
    let undecided = |id: &str| !sharing.shared.contains(id) && !on_hub.contains(id);
    for summary in &summaries {
        let keep = match default {
            ShareDefault::All => false,
            ShareDefault::None => true,
            ShareDefault::ProjectWithRemote => !has_remote(&summary.project),
        };
        if keep && undecided(&summary.id) {
            withheld.insert(summary.id.clone());
        }
    }
    // A fork of a conversation kept back (`fork`, a pull's diverged line) and a subagent's
    // work in one hold its events or its story: kept back too, unless shared by name.
    loop {
        let more: Vec<String> = summaries
            .iter()
            .filter(|s| !withheld.contains(&s.id) && undecided(&s.id))
            .filter(|s| s.came_from().is_some_and(|from| withheld.contains(from)))
            .map(|s| s.id.clone())
            .collect();
        if more.is_empty() {
            break;
        }
        withheld.extend(more);
    }
    Ok(withheld)
}

/// Whether a recorded project names a remote (captures record the repository's remote URL).
fn has_remote(project: &Project) -> bool {
    project.remote.as_deref().is_some_and(|r| !r.trim().is_empty())
}

/// Keep the conversations `queries` name out of every push (`private`), or share them.
/// Every name is resolved before anything is written: one unknown name changes nothing.
/// The ids resolved, and of those the ones whose choice changed.
pub fn choose(store: &Store, queries: &[String], private: bool) -> Result<(Vec<String>, Vec<String>), StoreError> {
    let mut ids = Vec::new();
    for query in queries {
        let id = store.resolve(query)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let changed = store.choose_sharing(&ids, private)?;
    Ok((ids, changed))
}
