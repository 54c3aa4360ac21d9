//! `status`: what a person asks first of a shared store, as `git status` answers it for a
//! repository. The active conversation; for each remote, the conversations with commits
//! this store has not pushed and those with remote commits not pulled, counted against the
//! remote-tracking ref the last fetch left (no network: the caller fetches first if asked);
//! the sessions hooks and `watch` follow, each with a capture that failed since it last
//! worked, and how far its file has grown since this machine last captured it (lags); the captures that failed; and a push the secret scan refused.
//!
//! Everything is read, nothing is written: the records of failures and refusals are the
//! caller's to mark as said.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::store::{FailedCapture, RefusedPush, Store, sessions};
use crate::sync::{self, SyncError};

/// How far a conversation stands from a remote's copy of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Behind {
    /// Commits of ours the remote lacks that changed it, and the event lines they add.
    pub unpushed_commits: usize,
    pub unpushed_events: usize,
    /// Commits of the remote's we lack that changed it, and the event lines they add.
    pub unpulled_commits: usize,
    pub unpulled_events: usize,
}

/// One remote, as last fetched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Remote {
    pub name: String,
    /// The remote's tip as the last fetch left it (hex), `None` when never fetched (or empty).
    pub fetched: Option<String>,
    /// The conversations that differ, by id.
    pub conversations: BTreeMap<String, Behind>,
    /// This store is a lazy clone of this remote: `fetched` names the catalog as last
    /// fetched, and the counts are events only, each conversation against its own fetch.
    pub lazy: bool,
}

/// A session a hook or `watch` follows into a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Followed {
    pub conversation: String,
    pub title: Option<String>,
    /// The agent's format (`claude-code`) and the session's id and file name, as recorded.
    pub format: Option<String>,
    pub session: String,
    pub file: Option<String>,
    /// The newest event captured (RFC 3339), the conversation's last update.
    pub updated: String,
    /// A capture of this session's file failed since it last worked: its error.
    pub failing: Option<String>,
    /// The file has grown by this many bytes since its last capture on this machine.
    pub behind_bytes: Option<u64>,
}

/// What `status` says (the default: a store not made yet).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Status {
    pub active: Option<String>,
    pub remotes: Vec<Remote>,
    pub followed: Vec<Followed>,
    pub failed_captures: Vec<FailedCapture>,
    pub refused_push: Option<RefusedPush>,
}

/// The store's status; see the module's doc.
pub fn status(store: &Store) -> Result<Status, SyncError> {
    let head = store.head()?;
    let mut remotes = Vec::new();
    let private = store.sharing()?.private;
    let lazy = sync::lazy::lazy_remote(store)?;
    for (name, _) in sync::remotes(store)? {
        if lazy.as_deref() == Some(name.as_str()) {
            // Its branch is no line of the hub's: each conversation stands against its fetch.
            let conversations = sync::lazy::standing(store, &name)?
                .into_iter()
                .map(|(id, s)| (id, Behind { unpushed_events: s.here, unpulled_events: s.there, ..Behind::default() }))
                .collect();
            let fetched = sync::remote_catalog(store, &name)?.map(|c| c.commit.to_string());
            remotes.push(Remote { name, fetched, conversations, lazy: true });
            continue;
        }
        let theirs = sync::remote_tip(store, &name)?;
        let mut conversations: BTreeMap<String, Behind> = BTreeMap::new();
        // The hub's tip is the line this store published (private conversations left out):
        // what it lacks is what HEAD gained since the commit it was published from, and
        // nothing of it is to pull.
        let published_from = match head {
            Some(ours) => sync::published_from(store, &name)?
                .filter(|from| *from == ours || store.merge_base(*from, ours) == Some(*from)),
            None => None,
        };
        if let (Some(ours), Some(from)) = (head, published_from) {
            for (id, moved) in store.moved_by_conversation(Some(from), ours)? {
                conversations.entry(id).or_default().unpushed_events = moved.events;
            }
            // Less the published line's own commits, which a pull merged in.
            let merged = match theirs {
                Some(theirs) if store.merge_base(theirs, ours) == Some(theirs) => {
                    store.commits_by_conversation(Some(from), theirs)?
                }
                _ => BTreeMap::new(),
            };
            for (id, commits) in store.commits_by_conversation(Some(from), ours)? {
                let commits = commits.saturating_sub(merged.get(&id).copied().unwrap_or(0));
                conversations.entry(id).or_default().unpushed_commits = commits;
            }
        } else if let Some(ours) = head
            && theirs != Some(ours)
        {
            let base = theirs.and_then(|t| store.merge_base(ours, t));
            for (id, moved) in store.moved_by_conversation(base, ours)? {
                conversations.entry(id).or_default().unpushed_events = moved.events;
            }
            for (id, commits) in store.commits_by_conversation(theirs, ours)? {
                conversations.entry(id).or_default().unpushed_commits = commits;
            }
        }
        if let Some(theirs) = theirs
            && head != Some(theirs)
            && published_from.is_none()
        {
            let base = head.and_then(|h| store.merge_base(h, theirs));
            for (id, moved) in store.moved_by_conversation(base, theirs)? {
                conversations.entry(id).or_default().unpulled_events = moved.events;
            }
            for (id, commits) in store.commits_by_conversation(head, theirs)? {
                conversations.entry(id).or_default().unpulled_commits = commits;
            }
        }
        // A private conversation is never pushed: not "not pushed" either.
        conversations.retain(|id, b| *b != Behind::default() && !private.contains(id));
        remotes.push(Remote { name, fetched: theirs.map(|t| t.to_string()), conversations, lazy: false });
    }
    let failed_captures = store.failed_captures()?;
    // Our own record of the files our hooks and `watch` captured: only their size is read.
    let behind: Vec<(String, u64)> = store
        .captured_files()?
        .into_iter()
        .filter_map(|c| {
            let now = std::fs::metadata(&c.path).ok().filter(|m| m.is_file())?.len();
            let name = std::path::Path::new(&c.path).file_name()?.to_string_lossy().into_owned();
            (now > c.size).then_some((name, now - c.size))
        })
        .collect();
    let mut followed = Vec::new();
    for summary in store.summaries()? {
        let meta = store.meta(&summary.id)?;
        let mut records: Vec<&Value> = meta.extra.get("source").into_iter().collect();
        if let Some(Value::Array(resumes)) = meta.extra.get("resumes") {
            records.extend(resumes);
        }
        for record in records.into_iter().filter(|r| !sessions::left(r)) {
            let Some(session) = record.get("session").and_then(Value::as_str) else { continue };
            let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
            let file = text("file");
            // A failure names the file's path; the record its name.
            let failing = failed_captures
                .iter()
                .rev()
                .find(|f| {
                    file.as_deref().is_some_and(|name| std::path::Path::new(&f.path).file_name() == Some(name.as_ref()))
                })
                .map(|f| f.error.clone());
            let behind_bytes = behind.iter().find(|(name, _)| Some(name) == file.as_ref()).map(|(_, n)| *n);
            followed.push(Followed {
                conversation: summary.id.clone(),
                title: summary.title.clone(),
                format: text("format"),
                session: session.to_owned(),
                file,
                updated: summary.updated.clone(),
                failing,
                behind_bytes,
            });
        }
    }
    Ok(Status { active: store.active()?, remotes, followed, failed_captures, refused_push: store.refused_push()? })
}
