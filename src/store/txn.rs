//! The write lock, the journal, recovery, and the working-tree and index half of a commit
//! (the sequence every commit runs is [`Transaction`](super::transaction::Transaction)'s).
//!
//! A writer takes an exclusive `flock` on `.git/convo/lock` (the kernel drops it when the
//! holder dies, so there is no stale lock to clean up). A commit names every path it will
//! touch in the journal `.git/convo/journal` before it writes anything, moves HEAD's branch,
//! mirrors the paths into the working tree and the index, and blanks the journal. Whoever
//! finds a journal that names paths (under the lock) replays the mirror from HEAD, which is
//! right whether or not the commit landed. Reads use HEAD's tree, never the working tree, so
//! they cannot see a half-written file.
//!
//! Linux only: the lock relies on `flock` being dropped by the kernel when its holder dies,
//! the index is mapped with `MAP_POPULATE`, replaced files are preallocated with
//! `fallocate`, and convo's `git gc` is started with `prctl(PR_SET_PDEATHSIG)` so it dies
//! with a killed convo.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::index::entry::{Flags, Mode, Stage, Stat};
use serde::{Deserialize, Serialize};

use super::{Result, Store, StoreError, create_private_dir, git_err, io_err, layout};
use crate::clock::Clock;

/// The store's write lock, held: proof that no other writer commits until it is dropped.
/// Taken by [`Store::lock`] for a workflow that reads and commits several times under one
/// lock (each commit a [`Lock::transaction`]), or by [`Store::transaction`] for a single
/// commit, which then owns it. It belongs to the store that took it, so a transaction can
/// never commit to one store under another's lock.
pub struct Lock<'s> {
    _file: File,
    pub(super) store: &'s Store,
    /// A commit under this lock landed but its mirror failed: the journal still names its
    /// paths, and the next transaction mirrors them too before it blanks the journal.
    pub(super) lagging: std::sync::atomic::AtomicBool,
}

impl Drop for Lock<'_> {
    /// The memo goes before the lock does: once another writer can commit, HEAD is only
    /// what the files say.
    fn drop(&mut self) {
        if let Ok(mut memo) = self.store.head.lock() {
            *memo = HeadMemo::default();
        }
        // Released by name, not only by closing the file: a child forked by another thread
        // (a `git` with a `pre_exec`) shares this open file until its exec closes it, and
        // the lock would outlive this writer for that moment.
        let _ = self._file.unlock();
    }
}

/// HEAD's branch and commit, read once while the write lock is held. An append resolved
/// HEAD through gix a dozen times (open, read and close HEAD and the branch, stat
/// `packed-refs`: 200 system calls); under the lock only this process moves HEAD
/// ([`Store::move_head`] updates the memo, and checks the files before it moves). Without
/// the lock nothing is remembered: a long-running reader (`watch`, `mcp`) would otherwise
/// keep a stale HEAD.
#[derive(Default)]
pub(super) struct HeadMemo {
    held: bool,
    branch: Option<Option<gix::refs::FullName>>,
    commit: Option<Option<ObjectId>>,
}

impl HeadMemo {
    pub(super) fn commit(&self) -> Option<Option<ObjectId>> {
        if self.held { self.commit } else { None }
    }

    pub(super) fn branch(&self) -> Option<Option<gix::refs::FullName>> {
        if self.held { self.branch.clone() } else { None }
    }

    pub(super) fn remember_commit(&mut self, commit: Option<ObjectId>) {
        if self.held {
            self.commit = Some(commit);
        }
    }

    pub(super) fn remember_branch(&mut self, branch: Option<gix::refs::FullName>) {
        if self.held {
            self.branch = Some(branch);
        }
    }
}

/// Where a commit can be interrupted in tests, in the order the steps run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailPoint {
    /// Journal written, nothing else.
    Journal,
    /// Objects written and HEAD moved: the commit has landed, the working tree lags.
    Committed,
    /// Working tree written, index not yet.
    Worktree,
    /// Everything done but the journal still there.
    Index,
    /// The commit is done and convo's `git gc` is running.
    Gc,
}

impl FailPoint {
    pub fn parse(s: &str) -> Option<FailPoint> {
        Some(match s {
            "journal" => FailPoint::Journal,
            "committed" => FailPoint::Committed,
            "worktree" => FailPoint::Worktree,
            "index" => FailPoint::Index,
            "gc" => FailPoint::Gc,
            _ => return None,
        })
    }
}

/// Whether housekeeping ran after a commit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GcOutcome {
    #[default]
    NotNeeded,
    Ran,
    /// The repository needs packing but `git` is not installed.
    GitMissing,
}

/// Which run of gc's steps [`Store::pack_durably`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Packing {
    /// After a commit: loose objects packed, packs past `gc.autoPackLimit` packed into one,
    /// unreachable loose objects older than two weeks pruned.
    Housekeeping,
    /// After redact's rewrite: everything reachable packed into one, every unreachable
    /// object pruned now.
    Prune,
}

impl Packing {
    fn purpose(self) -> &'static str {
        match self {
            Packing::Housekeeping => "pack the store's objects",
            Packing::Prune => "prune the old commits",
        }
    }
}

#[derive(Serialize, Deserialize)]
pub(super) struct Journal {
    pub(super) paths: Vec<String>,
}

/// One file a commit writes (`Some(bytes)`, or the blob `blob` already written) or removes
/// (neither).
#[derive(Default)]
pub(crate) struct Change {
    pub path: String,
    pub bytes: Option<Vec<u8>>,
    /// Already in the object database (a segment written while its input was read).
    pub blob: Option<ObjectId>,
    /// The file's committed bytes are `bytes[..n]`: the working-tree copy can be appended
    /// to instead of replaced.
    pub append_from: Option<usize>,
}

/// What happened around a commit once it landed, which every writer reports the same way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Landed {
    /// Whether housekeeping ran (or could not, for want of git).
    pub gc: GcOutcome,
    /// Set when the commit landed but mirroring it into the working tree and index did not
    /// (the next command finishes it).
    pub warning: Option<String>,
}

