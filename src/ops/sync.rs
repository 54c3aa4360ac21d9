//! `sync`: pull, then push, for what a cron job or an agent's hook runs to keep a machine in
//! step with a hub. Between our fetch and our push someone else may push: git then rejects
//! ours as not a fast-forward, and the answer is what a person would do, pull again and
//! push again. That is bounded: a remote that moves every time (or a loop of two syncing
//! machines that never settles) ends in [`SyncFailed::KeptMoving`], with everything pulled
//! so far kept. A remote that turns the push down itself (a hook, permissions) is not a race
//! and is not retried.
//!
//! What moved is counted from the commits (`Store::moved`), not from the reports of each
//! pull: incoming is what the remote's line holds beyond where it and ours last met,
//! outgoing what our pushed tip holds beyond the remote's, so several attempts still add up
//! to one answer.

use crate::clock::Clock;
use crate::store::{Integrated, Moved, Store};
use crate::sync::{self, Pushed, SyncError};

/// Pushes tried before [`SyncFailed::KeptMoving`], when none is given.
pub const ATTEMPTS: usize = 3;

/// How to sync.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Push even if the secret scan finds something (as `push --allow-secrets`).
    pub allow_secrets: bool,
    /// Let git show its progress on stderr.
    pub progress: bool,
    /// Pushes tried in all (at least one).
    pub attempts: usize,
}

/// What a sync did.
#[derive(Debug)]
pub struct Synced {
    /// Each pull's report, in order: what it merged, forked, removed or kept.
    pub pulls: Vec<Integrated>,
    /// What the remote's line brought that this store did not have.
    pub incoming: Moved,
    /// What the push sent that the remote did not have (nothing when it was up to date).
    pub outgoing: Moved,
    pub pushed: Pushed,
    /// Pushes tried: more than one when someone pushed in between, none when neither side
    /// had a commit.
    pub attempts: usize,
}

impl Synced {
    /// Whether nothing moved either way: every pull found the store up to date and the
    /// remote already had everything.
    pub fn nothing_moved(&self) -> bool {
        self.pulls.iter().all(|p| matches!(p, Integrated::UpToDate)) && self.pushed == Pushed::UpToDate
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SyncFailed {
    /// A pull or push failed; see [`SyncError`]. What an earlier pull brought is kept.
    #[error(transparent)]
    Sync(#[from] SyncError),
    /// Every push was rejected because the remote had moved since the pull before it.
    #[error("the remote `{remote}` refused the push {attempts} times: someone pushed to it after each of our pulls")]
    KeptMoving {
        remote: String,
        attempts: usize,
        #[source]
        last: SyncError,
    },
}

/// Pull `remote` into the store, then push to it; a push rejected because the remote moved
/// meanwhile is retried after another pull, `options.attempts` pushes in all.
pub fn sync(store: &Store, remote: &str, options: Options, clock: &Clock) -> Result<Synced, SyncFailed> {
    let before = store.head().map_err(SyncError::from)?;
    let mut pulls = Vec::new();
    let attempts = options.attempts.max(1);
    let mut attempt = 0;
    loop {
        attempt += 1;
        pulls.push(sync::pull(store, remote, options.progress, clock)?);
        let theirs = sync::remote_tip(store, remote)?;
        let Some(ours) = store.head().map_err(SyncError::from)? else {
            // No commit on either side (a new store and an empty hub): nothing to push, and
            // git would fail to push a HEAD that names no commit.
            return Ok(Synced {
                pulls,
                incoming: Moved::default(),
                outgoing: Moved::default(),
                pushed: Pushed::UpToDate,
                attempts: 0,
            });
        };
        match sync::push(store, remote, false, options.allow_secrets, options.progress) {
            Ok(pushed) => {
                let incoming = match theirs {
                    Some(theirs) => {
                        let base = before.and_then(|before| store.merge_base(before, theirs));
                        store.moved(base, theirs).map_err(SyncError::from)?
                    }
                    None => Moved::default(),
                };
                let outgoing = match pushed {
                    Pushed::Updated => store.moved(theirs, ours).map_err(SyncError::from)?,
                    Pushed::UpToDate => Moved::default(),
                };
                return Ok(Synced { pulls, incoming, outgoing, pushed, attempts: attempt });
            }
            // Someone pushed after our pull: bring it in and try again.
            Err(SyncError::Rejected { .. }) if attempt < attempts => {}
            Err(last @ SyncError::Rejected { .. }) => {
                return Err(SyncFailed::KeptMoving { remote: remote.to_owned(), attempts, last });
            }
            Err(e) => return Err(e.into()),
        }
    }
}
