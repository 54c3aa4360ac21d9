//! Integrating another line of history (a fetched remote) without losing anything.
//!
//! Fast-forward when only one side moved. When both moved, the merge is built per
//! conversation from the merge base: a conversation changed on one side takes that side; one
//! appended to on both keeps the remote's line under its id, and the local line (every event,
//! compactions and undos with them) becomes a fork conversation whose events tree is the local
//! one, so git stores no new blob for it. Nothing is interleaved, nothing dropped.

use std::collections::{BTreeSet, HashSet};

use gix::ObjectId;
use gix::object::tree::EntryKind;

use super::history::Trailers;
use super::txn::{Landed, Lock};
use super::{ForkedFrom, Meta, Result, Store, StoreError, git_err, layout, sessions};
use crate::clock::Clock;
use crate::event::Stats;

/// A conversation appended to on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diverged {
    pub id: String,
    pub title: Option<String>,
    /// The new conversation holding the local line.
    pub fork: String,
    /// Local events the remote did not have (same id and content).
    pub local_events: usize,
    /// Of those, events whose id the remote's line uses for other content.
    pub rewritten: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Integrated {
    UpToDate,
    FastForward {
        commit: ObjectId,
        conversations: usize,
        /// Conversations the remote's line removed (`convo rm`): `convo restore` brings one back.
        removed: Vec<String>,
        landed: Landed,
    },
    Merged {
        commit: ObjectId,
        updated: usize,
        diverged: Vec<Diverged>,
        /// Files outside conversations/ changed on both sides: the remote's version was taken.
        kept_remote: Vec<String>,
        /// Conversations the remote's line removed after we appended to them: ours stay,
        /// since pulling never loses an event.
        kept_local: Vec<String>,
        /// Conversations the remote's line removed and we left as they were: gone here too
        /// (`convo restore` brings one back from history).
        removed: Vec<String>,
        /// Conversations we removed and the remote appended to: back, with the new events.
        revived: Vec<String>,
        /// Conversations we removed whose remote line rewrites their events: they stay
        /// removed rather than come back with other content under the same ids.
        kept_removed: Vec<String>,
        /// Conversations renamed on both sides: the remote's title replaced ours.
        retitled: Vec<Retitled>,
        landed: Landed,
    },
}

impl Integrated {
    /// How many conversations the pull made into forks (appended to on both sides).
    pub fn forks(&self) -> usize {
        match self {
            Integrated::Merged { diverged, .. } => diverged.len(),
            _ => 0,
        }
    }

    /// What happened around the commit a pull made, if it made one.
    pub fn landed(&self) -> Option<&Landed> {
        match self {
            Integrated::UpToDate => None,
            Integrated::FastForward { landed, .. } | Integrated::Merged { landed, .. } => Some(landed),
        }
    }
}

/// The edits a merge makes to the remote's tree, kept so the tree can be edited and written
/// again (see [`Store::gc_proof`]).
#[derive(Default)]
struct Edits(Vec<(String, Option<(EntryKind, ObjectId)>)>);

impl Edits {
    fn upsert(&mut self, path: &str, kind: EntryKind, id: ObjectId) {
        self.0.push((path.to_owned(), Some((kind, id))));
    }

    fn remove(&mut self, path: &str) {
        self.0.push((path.to_owned(), None));
    }

    /// Make the edits, in the order they were asked for, with `editor`.
    fn apply(&self, editor: &mut gix::objs::tree::Editor<'_>) -> Result<()> {
        for (path, entry) in &self.0 {
            match entry {
                Some((kind, id)) => editor.upsert(path.split('/'), *kind, *id).map(drop),
                None => editor.remove(path.split('/')).map(drop),
            }
            .map_err(git_err(format!("merge {path}")))?;
        }
        Ok(())
    }
}

/// A conversation both sides renamed, to different titles: the remote's stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retitled {
    pub id: String,
    /// Our title, which the remote's replaced.
    pub ours: Option<String>,
    pub theirs: Option<String>,
}

