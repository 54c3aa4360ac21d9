//! What is synced to disk, when, and why: an acknowledged commit survives a power cut, not
//! only a killed convo (issue 42). The page cache survives `kill -9`; it does not survive
//! the machine, and ext4 (`data=ordered`, delayed allocation) may then keep a rename or a
//! ref update whose file's data never reached the disk: a branch naming a commit whose
//! object files are empty, a store no command opens.
//!
//! With [`Durability::Committed`] (the default; `store.fsync = "committed"`), the
//! [`Transaction`](super::transaction) syncs, at one barrier at the commit point (step 5),
//! everything the commit reaches that this process wrote and has not synced yet:
//!
//! - every loose object convo's writer put in place since the last barrier (the
//!   commit's own, and those an import streamed, a merge or redact's rewrite wrote before
//!   their transaction): each file's data (`fdatasync`), then each object folder it created
//!   or added a name to, once (`fsync` of the folder), and `objects/` itself when a fan
//!   folder was new. Written all first and synced after, as git's `core.fsyncMethod=batch`
//!   does, and synced several at a time ([`IN_FLIGHT`] threads), so the disk sees one
//!   burst, not a write-sync-write-sync chain;
//! - the journal (`.git/convo/journal`), in the same batch: recovery trusts it to name what
//!   the working tree and index may lag by, so it must be on disk before step 6's writes
//!   can be, and the barrier before the ref moves orders it before them. Before step 4 it
//!   need not be: the objects step 4 writes are unreachable until the ref moves, and a
//!   journal that never landed names nothing a lost commit needs;
//! - and the branch's new value ([`Store::move_head`]): gix's ref transaction is run in its
//!   halves; its first writes `<ref>.lock`, which joins the same round (so the rename can
//!   never expose an empty ref). Then the rename, and a second round: the ref's folder (the
//!   rename itself) and the reflogs gix appended to (their folders too when they were new).
//!   Only then is the commit acknowledged. Two rounds of syncs in all, each several at a
//!   time: an append's ~20 syncs cost about two waits on the device, not twenty.
//!
//! Not synced, by design: the working-tree mirror, the index and every cache under
//! `.git/convo` — derived from HEAD and rebuilt by the next command (the journal names the
//! paths a commit was mirroring; `fsck` finds and mends a copy that lags without one, as
//! after a power cut that kept the journal's blanking but lost the mirror's writes).
//! `.git/convo/handovers` is synced ([`Store::add_handover`]): it is the only copy of a
//! session's binding until its first capture. The `git` convo runs (fetch into the store,
//! clone, gc, push) is given `core.fsync=committed` with `core.fsyncMethod=fsync`
//! (`git_command`): its packs, loose objects and refs are synced by git itself, each file
//! before the ref that names it. git syncs no folder, so its renames are as safe as the
//! file system's journal keeps them in order (ext4 does): the crash-state tests check the
//! workloads where git writes (pull, redact's `gc --prune`) under that ordered model.
//!
//! An error from a sync (EIO, ENOSPC) fails the command with [`StoreError::Sync`]; it is
//! never retried: after a failed fsync the kernel may have dropped the dirty pages, and a
//! second fsync that succeeds proves nothing (PostgreSQL's "fsyncgate").
//!
//! After a power cut, objects written but not synced may be empty or torn. None is
//! reachable from the branch (it moved only after they were synced); `fsck` names them
//! ([`Store::torn_objects`]) and `fsck --repair`, as the next write does under its lock,
//! removes them, so a later write of the same object is not skipped by a reader that
//! finds the broken file first.
//!
//! With [`Durability::None`] nothing is synced: git's default behaviour before 2.36, for
//! throwaway stores and benchmarks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Result, Store, StoreError};

/// Whether a commit is on disk before it is acknowledged (`store.fsync`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Durability {
    /// Every acknowledged commit survives a power cut (the default).
    #[default]
    Committed,
    /// Nothing is synced: a power cut may lose or break recent commits.
    None,
}

