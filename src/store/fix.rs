//! Fixing mistakes without breaking append-only: a new title (`rename`), a conversation taken
//! out of the tree (`remove`) and brought back (`restore`). Each is one ordinary commit, so it
//! travels through push and pull like an append, and nothing is ever deleted from history:
//! a removed conversation's folder is still in every earlier commit, which is where
//! `restore` finds it.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;

use super::history::Trailers;
use super::transaction::Transaction;
use super::txn::{Change, Landed};
use super::{Result, Store, StoreError, layout, subject};
use crate::clock::Clock;

/// One commit made by [`Store::rename`], [`Store::remove`] or [`Store::restore`].
#[derive(Debug, Clone)]
pub struct Fixed {
    pub commit: ObjectId,
    pub subject: String,
    pub landed: Landed,
}

/// What [`Store::rename`] committed, and what the new title means for naming.
#[derive(Debug, Clone)]
pub struct Renamed {
    pub fixed: Fixed,
    /// The title before.
    pub old: Option<String>,
    /// The other conversations with the new title, oldest first: while there are any, the
    /// title names none of them.
    pub namesakes: Vec<String>,
}

/// A conversation that is in history but not at HEAD: what `restore` can bring back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    pub id: String,
    pub title: Option<String>,
    /// The newest commit whose tree still holds it.
    pub last_seen: ObjectId,
}

impl Store {
    /// Give conversation `id` a new title: its `meta.json` rewritten (every other field kept),
    /// one commit. Returns `None` when it already has that title (nothing to do). Another
    /// conversation with the same title does not stop it: titles are not unique, they only
    /// stop naming a conversation while they are shared.
    pub fn rename(&self, mut tx: Transaction<'_>, id: &str, title: &str, clock: &Clock) -> Result<Option<Renamed>> {
        if title.trim().is_empty() {
            return Err(StoreError::EmptyTitle);
        }
        let mut meta = self.meta(id)?;
        let old = meta.title.clone();
        if old.as_deref() == Some(title) {
            return Ok(None);
        }
        let namesakes: Vec<String> = self.titled(title)?.into_iter().filter(|other| other != id).collect();
        meta.title = Some(title.to_owned());
        let before = self.cached_stats(id)?;
        let previous = self.last_commit_of(id)?;
        let subject = subject::rename(&subject::name(id, old.as_deref()), &subject::name(id, Some(title)));
        let trailers = Trailers {
            convo_id: Some(id.to_owned()),
            previous,
            turns: Some(before.stats.turns),
            events: Some(before.stats.events),
            tokens: Some(before.stats.tokens()),
            ..Default::default()
        };
        // Only meta.json changed: the counts still hold, under the conversation's new tree.
        tx.change(super::write::meta_change(id, &meta)?).wrote_conversation(
            id,
            before.stats,
            before.updated,
            before.who,
            previous,
        );
        let committed = tx.commit(&subject, &trailers, clock)?;
        let fixed = Fixed { commit: committed.commit, subject, landed: committed.landed };
        Ok(Some(Renamed { fixed, old, namesakes }))
    }

    /// Take conversations `ids` (resolved, at HEAD) out of the tree in one commit. Their
    /// history stays; [`Store::restore`] brings one back. The active conversation pointer is
    /// cleared when it named one of them, so it never points at nothing.
    pub fn remove(&self, mut tx: Transaction<'_>, ids: &[String], clock: &Clock) -> Result<Fixed> {
        let root = self.head_tree_id()?.ok_or(StoreError::Empty)?;
        let mut changes = Vec::new();
        let mut names = Vec::new();
        let mut seen = HashSet::new();
        for id in ids.iter().filter(|id| seen.insert(id.as_str())) {
            let dir = layout::conversation_dir(id);
            let tree = self
                .entry_at(root, &dir)?
                .ok_or_else(|| StoreError::UnknownConversation { query: id.clone(), candidates: Vec::new() })?;
            let mut blobs = HashMap::new();
            self.collect_blobs(tree, &dir, &mut blobs)?;
            let mut paths: Vec<String> = blobs.into_keys().collect();
            paths.sort();
            changes.extend(paths.into_iter().map(|path| Change {
                path,
                bytes: None,
                append_from: None,
                ..Change::default()
            }));
            names.push(subject::name(id, self.meta(id)?.title.as_deref()));
        }
        let subject = subject::remove(&names);
        // One conversation: its trailers chain the removal into its `log`, so after a
        // restore the log shows when it was gone.
        let single = (seen.len() == 1).then(|| ids[0].clone());
        let previous = match &single {
            Some(id) => self.last_commit_of(id)?,
            None => None,
        };
        let trailers = Trailers { convo_id: single.clone(), previous, ..Default::default() };
        tx.changes(changes);
        if let Some(id) = &single {
            tx.continues_log(id, previous);
        }
        for id in &seen {
            tx.removes_conversation(id);
        }
        tx.changes_catalogue();
        let committed = tx.commit(&subject, &trailers, clock)?;
        if let Some(active) = self.active()?
            && seen.contains(active.as_str())
        {
            self.clear_active()?;
        }
        Ok(Fixed { commit: committed.commit, subject, landed: committed.landed })
    }