impl Store {
    /// Drop what the memo says of HEAD: another program moved it under the lock.
    pub(super) fn forget_head(&self) {
        if let Ok(mut memo) = self.head.lock() {
            memo.commit = None;
            memo.branch = None;
        }
    }

    /// `.git/convo/journal`: the paths a commit under way touches, written in place at its
    /// start and blanked (overwritten with spaces) at its end. A blank or missing file means
    /// no commit is under way. Kept rather than made and removed per commit: on ext4 a new
    /// file costs an inode allocation that skips every inode freed in the last minute, and
    /// each removal adds one to skip.
    ///
    /// A journal that is not JSON is a torn write of one, by a writer that died writing
    /// it, before it wrote anything else: it names nothing to repair. JSON of another shape
    /// (a future convo's) is refused, not guessed at.
    pub(super) fn journal_path(&self) -> PathBuf {
        self.state_dir().join("journal")
    }

    /// `.git/convo/txn`: where convo kept the journal before, a new file each commit,
    /// removed at its end. One an older convo left is still replayed (and removed).
    fn legacy_journal_path(&self) -> PathBuf {
        self.state_dir().join("txn")
    }

    /// The paths of the commit a writer did not finish, if any: the journal's, and an
    /// older convo's (both are replayed when both are there).
    pub(super) fn pending_journal(&self) -> Result<Option<Journal>> {
        let unreadable = |path: &Path, e: &dyn std::fmt::Display| StoreError::BadFile {
            path: path.display().to_string(),
            message: format!("unreadable journal ({e})"),
        };
        let legacy_path = self.legacy_journal_path();
        let legacy: Option<Journal> = match read_journal_file(&legacy_path)? {
            Some(bytes) => Some(serde_json::from_slice(&bytes).map_err(|e| unreadable(&legacy_path, &e))?),
            None => None,
        };
        let path = self.journal_path();
        let current: Option<Journal> = match read_journal_file(&path)? {
            Some(bytes) if !bytes.iter().all(u8::is_ascii_whitespace) => match serde_json::from_slice(&bytes) {
                Ok(journal) => Some(journal),
                // Torn: not JSON at all. Whole JSON that is not a journal is not ours to skip.
                Err(e) if serde_json::from_slice::<serde_json::Value>(&bytes).is_ok() => {
                    return Err(unreadable(&path, &e));
                }
                Err(_) => None,
            },
            _ => None,
        };
        Ok(match (legacy, current) {
            (Some(mut legacy), Some(current)) => {
                legacy.paths.extend(current.paths);
                Some(legacy)
            }
            (legacy, current) => legacy.or(current),
        })
    }

    /// Whether a writer left a commit unfinished. Reads only the journal's first byte when
    /// it is blank (a journal is written, and blanked, from its start).
    pub(super) fn journal_pending(&self) -> bool {
        let blank = || -> std::io::Result<bool> {
            use std::os::unix::fs::FileExt;
            let file = open_journal(&self.journal_path(), false)?;
            let mut first = [0u8; 1];
            Ok(file.read_at(&mut first, 0)? == 0 || first[0].is_ascii_whitespace())
        };
        let legacy = std::fs::symlink_metadata(self.legacy_journal_path()).is_ok();
        // Anything unreadable counts: taking the lock then reports it.
        legacy || !blank().unwrap_or_else(|e| e.kind() == std::io::ErrorKind::NotFound)
    }

