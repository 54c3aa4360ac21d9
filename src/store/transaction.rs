//! A [`Transaction`]: the one way anything lands on HEAD's branch. A writer says what the
//! commit holds — files changed on HEAD's tree ([`change`](Transaction::change)), a tree it
//! built by rules of its own (a merge, the fan-out move: [`tree`](Transaction::tree)), or a
//! commit made elsewhere (a fast-forward, a pull into an empty store, redact's rewrite:
//! [`moves_to`](Transaction::moves_to)) — and what it means for the caches derived from HEAD
//! (a conversation's counts, its catalogue and titles lines, its log index, the catalogue
//! as a whole, the segments known checked). [`commit`](Transaction::commit) then runs the
//! steps below, in this order, for every writer.
//!
//! A transaction holds the store's write lock from its start to its end: a single commit
//! takes it with [`Store::transaction`] and releases it when committed or dropped; a
//! workflow that reads under the lock first, or commits several times (an import's
//! segments, a pull's fast-forward and fan-out move, redact's rewrite and prune), takes the
//! lock with [`Store::lock`] and builds each commit with [`Lock::transaction`]. So a writer
//! that makes one commit (an append, a rename) takes the `Transaction` it fills as its
//! argument, and one that makes several, or reads under the lock between them, the `&Lock`.
//! A transaction's own lock goes after step 7. The steps:
//!
//! 1. a commit an earlier transaction under the same lock left lagging (its mirror failed)
//!    is mirrored first; if it still cannot be (a git holds the index), its paths join this
//!    commit's journal and mirror — either way no journal is written over one that still
//!    names paths;
//! 2. HEAD is read, a symlinked path refused, and a git holding the branch's lock waited
//!    for — all before anything is written, so a refusal leaves the store as it was;
//! 3. the journal names every path the commit touches ([`Store::write_journal`]);
//! 4. the objects: blobs, the edited trees ([`Store::tree_editor`]) and the commit, every
//!    commit object built by [`Store::write_commit_object`], all written again if a
//!    concurrent `git gc` took an object folder ([`Store::gc_proof`]);
//! 5. with `store.fsync = "committed"`, the objects written and the journal are synced to
//!    disk (one batch, see [`durable`](super::durable)); then the branch moves by
//!    compare-and-swap ([`Store::move_head`], which syncs the ref): **the commit point**.
//!    A transaction that stops before it blanks the journal: nothing to mirror;
//! 6. the working tree and index mirror the changed paths, from the changes in hand or,
//!    for a commit made elsewhere, from HEAD; the journal is blanked; `git gc --auto` runs
//!    if due;
//! 7. the caches hear what the commit meant, as observers. A cache never hears of a commit
//!    that did not land, and one that fails to keep up is the next reader's rebuild, never
//!    the writer's error: once HEAD has moved, nothing may read as a failed commit (a retry
//!    would commit twice). A failed mirror (step 6) is [`Landed::warning`], and the journal
//!    stays for the next transaction or command to replay.

use std::sync::atomic::Ordering;

use gix::ObjectId;
use gix::object::tree::EntryKind;

use super::cache::Cache;
use super::history::Trailers;
use super::txn::{Change, FailPoint, GcOutcome, Landed, Lock};
use super::{Result, Store, StoreError, git_err, io_err, layout};
use crate::clock::Clock;
use crate::event::Stats;
use crate::event::who::Who;

/// One commit under way (see the module docs). Nothing is written until
/// [`commit`](Self::commit); a transaction dropped before it leaves the store as it was.
/// It holds the store's write lock for its whole life — its own, taken by
/// [`Store::transaction`] and released when it is committed or dropped, or one a workflow
/// holds across reads and several commits ([`Lock::transaction`]) — so no commit is ever
/// built without the lock, or under another store's.
pub struct Transaction<'s> {
    store: &'s Store,
    lock: Held<'s>,
    changes: Vec<Change>,
    made: Option<Made>,
    observers: Vec<Observer>,
}

/// The lock a transaction commits under.
enum Held<'s> {
    /// Taken for this transaction alone: released with it.
    Own(Lock<'s>),
    /// A workflow's, held before this transaction and after it.
    Borrowed(&'s Lock<'s>),
}

impl<'s> std::ops::Deref for Held<'s> {
    type Target = Lock<'s>;

