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
use super::merge::Integrated;
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

/// One conversation a lazy store's push publishes: its folder here, and the folder the hub
/// has (the snapshot this store fetched, which the hub's catalog still lists), if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LazyPut {
    pub id: String,
    pub tree: ObjectId,
    pub hub: Option<ObjectId>,
}

/// A tree of `entries` (`name`, subtree), in git's order: every name here (fans, ids) has
/// the same length within a tree, so byte order is git's.
fn folder_tree(entries: &[(&str, ObjectId)]) -> gix::objs::Tree {
    let mut entries: Vec<gix::objs::tree::Entry> = entries
        .iter()
        .map(|(name, oid)| gix::objs::tree::Entry {
            mode: gix::objs::tree::EntryKind::Tree.into(),
            filename: (*name).into(),
            oid: *oid,
        })
        .collect();
    entries.sort_by(|a, b| a.filename.cmp(&b.filename));
    gix::objs::Tree { entries }
}

impl Store {
    /// The hub's branch tip as `catalog` describes it, made present in `quarantine` without
    /// fetching the branch: the commit and its root tree from the catalog's byte-for-byte
    /// copies, the `conversations` folder and the fan folders of `fans` rebuilt from the
    /// catalog's lines. Every object is checked against the id naming it (the commit
    /// against `Convo-Branch`, the root tree against the commit, the rebuilt folder against
    /// the root tree), so a catalog that does not describe its branch is refused. The
    /// other conversations' objects stay on the hub: a push's walk marks them as the hub's
    /// without reading them, and the commit is shallow here (its parents are not).
    pub fn hub_tip(
        &self,
        catalog: &super::hub::Catalog,
        fans: &std::collections::BTreeSet<String>,
        quarantine: &std::path::Path,
    ) -> Result<ObjectId> {
        let refuse = |path: &str, reason: &str| StoreError::Refused {
            commit: catalog.commit.to_hex_with_len(7).to_string(),
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
        let (Some(branch), Some(files)) = (catalog.branch, catalog.branch_files) else {
            return Err(StoreError::CatalogWithoutBranch { commit: catalog.commit.to_hex_with_len(7).to_string() });
        };
        let hash = self.repo.object_hash();
        let commit = self.read_blob(files.commit)?;
        let tree = self.read_blob(files.tree)?;
        let hashed = |kind, data: &[u8]| gix::objs::compute_hash(hash, kind, data).ok();
        if hashed(gix::objs::Kind::Commit, &commit) != Some(branch) {
            return Err(refuse("branch.commit", "not the branch commit the catalog names"));
        }
        let root = gix::objs::CommitRef::from_bytes(&commit, hash)
            .map_err(|_| refuse("branch.commit", "not a commit"))?
            .tree();
        if hashed(gix::objs::Kind::Tree, &tree) != Some(root) {
            return Err(refuse("branch.tree", "not the root tree of the branch commit"));
        }
        let conversations = Store::entry_in(&tree, layout::CONVERSATIONS);
        let mut by_fan: std::collections::BTreeMap<&str, Vec<(&str, ObjectId)>> = Default::default();
        for line in catalog.lines.values() {
            let id = ObjectId::from_hex(line.tree.as_bytes()).map_err(|_| refuse(&line.id, "not an object id"))?;
            by_fan.entry(layout::fan(&line.id)).or_default().push((line.id.as_str(), id));
        }
        let mut written = Vec::new();
        let mut fan_entries = Vec::with_capacity(by_fan.len());
        for (fan, ids) in &by_fan {
            let mut bytes = Vec::new();
            gix::objs::WriteTo::write_to(&folder_tree(ids), &mut bytes).map_err(super::io_err("tree"))?;
            let id = hashed(gix::objs::Kind::Tree, &bytes).expect("a tree hashes");
            if fans.contains(*fan) {
                written.push((gix::objs::Kind::Tree, bytes));
            }
            fan_entries.push((*fan, id));
        }
        let mut folder = Vec::new();
        gix::objs::WriteTo::write_to(&folder_tree(&fan_entries), &mut folder).map_err(super::io_err("tree"))?;
        let rebuilt = (!catalog.lines.is_empty()).then(|| hashed(gix::objs::Kind::Tree, &folder)).flatten();
        if conversations.map(|(id, _)| id) != rebuilt {
            return Err(refuse("", "its lines are not the conversations of the branch it names"));
        }
        if rebuilt.is_some() {
            written.push((gix::objs::Kind::Tree, folder));
        }
        written.push((gix::objs::Kind::Tree, tree));
        written.push((gix::objs::Kind::Commit, commit));
        let into = self.scratch(quarantine)?;
        for (kind, bytes) in &written {
            into.write_loose(*kind, bytes)?;
        }
        // The commit's parents are not here: the quarantine's history stops at it, as the
        // store's stops at its catalog.
        let shallow = quarantine.join(".git").join("shallow");
        let mut text = std::fs::read_to_string(self.repo.git_dir().join("shallow")).unwrap_or_default();
        text.push_str(&format!("{branch}\n"));
        std::fs::write(&shallow, text).map_err(super::io_err(&shallow))?;
        Ok(branch)
    }

    /// The commit a lazy store publishes on the hub's tip `theirs` (made present by
    /// [`Store::hub_tip`]): its tree with each of `puts` put in, signed by the person
    /// pushing, dated as HEAD. Written into `quarantine`.
    pub fn lazy_published_commit(
        &self,
        theirs: ObjectId,
        puts: &[LazyPut],
        quarantine: &std::path::Path,
    ) -> Result<ObjectId> {
        let into = self.scratch(quarantine)?;
        let head = self.head()?.ok_or(StoreError::Empty)?;
        into.gc_proof(|| {
            let mut editor = into.tree_editor(into.commit_tree_id(theirs)?)?;
            let mut names = String::new();
            for put in puts {
                let dir = layout::conversation_dir(&put.id);
                editor
                    .upsert(dir.split('/'), gix::object::tree::EntryKind::Tree, put.tree)
                    .map_err(super::git_err(format!("publish {dir}")))?;
                names.push_str(&format!("{}\n", put.id));
            }
            let tree = into.write_tree_edits(&mut editor)?;
            let signature = self.publisher(self, head)?;
            let what = if puts.len() == 1 { "conversation" } else { "conversations" };
            let message = format!("convo: publish {} shared {what}\n\n{names}", puts.len());
            into.write_commit_object(tree, &[theirs], &message, &signature)
        })
    }

    /// What a lazy store's push of `puts` sends that the hub lacks, file by file (see
    /// [`Store::outgoing`]): each conversation's files that differ from the hub's folder.
    pub fn lazy_outgoing(&self, puts: &[LazyPut], each: &mut dyn FnMut(super::Outgoing) -> Result<()>) -> Result<()> {
        let mut seen = std::collections::HashSet::new();
        for put in puts {
            self.diff_tree(put.tree, put.hub, &layout::conversation_dir(&put.id), None, &mut seen, each)?;
        }
        Ok(())
    }

    /// What a lazy store's push of `puts` sends, counted as [`Store::moved`] counts.
    pub fn lazy_moved(&self, puts: &[LazyPut]) -> Result<super::Moved> {
        let mut moved = super::Moved::default();
        for put in puts {
            let mut each = std::collections::BTreeMap::new();
            self.moved_below(put.tree, put.hub, &layout::conversation_dir(&put.id), &mut each)?;
            moved.conversations += 1;
            moved.new += usize::from(put.hub.is_none());
            moved.events += each.values().map(|m| m.events).sum::<usize>();
        }
        Ok(moved)
    }
}

impl Store {
    /// Bring the hub's newer snapshot of conversation `id` (folder `theirs`, its objects in
    /// this store) into HEAD, where the conversation changed since the snapshot it was
    /// fetched as (folder `base`): the merge a whole store's pull runs ([`Store::integrate`]),
    /// for this one conversation. The side holding every byte of the other's wins; appended
    /// to on both sides, the hub's line keeps the id and the local one becomes a fork.
    /// The hub's side is a commit of its own (HEAD's tree with the hub's folder put in, no
    /// parent: the hub's history is not here), the merge's second parent.
    pub fn merge_fetched(
        &self,
        id: &str,
        base: ObjectId,
        theirs: ObjectId,
        remote: &str,
        clock: &Clock,
    ) -> Result<Integrated> {
        let lock = self.lock()?;
        let head = self.head()?.ok_or(StoreError::Empty)?;
        let root = self.commit_tree_id(head)?;
        let dir = layout::conversation_dir(id);
        let signature = self.signed(clock.now().timestamp());
        let commit = |folder: ObjectId, message: &str| -> Result<ObjectId> {
            self.gc_proof(|| {
                let mut editor = self.tree_editor(root)?;
                editor
                    .upsert(dir.split('/'), gix::object::tree::EntryKind::Tree, folder)
                    .map_err(super::git_err(format!("merge {dir}")))?;
                let tree = self.write_tree_edits(&mut editor)?;
                self.write_commit_object(tree, &[], message, &signature)
            })
        };
        let base = commit(base, &format!("Fetched {id} from {remote}\n"))?;
        let theirs = commit(theirs, &format!("Fetch {id} from {remote}\n"))?;
        self.merge(&lock, head, theirs, Some(base), &format!("{remote}'s {id}"), clock)
    }
}