    /// End the journal: blank it in place (and remove an older convo's). One that a big
    /// commit (a clone, an import) made long is cut back, so later commits do not write
    /// and read its length each time.
    pub(super) fn clear_journal(&self) -> Result<()> {
        let legacy = self.legacy_journal_path();
        match std::fs::remove_file(&legacy) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_err(legacy)(e)),
            _ => {}
        }
        let path = self.journal_path();
        let file = match open_journal(&path, true) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(journal_err(&path, e)),
        };
        let len = file.metadata().map_err(io_err(&path))?.len();
        if len > JOURNAL_KEPT {
            return file.set_len(0).map_err(io_err(path));
        }
        // Spaces, not a truncation: the file keeps its block, so nothing is freed.
        use std::os::unix::fs::FileExt;
        file.write_all_at(&vec![b' '; len as usize], 0).map_err(io_err(path))
    }

    /// Take the write lock, waiting for another writer to finish, and repair what a killed
    /// writer left behind.
    pub fn lock(&self) -> Result<Lock<'_>> {
        let dir = self.state_dir();
        create_private_dir(&dir)?;
        let path = dir.join("lock");
        let file = private_options().read(true).write(true).truncate(false).open(&path).map_err(io_err(&path))?;
        file.lock().map_err(io_err(&path))?;
        // Whatever was read before the lock may be another writer's past.
        if let Ok(mut memo) = self.head.lock() {
            *memo = HeadMemo { held: true, ..HeadMemo::default() };
        }
        let lock = Lock { _file: file, store: self, lagging: Default::default() };
        // A store from before the marker becomes a marked one with its first write.
        if self.unmarked.swap(false, std::sync::atomic::Ordering::Relaxed) {
            self.set_up()?;
        }
        // What a killed writer or a killed git left: its gc still running, its git locks.
        self.reap_orphaned_gc();
        let orphaned = self.journal_pending();
        self.clear_stale_git_locks(orphaned);
        if orphaned {
            self.recover(&lock)?;
        }
        // Writers write only the fan-out shape: a store from before it moves first. A move
        // whose mirror lags is the lock's to carry into its next commit.
        self.fan_out(&lock)?;
        Ok(lock)
    }

    pub(super) fn fail(&self, at: FailPoint) {
        if self.fail_point == Some(at) {
            if at == FailPoint::Gc {
                // Let the gc get under way (repack, pack-refs) before convo dies.
                std::thread::sleep(std::time::Duration::from_millis(300));
            }
            std::process::abort();
        }
    }

    /// The working tree and index half of a commit whose changes are in hand.
    pub(super) fn mirror_changes(
        &self,
        changes: &[Change],
        paths: &[String],
        now: &[Option<ObjectId>],
        tree: ObjectId,
    ) -> Result<()> {
        for change in changes {
            let written;
            let bytes = match change.blob {
                Some(blob) => {
                    written = self.read_blob(blob)?;
                    Some(written.as_slice())
                }
                None => change.bytes.as_deref(),
            };
            match (change.append_from, bytes) {
                (Some(n), Some(bytes)) => self.append_worktree_file(&change.path, bytes, n)?,
                _ => self.write_worktree_file(&change.path, bytes)?,
            }
        }
        self.fail(FailPoint::Worktree);
        self.sync_index_to(paths, now, tree)?;
        self.fail(FailPoint::Index);
        Ok(())
    }

    /// Author and committer: the person ([`Store::identity`]).
    pub(super) fn signature(&self, clock: &Clock) -> gix::actor::Signature {
        let person = self.signing_person();
        let now = clock.now();
        gix::actor::Signature {
            name: person.name.into(),
            email: person.email.into(),
            time: gix::date::Time { seconds: now.timestamp(), offset: 0 },
        }
    }

    /// [`signature`](Self::signature) dated as `commit` was committed: for the commits convo
    /// makes on its own, which no clock of the user's asked for.
    pub(super) fn signature_as_of(&self, commit: ObjectId) -> Result<gix::actor::Signature> {
        let seconds = self
            .repo
            .find_commit(commit)
            .map_err(git_err(format!("read {commit}")))?
            .time()
            .map_err(git_err(format!("read the time of {commit}")))?
            .seconds;
        let clock = Clock::fixed(chrono::DateTime::from_timestamp(seconds, 0).unwrap_or_default());
        Ok(self.signature(&clock))
    }

    /// Name the paths about to change, so a crash from here on can be repaired from HEAD.
    /// Written in place over the blank journal, padded with spaces to its length, so no
    /// stale byte of a longer earlier one (a torn one, never blanked) is left after it.
    pub(crate) fn write_journal(&self, paths: &[String]) -> Result<()> {
        let mut bytes = serde_json::to_vec(&Journal { paths: paths.to_vec() }).map_err(super::git_err("journal"))?;
        let path = self.journal_path();
        let file = open_journal(&path, true).map_err(|e| journal_err(&path, e))?;
        let len = file.metadata().map_err(io_err(&path))?.len() as usize;
        if len > bytes.len() + JOURNAL_KEPT as usize {
            file.set_len(0).map_err(io_err(&path))?;
        } else if bytes.len() < len {
            bytes.resize(len, b' ');
        }
        use std::os::unix::fs::FileExt;
        file.write_all_at(&bytes, 0).map_err(io_err(path))
    }

    /// Mirror the journalled paths from HEAD into the working tree and index, then drop the
    /// journal: the end of every commit, and the repair after a crash.
    pub(crate) fn replay_journal(&self, lock: &Lock<'_>) -> Result<()> {
        self.recover(lock)
    }

    /// Replay the working-tree and index half of an interrupted commit from HEAD. Git locks
    /// a killed writer left are taken over by [`Store::lock`] first, and only when no git
    /// could be holding them.
    fn recover(&self, _lock: &Lock<'_>) -> Result<()> {
        let Some(journal) = self.pending_journal()? else {
            // Blank, or torn by a writer that died writing it: nothing to repair.
            return self.clear_journal();
        };
        self.mirror_from_head(&journal.paths)?;
        self.clear_journal()
    }

    /// Write `paths` as HEAD has them into the working tree and index: the mirror of a
    /// commit convo did not make from changes in hand (a fast-forward, an import, the
    /// repair of an interrupted one).
    pub(super) fn mirror_from_head(&self, paths: &[String]) -> Result<()> {
        // convo journals only its own paths; anything else in the file was not written by
        // convo and is never acted on.
        let paths: Vec<String> = paths.iter().filter(|p| layout::is_store_path(p)).cloned().collect();
        let tree = self.head_tree_id()?.unwrap_or_else(|| ObjectId::empty_tree(self.repo.object_hash()));
        for file in &paths {
            let bytes = match self.entry_at(tree, file)? {
                Some(blob) => Some(self.read_blob(blob)?),
                None => None,
            };
            self.write_worktree_file(file, bytes.as_deref())?;
        }
        self.sync_index(&paths, tree)?;
        let tmp = self.state_dir().join("tmp");
        let _ = std::fs::remove_dir_all(&tmp);
        Ok(())
    }

    /// Bring a working-tree file from its committed bytes `bytes[..committed]` to `bytes` by
    /// appending, which is much cheaper than replacing it; if the file is not what HEAD had
    /// (edited by hand, or a torn earlier write), replace it whole.
    fn append_worktree_file(&self, rel: &str, bytes: &[u8], committed: usize) -> Result<()> {
        let target = self.worktree_path(rel)?;
        match std::fs::read(&target) {
            Ok(current) if current == bytes[..committed] => {
                let mut file = std::fs::OpenOptions::new().append(true).open(&target).map_err(io_err(&target))?;
                file.write_all(&bytes[committed..]).map_err(io_err(&target))
            }
            _ => self.write_worktree_file(rel, Some(bytes)),
        }
    }

    /// Write (or delete) one working-tree file atomically: a reader sees the old or the new
    /// file, never a torn one.
    fn write_worktree_file(&self, rel: &str, bytes: Option<&[u8]>) -> Result<()> {
        let target = self.worktree_path(rel)?;
        match bytes {
            Some(bytes) => {
                if let Some(parent) = target.parent() {
                    create_private_dir(parent)?;
                }
                write_private_file(&self.state_dir(), &target, bytes)
            }
            None => match std::fs::remove_file(&target) {
                Ok(()) => {
                    let mut dir = target.parent();
                    while let Some(d) = dir.filter(|d| *d != self.root) {
                        if std::fs::remove_dir(d).is_err() {
                            break;
                        }
                        dir = d.parent();
                    }
                    Ok(())
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io_err(target)(e)),
            },
        }
    }

    /// `rel` under the store's root, once it is known to be a path convo writes
    /// ([`layout::is_store_path`]) with no symlink on the way: the working tree is never a
    /// way out of the store, whatever a journal, a tree or a hand-made link says.
    pub(super) fn worktree_path(&self, rel: &str) -> Result<PathBuf> {
        if !layout::is_store_path(rel) {
            return Err(StoreError::BadFile {
                path: rel.to_owned(),
                message: "not a path convo writes; refusing to touch it".into(),
            });
        }
        let mut path = self.root.clone();
        let mut shown = String::new();
        for component in rel.split('/') {
            path.push(component);
            if !shown.is_empty() {
                shown.push('/');
            }
            shown.push_str(component);
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => return Err(StoreError::Symlink { path: shown }),
                Ok(_) => {}
                // Nothing below a missing folder exists either.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => return Err(io_err(path)(e)),
            }
        }
        Ok(self.root.join(rel))
    }

    /// Point the index entries of `paths` at what `tree` holds, with fresh stat data, so
    /// `git status` sees no change. Costs one read and write of the index.
    fn sync_index(&self, paths: &[String], tree: ObjectId) -> Result<()> {
        let mut now = Vec::with_capacity(paths.len());
        for rel in paths {
            now.push(self.entry_at(tree, rel)?);
        }
        self.sync_index_to(paths, &now, tree)
    }

    /// The index brought to `now`, what each of `paths` holds in `tree` (`None`: removed),
    /// known to the caller without reading the tree. A torn index is rebuilt from `tree`.
    fn sync_index_to(&self, paths: &[String], now: &[Option<ObjectId>], tree: ObjectId) -> Result<()> {
        let index_path = self.repo.index_path();
        // Held from before the read to the rename: a git command that writes the index in
        // between is refused, not overwritten.
        let lock = self.lock_index()?;
        let mut now: Vec<Option<(ObjectId, Stat)>> = {
            let mut with_stat = Vec::with_capacity(paths.len());
            for (rel, id) in paths.iter().zip(now) {
                with_stat.push(match id {
                    Some(id) => Some((*id, self.file_stat(rel)?)),
                    None => None,
                });
            }
            with_stat
        };
        // The common write (an append): every path has an entry already or is new, and the
        // index is written from a mapping of the old one with those entries patched. Mapped
        // with its pages populated at once: at 10,000 conversations a read(2) of the 2.5 MB
        // cost more, and so did a lazy mapping (a fault and a stall every few entries).
        if now.iter().all(Option::is_some)
            && let Ok(file) = File::open(&index_path)
            // SAFETY: git and convo replace the index by renaming a new file over it, never
            // write it in place, and we hold `index.lock`: the mapped bytes do not change.
            && let Ok(bytes) = unsafe { memmap2::MmapOptions::new().populate().map(&file) }
        {
            let updates: Vec<super::index_patch::Update> = paths
                .iter()
                .zip(&now)
                .filter_map(|(path, now)| now.map(|(id, stat)| super::index_patch::Update { path, id, stat }))
                .collect();
            let hash_len = self.repo.object_hash().len_in_bytes();
            if let Some(pieces) = super::index_patch::patched(&bytes, &updates, hash_len) {
                if let Some((version, ..)) = super::index_patch::header(&bytes, hash_len)
                    && self.split_index_wanted(bytes.len())
                {
                    return self.reshare(lock, &bytes, &pieces, version);
                }
                return lock.replace_index_with(&bytes, &pieces, self.repo.object_hash());
            }
            if self.split_index_wanted(0)
                && let Some(link) = super::split_index::link(&bytes, hash_len)
                && let Ok(file) = File::open(self.shared_index_path(link.shared))
                // Mapped lazily: an append to paths the split index has reads only the
                // shared index's first and last page.
                // SAFETY: a shared index is named by the hash of its bytes and never written
                // again once renamed into place (git and convo alike write a new one), so the
                // mapped bytes do not change while we read them.
                && let Ok(shared) = unsafe { memmap2::Mmap::map(&file) }
                && let Some(outcome) = super::split_index::patched(
                    &bytes,
                    &link,
                    &shared,
                    &updates,
                    hash_len,
                    self.split_index_max_percent(),
                )
            {
                return match outcome {
                    super::split_index::Outcome::Split(body) => {
                        // Used again: kept from expiring (see `reshare`), as git keeps it.
                        let _ = File::open(self.shared_index_path(link.shared))
                            .and_then(|f| f.set_modified(std::time::SystemTime::now()));
                        lock.replace_index_hashed(&body, self.repo.object_hash())
                    }
                    super::split_index::Outcome::Reshare { pieces, version } => {
                        self.reshare(lock, &shared, &pieces, version)
                    }
                };
            }
        }
        // Our own file, written whole by rename: skip re-hashing it (decoding still catches a
        // torn one).
        let mut index = match gix::index::File::at(&index_path, self.repo.object_hash(), true, Default::default()) {
            Ok(index) => index,
            // Missing, and these paths are the whole tree (a store's first commit, a checkout
            // after a clone): their entries are the index, and they were just written.
            Err(_) if !index_path.exists() && self.covers_tree(paths, tree)? => {
                gix::index::File::from_state(gix::index::State::new(self.repo.object_hash()), index_path)
            }
            // The index is derived state: missing otherwise (deleted), torn or zeroed (a power
            // loss), it is rebuilt from the whole tree. Started empty instead, it would hold
            // only this commit's paths, and a `git commit` in the store would then delete
            // every other file.
            Err(_) => return self.rebuild_index(tree, lock),
        };
        let mut new = Vec::new();
        let mut removed: Vec<&str> = Vec::new();
        for (rel, now) in paths.iter().zip(now.drain(..)) {
            let path = rel.as_bytes().as_bstr();
            match now {
                Some((id, stat)) => {
                    match index.entry_mut_by_path_and_stage(path, Stage::Unconflicted) {
                        Some(entry) => {
                            entry.id = id;
                            entry.stat = stat;
                            entry.mode = Mode::FILE;
                        }
                        // Pushed after every lookup: lookups search the sorted entries, and
                        // a pushed one unsorts them (a later path would be missed, and
                        // added twice).
                        None => new.push((stat, id, path)),
                    }
                }
                None => removed.push(rel),
            }
        }
        if !new.is_empty() {
            for (stat, id, path) in new {
                index.dangerously_push_entry(stat, id, Flags::empty(), Mode::FILE, path);
            }
            index.sort_entries();
        }
        if !removed.is_empty() {
            // A set: the fan-out of a big legacy store removes every path there is.
            let removed: std::collections::HashSet<&[u8]> = removed.iter().map(|r| r.as_bytes()).collect();
            index.remove_entries(|_, path, _| removed.contains(path.as_bytes()));
        }
        self.write_index(&mut index, lock)
    }

    /// Whether an append splits the index (see `split_index`): as git's `core.splitIndex`
    /// says when it is set; otherwise when the whole index is `SPLIT_FROM` bytes or more
    /// (`index_len` 0: keep an index split that is).
    fn split_index_wanted(&self, index_len: usize) -> bool {
        /// Below this, replacing the whole index costs about as much as the split's
        /// bookkeeping (2,000 to 5,000 entries).
        const SPLIT_FROM: usize = 512 * 1024;
        match self.repo.config_snapshot().boolean("core.splitIndex") {
            Some(wanted) => wanted,
            None => index_len == 0 || index_len >= SPLIT_FROM,
        }
    }

    /// git's `splitIndex.maxPercentChange`: 20 unless set between 0 and 100, as git reads it.
    fn split_index_max_percent(&self) -> u32 {
        let set = self.repo.config_snapshot().integer("splitIndex.maxPercentChange");
        set.and_then(|p| u32::try_from(p).ok()).filter(|p| *p <= 100).unwrap_or(20)
    }

    /// How long a shared index nothing uses is kept: git's `splitIndex.sharedIndexExpire`
    /// (`now`, `never`, or an age such as `2.weeks.ago`), two weeks by default; `None`: never
    /// removed.
    fn shared_index_expiry(&self) -> Option<std::time::Duration> {
        const DEFAULT: std::time::Duration = std::time::Duration::from_secs(14 * 24 * 3600);
        let config = self.repo.config_snapshot();
        let Some(set) = config.string("splitIndex.sharedIndexExpire") else { return Some(DEFAULT) };
        match set.to_string().trim() {
            "now" => Some(std::time::Duration::ZERO),
            "never" => None,
            age => {
                let age = age.replace('.', " ");
                let age = age.trim().strip_suffix("ago").unwrap_or(&age).trim();
                Some(humantime::parse_duration(age).unwrap_or(DEFAULT))
            }
        }
    }

    fn shared_index_path(&self, id: ObjectId) -> PathBuf {
        self.repo.git_dir().join(format!("sharedindex.{id}"))
    }

    /// Write `pieces` (of `source`) as a new shared index named by its checksum, then the
    /// index as an empty split index over it; then remove the shared indexes unused for
    /// `splitIndex.sharedIndexExpire`, as git does (another index file, or a git that read
    /// the index before this write, may still link one).
    fn reshare(
        &self,
        lock: IndexLock,
        source: &[u8],
        pieces: &[super::index_patch::Piece],
        version: u32,
    ) -> Result<()> {
        let kind = self.repo.object_hash();
        let mut hasher = gix::hash::hasher(kind);
        for piece in pieces {
            hasher.update(piece.bytes(source));
        }
        let id = hasher.try_finalize().map_err(git_err("hash the shared index"))?;
        let target = self.shared_index_path(id);
        let tmp_dir = self.state_dir().join("tmp");
        create_private_dir(&tmp_dir)?;
        let tmp = tmp_dir.join(format!("{}-sharedindex", std::process::id()));
        let mut file = private_options().write(true).truncate(true).open(&tmp).map_err(io_err(&tmp))?;
        preallocate(&file, pieces.iter().map(|p| p.bytes(source).len()).sum::<usize>() + kind.len_in_bytes());
        pieces
            .iter()
            .try_for_each(|p| file.write_all(p.bytes(source)))
            .and_then(|()| file.write_all(id.as_slice()))
            .map_err(io_err(&tmp))?;
        drop(file);
        std::fs::rename(&tmp, &target).map_err(io_err(&target))?;
        let split = super::split_index::empty(version, id)
            .ok_or_else(|| super::git_detail("write the split index", "too large"))?;
        lock.replace_index_hashed(&split, kind)?;
        let expire = self.shared_index_expiry();
        let now = std::time::SystemTime::now();
        let keep = format!("sharedindex.{id}");
        if let Some(expire) = expire
            && let Ok(dir) = std::fs::read_dir(self.repo.git_dir())
        {
            for entry in dir.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                let unused_for = entry.metadata().and_then(|m| m.modified()).map(|t| now.duration_since(t));
                if name.starts_with("sharedindex.")
                    && *name != keep
                    && matches!(unused_for, Ok(Ok(unused)) if unused >= expire)
                {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        Ok(())
    }

    /// A whole new index for `tree`. A file's stat is recorded only when its content is what
    /// the tree holds; otherwise git is left to notice the difference.
    /// Whether `paths` name every file of `tree`.
    fn covers_tree(&self, paths: &[String], tree: ObjectId) -> Result<bool> {
        let mut blobs = std::collections::HashMap::new();
        self.collect_blobs(tree, "", &mut blobs)?;
        if blobs.len() > paths.len() {
            return Ok(false);
        }
        let named: std::collections::HashSet<&str> = paths.iter().map(String::as_str).collect();
        Ok(blobs.keys().all(|path| named.contains(path.as_str())))
    }

    fn rebuild_index(&self, tree: ObjectId, lock: IndexLock) -> Result<()> {
        let mut blobs: std::collections::HashMap<String, ObjectId> = std::collections::HashMap::new();
        self.collect_blobs(tree, "", &mut blobs)?;
        let mut index =
            gix::index::File::from_state(gix::index::State::new(self.repo.object_hash()), self.repo.index_path());
        for (path, id) in blobs {
            // Stat first, as git does: a file edited between the stat and the read then has a
            // stat older than its bytes, which git's next look re-hashes, never one that
            // vouches for bytes it did not see.
            let stat = self.worktree_path(&path).ok().and_then(|_| self.file_stat(&path).ok());
            let unchanged = stat.is_some()
                && self.worktree_path(&path).ok().and_then(|abs| std::fs::read(abs).ok()).and_then(|bytes| {
                    gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, &bytes).ok()
                }) == Some(id);
            let stat = stat.filter(|_| unchanged).unwrap_or_default();
            index.dangerously_push_entry(stat, id, Flags::empty(), Mode::FILE, path.as_bytes().as_bstr());
        }
        index.sort_entries();
        self.write_index(&mut index, lock)
    }

    fn file_stat(&self, rel: &str) -> Result<Stat> {
        let abs = self.root.join(rel);
        let meta = gix::index::fs::Metadata::from_path_no_follow(&abs).map_err(io_err(&abs))?;
        Stat::from_fs(&meta).map_err(|e| StoreError::Io { path: abs, source: std::io::Error::other(e) })
    }

    /// Write the index by git's lock protocol (an exclusive `index.lock` renamed into place),
    /// with its blocks preallocated (see [`preallocate`]).
    fn write_index(&self, index: &mut gix::index::File, lock: IndexLock) -> Result<()> {
        // gix writes the TREE extension as read; after editing entries it would be stale.
        index.remove_tree();
        let mut bytes = Vec::new();
        index.write_to(&mut bytes, Default::default()).map_err(git_err("encode index"))?;
        lock.replace_index(&bytes)
    }

    /// git's `index.lock`, taken as git takes it (created, never waited for).
    fn lock_index(&self) -> Result<IndexLock> {
        let index = self.repo.index_path();
        gix::lock::File::acquire_to_update_resource(&index, gix::lock::acquire::Fail::Immediately, None, 0)
            .map(IndexLock)
            .map_err(git_err(format!("lock {}.lock (is a git command running in the store?)", index.display())))
    }

    /// Pack loose objects the way `git commit` does: check git's own threshold cheaply (a
    /// sample of one fan-out folder) and only then pay for packing.
    pub(super) fn maybe_gc(&self) -> GcOutcome {
        if !self.loose_objects().2 {
            return GcOutcome::NotNeeded;
        }
        // Not `git gc --auto` itself: it renames a new pack into place and then deletes the
        // loose objects it holds without syncing any folder, so a power cut could keep the
        // deletions and lose the pack's name (issue 42). Its steps instead, through
        // [`Store::pack_durably`]. A step that fails leaves the rest to the next commit's
        // housekeeping: the commit itself has landed.
        match self.pack_durably(Packing::Housekeeping) {
            Err(StoreError::GitMissing { .. }) => GcOutcome::GitMissing,
            _ => GcOutcome::Ran,
        }
    }

    /// gc's steps one at a time, each synced before the next deletes anything the previous
    /// one replaced (with `store.fsync = "none"` the syncs are no-ops); housekeeping after a
    /// commit and redact's prune ([`Store::prune_unreachable`]) both run them here:
    ///
    /// 1. housekeeping only: `repack -l` of the loose objects into a new pack, then every
    ///    new name under `objects/` synced;
    /// 2. for a prune, or housekeeping past `gc.autoPackLimit` packs: `pack-objects` of
    ///    everything reachable into one new pack, then its files and `objects/pack` synced
    ///    (and a commit-graph, if the store has one, rewritten and synced: a stale one would
    ///    name pruned commits); only then `repack -a -d` keeping that pack deletes every
    ///    other pack and the loose objects they hold (it packs nothing new, so renames
    ///    nothing);
    /// 3. `prune-packed`: the loose copies of packed objects deleted;
    /// 4. `prune`: unreachable loose objects deleted (all of them for a prune; those older
    ///    than two weeks for housekeeping, as `git gc` does), and every object folder
    ///    synced, so they stay deleted.
    ///
    /// Refs are not packed (gc would): each is one loose file synced where it is written.
    pub(super) fn pack_durably(&self, packing: Packing) -> Result<()> {
        let objects = self.repo.objects.store_ref().path().to_owned();
        if packing == Packing::Housekeeping {
            let before = self.object_files();
            self.run_gc_step(&["repack", "-l", "-q"], packing)?;
            self.sync_objects_since(&before)?;
        }
        let into_one = match packing {
            Packing::Prune => true,
            Packing::Housekeeping => {
                let limit = self.repo.config_snapshot().integer("gc.autoPackLimit").unwrap_or(50);
                let packs = std::fs::read_dir(objects.join("pack"))
                    .map(|d| d.flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".pack")).count())
                    .unwrap_or(0);
                limit > 0 && packs as i64 > limit
            }
        };
        if into_one {
            let base = objects.join("pack").join("pack");
            let base = std::path::absolute(&base).unwrap_or(base);
            let before = self.object_files();
            let pack = self.run_gc_step(
                &[
                    "pack-objects",
                    "--all",
                    "--reflog",
                    "--indexed-objects",
                    "--non-empty",
                    "--local",
                    "--delta-base-offset",
                    "-q",
                    &base.to_string_lossy(),
                ],
                packing,
            )?;
            let info = objects.join("info");
            if info.join("commit-graph").exists() || info.join("commit-graphs").exists() {
                self.run_gc_step(&["commit-graph", "write", "--reachable"], packing)?;
            }
            self.sync_objects_since(&before)?;
            let keep = format!("--keep-pack=pack-{pack}.pack");
            let mut repack = vec!["repack", "-a", "-d", "-q"];
            if !pack.is_empty() {
                repack.push(&keep);
            }
            self.run_gc_step(&repack, packing)?;
        }
        self.run_gc_step(&["prune-packed", "-q"], packing)?;
        let expire = match packing {
            Packing::Prune => "--expire=now",
            Packing::Housekeeping => "--expire=2.weeks.ago",
        };
        self.run_gc_step(&["prune", expire], packing)?;
        self.create_object_folders();
        self.sync_object_folders()
    }

    /// Run one `git` step of [`Store::pack_durably`] in the foreground and under convo's
    /// lock (a detached one would prune object folders while the next writer puts objects
    /// into them), in a process group of its own recorded in `.git/convo/gc` while it runs:
    /// if convo is killed, the step dies with it (the parent-death signal) and the next
    /// writer stops whatever it had started before touching the store
    /// ([`Store::reap_orphaned_gc`]). Its trimmed stdout; git's stderr is the failure's cause.
    pub(super) fn run_gc_step(&self, args: &[&str], packing: Packing) -> Result<String> {
        use std::os::unix::process::CommandExt as _;
        let context = || format!("git {}", args.join(" "));
        let mut command = super::git_command();
        command
            .args(args)
            .current_dir(&self.root)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0);
        // SAFETY: prctl(2) with PR_SET_PDEATHSIG only sets a flag on the child; it is
        // async-signal-safe and touches no memory.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
                Ok(())
            });
        }
        let child = command.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => StoreError::GitMissing { purpose: packing.purpose() },
            _ => StoreError::Git { context: context(), source: Box::new(e) },
        })?;
        let record = self.gc_record_path();
        let started = super::gitlocks::start_time(child.id()).unwrap_or_default();
        let _ = write_private_file(&self.state_dir(), &record, format!("{} {started}\n", child.id()).as_bytes());
        self.fail(FailPoint::Gc);
        let output = child.wait_with_output();
        let _ = std::fs::remove_file(&record);
        let output = output.map_err(|e| StoreError::Git { context: context(), source: Box::new(e) })?;
        if !output.status.success() {
            // git's own words on stderr are the cause: a process's output, not an error value.
            return Err(super::git_detail(context(), String::from_utf8_lossy(&output.stderr).trim()));
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }
}