impl Store {
    /// Bring `theirs` (a fetched commit) into HEAD; `label` names it in messages. Its tree
    /// is checked first ([`Store::check_incoming`]): a refused commit changes nothing. A
    /// fast-forward that would change or drop local event bytes becomes a merge instead, so
    /// those events survive in a fork.
    pub fn integrate(&self, lock: &Lock, theirs: ObjectId, label: &str, clock: &Clock) -> Result<Integrated> {
        let ours = self.head_commit_id()?;
        let known = match ours {
            Some(commit) => Some(self.commit_tree_id(commit)?),
            None => None,
        };
        self.check_incoming(theirs, known)?;
        let Some(ours) = ours else {
            // An empty store has no commit to fast-forward from: adopt theirs outright.
            return self.adopt(lock, theirs, label, clock);
        };
        if ours == theirs {
            return Ok(Integrated::UpToDate);
        }
        let base = self.repo.merge_base(ours, theirs).ok().flatten().map(|id| id.detach());
        if base == Some(theirs) {
            return Ok(Integrated::UpToDate);
        }
        if base == Some(ours) && self.rewrites(self.commit_tree_id(ours)?, self.commit_tree_id(theirs)?)?.is_empty() {
            let (before, after) = (self.conversation_ids_in(ours)?, self.conversation_ids_in(theirs)?);
            let removed = before.difference(&after).cloned().collect();
            let mut tx = lock.transaction();
            tx.moves_to(Some(ours), theirs).changes_catalogue();
            let landed = tx.commit_message(&format!("pull: fast-forward to {label}"), clock)?.landed;
            // A remote an older convo wrote: its tree moves into the fan-out here too. The
            // move mirrors a fast-forward that lags with its own paths, so what it says of the
            // working tree is what stands.
            let landed = self.fan_out(lock)?.unwrap_or(landed);
            return Ok(Integrated::FastForward {
                commit: theirs,
                conversations: self.conversation_count(theirs)?,
                removed,
                landed,
            });
        }
        self.merge(lock, ours, theirs, base, label, clock)
    }

    fn conversation_ids_in(&self, commit: ObjectId) -> Result<BTreeSet<String>> {
        self.ids_in_tree(self.commit_tree_id(commit)?)
    }

    fn ids_in_tree(&self, tree: ObjectId) -> Result<BTreeSet<String>> {
        Ok(match self.entry_at(tree, layout::CONVERSATIONS)? {
            Some(dir) => self.conversations_in(dir)?.into_iter().map(|(id, _)| id).collect(),
            None => BTreeSet::new(),
        })
    }

    fn conversation_count(&self, commit: ObjectId) -> Result<usize> {
        Ok(self.conversation_ids_in(commit)?.len())
    }

    fn adopt(&self, lock: &Lock, theirs: ObjectId, label: &str, clock: &Clock) -> Result<Integrated> {
        let mut tx = lock.transaction();
        tx.moves_to(None, theirs);
        let landed = tx.commit_message(&format!("pull: {label}"), clock)?.landed;
        Ok(Integrated::FastForward {
            commit: theirs,
            conversations: self.conversation_count(theirs)?,
            removed: Vec::new(),
            landed,
        })
    }

