//! What a push sends as the hub's branch when conversations are kept private (issue 43):
//! the local branch, as every push did before, while nothing it would send names one of
//! them; otherwise the published line (`store::published`), one commit per push on the
//! hub's tip, its tree the hub's with the shared conversations put in.
//!
//! The published line needs the hub's tip merged here first, as a push of the branch does
//! (git refuses what is not a fast-forward): a published commit built on a tip holding a
//! teammate's events this store has not merged would drop them. The hub's tip is merged
//! when it is an ancestor of HEAD (after a pull), or when it is the commit this store
//! published last and HEAD descends from the commit it was published from: the two refs
//! `refs/convo/remotes/<remote>/published` and `…/published-from` (local, never pushed)
//! remember that, so two pushes in a row need no pull between them. Otherwise the push is
//! [`SyncError::Rejected`], as git's own refusal is: pull first.

use std::collections::BTreeSet;
use std::path::Path;

use gix::ObjectId;

use super::{Result, Stderr, SyncError, checked, remote_tip, tracking_tip};
use crate::store::{Outgoing, Quarantine, Store};

/// The ids of the conversations a push leaves out.
pub type Withheld = BTreeSet<String>;

/// What a push sends as the branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// HEAD, as it is.
    Head,
    /// A published line's new commit.
    Published(ObjectId),
    /// Nothing new: the hub's tip stays (the catalog and refs may still be published).
    Nothing(ObjectId),
    /// Nothing at all: the hub has no branch and nothing is shared.
    None,
}

fn published_ref(remote: &str) -> String {
    format!("refs/convo/remotes/{remote}/published")
}

fn from_ref(remote: &str) -> String {
    format!("refs/convo/remotes/{remote}/published-from")
}

/// The commit HEAD was at when this store last published to `remote` through the
/// published line, if the hub's tip (as last fetched) is still that publication.
pub fn published_from(store: &Store, remote: &str) -> Result<Option<ObjectId>> {
    let theirs = remote_tip(store, remote)?;
    let published = tracking_tip(store, &published_ref(remote));
    Ok(if theirs.is_some() && published == theirs { tracking_tip(store, &from_ref(remote)) } else { None })
}

/// `(published, from)`: the last commit this store published to `remote` through the
/// published line, and the commit HEAD was at then.
pub fn last_published(store: &Store, remote: &str) -> Option<(ObjectId, ObjectId)> {
    Some((tracking_tip(store, &published_ref(remote))?, tracking_tip(store, &from_ref(remote))?))
}

/// Whether the hub's tip as last fetched is merged into `head` (see the module doc).
pub fn hub_merged(store: &Store, remote: &str, head: ObjectId) -> Result<bool> {
    let theirs = remote_tip(store, remote)?;
    let descends = |from: ObjectId| from == head || store.merge_base(from, head) == Some(from);
    if theirs.is_none_or(descends) {
        return Ok(true);
    }
    let published = tracking_tip(store, &published_ref(remote));
    let from = tracking_tip(store, &from_ref(remote));
    Ok(published.is_some() && published == theirs && from.is_some_and(descends))
}

/// What a push of `head` to `remote` sends as its branch, leaving `withheld` out.
pub(super) fn choose(
    store: &Store,
    remote: &str,
    head: ObjectId,
    withheld: &Withheld,
    quarantine: &Path,
) -> Result<Sent> {
    if withheld.is_empty() && tracking_tip(store, &published_ref(remote)).is_none() {
        // Nothing kept back, ever published from here: the branch, at no extra cost.
        return Ok(Sent::Head);
    }
    let theirs = remote_tip(store, remote)?;
    let descends = |from: ObjectId| from == head || store.merge_base(from, head) == Some(from);
    if !theirs.is_none_or(descends) {
        if !hub_merged(store, remote, head)? {
            if store.history_holds(theirs, withheld)? {
                return Err(SyncError::Rejected { remote: remote.to_owned() });
            }
            // git refuses it (not a fast-forward) unless forced, as before.
            return Ok(Sent::Head);
        }
    } else if !store.history_holds(theirs, withheld)? {
        return Ok(Sent::Head);
    }
    Ok(match (store.published_commit(head, theirs, withheld, quarantine)?, theirs) {
        (Some(commit), _) => Sent::Published(commit),
        (None, Some(theirs)) => Sent::Nothing(theirs),
        (None, None) => Sent::None,
    })
}

/// `item`, if a push withholding `withheld` sends it: no file of a withheld conversation,
/// and commit messages only when the branch itself is sent (`messages`).
pub(super) fn sent(item: Outgoing, withheld: &Withheld, messages: bool) -> Option<Outgoing> {
    match &item {
        Outgoing::Message { .. } if !messages => None,
        Outgoing::File { path, .. }
            if crate::store::layout::split_conversation_path(path).is_some_and(|(id, _)| withheld.contains(id)) =>
        {
            None
        }
        _ => Some(item),
    }
}

/// After a push of published `commit` (made from `head`): its objects copied in from the
/// quarantine, synced, then the refs naming it (git's push moved the remote-tracking one
/// already) and what it was published from.
pub(super) fn keep(
    store: &Store,
    remote: &str,
    quarantine: &Quarantine,
    commit: ObjectId,
    head: ObjectId,
) -> Result<()> {
    let hex = commit.to_string();
    store.promote(quarantine)?;
    let tracking = format!("refs/remotes/{remote}/{}", super::branch(store)?);
    for (name, hex) in [(tracking, hex.clone()), (published_ref(remote), hex), (from_ref(remote), head.to_string())] {
        checked(store.root(), &["update-ref", "-m", "push: published", &name, &hex], Stderr::Capture, "push")?;
        store.sync_ref_written_by_git(&name)?;
    }
    Ok(())
}