impl Store {
    /// Loose objects, estimated as git's `gc --auto` does (one fan-out folder, `17`, times
    /// 256), the `gc.auto` limit, and whether git's own test says gc is due (the sample
    /// exceeds the limit / 256, rounded up; never when the limit is 0, which turns it off).
    pub(super) fn loose_objects(&self) -> (i64, i64, bool) {
        let limit = self.repo.config_snapshot().integer("gc.auto").unwrap_or(6700);
        let sample = self.repo.objects.store_ref().path().join("17");
        let count = std::fs::read_dir(sample).map(|d| d.count()).unwrap_or(0) as i64;
        (count * 256, limit, limit > 0 && count > (limit + 255) / 256)
    }
}

pub(super) fn private_options() -> std::fs::OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.create(true).mode(0o600);
    options
}

/// Past this length a blanked journal is cut back to nothing (see [`Store::clear_journal`]).
const JOURNAL_KEPT: u64 = 4096;

/// The journal at `path`, never through a symlink and only if it is a regular file: it is
/// written in place, and a planted link must not aim that write (or a read of a device)
/// anywhere else. Made private when `write`.
fn open_journal(path: &Path, write: bool) -> std::io::Result<File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut options = if write { private_options() } else { std::fs::OpenOptions::new() };
    let file = options.read(true).write(write).truncate(false).custom_flags(libc::O_NOFOLLOW).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    if write && meta.permissions().mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// A journal file's bytes; `None` when there is none.
