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
//! session's binding until its first capture.
//!
//! The `git` convo runs (fetch into the store, clone, gc, push) is given
//! `core.fsync=committed` with `core.fsyncMethod=fsync` (`git_command`): its packs, loose
//! objects and refs are synced by git itself, each file before the ref that names it. But
//! git syncs no folder: a power cut may keep a ref git renamed into place and lose the name
//! of the pack it names. So where git writes into the store, convo orders it by
//! construction:
//!
//! - a pull's fetch (`sync::fetch`) moves the accepted objects from the quarantine into
//!   `objects/` ([`Store::promote`]: packs before their index, as git's receive quarantine
//!   does), with no ref: each file's data synced before its new name (convo's own
//!   publication objects reach the quarantine unsynced), then each folder that gained a
//!   name and `objects/`, and only then has git
//!   move the remote-tracking ref, whose file, reflog and folders it syncs in turn
//!   ([`Store::sync_ref_written_by_git`]). A merge or fast-forward naming those commits
//!   comes after, through the transaction. The remote-tracking ref is durable rather than
//!   allowed to lag: `redact` reads it to tell published commits from unpublished ones, so
//!   a ref a power cut set back would let it rewrite commits the remote already has. A
//!   push's move of that ref is synced the same way;
//! - redact's prune ([`Store::prune_unreachable`]) and the housekeeping after a commit
//!   (`Store::maybe_gc`) are not `git gc`, which deletes packed loose objects and old packs
//!   with the new pack's name unsynced, but its steps one at a time through one method
//!   (`Store::pack_durably`), each synced before the next deletes anything the previous
//!   one replaced: housekeeping's `repack -l`, synced, then `prune-packed`; for a prune, or
//!   past `gc.autoPackLimit`, one pack of everything, synced, before `repack -a -d
//!   --keep-pack` removes the others;
//! - a clone ([`Store::sync_new_repository`]): before it is said done, every file and
//!   folder of the new repository, the store's folder and the one holding it;
//! - a push's copy of the catalog it published, and a lazy store's fetch of a catalog or
//!   conversation, go in as a fetch's objects do (a lazy one's `shallow` file written
//!   beside, synced, renamed and its folder synced, before the ref);
//! - a `git gc` the user runs beside convo is the user's git: a pack it renames and the
//!   objects it prunes are as safe as git makes them. convo's own barrier tolerates an
//!   object gc packed away meanwhile (see [`in_parallel`]).
//!
//! An error from a sync (EIO, ENOSPC) fails the command with [`StoreError::Sync`]; it is
//! never retried: after a failed fsync the kernel may have dropped the dirty pages, and a
//! second fsync that succeeds proves nothing (PostgreSQL's "fsyncgate"). A sync that fails
//! after the ref's rename (its folder, a reflog) puts the branch back where it was
//! ([`Store::move_head`]), so a failed command never leaves its commit on the branch, and
//! from then on the process removes none of the objects it wrote: which of the two ref
//! values the disk holds is unknown, and both commits stay whole.
//!
//! After a power cut, objects written but not synced may be empty or torn. None is
//! reachable from the branch (it moved only after they were synced); `fsck` removes and
//! names them ([`Store::remove_torn_objects`]), as the next write does under its lock, so
//! a later write of the same object is not skipped by a reader that finds the broken file
//! first.
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
    /// A sync after a ref moved failed: the objects written stay (see
    /// [`Store::keep_written_objects`]).
    keep: bool,
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

/// The files under `objects/` and the inode each name holds: what a `git` child wrote is
/// what differs afterwards (a new name, or a name renamed over, as a commit-graph is).
#[derive(Debug, Default)]
pub struct ObjectFiles(std::collections::BTreeMap<PathBuf, u64>);

