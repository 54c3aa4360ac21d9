//! A lazy store's side of fetching one conversation from a hub (issue 43, see
//! [`hub`](super::hub) and `sync::lazy`): checking the snapshot a conversation's ref named,
//! folding it into the local branch, and listing what the catalog names without events.
//!
//! A snapshot is checked as a pull's tip is ([`Store::check_incoming`]: only paths convo
//! writes), and more: its tree must hold the one conversation the catalog line names, at
//! its own path, and nothing else, and that conversation's folder must be the tree the
//! catalog line names. A hub that names one conversation and sends another (or two, or a
//! `convo.toml` beside it) is refused before anything reaches the store's refs.

use gix::ObjectId;

use super::history::Trailers;
use super::hub::CatalogLine;
use super::txn::Change;
use super::{Result, Store, StoreError, Summary, layout, subject};
use crate::clock::Clock;

impl Store {
    /// The folder tree of conversation `line.id` in snapshot `commit`, fetched into
    /// `quarantine`, once checked (see the module docs).
    pub fn check_snapshot(
        &self,
        quarantine: &std::path::Path,
        commit: ObjectId,
        line: &CatalogLine,
    ) -> Result<ObjectId> {
        let scratch = self.scratch(quarantine)?;
        let refuse = |path: &str, reason: String| StoreError::RefusedConversation {
            id: line.id.clone(),
            commit: commit.to_hex_with_len(7).to_string(),
            what: format!("{path}: {reason}"),
        };
        let fan = layout::fan(&line.id);
        let mut at = scratch.commit_tree_id(commit)?;
        let mut path = String::new();
        for want in [layout::CONVERSATIONS, fan, line.id.as_str()] {
            let here = |name: &str| if path.is_empty() { name.to_owned() } else { format!("{path}/{name}") };
            let entries = scratch.tree_entries(at)?;
            match entries.as_slice() {
                [(name, id, true)] if name == want => at = *id,
                [(name, _, _)] => {
                    return Err(refuse(&here(name), "not the conversation the ref is named after".into()));
                }
                [] => return Err(refuse(&here(want), "missing".into())),
                _ => {
                    let other = entries.iter().find(|(name, _, _)| name != want).map_or(want, |(n, _, _)| n.as_str());
                    return Err(refuse(&here(other), "more than the one conversation".into()));
                }
            }
            path = here(want);
        }
        if ObjectId::from_hex(line.tree.as_bytes()).ok() != Some(at) {
            return Err(refuse(&path, "not the conversation the hub's catalog lists".into()));
        }
        // And inside its folder, only what convo writes there.
        scratch.check_incoming(commit, None)?;
        Ok(at)
    }

    /// Put conversation `id`, whose folder is `tree` (its objects in this store), on HEAD's
    /// branch in one commit: fetched from `remote`.
    pub fn fold_in(&self, id: &str, tree: ObjectId, remote: &str, clock: &Clock) -> Result<ObjectId> {
        let mut tx = self.transaction()?;
        let dir = layout::conversation_dir(id);
        let mut blobs = std::collections::HashMap::new();
        self.collect_blobs(tree, &dir, &mut blobs)?;
        // The conversation's files HEAD holds now and the snapshot does not (an older
        // snapshot's, or a legacy place) go.
        let mut old = std::collections::HashMap::new();
        if let Some(root) = self.head_tree_id()?
            && let Some(current) = self.entry_at(root, &dir)?
        {
            self.collect_blobs(current, &dir, &mut old)?;
        }
        let mut changes: Vec<Change> = Vec::new();
        for path in old.keys().filter(|p| !blobs.contains_key(*p)) {
            changes.push(Change { path: path.clone(), ..Change::default() });
        }
        let mut blobs: Vec<(String, ObjectId)> = blobs.into_iter().collect();
        blobs.sort();
        for (path, blob) in blobs {
            if old.get(&path) != Some(&blob) {
                changes.push(Change { path, blob: Some(blob), ..Change::default() });
            }
        }
        let title = self.entry_at(tree, layout::META_FILE).ok().flatten().and_then(|blob| {
            let data = self.read_blob(blob).ok()?;
            serde_json::from_slice::<super::Meta>(&data).ok()?.title
        });
        let subject = format!("Fetch {} from {remote}", subject::name(id, title.as_deref()));
        let trailers = Trailers { convo_id: Some(id.to_owned()), ..Default::default() };
        tx.changes(changes).changes_catalogue();
        Ok(tx.commit(&subject, &trailers, clock)?.commit)
    }

    /// The folder tree of conversation `id` in snapshot `commit` (one this store kept).
    pub fn snapshot_tree(&self, commit: ObjectId, id: &str) -> Result<Option<ObjectId>> {
        self.entry_at(self.commit_tree_id(commit)?, &layout::conversation_dir(id))
    }

    /// The value of `key` in the repository's own `.git/config` (not the user's or the
    /// system's) as it was when the store was opened: read in-process, since every read
    /// command of every store asks whether it is lazy.
    pub fn local_config_string(&self, key: &str) -> Option<String> {
        let snapshot = self.repo.config_snapshot();
        let local = |meta: &gix::config::file::Metadata| meta.source == gix::config::Source::Local;
        snapshot.plumbing().string_filter(key, local).map(|v| v.to_string()).filter(|v| !v.is_empty())
    }

    /// The tree of conversation `id` at HEAD, if it is there.
    pub fn conversation_tree(&self, id: &str) -> Result<Option<ObjectId>> {
        match self.head_tree_id()? {
            Some(root) => self.entry_at(root, &layout::conversation_dir(id)),
            None => Ok(None),
        }
    }
}

/// What `list` shows of a conversation a lazy store knows from the catalog only.
pub fn catalog_summary(line: &CatalogLine) -> Summary {
    // Bytes of its segments stand for the characters its events hold: the catalog has no
    // count of those, and the list's token column is an estimate either way.
    let stats = crate::event::Stats { turns: line.turns, events: line.events, chars: line.bytes };
    Summary {
        id: line.id.clone(),
        title: line.title.clone(),
        created: line.created.clone(),
        updated: line.updated.clone(),
        tokens: stats.tokens(),
        stats,
        subagent_of: None,
        forked_from: None,
        project: line.project.clone(),
        // The catalog names one person and one agent (the hub's summary of who took part).
        who: crate::event::who::Who {
            people: line.person.iter().cloned().collect(),
            agents: line.agent.iter().cloned().collect(),
            models: Vec::new(),
        },
    }
}