    pub(super) fn merge(
        &self,
        lock: &Lock,
        ours: ObjectId,
        theirs: ObjectId,
        base: Option<ObjectId>,
        label: &str,
        clock: &Clock,
    ) -> Result<Integrated> {
        let empty = ObjectId::empty_tree(self.repo.object_hash());
        let b_tree = match base {
            Some(b) => self.commit_tree_id(b)?,
            None => empty,
        };
        let (o_tree, t_tree) = (self.commit_tree_id(ours)?, self.commit_tree_id(theirs)?);
        // Ours is in the fan-out shape (the lock saw to it); theirs may not be, and the
        // merged tree is built on theirs.
        let t_tree = self.fanned_tree(t_tree)?.map_or(t_tree, |(tree, _)| tree);
        let mut edits = Edits::default();
        let mut trailers: Vec<String> = Vec::new();
        let mut kept_remote = Vec::new();
        let mut updated = 0;

        // Entries outside conversations/ (convo.toml, anything added with git): one side's
        // change wins; both: theirs. Names come from all three trees, so a deletion on one
        // side is seen too, and an entry keeps its kind (file or folder).
        let mut names: BTreeSet<(String, bool)> = BTreeSet::new();
        for tree in [b_tree, o_tree, t_tree] {
            names.extend(self.tree_entries(tree)?.into_iter().map(|(n, _, is_tree)| (n, is_tree)));
        }
        for (name, is_tree) in names {
            if name == layout::CONVERSATIONS {
                continue;
            }
            let (b, o, t) =
                (self.entry_at(b_tree, &name)?, self.entry_at(o_tree, &name)?, self.entry_at(t_tree, &name)?);
            if o != b && t == b {
                let kind = if is_tree { EntryKind::Tree } else { EntryKind::Blob };
                match o {
                    Some(o) => edits.upsert(&name, kind, o),
                    None => edits.remove(&name),
                }
            } else if o != b && t != b && o != t {
                kept_remote.push(name);
            }
        }

        let mut all = self.ids_in_tree(o_tree)?;
        all.extend(self.ids_in_tree(t_tree)?);
        let mut diverged = Vec::new();
        let mut rebinds: Vec<(String, String, std::collections::HashSet<String>)> = Vec::new();
        let mut kept_local = Vec::new();
        let (mut removed, mut revived, mut kept_removed) = (Vec::new(), Vec::new(), Vec::new());
        let mut retitled = Vec::new();
        for id in all {
            let dir = layout::conversation_dir(&id);
            let (b, o, t) = (self.entry_at(b_tree, &dir)?, self.entry_at(o_tree, &dir)?, self.entry_at(t_tree, &dir)?);
            if o == t {
                continue;
            }
            let keep_ours = |edits: &mut Edits, o: ObjectId| edits.upsert(&dir, EntryKind::Tree, o);
            let o = match (o, t) {
                // Changed only here: keep ours (a conversation removed here with git stays removed).
                _ if t == b => {
                    match o {
                        Some(o) => keep_ours(&mut edits, o),
                        None => edits.remove(&dir),
                    }
                    continue;
                }
                // Removed there and untouched here: a `convo rm` travels like any change
                // (history keeps the folder; `convo restore` brings it back).
                (Some(o), None) if Some(o) == b => {
                    removed.push(id);
                    continue;
                }
                // Removed there after we appended: pulling never loses an event, so ours stays.
                (Some(o), None) => {
                    keep_ours(&mut edits, o);
                    kept_local.push(id);
                    continue;
                }
                // Removed here, appended to there: the new events are kept, so it comes back.
                // But not with other content under its ids: then our removal stands.
                (None, Some(_)) if b.is_some() => {
                    if self.extends(b_tree, t_tree, &id)? {
                        updated += 1;
                        if let Some(last) = self.newest_change(theirs, &dir)? {
                            trailers.push(format!("Convo-Merged: {id} {last}"));
                        }
                        revived.push(id);
                    } else {
                        edits.remove(&dir);
                        kept_removed.push(id);
                    }
                    continue;
                }
                (None, Some(_)) => {
                    updated += 1;
                    if let Some(last) = self.newest_change(theirs, &dir)? {
                        trailers.push(format!("Convo-Merged: {id} {last}"));
                    }
                    continue;
                }
                (Some(o), Some(_)) => o,
                (None, None) => continue,
            };
            updated += 1;
            if let Some(last) = self.newest_change(theirs, &dir)? {
                trailers.push(format!("Convo-Merged: {id} {last}"));
            }
            // Events and title merge apart, so a rename on one side and appends on the
            // other meet without a fork. Events: the side holding every byte of the other's.
            // Title (meta.json): the side that changed it; both changed it: the remote's, as
            // for convo.toml.
            let ours_has_theirs = self.extends(t_tree, o_tree, &id)?;
            if self.extends(o_tree, t_tree, &id)? || ours_has_theirs {
                if ours_has_theirs {
                    let events = format!("{dir}/{}", layout::EVENTS_DIR);
                    match self.entry_at(o, layout::EVENTS_DIR)? {
                        Some(tree) => edits.upsert(&events, EntryKind::Tree, tree),
                        None => edits.remove(&events),
                    }
                }
                let meta = layout::meta_path(&id);
                let (b_meta, o_meta) = (self.entry_at(b_tree, &meta)?, self.entry_at(o_tree, &meta)?);
                let t_meta = self.entry_at(t_tree, &meta)?;
                if o_meta != b_meta
                    && t_meta == b_meta
                    && let Some(o_meta) = o_meta
                {
                    edits.upsert(&meta, EntryKind::Blob, o_meta);
                } else if o_meta != b_meta && t_meta != b_meta && o_meta != t_meta {
                    // Both changed it: theirs stands, and a title of ours it replaces is said.
                    let (ours, theirs) = (self.meta_in(o_tree, &id)?.title, self.meta_in(t_tree, &id)?.title);
                    let base = match b {
                        Some(_) => self.meta_in(b_tree, &id)?.title,
                        None => None,
                    };
                    if ours != theirs && ours != base && theirs != base {
                        retitled.push(Retitled { id: id.clone(), ours, theirs });
                    }
                }
                continue;
            }
            // Appended to on both sides, or rewritten there: theirs keeps the id, ours becomes
            // a fork. Two events are the same only when id and content match.
            let theirs_events = self.events_in(t_tree, &id)?;
            let theirs_ids: HashSet<&str> = theirs_events.iter().map(|e| e.id.as_str()).collect();
            let theirs_lines: HashSet<String> = theirs_events.iter().map(|e| e.to_line()).collect();
            let our_events = self.events_in(o_tree, &id)?;
            let local: Vec<&crate::event::Event> =
                our_events.iter().filter(|e| !theirs_lines.contains(&e.to_line())).collect();
            let rewritten = local.iter().filter(|e| theirs_ids.contains(e.id.as_str())).count();
            let local_events = local.len();
            if local_events == 0 {
                continue;
            }
            let base_turns = match b {
                Some(_) => Stats::of(&self.events_in(b_tree, &id)?).turns,
                None => 0,
            };
            let source_meta = self.meta_in(o_tree, &id)?;
            let fork = self.new_conversation_id(clock);
            // The sessions that wrote the local line go on with it: their next capture
            // lands in the fork, not on the remote's line nor in a conversation of its own.
            let base_meta = match b {
                Some(_) => self.meta_in(b_tree, &id).ok(),
                None => None,
            };
            let (mut extra, moved) = sessions::moved_to_fork(&source_meta, base_meta.as_ref());
            if let Some(project) = source_meta.extra.get(super::Project::KEY) {
                extra.insert(super::Project::KEY.into(), project.clone());
            }
            if !moved.is_empty() {
                let mut theirs = self.meta_in(t_tree, &id)?;
                if sessions::mark_left(&mut theirs, &moved, &fork) {
                    let path = layout::meta_path(&id);
                    let mut bytes = serde_json::to_vec_pretty(&theirs)
                        .map_err(|e| StoreError::BadFile { path: path.clone(), message: e.to_string() })?;
                    bytes.push(b'\n');
                    let blob = self.gc_proof(|| self.write_loose(gix::objs::Kind::Blob, &bytes))?;
                    edits.upsert(&path, EntryKind::Blob, blob);
                }
            }
            let meta = Meta {
                title: Some(format!("{} (diverged)", source_meta.title.clone().unwrap_or_else(|| id.clone()))),
                created: clock.timestamp(),
                forked_from: Some(ForkedFrom { id: id.clone(), turn: base_turns }),
                extra,
            };
            let mut bytes = serde_json::to_vec_pretty(&meta)
                .map_err(|e| StoreError::BadFile { path: layout::meta_path(&fork), message: e.to_string() })?;
            bytes.push(b'\n');
            let blob = self.gc_proof(|| self.write_loose(gix::objs::Kind::Blob, &bytes))?;
            edits.upsert(&layout::meta_path(&fork), EntryKind::Blob, blob);
            if let Some(events) = self.entry_at(o, layout::EVENTS_DIR)? {
                let path = format!("{}/{}", layout::conversation_dir(&fork), layout::EVENTS_DIR);
                edits.upsert(&path, EntryKind::Tree, events);
            }
            if let Some(last) = self.newest_change(ours, &dir)? {
                trailers.push(format!("Convo-Merged: {fork} {last}"));
            }
            rebinds.push((id.clone(), fork.clone(), local.iter().map(|e| e.id.clone()).collect()));
            diverged.push(Diverged { id, title: source_meta.title, fork, local_events, rewritten });
        }
        // Edited and written again whole if a concurrent gc takes an object folder under the
        // write: the tree editor cannot resume a failed write.
        let tree = self.gc_proof(|| {
            let mut editor = self.tree_editor(t_tree)?;
            edits.apply(&mut editor)?;
            self.write_tree_edits(&mut editor)
        })?;
        let subject = format!(
            "merge: {label} ({updated} conversation{} updated{})",
            if updated == 1 { "" } else { "s" },
            if diverged.is_empty() { String::new() } else { format!(", {} diverged into forks", diverged.len()) }
        );
        let mut message = format!("{subject}\n\n");
        for line in &trailers {
            message += line;
            message.push('\n');
        }
        debug_assert!(Trailers::parse(&message).convo_id.is_none());
        let mut tx = lock.transaction();
        tx.tree(tree, vec![ours, theirs]).changes_catalogue();
        let committed = tx.commit_message(&message, clock)?;
        // Sessions handed over on a line that became a fork continue the fork. Local state
        // after the commit that made the fork: a failure here leaves the hand-over where it
        // was (its next capture forks from the conversation instead), never the merge undone.
        for (from, to, local) in &rebinds {
            let _ = self.rebind_handovers(lock, from, to, local);
        }
        Ok(Integrated::Merged {
            commit: committed.commit,
            updated,
            diverged,
            kept_remote,
            kept_local,
            removed,
            revived,
            kept_removed,
            retitled,
            landed: committed.landed,
        })
    }

