//! Moving HEAD's branch to a new commit: git's lock-file protocol (an exclusive
//! `<ref>.lock` renamed into place), a compare-and-swap against the expected parent, and the
//! reflogs of the branch and HEAD.
//!
//! Written here rather than through gix's ref transaction so the new ref file's blocks can be
//! preallocated: ext4 otherwise flushes it when it is renamed over the old one (~1 ms, a
//! quarter of an append). On a crash the rename is still atomic: the ref names the old commit
//! or the new one. Like git's defaults, neither refs nor loose objects are synced to disk.

use std::io::Write as _;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::txn::{preallocate, private_options};
use super::{Result, Store, StoreError, git_err, io_err};

impl Store {
    /// Wait, before anything of a commit is written, while a live git holds the branch's
    /// lock (see [`Store::wait_for_branch_lock`]): a commit refused for it then leaves the
    /// store as it was.
    pub(super) fn await_branch_lock(&self) -> Result<()> {
        let Ok(Some(branch)) = self.head_branch() else { return Ok(()) };
        let lock_path = self.repo.git_dir().join(format!("{}.lock", branch.as_bstr().to_str_lossy()));
        if lock_path.exists() { self.wait_for_branch_lock(&lock_path, std::time::Instant::now()) } else { Ok(()) }
    }

    /// Point HEAD (through its branch) at `new`, if it still points at `expected`.
    pub(super) fn move_head(
        &self,
        expected: Option<ObjectId>,
        new: ObjectId,
        signature: &gix::actor::Signature,
        subject: &str,
    ) -> Result<()> {
        let git_dir = self.repo.git_dir().to_owned();
        // From the file, not the memo: a `git checkout` under convo's lock may have moved
        // HEAD to another branch at the same commit, which the check below cannot tell.
        let branch = self.repo.head_name().map_err(git_err("read HEAD"))?;
        let name = branch.as_ref().map_or_else(|| "HEAD".to_owned(), |n| n.as_bstr().to_str_lossy().into_owned());
        let path = git_dir.join(&name);
        let lock_path = git_dir.join(format!("{name}.lock"));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        let started = std::time::Instant::now();
        let mut lock = loop {
            match private_options().write(true).create_new(true).open(&lock_path) {
                Ok(lock) => break lock,
                // A git holds the branch (a gc packing refs, then expiring reflogs), or a
                // dead one left its lock.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    self.wait_for_branch_lock(&lock_path, started)?
                }
                Err(e) => {
                    return Err(StoreError::Git {
                        context: format!("lock {}", lock_path.display()),
                        source: Box::new(e),
                    });
                }
            }
        };
        let result = (|| {
            // From the files: the memo is this process's view, the lock file is the truth.
            let current = self.read_head_commit_id()?;
            if current != expected {
                self.forget_head();
                return Err(StoreError::HeadMoved {
                    name: name.to_string(),
                    to: current.map_or("nothing".into(), |c| c.to_string()),
                });
            }
            let line = format!("{new}\n");
            preallocate(&lock, line.len());
            lock.write_all(line.as_bytes()).map_err(io_err(&lock_path))?;
            let old = expected.unwrap_or_else(|| ObjectId::null(self.repo.object_hash()));
            let action = if expected.is_some() { "commit" } else { "commit (initial)" };
            let entry = format!(
                "{old} {new} {} <{}> {} +0000\t{action}: {subject}\n",
                signature.name, signature.email, signature.time.seconds
            );
            let mut logs = vec![git_dir.join("logs").join(&name)];
            if branch.is_some() {
                logs.push(git_dir.join("logs/HEAD"));
            }
            for log in logs {
                if let Some(dir) = log.parent() {
                    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
                }
                let mut file = private_options().append(true).open(&log).map_err(io_err(&log))?;
                file.write_all(entry.as_bytes()).map_err(io_err(&log))?;
            }
            std::fs::rename(&lock_path, &path).map_err(io_err(&path))?;
            if let Ok(mut memo) = self.head.lock() {
                memo.remember_branch(branch.clone());
                memo.remember_commit(Some(new));
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&lock_path);
        }
        result
    }
}
