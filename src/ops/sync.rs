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
//!
//! `push` and `pull` here are the transport's with what moved counted the same way, and a
//! push the secret scan refuses is recorded in the store (`Store::push_refused`) so `status`
//! and the next command at a terminal say it: a hook's `sync` is read by no one. A dry run
//! ([`plan`]) reads the remote's tip from the last fetch and writes nothing, here or there.

use crate::clock::Clock;
use crate::config::ShareDefault;
use std::collections::BTreeMap;

use gix::ObjectId;

use crate::store::{ConversationMoved, Integrated, Moved, RefusedPush, Store};
use crate::sync::{self, Finding, Pushed, SyncError};

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
    /// `share.default`: what is published of the conversations no one chose for.
    pub share: ShareDefault,
}

/// What a push did: whether the remote's branch moved, and what it gained.
#[derive(Debug)]
pub struct PushReport {
    pub pushed: Pushed,
    pub outgoing: Moved,
}

/// Push to `remote` (see [`sync::push`]), counting what went out from the last fetch's tip
/// of the remote; a refusal by the secret scan is recorded as made `by` (`push`), a push
/// that went through clears it.
// The push's own flags, who asked and the sharing default: each a caller's choice.
#[allow(clippy::too_many_arguments)]
pub fn push(
    store: &Store,
    remote: &str,
    force_with_lease: bool,
    allow_secrets: bool,
    progress: bool,
    by: &str,
    share: ShareDefault,
    clock: &Clock,
) -> Result<PushReport, SyncError> {
    let theirs = sync::remote_tip(store, remote)?;
    let withheld = super::share::withheld(store, remote, share)?;
    if sync::lazy::lazy_remote(store)?.is_some() {
        // A lazy store publishes its own commit on the hub's tip: what went out is what it
        // counted, not a distance between two of its commits.
        let pushed = sync::lazy::push(store, remote, allow_secrets, progress, &withheld);
        let pushed = recorded(store, remote, by, clock, pushed)?;
        return Ok(PushReport { pushed: pushed.pushed, outgoing: pushed.moved });
    }
    let pushed = recorded(
        store,
        remote,
        by,
        clock,
        sync::push(store, remote, force_with_lease, allow_secrets, progress, &withheld),
    )?;
    // Counted on what the remote now has: HEAD, or the published line's commit.
    let outgoing = match (pushed, sync::remote_tip(store, remote)?) {
        (Pushed::Updated, Some(ours)) => store.moved(theirs, ours)?,
        _ => Moved::default(),
    };
    Ok(PushReport { pushed, outgoing })
}

/// `result`, a push's, with a refusal by the secret scan recorded and a success clearing
/// the record. A failure to record is not the push's failure: the refusal itself is said.
fn recorded<T>(
    store: &Store,
    remote: &str,
    by: &str,
    clock: &Clock,
    result: Result<T, SyncError>,
) -> Result<T, SyncError> {
    match &result {
        Ok(_) => {
            let _ = store.push_worked();
        }
        Err(SyncError::Secrets { secrets, findings }) => {
            let _ = store.push_refused(&RefusedPush {
                at: clock.timestamp(),
                by: by.to_owned(),
                remote: remote.to_owned(),
                secrets: *secrets,
                places: findings.iter().map(|f| format!("{}: {}", f.place, f.kind)).collect(),
                told: false,
            });
        }
        Err(_) => {}
    }
    result
}

/// What a pull did, and what the remote's line brought.
#[derive(Debug)]
pub struct PullReport {
    pub integrated: Integrated,
    pub incoming: Moved,
}

/// Pull `remote` (see [`sync::pull`]), counting what its line holds beyond where it and
/// ours last met.
pub fn pull(store: &Store, remote: &str, progress: bool, clock: &Clock) -> Result<PullReport, SyncError> {
    let before = store.head()?;
    let integrated = sync::pull(store, remote, progress, clock)?;
    let incoming = match sync::remote_tip(store, remote)? {
        Some(theirs) => incoming(store, remote, before, theirs)?,
        None => Moved::default(),
    };
    Ok(PullReport { integrated, incoming })
}

/// What `theirs` holds beyond where it and `ours` last met.
/// Counted from the last commit this store published (see `sync::publish`) when the
/// remote's line goes on from it: what this store sent is not what it brings in.
fn incoming(store: &Store, remote: &str, ours: Option<ObjectId>, theirs: ObjectId) -> Result<Moved, SyncError> {
    let mut base = ours.and_then(|ours| store.merge_base(ours, theirs));
    let descends = |from: ObjectId, to: ObjectId| from == to || store.merge_base(from, to) == Some(from);
    if let (Some(ours), Some((published, from))) = (ours, sync::last_published(store, remote))
        && descends(published, theirs)
        && descends(from, ours)
    {
        base = Some(published);
    }
    Ok(store.moved(base, theirs)?)
}

