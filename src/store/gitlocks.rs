//! Living beside git: its lock files, the git processes at work in the store, and the
//! object write that loses a race with `git gc`.
//!
//! git never removes a lock it did not take; a lock left by a killed `git gc` therefore
//! stops every later gc ("failed to run reflog") and, on the branch, every convo commit.
//! convo takes over a git lock only when it is provably stale: no git process works in the
//! store (by `/proc`: its name starts with `git` and its working folder, command line or
//! `GIT_DIR` is in the store) and the lock is older than that check. A lock a live git
//! holds is waited for, bounded (see [`Store::wait_for_branch_lock`]).
//!
//! `git gc` (a user's, `git maintenance`, convo's own) runs `prune-packed`, which removes
//! empty object fan-out folders: one can vanish between gix creating it and renaming a new
//! object into it; and it packs and prunes loose objects a commit is reading (its parent's
//! trees). Such a commit's object writes are run again ([`Store::gc_proof`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

#[cfg(test)]
use super::git_err;
use super::{Result, Store, StoreError};

/// A git lock file in the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitLock {
    /// Relative to the store's root, e.g. `.git/HEAD.lock`.
    pub path: String,
    pub age: Duration,
}

/// Lock files git takes that block a ref update or a gc when left behind.
const FIXED: &[&str] =
    &["index.lock", "HEAD.lock", "logs/HEAD.lock", "packed-refs.lock", "config.lock", "shallow.lock"];

/// How long a branch lock held by a live git is waited for when git's own
/// `core.filesRefLockTimeout` is not set: a `git gc` packing refs holds it for milliseconds,
/// a stuck one forever.
const DEFAULT_REF_LOCK_WAIT: Duration = Duration::from_secs(10);

/// How much older than the look at `/proc` a lock must be to be taken over.
const STALE_MARGIN: Duration = Duration::from_millis(500);

impl Store {
    /// Every git lock file in the repository: the fixed names and any `*.lock` under
    /// `refs/` and `logs/refs/`.
    pub fn git_locks(&self) -> Vec<GitLock> {
        let git_dir = self.repo.git_dir().to_owned();
        let mut found = Vec::new();
        for rel in FIXED {
            self.note_lock(&git_dir.join(rel), &mut found);
        }
        for dir in ["refs", "logs/refs"] {
            self.walk_locks(&git_dir.join(dir), 0, &mut found);
        }
        found.sort_by(|a, b| a.path.cmp(&b.path));
        found.dedup();
        found
    }

    fn note_lock(&self, path: &Path, found: &mut Vec<GitLock>) {
        if let Ok(meta) = std::fs::symlink_metadata(path)
            && meta.is_file()
        {
            let age = meta.modified().ok().and_then(|m| SystemTime::now().duration_since(m).ok()).unwrap_or_default();
            let shown = path.strip_prefix(&self.root).unwrap_or(path).display().to_string();
            found.push(GitLock { path: shown, age });
        }
    }