    /// Events of conversation `id` in tree `root`.
    pub(super) fn events_in(&self, root: ObjectId, id: &str) -> Result<Vec<crate::event::Event>> {
        let mut events = Vec::new();
        for (path, blob) in self.segments_in(root, id)? {
            events.extend(self.parse_segment(&path, blob)?);
        }
        Ok(events)
    }

    fn meta_in(&self, root: ObjectId, id: &str) -> Result<Meta> {
        let path = layout::meta_path(id);
        let blob = self
            .entry_at(root, &path)?
            .ok_or_else(|| StoreError::BadFile { path: path.clone(), message: "missing".into() })?;
        super::parse_meta(&path, &self.read_blob(blob)?)
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    use crate::store::txn::tests::git;

    #[test]
    fn a_pull_into_an_empty_store_whose_ref_move_fails_leaves_no_journal() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::init(dir.path()).unwrap();
        let clock = Clock::fixed(chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap());
        let empty = git(dir.path(), &["mktree"]);
        let theirs = git(dir.path(), &["commit-tree", &empty, "-m", "theirs"]);
        let theirs = ObjectId::from_hex(theirs.as_bytes()).unwrap();
        let lock = store.lock().unwrap();
        // The lock remembers an empty store; git commits behind its back, so the adoption's
        // compare-and-swap finds HEAD moved.
        assert_eq!(store.head_commit_id().unwrap(), None);
        git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "outside"]);
        let err = store.integrate(&lock, theirs, "theirs", &clock).expect_err("the adoption must be refused");
        assert!(matches!(err, StoreError::HeadMoved { .. }), "{err}");
        assert!(!store.journal_pending(), "a refused adoption left its journal behind");
    }

    /// A `git gc` beside a pull can take the object folder the merge's own tree is written
    /// into: that write must be run again, the tree edited anew (its editor cannot resume a
    /// failed write), as every other object write is, not fail the pull.
    #[test]
    fn a_merge_whose_tree_write_loses_its_object_folder_to_gc_is_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::init(dir.path()).unwrap();
        let at = |s: i64| Clock::fixed(chrono::DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap());
        let lock = store.lock().unwrap();
        let a = store.create(lock.transaction(), Some("a"), &at(0)).unwrap().id;
        let base = store.head_commit_id().unwrap().unwrap().to_string();
        let b = store.create(lock.transaction(), Some("b"), &at(1)).unwrap();
        drop(lock);
        git(dir.path(), &["reset", "-q", "--hard", &base]);
        let lock = store.lock().unwrap();
        let c = store.create(lock.transaction(), Some("c"), &at(2)).unwrap().id;

        // No fork to write: the merge's first object write is its tree.
        super::super::loose::LOST_TO_GC.with(|left| left.set(1));
        let merged = store.integrate(&lock, b.commit, "origin/main", &at(3)).expect("the merge must be written again");
        assert_eq!(super::super::loose::LOST_TO_GC.with(|left| left.get()), 0, "no write was lost");
        assert!(matches!(merged, Integrated::Merged { updated: 1, .. }), "{merged:?}");
        drop(lock);
        let listed = git(dir.path(), &["ls-tree", "-r", "--name-only", "HEAD"]);
        for id in [&a, &b.id, &c] {
            assert!(listed.contains(&layout::meta_path(id)), "{id} is missing from the merge:\n{listed}");
        }
        assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
    }
}