/// What this process wrote and has not synced yet.
#[derive(Debug, Default)]
pub(super) struct Pending {
    /// Files whose data must reach the disk.
    files: Vec<PathBuf>,
    /// Folders that gained (or lost) a name.
    dirs: BTreeSet<PathBuf>,
}

impl Pending {
    pub(super) fn file(&mut self, path: PathBuf) {
        self.files.push(path);
    }

    pub(super) fn dir(&mut self, path: PathBuf) {
        self.dirs.insert(path);
    }
}

/// `fdatasync` of the file at `path`.
pub(super) fn sync_file(path: &Path) -> Result<()> {
    let failed = |source| StoreError::Sync { path: path.to_owned(), source };
    let file = std::fs::File::open(path).map_err(failed)?;
    file.sync_data().map_err(failed)
}

/// `fsync` of folder `path`: the names it holds (a rename into it, a new file) survive.
pub(super) fn sync_dir(path: &Path) -> Result<()> {
    let failed = |source| StoreError::Sync { path: path.to_owned(), source };
    let dir = std::fs::File::open(path).map_err(failed)?;
    dir.sync_all().map_err(failed)
}

/// Up to this many syncs in flight at once.
const IN_FLIGHT: usize = 8;

/// Sync every one of `paths` (a folder when its flag says so), several at a time: each is a wait on the device, and a
/// device (a virtual disk above all) serves a queue of them in about the time of one, as
/// git's batch mode counts on. A path gone meanwhile (a `git gc` beside convo packed and
/// pruned the object: git synced its pack) is no error; the first other error is returned.
pub(super) fn in_parallel(paths: &[(PathBuf, bool)]) -> Result<()> {
    let run = |chunk: &[(PathBuf, bool)]| -> Result<()> {
        for (path, dir) in chunk {
            match if *dir { sync_dir(path) } else { sync_file(path) } {
                Err(StoreError::Sync { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
                other => other?,
            }
        }
        Ok(())
    };
    if paths.len() <= 1 {
        return run(paths);
    }
    let per = paths.len().div_ceil(IN_FLIGHT);
    std::thread::scope(|scope| {
        let handles: Vec<_> = paths.chunks(per).map(|chunk| scope.spawn(move || run(chunk))).collect();
        let mut result = Ok(());
        for handle in handles {
            let outcome = handle.join().unwrap_or_else(|_| Ok(()));
            if result.is_ok() {
                result = outcome;
            }
        }
        result
    })
}

impl Store {
    /// Sync with `durability` from now on.
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// Note a file and a folder this process wrote, for the next barrier.
    pub(super) fn note_unsynced(&self, file: Option<PathBuf>, dir: Option<PathBuf>) {
        if self.durability == Durability::None {
            return;
        }
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = file {
            pending.file(file);
        }
        if let Some(dir) = dir {
            pending.dir(dir);
        }
    }

    /// The barrier: every file noted is synced, then every folder. A file gone since (a
    /// `git gc` beside convo packed and pruned the object) is fine: what reaches it now is
    /// git's pack, which git synced. On an error the rest stays noted, for no one to trust:
    /// the command fails.
    pub(super) fn sync_unsynced(&self) -> Result<()> {
        if self.durability == Durability::None {
            return Ok(());
        }
        let Pending { files, dirs } = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()));
        // Files and folders in one round: each name was made before, each file written
        // before; nothing here must reach the disk before anything else here.
        let mut all: Vec<(PathBuf, bool)> =
            files.into_iter().collect::<BTreeSet<_>>().into_iter().map(|f| (f, false)).collect();
        all.extend(dirs.into_iter().map(|d| (d, true)));
        in_parallel(&all)
    }

    /// Whether commits are synced.
    pub(super) fn durable(&self) -> bool {
        self.durability == Durability::Committed
    }
}