    fn walk_locks(&self, dir: &Path, depth: usize, found: &mut Vec<GitLock>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && depth < 8 => self.walk_locks(&path, depth + 1, found),
                Ok(kind) if kind.is_file() && path.extension().is_some_and(|e| e == "lock") => {
                    self.note_lock(&path, found)
                }
                _ => {}
            }
        }
    }

    /// Whether one of the locks that block convo's commit or a gc may be there: a handful
    /// of `stat` calls, so every write can afford to ask.
    fn likely_git_locks(&self) -> bool {
        let git_dir = self.repo.git_dir();
        let branch = self.head_branch().ok().flatten().map(|n| format!("{}.lock", n.as_bstr()));
        FIXED.iter().map(|r| git_dir.join(r)).chain(branch.map(|b| git_dir.join(b))).any(|p| p.exists())
    }

    /// Process ids of git processes at work in this store now (Linux `/proc`; elsewhere
    /// none can be seen, and locks are then taken over by age only).
    pub fn git_at_work(&self) -> Vec<u32> {
        let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        let root_bytes = root.as_os_str().as_encoded_bytes().to_vec();
        let Ok(procs) = std::fs::read_dir("/proc") else { return Vec::new() };
        let me = std::process::id();
        let mut pids = Vec::new();
        for entry in procs.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            if pid == me {
                continue;
            }
            let dir = entry.path();
            let Ok(comm) = std::fs::read_to_string(dir.join("comm")) else { continue };
            if !comm.starts_with("git") {
                continue;
            }
            let in_store = std::fs::read_link(dir.join("cwd")).is_ok_and(|cwd| cwd.starts_with(&root))
                || [dir.join("cmdline"), dir.join("environ")].iter().any(|f| {
                    std::fs::read(f).is_ok_and(|bytes| bytes.windows(root_bytes.len()).any(|w| w == root_bytes))
                });
            if in_store {
                pids.push(pid);
            }
        }
        pids
    }

    /// Remove the git locks no live process can hold (see the module's doc); returns them.
    /// Called under convo's own lock, so no convo writer is among those that could. After
    /// a writer died mid-commit (`orphaned`: its journal is there), the branch and index
    /// locks it took are fresh: then no margin is asked of a lock's age.
    pub(super) fn clear_stale_git_locks(&self, orphaned: bool) -> Vec<GitLock> {
        if !self.likely_git_locks() && self.git_locks().is_empty() {
            return Vec::new();
        }
        self.clear_stale_git_locks_now(if orphaned { Duration::ZERO } else { STALE_MARGIN })
    }

    /// `margin`: how much older than the look at `/proc` a lock must be (none when convo
    /// knows its holder died). "Now" is read from the file system's own clock (a file
    /// touched first), which is coarser than `SystemTime::now` and is the one lock files
    /// get their times from: a lock a git makes after the look began is never older.
    fn clear_stale_git_locks_now(&self, margin: Duration) -> Vec<GitLock> {
        let Some(now) = self.file_system_now() else { return Vec::new() };
        let Some(checked) = now.checked_sub(margin) else { return Vec::new() };
        if !self.git_at_work().is_empty() {
            return Vec::new();
        }
        let mut cleared = Vec::new();
        for lock in self.git_locks() {
            let path = self.root.join(&lock.path);
            let modified = std::fs::metadata(&path).and_then(|m| m.modified());
            let older = modified.is_ok_and(|m| if margin.is_zero() { m <= checked } else { m < checked });
            if older && std::fs::remove_file(&path).is_ok() {
                cleared.push(lock);
            }
        }
        cleared
    }

    /// The time the file system gives a file written now.
    fn file_system_now(&self) -> Option<SystemTime> {
        // A new file, not a rewritten one: its times are set when it is created.
        let path = self.state_dir().join("now");
        let _ = std::fs::remove_file(&path);
        std::fs::write(&path, b"").ok()?;
        let now = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
        let _ = std::fs::remove_file(&path);
        now
    }

    /// Wait for the branch lock `lock_path` to free (a live git holds it: a gc packing
    /// refs, say), taking it over if it turns out stale, for at most git's own
    /// `core.filesRefLockTimeout` or [`DEFAULT_REF_LOCK_WAIT`] from `started` (a caller
    /// that loses the lock to git again waits on from where it began). Returns once creating
    /// the lock may succeed; the caller tries again.
    pub(super) fn wait_for_branch_lock(&self, lock_path: &Path, started: std::time::Instant) -> Result<()> {
        let limit = self
            .repo
            .config_snapshot()
            .integer("core.filesRefLockTimeout")
            .filter(|ms| *ms >= 0)
            .map_or(DEFAULT_REF_LOCK_WAIT, |ms| Duration::from_millis(ms as u64));
        let mut checks = 0u32;
        while lock_path.exists() {
            // Every ~100 ms: is anyone there at all?
            if checks.is_multiple_of(20) {
                self.clear_stale_git_locks_now(STALE_MARGIN);
            }
            checks += 1;
            if !lock_path.exists() {
                break;
            }
            if started.elapsed() >= limit {
                let holders = self.git_at_work();
                let shown = lock_path.strip_prefix(&self.root).unwrap_or(lock_path).display().to_string();
                return Err(StoreError::GitLockHeld {
                    path: shown,
                    // The limit, not the time measured: what the user set, and stable.
                    waited: limit,
                    holders: holders.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", "),
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// Run an object write again when it lost an object folder to a concurrent
    /// `prune-packed`: gix creates `objects/xx` and renames the object into it, and a gc
    /// between the two leaves the rename nowhere to go. Objects are content-addressed, so
    /// writing one again is harmless.
    pub(super) fn gc_proof<T>(&self, mut write: impl FnMut() -> Result<T>) -> Result<T> {
        let mut attempt = 0;
        loop {
            match write() {
                Err(e) if attempt < 8 && lost_to_gc(&e) => {
                    attempt += 1;
                    self.create_object_folders();
                    // A repack under way: give it a moment to put its pack in place.
                    std::thread::sleep(Duration::from_millis(5 * attempt));
                }
                other => return other,
            }
        }
    }

    /// `.git/convo/gc`: the process group of a `git gc` convo runs, while it runs.
    pub(super) fn gc_record_path(&self) -> PathBuf {
        self.state_dir().join("gc")
    }

    /// A gc a killed convo left running: stop its whole process group, so no git works in
    /// the store behind the next writer's back, then take over what it held. Under the lock.
    pub(super) fn reap_orphaned_gc(&self) {
        let path = self.gc_record_path();
        let Ok(record) = std::fs::read_to_string(&path) else { return };
        let mut fields = record.split_whitespace();
        let group = fields.next().and_then(|p| p.parse::<i32>().ok());
        let started = fields.next().and_then(|t| t.parse::<u64>().ok());
        // The leader still alive with the start time recorded, or gone and a git of its
        // group still at work in the store: a number reused since is never signalled.
        if let Some(group) = group
            && group > 1
            && match start_time(group as u32) {
                Some(now) => Some(now) == started,
                None => self.group_is_our_gc(group),
            }
        {
            // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
            let deadline = std::time::Instant::now() + Duration::from_secs(2);
            // SAFETY: as above; signal 0 only asks whether the group still exists.
            while unsafe { libc::kill(-group, 0) } == 0 && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let _ = std::fs::remove_file(&path);
        // What the group held is free now, however fresh: convo just ended its holders.
        self.clear_stale_git_locks_now(Duration::ZERO);
    }

    /// Whether process group `group` still holds a git working in this store (a number
    /// reused by an unrelated group is left alone).
    fn group_is_our_gc(&self, group: i32) -> bool {
        let at_work = self.git_at_work();
        at_work.iter().any(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| stat.rsplit_once(')').map(|(_, rest)| rest.to_owned()))
                .and_then(|rest| rest.split_whitespace().nth(2).and_then(|g| g.parse::<i32>().ok()))
                == Some(group)
        })
    }
}

/// When process `pid` started, in clock ticks after boot (`/proc/<pid>/stat`, field 22):
/// with the pid, it names one process, never a later one given the same number.
pub(super) fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether a failed object write is the race with `prune-packed` (the object's folder went
/// away: an I/O "not found" under the write), or a read of an object gc packed and pruned
/// while this command had the old packs in view (gix classifies it as not found; it is in
/// the new pack, which a second look finds). Decided on the cause's type and gix's
/// classification, never on its words.
fn lost_to_gc(error: &StoreError) -> bool {
    match error {
        StoreError::Git { source, .. } => {
            let source: &(dyn std::error::Error + 'static) = source.as_ref();
            gix::error::classify(source).is_not_found() || io_not_found_in(source)
        }
        _ => false,
    }
}

/// Whether an `io::Error` of kind `NotFound` is among `error`'s causes.
fn io_not_found_in(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound) {
            return true;
        }
        next = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_lost_object_folder_or_a_pruned_object_is_retried() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path()).unwrap();
        // The folders gone under gix's write, as a gc racing it can leave them.
        std::fs::remove_dir_all(dir.path().join("objects")).unwrap();
        let lost = repo.write_blob(b"hello").expect_err("no folder to write into");
        assert!(lost_to_gc(&git_err("write blob")(lost)));
        // An object this handle cannot find.
        let repo = gix::init_bare(tempfile::tempdir().unwrap().path()).unwrap();
        let missing = repo.find_object(gix::ObjectId::from_hex(b"305b3805a65435f4a0bf60463fe8b1c02fa50db0").unwrap());
        assert!(lost_to_gc(&git_err("read blob")(missing.unwrap_err())));
        // convo's own writer, its object folder gone.
        let gone = super::super::loose::LooseError::Io {
            path: "objects/ab/cd".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert!(lost_to_gc(&git_err("write blob")(gone)));
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert!(!lost_to_gc(&git_err("write blob")(denied)));
        assert!(!lost_to_gc(&super::super::git_detail("write blob", "could not be found")));
        assert!(!lost_to_gc(&StoreError::EmptyTitle));
    }
}