    /// Conversations in history that HEAD no longer holds, newest removal first: each with
    /// the newest commit that still had it. The first-parent line (this store's own view, a
    /// fast-forwarded remote's included) is searched first, so a version that arrived only
    /// on a merge's other side (a remote's rewrite this store kept out) is never preferred
    /// to ours; then every other commit reachable from HEAD. A `conversations/` tree seen
    /// once is not read again.
    pub fn removed(&self) -> Result<Vec<Removed>> {
        let Some(head) = self.head_commit_id()? else { return Ok(Vec::new()) };
        let present: HashSet<String> = self.conversation_ids()?.into_iter().collect();
        let mut commits = Vec::new();
        let mut next = Some(head);
        while let Some(commit) = next {
            commits.push(commit);
            let object = self.repo.find_commit(commit).map_err(super::git_err(format!("read commit {commit}")))?;
            next = object.parent_ids().next().map(|p| p.detach());
        }
        let walk = self
            .repo
            .rev_walk([head])
            .sorting(gix::revision::walk::Sorting::ByCommitTime(Default::default()))
            .all()
            .map_err(super::git_err("walk history"))?;
        for info in walk {
            commits.push(info.map_err(super::git_err("walk history"))?.id);
        }
        let mut found: Vec<Removed> = Vec::new();
        let mut known: HashSet<String> = HashSet::new();
        let mut trees_seen = HashSet::new();
        for commit in commits {
            let root = self.commit_tree_id(commit)?;
            let Some(dir) = self.entry_at(root, layout::CONVERSATIONS)? else { continue };
            if !trees_seen.insert(dir) {
                continue;
            }
            for (id, _) in self.conversations_in(dir)? {
                if present.contains(&id) || !known.insert(id.clone()) {
                    continue;
                }
                let title = match self.entry_at(root, &layout::meta_path(&id))? {
                    Some(blob) => super::parse_meta(&layout::meta_path(&id), &self.read_blob(blob)?)?.title,
                    None => None,
                };
                found.push(Removed { id, title, last_seen: commit });
            }
        }
        Ok(found)
    }

    /// The removed conversation `query` names (a full id, a unique prefix, or an exact title,
    /// as [`Store::resolve`] takes them). One that is still at HEAD is refused.
    pub fn resolve_removed(&self, query: &str) -> Result<Removed> {
        if self.conversation_ids()?.iter().any(|id| id == query) {
            return Err(StoreError::NotRemoved { id: query.to_owned() });
        }
        let removed = self.removed()?;
        let upper = query.to_ascii_uppercase();
        let mut matches: Vec<&Removed> =
            removed.iter().filter(|r| !upper.is_empty() && r.id.starts_with(&upper)).collect();
        if matches.is_empty() {
            matches = removed.iter().filter(|r| r.title.as_deref() == Some(query)).collect();
        }
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(StoreError::NoRemoved { query: query.to_owned() }),
            many => Err(StoreError::AmbiguousRemoved {
                query: query.to_owned(),
                ids: many.iter().map(|r| r.id.clone()).collect(),
            }),
        }
    }

    /// Put a removed conversation back as it was in the newest commit that had it, one
    /// commit. Its files are that commit's blobs, so git stores nothing new for them.
    pub fn restore(&self, mut tx: Transaction<'_>, removed: &Removed, clock: &Clock) -> Result<Fixed> {
        let id = &removed.id;
        let dir = layout::conversation_dir(id);
        if self.conversation_ids()?.contains(id) {
            return Err(StoreError::NotRemoved { id: id.clone() });
        }
        let tree = self
            .entry_at(self.commit_tree_id(removed.last_seen)?, &dir)?
            .ok_or_else(|| StoreError::NoRemoved { query: id.clone() })?;
        let mut blobs = HashMap::new();
        self.collect_blobs(tree, &dir, &mut blobs)?;
        let mut blobs: Vec<(String, ObjectId)> = blobs.into_iter().collect();
        blobs.sort();
        let mut changes = Vec::with_capacity(blobs.len());
        for (path, blob) in blobs {
            changes.push(Change { path, bytes: Some(self.read_blob(blob)?), append_from: None, ..Change::default() });
        }
        let short = removed.last_seen.to_hex_with_len(7).to_string();
        let subject = subject::restore(&subject::name(id, removed.title.as_deref()), &short);
        let stats = crate::event::Stats::of(&self.events_in(self.commit_tree_id(removed.last_seen)?, id)?);
        // The chain continues from the removal (the newest commit naming this conversation).
        let previous = self.newest_naming(id)?;
        let trailers = Trailers {
            convo_id: Some(id.clone()),
            previous,
            turns: Some(stats.turns),
            events: Some(stats.events),
            tokens: Some(stats.tokens()),
            ..Default::default()
        };
        tx.changes(changes).continues_log(id, previous).changes_catalogue();
        let committed = tx.commit(&subject, &trailers, clock)?;
        Ok(Fixed { commit: committed.commit, subject, landed: committed.landed })
    }

    /// The newest first-parent commit whose `Convo-Id` trailer names `id` (its removal, when
    /// convo removed it), for the trailer chain of a restore.
    fn newest_naming(&self, id: &str) -> Result<Option<ObjectId>> {
        let mut next = self.head_commit_id()?;
        while let Some(commit) = next {
            let object = self.repo.find_commit(commit).map_err(super::git_err(format!("read commit {commit}")))?;
            let message = String::from_utf8_lossy(object.message_raw_sloppy()).into_owned();
            if Trailers::parse(&message).convo_id.as_deref() == Some(id) {
                return Ok(Some(commit));
            }
            next = object.parent_ids().next().map(|p| p.detach());
        }
        Ok(None)
    }

    fn clear_active(&self) -> Result<()> {
        let path = self.state_dir().join("active");
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(super::io_err(path)(e)),
            _ => Ok(()),
        }
    }
}