/// What a push (or a sync) would do, from the last fetch of the remote: nothing is fetched,
/// sent or written.
#[derive(Debug)]
pub struct Plan {
    /// The remote's tip as last fetched (`None`: never fetched, or the remote had none).
    pub theirs: Option<ObjectId>,
    /// What the push would send, conversation by conversation.
    pub outgoing: BTreeMap<String, ConversationMoved>,
    /// What the remote's line holds beyond ours: a push would be rejected until pulled.
    pub incoming: Moved,
    /// What the secret scan finds in what would be sent, and how many distinct secrets.
    pub findings: Vec<Finding>,
    pub secrets: usize,
    /// The conversations kept private (left out), each with whether the hub has it already
    /// (then it stays there as it was, no longer updated).
    pub private: Vec<(String, bool)>,
}

/// What a push to `remote` would send, and what the secret scan would refuse, from the
/// last fetch's tip of the remote.
pub fn plan(store: &Store, remote: &str, share: ShareDefault) -> Result<Plan, SyncError> {
    if !sync::remotes(store)?.iter().any(|(name, _)| name == remote) {
        return Err(SyncError::UnknownRemote(remote.to_owned()));
    }
    if sync::lazy::lazy_remote(store)?.is_some() {
        return lazy_plan(store, remote, share);
    }
    let theirs = sync::remote_tip(store, remote)?;
    let Some(ours) = store.head()? else {
        return Ok(Plan {
            theirs,
            outgoing: BTreeMap::new(),
            incoming: Moved::default(),
            findings: Vec::new(),
            secrets: 0,
            private: Vec::new(),
        });
    };
    let withheld = super::share::withheld(store, remote, share)?;
    // With conversations left out, what goes is the difference of the trees (the published
    // line puts ours into the hub's), not of the histories.
    let base = match withheld.is_empty() {
        true => theirs.and_then(|theirs| store.merge_base(ours, theirs)),
        false => theirs,
    };
    let mut outgoing = if theirs == Some(ours) { BTreeMap::new() } else { store.moved_by_conversation(base, ours)? };
    outgoing.retain(|id, _| !withheld.contains(id));
    let incoming = match theirs {
        Some(theirs) if !sync::hub_merged(store, remote, ours)? => incoming(store, remote, Some(ours), theirs)?,
        _ => Moved::default(),
    };
    let messages = !store.history_holds(theirs, &withheld)?;
    let findings = sync::scan_withholding(store, remote, &withheld, messages)?;
    let secrets = match findings.is_empty() {
        true => 0,
        false => sync::secret_texts_withholding(store, remote, &withheld, messages)?.len().max(1),
    };
    let on_hub = match theirs {
        Some(theirs) => store.conversations_at(theirs)?,
        None => Default::default(),
    };
    let here = store.conversations_at(ours)?;
    let private = withheld.iter().filter(|id| here.contains(*id)).map(|id| (id.clone(), on_hub.contains(id))).collect();
    Ok(Plan { theirs, outgoing, incoming, findings, secrets, private })
}

/// [`plan`] in a lazy store: from the catalog as last fetched, what its push would send
/// (`sync::lazy::outgoing`), and as incoming the events the catalog lists beyond what was
/// fetched of the conversations changed on both sides.
fn lazy_plan(store: &Store, remote: &str, share: ShareDefault) -> Result<Plan, SyncError> {
    let withheld = super::share::withheld(store, remote, share)?;
    let catalog = sync::remote_catalog(store, remote)?;
    let empty = || Plan {
        theirs: None,
        outgoing: BTreeMap::new(),
        incoming: Moved::default(),
        findings: Vec::new(),
        secrets: 0,
        private: Vec::new(),
    };
    let Some(catalog) = catalog else { return Ok(empty()) };
    let lazy = sync::lazy::outgoing(store, remote, &catalog, &withheld)?;
    let mut plan = Plan { theirs: catalog.branch, ..empty() };
    for put in &lazy.puts {
        let moved = store.lazy_moved(std::slice::from_ref(put))?;
        plan.outgoing.insert(put.id.clone(), ConversationMoved { new: moved.new > 0, events: moved.events });
    }
    let standing = sync::lazy::standing(store, remote)?;
    for id in &lazy.diverged {
        plan.incoming.conversations += 1;
        plan.incoming.events += standing.get(id).map_or(0, |s| s.there);
    }
    (plan.findings, plan.secrets) = sync::lazy::scan(store, &lazy.puts)?;
    let here = store.conversation_ids()?;
    plan.private = withheld
        .iter()
        .filter(|id| here.contains(*id))
        .map(|id| (id.clone(), catalog.lines.contains_key(id)))
        .collect();
    Ok(plan)
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
        let withheld = super::share::withheld(store, remote, options.share)?;
        // Before the push, which moves what this store last published.
        let brought = match theirs {
            Some(theirs) => incoming(store, remote, before, theirs)?,
            None => Moved::default(),
        };
        let Some(_) = store.head().map_err(SyncError::from)? else {
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
        match recorded(
            store,
            remote,
            "sync",
            clock,
            sync::push(store, remote, false, options.allow_secrets, options.progress, &withheld),
        ) {
            Ok(pushed) => {
                let incoming = brought;
                let outgoing = match (pushed, sync::remote_tip(store, remote)?) {
                    (Pushed::Updated, Some(ours)) => store.moved(theirs, ours).map_err(SyncError::from)?,
                    _ => Moved::default(),
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