fn read_journal_file(path: &Path) -> Result<Option<Vec<u8>>> {
    use std::io::Read as _;
    let mut file = match open_journal(path, false) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(journal_err(path, e)),
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(io_err(path))?;
    Ok(Some(bytes))
}

/// A journal that is a symlink (O_NOFOLLOW's ELOOP) is reported as one; other failures as
/// what they are.
fn journal_err(path: &Path, e: std::io::Error) -> StoreError {
    if e.raw_os_error() == Some(libc::ELOOP) {
        StoreError::Symlink { path: path.display().to_string() }
    } else {
        StoreError::Io { path: path.to_owned(), source: e }
    }
}

/// Write `bytes` to `target` through a temporary file in `state_dir` and a rename, so readers
/// see the old file or the new one, never a torn one.
pub(crate) fn write_private_file(state_dir: &Path, target: &Path, bytes: &[u8]) -> Result<()> {
    write_private_file_as(state_dir, target, bytes, false)
}

/// [`write_private_file`], on disk when it returns when `durable` (see `durable`): the new
/// file's data is synced before it is renamed over the old (else a power cut could keep the
/// rename and lose both contents), and its folder after.
pub(crate) fn write_private_file_as(state_dir: &Path, target: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    let tmp_dir = state_dir.join("tmp");
    create_private_dir(&tmp_dir)?;
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = tmp_dir.join(format!("{}-{name}", std::process::id()));
    let mut file = private_options().write(true).truncate(true).open(&tmp).map_err(io_err(&tmp))?;
    preallocate(&file, bytes.len());
    file.write_all(bytes).map_err(io_err(&tmp))?;
    if durable {
        file.sync_data().map_err(|source| StoreError::Sync { path: tmp.clone(), source })?;
    }
    drop(file);
    std::fs::rename(&tmp, target).map_err(io_err(target))?;
    if durable && let Some(folder) = target.parent() {
        super::durable::sync_dir(folder)?;
    }
    Ok(())
}