/// Every file below `dir` (folders followed, to `objects/info/commit-graphs`), by inode.
fn list_files(dir: &Path, out: &mut std::collections::BTreeMap<PathBuf, u64>) {
    use std::os::unix::fs::DirEntryExt as _;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            list_files(&path, out);
        } else {
            out.insert(path, entry.ino());
        }
    }
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
        let (files, dirs) = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            (std::mem::take(&mut pending.files), std::mem::take(&mut pending.dirs))
        };
        // Files and folders in one round: each name was made before, each file written
        // before; nothing here must reach the disk before anything else here.
        let mut all: Vec<(PathBuf, bool)> =
            files.into_iter().collect::<BTreeSet<_>>().into_iter().map(|f| (f, false)).collect();
        all.extend(dirs.into_iter().map(|d| (d, true)));
        in_parallel(&all)
    }

    /// What is under `objects/` now (nothing when commits are not synced): taken before a
    /// `git` child writes objects, for [`Store::sync_objects_since`].
    pub fn object_files(&self) -> ObjectFiles {
        let mut files = ObjectFiles::default();
        if self.durable() {
            list_files(self.repo.objects.store_ref().path(), &mut files.0);
        }
        files
    }

    /// Sync what a `git` child put under `objects/` since `before` (its packs, their
    /// indexes, loose objects, a commit-graph), each file and the folder that gained its
    /// name, in one round: git syncs the files (`core.fsync=committed`) but no folder, so
    /// the name of a pack it renamed into place could be lost in a power cut while a ref
    /// naming its objects survives. Called before anything names what git wrote.
    pub fn sync_objects_since(&self, before: &ObjectFiles) -> Result<()> {
        if !self.durable() {
            return Ok(());
        }
        let objects = self.repo.objects.store_ref().path().to_owned();
        let mut now = ObjectFiles::default();
        list_files(&objects, &mut now.0);
        let mut files = Vec::new();
        let mut dirs = BTreeSet::new();
        for (path, inode) in &now.0 {
            if before.0.get(path) == Some(inode) {
                continue;
            }
            files.push((path.clone(), false));
            // The folder holding the new name, and each folder made for it up to `objects/`.
            let mut folder = path.parent();
            while let Some(dir) = folder
                && dir.starts_with(&objects)
            {
                dirs.insert(dir.to_owned());
                if dir == objects || before.0.keys().any(|p| p.starts_with(dir)) {
                    break;
                }
                folder = dir.parent();
            }
        }
        files.extend(dirs.into_iter().map(|d| (d, true)));
        in_parallel(&files)
    }

    /// Sync the ref `name` (`refs/remotes/origin/main`) a `git` child just wrote, its reflog,
    /// and every folder from each up to `.git`: git syncs the ref's file but not the rename
    /// that put it in place. Called once the objects it names are synced.
    pub fn sync_ref_written_by_git(&self, name: &str) -> Result<()> {
        if !self.durable() {
            return Ok(());
        }
        let git_dir = self.repo.git_dir().to_owned();
        let mut paths = Vec::new();
        for file in [git_dir.join(name), git_dir.join("logs").join(name)] {
            if !file.exists() {
                continue;
            }
            paths.push((file.clone(), false));
            let mut folder = file.parent();
            while let Some(dir) = folder
                && dir.starts_with(&git_dir)
            {
                paths.push((dir.to_owned(), true));
                if dir == git_dir {
                    break;
                }
                folder = dir.parent();
            }
        }
        paths.sort();
        paths.dedup();
        in_parallel(&paths)
    }

    /// Sync every reflog and its folder, after `git reflog expire` rewrote them: an expiry a
    /// power cut undid would bring back entries naming the commits a prune then removed.
    pub fn sync_reflogs(&self) -> Result<()> {
        if !self.durable() {
            return Ok(());
        }
        let logs = self.repo.git_dir().join("logs");
        let mut files = std::collections::BTreeMap::new();
        list_files(&logs, &mut files);
        let mut paths: BTreeSet<(PathBuf, bool)> = BTreeSet::new();
        for file in files.into_keys() {
            let mut folder = file.parent().map(Path::to_owned);
            paths.insert((file, false));
            while let Some(dir) = folder
                && dir.starts_with(&logs)
            {
                folder = dir.parent().map(Path::to_owned);
                paths.insert((dir, true));
            }
        }
        in_parallel(&paths.into_iter().collect::<Vec<_>>())
    }

    /// Sync every file and folder of a repository `git clone` just made, the store's own
    /// folder and the one holding it: git synced its files (`core.fsync=committed`) but no
    /// name, so a power cut after the clone was said done could leave a store without its
    /// branch or its pack. Files git synced already cost little a second time.
    pub fn sync_new_repository(&self) -> Result<()> {
        if !self.durable() {
            return Ok(());
        }
        fn walk(dir: &Path, paths: &mut BTreeSet<(PathBuf, bool)>) {
            paths.insert((dir.to_owned(), true));
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                match entry.file_type() {
                    Ok(t) if t.is_dir() => walk(&entry.path(), paths),
                    Ok(t) if t.is_file() => {
                        paths.insert((entry.path(), false));
                    }
                    _ => {}
                }
            }
        }
        let mut paths: BTreeSet<(PathBuf, bool)> = BTreeSet::new();
        walk(self.repo.git_dir(), &mut paths);
        paths.insert((self.root.clone(), true));
        if let Some(parent) = self.root.parent() {
            paths.insert((parent.to_owned(), true));
        }
        in_parallel(&paths.into_iter().collect::<Vec<_>>())
    }

    /// Sync `objects/pack` and every loose-object folder, so that what a prune removed
    /// stays removed (redact's old commits do not come back after a power cut).
    pub fn sync_object_folders(&self) -> Result<()> {
        if !self.durable() {
            return Ok(());
        }
        let objects = self.repo.objects.store_ref().path();
        let mut paths = vec![(objects.join("pack"), true)];
        for entry in std::fs::read_dir(objects).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) && entry.file_name().len() == 2 {
                paths.push((entry.path(), true));
            }
        }
        in_parallel(&paths)
    }

    /// Remove nothing this process wrote from now on: a sync after a ref moved failed, the
    /// move was undone, and which of the two the disk holds is unknown. Objects are
    /// immutable and named by their content: kept, they cost space until a `git gc`; removed,
    /// a branch the disk kept could name missing objects.
    pub(super) fn keep_written_objects(&self) {
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).keep = true;
    }

    /// Whether [`Store::keep_written_objects`] was called.
    pub(super) fn keeps_written_objects(&self) -> bool {
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).keep
    }

    /// Whether commits are synced.
    pub(super) fn durable(&self) -> bool {
        self.durability == Durability::Committed
    }
}
