//! Moving HEAD's branch to a new commit, through gix's ref transaction: git's lock-file
//! protocol (an exclusive `<ref>.lock` renamed into place), a compare-and-swap against the
//! expected parent, and the reflogs of the branch and HEAD. convo adds only the wait for a
//! git that holds the branch ([`Store::wait_for_branch_lock`], which also takes over the
//! lock of a git that died) and the typed refusal when HEAD moved ([`StoreError::HeadMoved`]).
//!
//! convo wrote the ref itself until issue 30, to preallocate the new ref file's blocks (ext4
//! flushes a file renamed over another). Measured against gix's transaction in alternating
//! rounds of appends, that saved 3% of an append's CPU and wall time, in a one-conversation
//! store and a 10,000-conversation one alike: not worth a second ref writer. Like git's
//! defaults, neither refs nor loose objects are synced to disk.
//!
//! Except with `store.fsync = "committed"` (see [`durable`](super::durable)): gix's
//! transaction is then run in its two halves, and between them convo syncs the written
//! `<ref>.lock` (a rename over the ref must never expose a file whose data is not on disk:
//! that was jj's and Gitaly's empty ref after a reboot); after them, the ref's folder (the
//! rename) and the reflogs gix appended to.

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::Target;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

use super::{Result, Store, StoreError, durable, git_err};

/// How often a refusal with the branch still at the expected commit is tried again (see
/// [`Store::move_head`]): a `git pack-refs` takes milliseconds.
const SPURIOUS_CONFLICTS: u32 = 40;

impl Store {
    /// Wait, before anything of a commit is written, while a live git holds the branch's
    /// lock (see [`Store::wait_for_branch_lock`]): a commit refused for it then leaves the
    /// store as it was.
    pub(super) fn await_branch_lock(&self) -> Result<()> {
        let Ok(Some(branch)) = self.head_branch() else { return Ok(()) };
        let lock_path = self.repo.git_dir().join(format!("{}.lock", branch.as_bstr().to_str_lossy()));
        if lock_path.exists() { self.wait_for_branch_lock(&lock_path, std::time::Instant::now()) } else { Ok(()) }
    }