    fn deref(&self) -> &Lock<'s> {
        match self {
            Held::Own(lock) => lock,
            Held::Borrowed(lock) => lock,
        }
    }
}

/// What a transaction lands when a writer built it by rules of its own, rather than from
/// changes to HEAD's tree.
enum Made {
    /// A whole tree, committed on `parents` (the first is HEAD, which the branch must still
    /// name when it moves).
    Tree { tree: ObjectId, parents: Vec<ObjectId> },
    /// A commit already made, which HEAD moves to from `expected`.
    Commit { expected: Option<ObjectId>, commit: ObjectId },
}

/// What a landed commit means for the derived caches.
enum Observer {
    /// The commit made or changed conversation `id` (`alone`: and no other), which now
    /// counts `stats`, its newest event at `updated`: its cache, its catalogue and titles
    /// lines, its log index.
    /// `who`: the people, agents and models of its events, when the writer knew them.
    Conversation {
        id: String,
        stats: Stats,
        updated: Option<String>,
        who: Option<Who>,
        previous: Option<ObjectId>,
        alone: bool,
    },
    /// The commit continues conversation `id`'s log chain from `previous`: its log index.
    Log { id: String, previous: Option<ObjectId> },
    /// The commit took conversation `id` out of HEAD: its cached counts go.
    Removed { id: String },
    /// The commit changed conversations as a whole (removed, restored, imported, pulled,
    /// many at once): the catalogue is certified again by a refresh, not line by line.
    Catalogue,
    /// The commit replaced history (redact's rewrite): every cache keyed by a commit or a
    /// tree goes, the catalogue and titles with their superseded lines among them.
    Rewritten,
}

/// What a transaction landed. Once HEAD has moved nothing reads as a failed commit: a
/// working tree and index that could not follow are [`Landed::warning`].
pub(crate) struct Committed {
    pub commit: ObjectId,
    pub tree: ObjectId,
    pub landed: Landed,
}

impl Store {
    /// A single commit: takes the store's write lock (waiting for another writer, repairing
    /// what a killed one left, see [`Store::lock`]) and holds it until the transaction is
    /// committed or dropped. A workflow that must read under the lock first, or commit
    /// several times, takes the lock itself and builds each commit with
    /// [`Lock::transaction`].
    pub fn transaction(&self) -> Result<Transaction<'_>> {
        let lock = self.lock()?;
        Ok(Transaction::under(self, Held::Own(lock)))
    }
}

impl<'s> Lock<'s> {
    /// A commit under this lock, which the caller goes on holding after it.
    pub fn transaction(&self) -> Transaction<'_> {
        Transaction::under(self.store, Held::Borrowed(self))
    }
}