/// ext4 flushes a file's delayed-allocation data to disk when it is renamed over another
/// (`auto_da_alloc`): up to 1.5 ms per replace on this kind of machine. Allocating the
/// blocks up front sidesteps it. Files derived from HEAD (working tree, index, caches) are
/// written this way; the branch ref is gix's (see `refs.rs` for why).
/// Best effort: filesystems without fallocate just take the slow path.
pub(super) fn preallocate(file: &File, len: usize) {
    if len > 0 {
        let _ = rustix::fs::fallocate(file, rustix::fs::FallocateFlags::KEEP_SIZE, 0, len as u64);
    }
}

/// git's `index.lock`, through gix's lock-file protocol: held while the index is read and
/// rewritten, renamed over it by [`IndexLock::replace`], removed if dropped before.
struct IndexLock(gix::lock::File);

impl IndexLock {
    /// Write `pieces` of a new index (ranges of the `old` one, and new bytes) and their
    /// checksum, and rename them over the index. The checksum is what a git that read the
    /// index compares before it writes back what it refreshed: a null one would match any
    /// index convo wrote meanwhile, which git would then overwrite with its stale view.
    fn replace_index_with(self, old: &[u8], pieces: &[super::index_patch::Piece], kind: gix::hash::Kind) -> Result<()> {
        let len = pieces.iter().map(|p| p.bytes(old).len()).sum::<usize>() + kind.len_in_bytes();
        let mut hasher = gix::hash::hasher(kind);
        self.replace(len, |file| {
            for piece in pieces {
                hasher.update(piece.bytes(old));
                file.write_all(piece.bytes(old))?;
            }
            file.write_all(hasher.try_finalize().map_err(std::io::Error::other)?.as_slice())
        })
    }