    /// Point HEAD (through its branch) at `new`, if it still points at `expected`; the
    /// reflogs say `subject`, by `signature`.
    pub(super) fn move_head(
        &self,
        expected: Option<ObjectId>,
        new: ObjectId,
        signature: &gix::actor::Signature,
        subject: &str,
    ) -> Result<()> {
        // From the file, not the memo: a `git checkout` under convo's lock may have moved
        // HEAD to another branch at the same commit, which the check below cannot tell.
        let branch = self.repo.head_name().map_err(git_err("read HEAD"))?;
        let name = branch.as_ref().map_or_else(|| "HEAD".to_owned(), |n| n.as_bstr().to_str_lossy().into_owned());
        let lock_path = self.repo.git_dir().join(format!("{name}.lock"));
        let action = if expected.is_some() { "commit" } else { "commit (initial)" };
        let edit = || -> Result<RefEdit> {
            Ok(RefEdit {
                change: Change::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: false,
                        message: format!("{action}: {subject}").into(),
                    },
                    expected: match expected {
                        Some(id) => PreviousValue::MustExistAndMatch(Target::Object(id)),
                        None => PreviousValue::MustNotExist,
                    },
                    new: Target::Object(new),
                },
                name: "HEAD".try_into().map_err(git_err("name HEAD"))?,
                deref: true,
            })
        };
        let moved = |current: Option<ObjectId>| {
            self.forget_head();
            StoreError::HeadMoved { name: name.clone(), to: current.map_or("nothing".into(), |c| c.to_string()) }
        };
        let started = std::time::Instant::now();
        let mut retries = 0;
        loop {
            // From the files: the memo is this process's view. gix checks again under the
            // ref's lock; this look gives the refusal its type.
            let current = self.read_head_commit_id()?;
            if current != expected {
                return Err(moved(current));
            }
            match self.edit_ref(edit()?, (expected, new), signature, &name, &lock_path) {
                Ok(()) => break,
                // A git took the branch since step 2 (a gc packing refs): waited for as any
                // holder is, then tried again.
                Err(Edit::Sync(e)) => return Err(e),
                Err(Edit::Refused(_)) if lock_path.exists() => self.wait_for_branch_lock(&lock_path, started)?,
                Err(Edit::Refused(e)) => {
                    let current = self.read_head_commit_id()?;
                    if current != expected {
                        return Err(moved(current));
                    }
                    // Refused though the branch still names `expected`: gix read it while a
                    // `git pack-refs` moved it from its loose file into `packed-refs`, and
                    // saw the packed value from before. Tried again, as a lock held is.
                    retries += 1;
                    if retries > SPURIOUS_CONFLICTS {
                        return Err(git_err("move HEAD")(e));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
        }
        if let Ok(mut memo) = self.head.lock() {
            memo.remember_branch(branch);
            memo.remember_commit(Some(new));
        }
        Ok(())
    }
}

/// Why a ref edit failed: gix refused it (a lock held, a value that moved), which the
/// caller may wait out, or a sync failed, which it must not retry.
enum Edit {
    Refused(gix::Error),
    Sync(StoreError),
}

impl Store {
    /// gix's ref transaction (`Repository::edit_references_as`), run in its halves so that,
    /// when commits are durable, `<ref>.lock` is synced before it is renamed over the ref,
    /// and the ref's folder and the reflogs after. `(from, to)`: the move `edit` makes, undone
    /// when a sync after the rename fails (see [`Store::undo_ref_move`]).
    fn edit_ref(
        &self,
        edit: RefEdit,
        (from, to): (Option<ObjectId>, ObjectId),
        signature: &gix::actor::Signature,
        name: &str,
        lock_path: &std::path::Path,
    ) -> std::result::Result<(), Edit> {
        let git_dir = self.repo.git_dir();
        let durable = self.durable();
        let reflogs: Vec<std::path::PathBuf> = if durable {
            let mut logs = vec![git_dir.join("logs/HEAD")];
            if name != "HEAD" {
                logs.push(git_dir.join("logs").join(name));
            }
            logs
        } else {
            Vec::new()
        };
        let new_logs: Vec<bool> = reflogs.iter().map(|p| !p.exists()).collect();
        let (file_lock, packed_lock) = self.ref_lock_timeouts();
        let mut time = Default::default();
        let prepared = self.repo.refs.transaction().prepare([edit], file_lock, packed_lock).map_err(Edit::Refused)?;
        // The barrier: the commit's objects, the journal and the new ref's lock file.
        if durable && lock_path.exists() {
            self.note_unsynced(Some(lock_path.to_owned()), None);
        }
        self.sync_unsynced().map_err(Edit::Sync)?;
        prepared.commit(Some(signature.to_ref(&mut time))).map_err(Edit::Refused)?;
        if durable {
            // The rename into the ref's folder, and the reflogs (a new one's name too, and
            // the folders made for it, up to `.git`), in one round.
            let mut after = Vec::new();
            if let Some(folder) = git_dir.join(name).parent() {
                after.push((folder.to_owned(), true));
            }
            for (log, new) in reflogs.iter().zip(new_logs) {
                if !log.exists() {
                    continue;
                }
                after.push((log.clone(), false));
                let mut folder = log.parent();
                while new
                    && let Some(dir) = folder
                    && dir.starts_with(git_dir)
                {
                    after.push((dir.to_owned(), true));
                    if dir == git_dir {
                        break;
                    }
                    folder = dir.parent();
                }
            }
            if let Err(e) = durable::in_parallel(&after) {
                self.undo_ref_move(from, to, signature);
                return Err(Edit::Sync(e));
            }
        }
        Ok(())
    }

    /// Put HEAD's branch back from `to` to `from` after a sync that followed its move failed:
    /// the command fails, so the branch must not name its commit, or the caller, told HEAD
    /// did not move, would remove the objects that commit reaches (and a retry would commit
    /// twice). Best effort and not synced: the disk has just failed. Whatever the disk holds
    /// of either move, nothing this process wrote is removed from now on
    /// ([`Store::keep_written_objects`]): both commits stay whole.
    fn undo_ref_move(&self, from: Option<ObjectId>, to: ObjectId, signature: &gix::actor::Signature) {
        self.keep_written_objects();
        let expected = PreviousValue::MustExistAndMatch(Target::Object(to));
        let change = match from {
            Some(from) => Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: "convo: undone, the disk failed to sync it".into(),
                },
                expected,
                new: Target::Object(from),
            },
            None => Change::Delete { expected, log: RefLog::AndReference },
        };
        let Ok(name) = "HEAD".try_into() else { return };
        let edit = RefEdit { change, name, deref: true };
        let (file_lock, packed_lock) = self.ref_lock_timeouts();
        let mut time = Default::default();
        if let Ok(prepared) = self.repo.refs.transaction().prepare([edit], file_lock, packed_lock) {
            let _ = prepared.commit(Some(signature.to_ref(&mut time)));
        }
        self.forget_head();
    }

    /// `core.filesRefLockTimeout` and `core.packedRefsTimeout` as gix reads them (100 ms and
    /// 1 s by default; negative: forever).
    fn ref_lock_timeouts(&self) -> (gix::lock::acquire::Fail, gix::lock::acquire::Fail) {
        use gix::lock::acquire::Fail;
        let config = self.repo.config_snapshot();
        let fail = |key: &str, default: i64| match config.integer(key).unwrap_or(default) {
            n if n < 0 => Fail::AfterDurationWithBackoff(std::time::Duration::MAX),
            0 => Fail::Immediately,
            n => Fail::AfterDurationWithBackoff(std::time::Duration::from_millis(n as u64)),
        };
        (fail("core.filesRefLockTimeout", 100), fail("core.packedRefsTimeout", 1000))
    }
}

impl Store {
    /// The commit ref `name` (a full name: `refs/remotes/origin/main`) points at, read in
    /// the process: `sync` asks once per remote ref and per fetched conversation, where a
    /// `git rev-parse` each cost a process. `None` when there is no such ref.
    pub fn ref_target(&self, name: &str) -> Result<Option<ObjectId>> {
        let found = self.repo.try_find_reference(name).map_err(git_err(format!("read {name}")))?;
        let Some(mut reference) = found else { return Ok(None) };
        Ok(Some(reference.peel_to_id().map_err(git_err(format!("read {name}")))?.detach()))
    }

    /// The short name of the branch HEAD is on (`main`), read from the file now.
    pub fn branch_name(&self) -> Result<Option<String>> {
        let name = self.repo.head_name().map_err(git_err("read HEAD"))?;
        Ok(name.map(|n| n.shorten().to_str_lossy().into_owned()))
    }
}