impl<'s> Transaction<'s> {
    fn under(store: &'s Store, lock: Held<'s>) -> Transaction<'s> {
        Transaction { store, lock, changes: Vec::new(), made: None, observers: Vec::new() }
    }

    /// Write `change` (a file's bytes, a blob already written, or a removal).
    pub(crate) fn change(&mut self, change: Change) -> &mut Self {
        self.changes.push(change);
        self
    }

    /// Write every one of `changes`.
    pub(crate) fn changes(&mut self, changes: impl IntoIterator<Item = Change>) -> &mut Self {
        self.changes.extend(changes);
        self
    }

    /// Commit `tree` (built whole by the caller) on `parents`, the first of them HEAD,
    /// instead of changes to HEAD's tree.
    pub(crate) fn tree(&mut self, tree: ObjectId, parents: Vec<ObjectId>) -> &mut Self {
        self.made = Some(Made::Tree { tree, parents });
        self
    }

    /// Move HEAD from `expected` (`None`: a store without commits) to `commit`, a commit
    /// made elsewhere; the message given to [`commit`](Self::commit) is only the reflog's.
    pub(crate) fn moves_to(&mut self, expected: Option<ObjectId>, commit: ObjectId) -> &mut Self {
        self.made = Some(Made::Commit { expected, commit });
        self
    }

    /// The commit makes or changes conversation `id` and no other; it then counts `stats`,
    /// its newest event at `updated`, its events name `who` (`None`: not known, recounted
    /// by the next reader), and its log chain continues from `previous`.
    pub(crate) fn wrote_conversation(
        &mut self,
        id: &str,
        stats: Stats,
        updated: Option<String>,
        who: Option<Who>,
        previous: Option<ObjectId>,
    ) -> &mut Self {
        self.wrote(id, stats, updated, who, previous, true)
    }

    /// [`wrote_conversation`](Self::wrote_conversation) for one of several conversations
    /// the commit changes: its catalogue line certifies nothing until a
    /// [`changes_catalogue`](Self::changes_catalogue) refresh after every line is in.
    pub(crate) fn wrote_one_of(
        &mut self,
        id: &str,
        stats: Stats,
        updated: Option<String>,
        who: Option<Who>,
        previous: Option<ObjectId>,
    ) -> &mut Self {
        self.wrote(id, stats, updated, who, previous, false)
    }

    fn wrote(
        &mut self,
        id: &str,
        stats: Stats,
        updated: Option<String>,
        who: Option<Who>,
        previous: Option<ObjectId>,
        alone: bool,
    ) -> &mut Self {
        self.observers.push(Observer::Conversation { id: id.to_owned(), stats, updated, who, previous, alone });
        self
    }

    /// The commit removes conversation `id`.
    pub(crate) fn removes_conversation(&mut self, id: &str) -> &mut Self {
        self.observers.push(Observer::Removed { id: id.to_owned() });
        self
    }

    /// The commit continues conversation `id`'s log chain from `previous` (its counts are
    /// left to the next reader).
    pub(crate) fn continues_log(&mut self, id: &str, previous: Option<ObjectId>) -> &mut Self {
        self.observers.push(Observer::Log { id: id.to_owned(), previous });
        self
    }

    /// The commit changes which conversations there are, or several at once.
    pub(crate) fn changes_catalogue(&mut self) -> &mut Self {
        self.observers.push(Observer::Catalogue);
        self
    }

    /// The commit replaces history: caches keyed by its old commits and trees go.
    pub(crate) fn rewrites_history(&mut self) -> &mut Self {
        self.observers.push(Observer::Rewritten);
        self
    }

    /// Commit with `subject` and `trailers`, then tell the caches.
    pub(crate) fn commit(self, subject: &str, trailers: &Trailers, clock: &Clock) -> Result<Committed> {
        self.commit_message(&format!("{subject}\n\n{}", trailers.render()), clock)
    }

    /// [`commit`](Self::commit) with the whole message given, by the user's identity now.
    pub(crate) fn commit_message(self, message: &str, clock: &Clock) -> Result<Committed> {
        let signature = self.store.signature(clock);
        self.commit_signed(message, &signature)
    }

    /// [`commit_message`](Self::commit_message) by `signature` (author, committer and the
    /// reflog's): the steps of the module docs.
    pub(crate) fn commit_signed(self, message: &str, signature: &gix::actor::Signature) -> Result<Committed> {
        let Transaction { store, lock, changes, made, observers } = self;
        // Step 1: an earlier commit under this lock that lags is mirrored before a journal
        // is written over the one naming its paths. When it still cannot be (a git holds
        // the index), its paths are carried into this commit's journal and mirror instead.
        let mut carried = Vec::new();
        if lock.lagging.load(Ordering::Relaxed) {
            match store.replay_journal(&lock) {
                Ok(()) => lock.lagging.store(false, Ordering::Relaxed),
                Err(_) => carried = store.pending_journal()?.map(|journal| journal.paths).unwrap_or_default(),
            }
        }
        let subject = message.lines().next().unwrap_or("");
        // Step 2.
        let (expected, paths) = match &made {
            None => {
                // Refuse a symlinked folder or file before anything is written, not after.
                for change in &changes {
                    store.worktree_path(&change.path)?;
                }
                (store.head_commit_id()?, changes.iter().map(|c| c.path.clone()).collect::<Vec<_>>())
            }
            Some(Made::Tree { tree, parents }) => {
                let expected = parents.first().copied();
                (expected, store.changed_paths(expected, *tree)?)
            }
            Some(Made::Commit { expected, commit }) => {
                (*expected, store.changed_paths(*expected, store.commit_tree_id(*commit)?)?)
            }
        };
        let ours: std::collections::HashSet<&str> = paths.iter().map(String::as_str).collect();
        let extra: Vec<String> = carried.iter().filter(|p| !ours.contains(p.as_str())).cloned().collect();
        store.await_branch_lock()?;
        // Step 3.
        let landing = store.begin_landing(paths.iter().chain(&extra).cloned().collect(), carried)?;
        // Step 4.
        let mut written = Vec::new();
        let mut now = Vec::new();
        let from_changes = made.is_none();
        let (commit, tree) = match made {
            None => {
                let (tree, commit) =
                    store.write_changes(expected, &changes, message, signature, &mut written, &mut now)?;
                (commit, tree)
            }
            Some(Made::Tree { tree, parents }) => {
                (store.gc_proof(|| store.write_commit_object(tree, &parents, message, signature))?, tree)
            }
            Some(Made::Commit { commit, .. }) => (commit, store.commit_tree_id(commit)?),
        };
        // Steps 5 and 6. The journal now answers for the carried paths.
        let mirrored = landing.land(expected, commit, signature, subject, || {
            if from_changes {
                store.mirror_changes(&changes, &paths, &now, tree)?;
            } else {
                store.mirror_from_head(&paths)?;
            }
            if extra.is_empty() { Ok(()) } else { store.mirror_from_head(&extra) }
        })?;
        let landed = match mirrored {
            Ok(gc) => {
                lock.lagging.store(false, Ordering::Relaxed);
                Landed { gc, warning: None }
            }
            Err(e) => {
                lock.lagging.store(true, Ordering::Relaxed);
                Landed {
                    gc: GcOutcome::NotNeeded,
                    warning: Some(format!(
                        "committed {}, but the working tree and index lag behind ({}); the next convo command brings them up to date",
                        &commit.to_string()[..7],
                        e.explained()
                    )),
                }
            }
        };
        // Step 7. Segments convo wrote whole hold lines it validated: copies need not check
        // them again.
        store.note_written_segments(written.iter().map(|(path, blob): &(String, ObjectId)| (path.as_str(), *blob)));
        let committed = Committed { commit, tree, landed };
        for observer in observers {
            store.notify(observer, &committed);
        }
        // A lock of the transaction's own goes only now: the caches heard of the commit
        // under it.
        drop(lock);
        Ok(committed)
    }
}