    /// Write `body` and its checksum, and rename them over the index.
    fn replace_index_hashed(self, body: &[u8], kind: gix::hash::Kind) -> Result<()> {
        let mut hasher = gix::hash::hasher(kind);
        hasher.update(body);
        let checksum = hasher.try_finalize().map_err(git_err("hash the index"))?;
        self.replace(body.len() + checksum.as_slice().len(), |file| {
            file.write_all(body)?;
            file.write_all(checksum.as_slice())
        })
    }

    /// Write `bytes` and rename them over the index.
    fn replace_index(self, bytes: &[u8]) -> Result<()> {
        self.replace(bytes.len(), |file| file.write_all(bytes))
    }

    /// The one write: `len` bytes preallocated (see [`preallocate`]), written by `write`,
    /// and renamed over the index.
    fn replace(mut self, len: usize, write: impl FnOnce(&mut File) -> std::io::Result<()>) -> Result<()> {
        let index = self.0.resource_path();
        self.0
            .with_mut(|file| {
                preallocate(file, len);
                write(file)
            })
            .map_err(io_err(&index))?;
        self.0.commit().map_err(|e| io_err(&index)(e.error))?;
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// `git` in `dir`, as a test's other program: its output, or a failed test.
    pub(in crate::store) fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    fn note(text: &str) -> Change {
        let path = format!("{}/meta.json", layout::conversation_dir("01KDVDQ4K00000000000000001"));
        Change { path, bytes: Some(format!(r#"{{"title":"{text}","created":"c"}}"#).into()), ..Change::default() }
    }

    /// `change` committed with `message` through a transaction, as every writer commits.
    fn commit(
        store: &Store,
        lock: &Lock<'_>,
        change: Change,
        message: &str,
        clock: &Clock,
    ) -> Result<crate::store::transaction::Committed> {
        assert!(std::ptr::eq(lock.store, store));
        let mut tx = lock.transaction();
        tx.change(change);
        tx.commit_message(message, clock)
    }

    #[test]
    fn a_head_another_program_moves_under_the_lock_is_never_written_over() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::init(dir.path()).unwrap();
        let clock = Clock::fixed(chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap());
        let lock = store.lock().unwrap();
        commit(&store, &lock, note("one"), "one", &clock).unwrap();
        // The memo now says HEAD is "one"; git moves it behind convo's back.
        git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "outside"]);
        let outside = git(dir.path(), &["rev-parse", "HEAD"]);
        let err = commit(&store, &lock, note("two"), "two", &clock).err().expect("the commit must be refused");
        assert!(matches!(err, StoreError::HeadMoved { .. }), "{err}");
        assert_eq!(git(dir.path(), &["rev-parse", "HEAD"]), outside);
        // Refused once, the files are read again: the next commit goes on top of git's.
        commit(&store, &lock, note("three"), "three", &clock).unwrap();
        assert_eq!(git(dir.path(), &["rev-parse", "HEAD~1"]), outside);
    }

    #[test]
    fn a_commit_under_the_lock_lands_on_the_branch_head_names_now() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::init(dir.path()).unwrap();
        let clock = Clock::fixed(chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap());
        let lock = store.lock().unwrap();
        let one = commit(&store, &lock, note("one"), "one", &clock).unwrap().commit.to_string();
        // The memo says `main`; git switches HEAD to a new branch at the same commit.
        git(dir.path(), &["checkout", "-q", "-b", "other"]);
        let two = commit(&store, &lock, note("two"), "two", &clock).unwrap().commit.to_string();
        assert_eq!(git(dir.path(), &["rev-parse", "refs/heads/other"]), two);
        assert_eq!(git(dir.path(), &["rev-parse", "refs/heads/main"]), one);
        assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
    }

    #[test]
    fn what_the_lock_remembered_of_head_goes_with_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::init(dir.path()).unwrap();
        let clock = Clock::fixed(chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap());
        let lock = store.lock().unwrap();
        let committed = commit(&store, &lock, note("one"), "one", &clock).unwrap().commit;
        assert_eq!(store.head_commit_id().unwrap(), Some(committed));
        drop(lock);
        git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "after the lock"]);
        let after = git(dir.path(), &["rev-parse", "HEAD"]);
        assert_eq!(store.head_commit_id().unwrap().map(|id| id.to_string()), Some(after));
    }
}