/// A commit between its journal and its ref move (steps 3 to 6): dropped before the ref
/// moves, it blanks the journal again.
struct Landing<'s> {
    store: &'s Store,
    /// Paths an earlier commit that lags left in the journal, which this one took over:
    /// dropped before the ref moves, it leaves them there again.
    carried: Vec<String>,
    /// The ref has not moved: dropping this blanks the journal.
    open: bool,
}

impl Landing<'_> {
    /// Move HEAD's branch from `expected` to `commit` (the commit point), mirror the
    /// journalled paths by `mirror`, blank the journal, and run `git gc --auto` if due.
    /// An error means HEAD did not move, and the journal is blank again; once HEAD has
    /// moved, a failed mirror is the inner error, and the journal stays.
    fn land(
        mut self,
        expected: Option<ObjectId>,
        commit: ObjectId,
        signature: &gix::actor::Signature,
        subject: &str,
        mirror: impl FnOnce() -> Result<()>,
    ) -> Result<std::result::Result<GcOutcome, StoreError>> {
        let store = self.store;
        // The barrier (see `durable`): the objects and the journal on disk before the ref
        // names the commit, synced by `move_head` with the new ref's lock file, in one round.
        store.move_head(expected, commit, signature, subject)?;
        self.open = false;
        store.fail(FailPoint::Committed);
        if let Err(e) = mirror().and_then(|()| store.clear_journal()) {
            return Ok(Err(e));
        }
        Ok(Ok(store.maybe_gc()))
    }
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        if self.open {
            // Best effort: a journal left behind is replayed from HEAD, which did not move.
            let _ = if self.carried.is_empty() {
                self.store.clear_journal()
            } else {
                self.store.write_journal(&self.carried)
            };
        }
    }
}

impl Store {
    /// Step 3: name `paths` in the journal before the commit writes anything (`carried`
    /// among them: a lagging commit's, which a commit that does not land leaves there).
    fn begin_landing(&self, paths: Vec<String>, carried: Vec<String>) -> Result<Landing<'_>> {
        let journal = self.journal_path();
        let new = self.durable() && !journal.exists();
        self.write_journal(&paths)?;
        // Synced at the barrier before the ref moves, with the objects (see `durable`).
        self.note_unsynced(Some(journal), new.then(|| self.state_dir()));
        self.fail(FailPoint::Journal);
        Ok(Landing { store: self, carried, open: true })
    }

    /// Every file path whose blob differs between `from`'s tree (`None`: no commit) and
    /// `tree`, sorted: what moving HEAD from one to the other changes. Folders equal on both
    /// sides are skipped, so a pull's fast-forward costs what it brings: listing every file
    /// of both trees was a second of a one-event pull at 10,000 conversations (issue 43).
    fn changed_paths(&self, from: Option<ObjectId>, tree: ObjectId) -> Result<Vec<String>> {
        let old = from.map(|from| self.commit_tree_id(from)).transpose()?;
        let mut paths = Vec::new();
        self.changed_below(old, Some(tree), "", &mut paths)?;
        paths.sort();
        Ok(paths)
    }

    /// [`changed_paths`](Self::changed_paths) below folders `old` and `new` (`None`: none).
    fn changed_below(
        &self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        prefix: &str,
        out: &mut Vec<String>,
    ) -> Result<()> {
        if old == new {
            return Ok(());
        }
        type Sides = (Option<ObjectId>, Option<ObjectId>);
        // Per name: (folder, file) on the old side, then on the new. A name can be a folder on
        // one side and a file on the other.
        let mut names: std::collections::BTreeMap<String, (Sides, Sides)> = std::collections::BTreeMap::new();
        for (tree, new_side) in [(old, false), (new, true)] {
            let Some(tree) = tree else { continue };
            for (name, id, is_tree) in self.tree_entries(tree)? {
                let sides = names.entry(name).or_default();
                let side = if new_side { &mut sides.1 } else { &mut sides.0 };
                *side = if is_tree { (Some(id), None) } else { (None, Some(id)) };
            }
        }
        for (name, ((old_dir, old_file), (new_dir, new_file))) in names {
            let path = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
            if old_dir != new_dir {
                self.changed_below(old_dir, new_dir, &path, out)?;
            }
            if old_file != new_file {
                out.push(path);
            }
        }
        Ok(())
    }

    /// Step 4 for a commit of `changes` on `parent`: their blobs, the edited trees and the
    /// commit, all again if a concurrent gc took an object folder (the tree editor cannot
    /// resume a failed write, and rewriting objects that exist costs only time). Fills
    /// `written` with the blobs of files written whole and `now` with what each changed path
    /// holds in the new tree (for the index, without reading the tree). Returns the tree
    /// and the commit.
    fn write_changes(
        &self,
        parent: Option<ObjectId>,
        changes: &[Change],
        message: &str,
        signature: &gix::actor::Signature,
        written: &mut Vec<(String, ObjectId)>,
        now: &mut Vec<Option<ObjectId>>,
    ) -> Result<(ObjectId, ObjectId)> {
        let base_tree = match parent {
            Some(commit) => self.commit_tree_id(commit)?,
            None => ObjectId::empty_tree(self.repo.object_hash()),
        };
        self.gc_proof(|| {
            written.clear();
            now.clear();
            for change in changes {
                let blob = match (change.blob, &change.bytes) {
                    (Some(blob), _) => Some(blob),
                    (None, Some(bytes)) => Some(self.write_loose(gix::objs::Kind::Blob, bytes)?),
                    (None, None) => None,
                };
                // A reopened segment holds lines convo may not have written (a pull's):
                // only segments written whole are known good.
                if let Some(blob) = blob
                    && change.append_from.is_none()
                {
                    written.push((change.path.clone(), blob));
                }
                now.push(blob);
            }
            let tree = self.write_edited_tree(base_tree, changes, now)?;
            let commit = self.write_commit_object(tree, parent.as_slice(), message, signature)?;
            Ok((tree, commit))
        })
    }

    /// `base` with each of `changes` holding what `now` says (`None`: removed), written.
    /// When they all lie in one fan folder `conversations` already has (an append), only
    /// that folder goes through the tree editor, and the `conversations` tree (1,024
    /// entries, 30 KB in a big store) gets the folder's new id in its raw bytes and is
    /// remembered: neither this commit nor the reads after it inflate and decode it again.
    fn write_edited_tree(&self, base: ObjectId, changes: &[Change], now: &[Option<ObjectId>]) -> Result<ObjectId> {
        let fan_of = |path: &str| {
            let rest = path.strip_prefix(layout::CONVERSATIONS)?.strip_prefix('/')?;
            let (fan, inside) = rest.split_once('/')?;
            (!inside.is_empty()).then_some((fan.to_owned(), inside.to_owned()))
        };
        let one_fan = changes
            .iter()
            .map(|c| fan_of(&c.path))
            .collect::<Option<Vec<_>>>()
            .filter(|fans| fans.windows(2).all(|w| w[0].0 == w[1].0) && now.iter().all(Option::is_some));
        if let Some(fans) = one_fan
            && let Some((fan, _)) = fans.first()
            && let Some((conversations, true)) =
                Store::entry_in(&self.object_data(base, gix::objs::Kind::Tree)?, layout::CONVERSATIONS)
            && let listing = self.listing(conversations)?
            && let Some((fan_tree, true)) = listing.find(fan)
        {
            let mut editor = self.tree_editor(fan_tree)?;
            // Every change holds a blob (checked above).
            for ((_, inside), blob) in fans.iter().zip(now.iter().flatten()) {
                editor.upsert(inside.split('/'), EntryKind::Blob, *blob).map_err(git_err(format!("add {inside}")))?;
            }
            let fan_tree = self.write_tree_edits(&mut editor)?;
            if let Some(bytes) = listing.with_folder(fan, fan_tree) {
                // Stored, not deflated (zlib level 0): the tree is mostly 20-byte ids, which
                // do not compress, and every commit in a big store reads and writes it; at
                // level 1 inflating its 30 KB alone was a fifth of a `log`. `git gc` packs
                // it compressed like any other object.
                let conversations = self.write_loose_at(gix::objs::Kind::Tree, &bytes, Some(0))?;
                self.remember_listing(conversations, bytes);
                let mut root = self.tree_editor(base)?;
                root.upsert([layout::CONVERSATIONS], EntryKind::Tree, conversations)
                    .map_err(git_err("add conversations"))?;
                return self.write_tree_edits(&mut root);
            }
        }
        let mut editor = self.tree_editor(base)?;
        for (change, blob) in changes.iter().zip(now) {
            match blob {
                Some(blob) => editor.upsert(change.path.split('/'), EntryKind::Blob, *blob),
                None => editor.remove(change.path.split('/')),
            }
            .map_err(git_err(format!("change {}", change.path)))?;
        }
        self.write_tree_edits(&mut editor)
    }

    /// Write a commit of `tree` on `parents` by `signature` (author and committer) as a
    /// loose object (see [`Store::write_loose`]). Every commit convo makes is built here,
    /// so they all carry the same headers; only redact's rewrite builds its own, since it
    /// keeps each rewritten commit's author, committer and encoding. The caller retries it
    /// under [`Store::gc_proof`] with the objects it belongs with.
    pub(super) fn write_commit_object(
        &self,
        tree: ObjectId,
        parents: &[ObjectId],
        message: &str,
        signature: &gix::actor::Signature,
    ) -> Result<ObjectId> {
        let commit = gix::objs::Commit {
            message: message.into(),
            tree,
            author: signature.clone(),
            committer: signature.clone(),
            encoding: None,
            parents: parents.iter().copied().collect(),
            extra_headers: Vec::new(),
        };
        let mut bytes = Vec::new();
        gix::objs::WriteTo::write_to(&commit, &mut bytes).map_err(io_err("commit"))?;
        self.write_loose(gix::objs::Kind::Commit, &bytes)
    }

    /// Step 7 for one cache. Best effort: a cache that does not keep up is rebuilt by the
    /// next read.
    fn notify(&self, observer: Observer, committed: &Committed) {
        match observer {
            Observer::Conversation { id, stats, updated, who, previous, alone } => {
                if let Ok(Some(tree)) = self.entry_at(committed.tree, &layout::conversation_dir(&id)) {
                    let cache = Cache {
                        tree,
                        stats,
                        updated,
                        last_commit: Some(committed.commit),
                        conversations_at_last: None,
                        who,
                    };
                    self.write_cache(&id, &cache);
                    self.catalogue_note(&id, &cache, alone);
                }
                self.record_log(&id, committed.commit, previous);
            }
            Observer::Log { id, previous } => self.record_log(&id, committed.commit, previous),
            Observer::Removed { id } => self.forget_cache(&id),
            Observer::Catalogue => self.catalogue_refresh(),
            Observer::Rewritten => self.forget_derived(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::txn::tests::git;

    fn title(id: &str, text: &str) -> Change {
        let path = layout::meta_path(id);
        Change { path, bytes: Some(format!(r#"{{"title":"{text}","created":"c"}}"#).into()), ..Change::default() }
    }

    fn clock() -> Clock {
        Clock::fixed(chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap())
    }

    /// A tree of `entries` (name, id, is a folder), written.
    fn tree(store: &Store, entries: &[(&str, ObjectId, bool)]) -> ObjectId {
        let mut entries: Vec<gix::objs::tree::Entry> = entries
            .iter()
            .map(|(name, oid, dir)| gix::objs::tree::Entry {
                mode: if *dir { EntryKind::Tree.into() } else { EntryKind::Blob.into() },
                filename: (*name).into(),
                oid: *oid,
            })
            .collect();
        entries.sort_by(|a, b| a.filename.cmp(&b.filename));
        let mut bytes = Vec::new();
        gix::objs::WriteTo::write_to(&gix::objs::Tree { entries }, &mut bytes).unwrap();
        store.write_loose(gix::objs::Kind::Tree, &bytes).unwrap()
    }

    /// The paths a move of HEAD changes are found without listing the folders both trees
    /// share, and are the same as comparing every file: a file that became a folder (and
    /// back), a folder gone, one changed file among unchanged ones.
    #[test]
    fn changed_paths_skips_equal_folders_and_sees_files_become_folders() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::init(dir.path()).unwrap();
        let blob = |text: &str| store.write_loose(gix::objs::Kind::Blob, text.as_bytes()).unwrap();
        let (b1, b2, b3, b4, b5, b6) = (blob("1"), blob("2"), blob("3"), blob("4"), blob("5"), blob("6"));
        let same = tree(&store, &[("s", b1, false)]);
        let old = tree(
            &store,
            &[
                ("a", tree(&store, &[("x", b1, false), ("y", b2, false)]), true),
                ("b", b3, false),
                ("c", tree(&store, &[("d", tree(&store, &[("e", b4, false)]), true)]), true),
                ("g", b5, false),
                ("same", same, true),
            ],
        );
        let new = tree(
            &store,
            &[
                ("a", tree(&store, &[("x", b6, false), ("y", b2, false)]), true),
                ("b", tree(&store, &[("z", b3, false)]), true),
                ("f", b1, false),
                ("g", tree(&store, &[("h", b5, false)]), true),
                ("same", same, true),
            ],
        );
        let signature = gix::actor::Signature {
            name: "t".into(),
            email: "t@example.com".into(),
            time: gix::date::Time { seconds: 0, offset: 0 },
        };
        let from = store.write_commit_object(old, &[], "old\n", &signature).unwrap();
        let changed = store.changed_paths(Some(from), new).unwrap();
        assert_eq!(changed, ["a/x", "b", "b/z", "c/d/e", "f", "g", "g/h"]);
        // The same as comparing every file of both trees, as it was done before.
        let (mut before, mut after) = (std::collections::HashMap::new(), std::collections::HashMap::new());
        store.collect_blobs(old, "", &mut before).unwrap();
        store.collect_blobs(new, "", &mut after).unwrap();
        let mut every: Vec<String> =
            after.iter().filter(|(p, id)| before.get(*p) != Some(id)).map(|(p, _)| p.clone()).collect();
        every.extend(before.keys().filter(|p| !after.contains_key(*p)).cloned());
        every.sort();
        assert_eq!(changed, every);
        let mut all = store.changed_paths(None, new).unwrap();
        all.sort();
        assert_eq!(all, ["a/x", "a/y", "b/z", "f", "g/h", "same/s"]);
    }

    /// Whether some handle holds the store's write lock (an flock), seen from another one.
    fn locked(dir: &std::path::Path) -> bool {
        let Ok(file) = std::fs::File::open(dir.join(".git/convo/lock")) else { return false };
        matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
    }

    /// A lagging commit's journal must not be written over by the next commit under the same
    /// lock (an import of several sessions commits once per session): its paths would then
    /// never be mirrored, and `git status` would show them until someone ran `fsck`.
    #[test]
    fn a_commit_that_lags_is_mirrored_before_the_next_one_under_the_same_lock() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::init(dir.path()).unwrap();
        let clock = clock();
        let lock = store.lock().unwrap();
        let mut tx = lock.transaction();
        tx.change(title("01KDVDQ4K00000000000000000", "zero"));
        tx.commit_message("zero", &clock).unwrap();
        let held = dir.path().join(".git/index.lock");
        std::fs::write(&held, b"a git's").unwrap();
        let mut tx = lock.transaction();
        tx.change(title("01KDVDQ4K00000000000000001", "one"));
        let first = tx.commit_message("one", &clock).unwrap();
        assert!(first.landed.warning.is_some(), "the index was held: the mirror lags");
        std::fs::remove_file(&held).unwrap();

        let mut tx = lock.transaction();
        tx.change(title("01KDVDQ4K00000000000000002", "two"));
        let second = tx.commit_message("two", &clock).unwrap();
        assert_eq!(second.landed.warning, None);
        // Untracked files count: convo's stores hide them from a plain `git status`.
        assert_eq!(git(dir.path(), &["status", "--porcelain", "--untracked-files=all"]), "");
        assert!(!store.journal_pending());
    }

    /// When the index is still held at the next commit, that commit lands too (with the
    /// warning) and its journal names the earlier commit's paths as well as its own: the
    /// next command's replay then mirrors both.
    #[test]
    fn a_commit_after_one_that_lags_still_lands_and_its_journal_keeps_both() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::init(dir.path()).unwrap();
        let clock = clock();
        let lock = store.lock().unwrap();
        let mut tx = lock.transaction();
        tx.change(title("01KDVDQ4K00000000000000000", "zero"));
        tx.commit_message("zero", &clock).unwrap();
        let held = dir.path().join(".git/index.lock");
        std::fs::write(&held, b"a git's").unwrap();
        for (id, text) in [("01KDVDQ4K00000000000000001", "one"), ("01KDVDQ4K00000000000000002", "two")] {
            let mut tx = lock.transaction();
            tx.change(title(id, text));
            let committed = tx.commit_message(text, &clock).unwrap();
            assert!(committed.landed.warning.is_some(), "{text}: the index was held");
        }
        let journal = store.pending_journal().unwrap().expect("a journal names the lagging paths").paths;
        assert_eq!(
            journal,
            [layout::meta_path("01KDVDQ4K00000000000000002"), layout::meta_path("01KDVDQ4K00000000000000001")]
        );
        // A commit refused before HEAD moves leaves the carried paths where they were. (By
        // plumbing: `git commit` would want the held index.)
        let outside = git(dir.path(), &["commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "outside"]);
        git(dir.path(), &["update-ref", "HEAD", &outside]);
        let mut tx = lock.transaction();
        tx.change(title("01KDVDQ4K00000000000000003", "three"));
        assert!(matches!(tx.commit_message("three", &clock), Err(StoreError::HeadMoved { .. })));
        assert_eq!(store.pending_journal().unwrap().map(|j| j.paths), Some(journal));
        drop(lock);
        std::fs::remove_file(&held).unwrap();
        drop(store.lock().unwrap());
        assert_eq!(git(dir.path(), &["status", "--porcelain", "--untracked-files=all"]), "");
        assert!(!store.journal_pending());
    }

    /// `store.transaction()` takes the write lock and holds it until the transaction is
    /// committed or dropped; `lock.transaction()` leaves the caller's lock held after it.
    #[test]
    fn a_transaction_of_its_own_holds_the_lock_until_committed_or_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::init(dir.path()).unwrap();
        let clock = clock();
        assert!(!locked(dir.path()));
        let mut tx = store.transaction().unwrap();
        assert!(locked(dir.path()), "a transaction holds the lock from its start");
        tx.change(title("01KDVDQ4K00000000000000000", "zero"));
        tx.commit_message("zero", &clock).unwrap();
        assert!(!locked(dir.path()), "a committed transaction released its lock");
        let tx = store.transaction().unwrap();
        assert!(locked(dir.path()));
        drop(tx);
        assert!(!locked(dir.path()), "a dropped transaction released its lock");

        let lock = store.lock().unwrap();
        let mut tx = lock.transaction();
        tx.change(title("01KDVDQ4K00000000000000001", "one"));
        tx.commit_message("one", &clock).unwrap();
        assert!(locked(dir.path()), "the workflow's lock outlives its transaction");
        drop(lock);
        assert!(!locked(dir.path()));
        assert_eq!(git(dir.path(), &["log", "--format=%s"]), "one\nzero");
    }
}
