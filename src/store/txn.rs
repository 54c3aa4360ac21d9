//! Committing: one writer at a time, and a journal so a killed process never leaves the
//! store in a state the next command cannot use.
//!
//! A write takes an exclusive `flock` on `.git/convo/lock` (the kernel drops it when the
//! holder dies, so there is no stale lock to clean up), then:
//!
//! 1. writes the journal `.git/convo/txn` naming every path it will touch;
//! 2. writes blobs and trees, then the commit, then moves HEAD's branch with a
//!    compare-and-swap (the commit point: before it nothing is visible, after it all is);
//! 3. mirrors the touched files into the working tree and the index;
//! 4. deletes the journal.
//!
//! Whoever finds an orphaned journal (under the lock) replays step 3 from HEAD, which is
//! right whether or not the commit landed. Reads use HEAD's tree, never the working tree, so
//! they cannot see a half-written file.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::object::tree::EntryKind;
use serde::{Deserialize, Serialize};

use super::{Result, Store, StoreError, create_private_dir, git_err, io_err};
use crate::clock::Clock;

/// Proof that the caller holds the store's write lock.
pub struct Lock {
    _file: File,
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
}

impl FailPoint {
    pub fn parse(s: &str) -> Option<FailPoint> {
        Some(match s {
            "journal" => FailPoint::Journal,
            "committed" => FailPoint::Committed,
            "worktree" => FailPoint::Worktree,
            "index" => FailPoint::Index,
            _ => return None,
        })
    }
}

/// Whether housekeeping ran after a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcOutcome {
    NotNeeded,
    Ran,
    /// The repository needs packing but `git` is not installed.
    GitMissing,
}

#[derive(Serialize, Deserialize)]
struct Journal {
    paths: Vec<String>,
}

/// One file a commit writes (`Some(bytes)`) or removes (`None`).
pub(crate) struct Change {
    pub path: String,
    pub bytes: Option<Vec<u8>>,
}

pub(crate) struct Committed {
    pub commit: ObjectId,
    pub tree: ObjectId,
    pub gc: GcOutcome,
}

impl Store {
    pub(super) fn journal_path(&self) -> PathBuf {
        self.state_dir().join("txn")
    }

    /// Take the write lock, waiting for another writer to finish, and repair what a killed
    /// writer left behind.
    pub fn lock(&self) -> Result<Lock> {
        let dir = self.state_dir();
        create_private_dir(&dir)?;
        let path = dir.join("lock");
        let file = private_options()
            .read(true)
            .write(true)
            .truncate(false)
            .open(&path)
            .map_err(io_err(&path))?;
        file.lock().map_err(io_err(&path))?;
        let lock = Lock { _file: file };
        if self.journal_path().exists() {
            self.recover(&lock)?;
        }
        Ok(lock)
    }

    fn fail(&self, at: FailPoint) {
        if self.fail_point == Some(at) {
            std::process::abort();
        }
    }

    /// Commit `changes` on top of HEAD with `message`, keeping working tree and index in step.
    pub(crate) fn commit(
        &self,
        _lock: &Lock,
        changes: &[Change],
        message: &str,
        clock: &Clock,
    ) -> Result<Committed> {
        let parent = self.head_commit_id()?;
        let base_tree = match parent {
            Some(commit) => self.commit_tree_id(commit)?,
            None => ObjectId::empty_tree(self.repo.object_hash()),
        };
        let journal = Journal {
            paths: changes.iter().map(|c| c.path.clone()).collect(),
        };
        let journal_bytes = serde_json::to_vec(&journal).map_err(|e| StoreError::Git {
            context: "journal".into(),
            message: e.to_string(),
        })?;
        write_private_file(&self.state_dir(), &self.journal_path(), &journal_bytes)?;
        self.fail(FailPoint::Journal);

        let mut editor = self
            .repo
            .edit_tree(base_tree)
            .map_err(git_err("edit tree"))?;
        for change in changes {
            match &change.bytes {
                Some(bytes) => {
                    let blob = self
                        .repo
                        .write_blob(bytes)
                        .map_err(git_err(format!("write {}", change.path)))?;
                    editor
                        .upsert(change.path.as_str(), EntryKind::Blob, blob.detach())
                        .map_err(git_err(format!("add {}", change.path)))?;
                }
                None => {
                    editor
                        .remove(change.path.as_str())
                        .map_err(git_err(format!("remove {}", change.path)))?;
                }
            }
        }
        let tree = editor.write().map_err(git_err("write tree"))?.detach();
        let signature = self.signature(clock);
        let commit = self
            .repo
            .commit_as(
                signature.to_ref(&mut gix::date::parse::TimeBuf::default()),
                signature.to_ref(&mut gix::date::parse::TimeBuf::default()),
                "HEAD",
                message,
                tree,
                parent,
            )
            .map_err(git_err("commit"))?
            .detach();
        self.fail(FailPoint::Committed);

        for change in changes {
            self.write_worktree_file(&change.path, change.bytes.as_deref())?;
        }
        self.fail(FailPoint::Worktree);
        self.sync_index(&journal.paths, tree)?;
        self.fail(FailPoint::Index);
        std::fs::remove_file(self.journal_path()).map_err(io_err(self.journal_path()))?;
        let gc = self.maybe_gc();
        Ok(Committed { commit, tree, gc })
    }

    /// Author and committer: the user's git identity when configured, else convo's own, so a
    /// machine without git config can still record conversations.
    fn signature(&self, clock: &Clock) -> gix::actor::Signature {
        let (name, email) = match self.repo.committer() {
            Some(Ok(sig)) => (sig.name.to_owned(), sig.email.to_owned()),
            _ => ("convo".into(), "convo@localhost".into()),
        };
        let now = clock.now();
        gix::actor::Signature {
            name,
            email,
            time: gix::date::Time {
                seconds: now.timestamp(),
                offset: 0,
            },
        }
    }

    /// Replay the working-tree and index half of an interrupted commit from HEAD.
    fn recover(&self, _lock: &Lock) -> Result<()> {
        let path = self.journal_path();
        let bytes = std::fs::read(&path).map_err(io_err(&path))?;
        let journal: Journal = serde_json::from_slice(&bytes).map_err(|e| StoreError::BadFile {
            path: path.display().to_string(),
            message: format!("unreadable journal ({e})"),
        })?;
        // We hold convo's lock, so git lock files under it are leftovers of the killed writer.
        let git_dir = self.repo.git_dir().to_owned();
        for stale in [git_dir.join("index.lock"), git_dir.join("HEAD.lock")] {
            let _ = std::fs::remove_file(stale);
        }
        if let Ok(head) = self.repo.head_name()
            && let Some(name) = head
        {
            let _ = std::fs::remove_file(
                git_dir.join(format!("{}.lock", name.as_bstr().to_str_lossy())),
            );
        }
        let tree = self
            .head_tree_id()?
            .unwrap_or_else(|| ObjectId::empty_tree(self.repo.object_hash()));
        for file in &journal.paths {
            let bytes = match self.entry_at(tree, file)? {
                Some(blob) => Some(self.read_blob(blob)?),
                None => None,
            };
            self.write_worktree_file(file, bytes.as_deref())?;
        }
        self.sync_index(&journal.paths, tree)?;
        let tmp = self.state_dir().join("tmp");
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::remove_file(&path).map_err(io_err(&path))
    }

    /// Write (or delete) one working-tree file atomically: a reader sees the old or the new
    /// file, never a torn one.
    fn write_worktree_file(&self, rel: &str, bytes: Option<&[u8]>) -> Result<()> {
        let target = self.root.join(rel);
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

    /// Point the index entries of `paths` at what `tree` holds, with fresh stat data, so
    /// `git status` sees no change. Costs one read and write of the index.
    fn sync_index(&self, paths: &[String], tree: ObjectId) -> Result<()> {
        use gix::index::entry::{Flags, Mode, Stage, Stat};
        let index_path = self.repo.index_path();
        let mut index = if index_path.exists() {
            self.repo.open_index().map_err(git_err("read index"))?
        } else {
            gix::index::File::from_state(
                gix::index::State::new(self.repo.object_hash()),
                index_path.clone(),
            )
        };
        let mut pushed = false;
        let mut removed: Vec<&str> = Vec::new();
        for rel in paths {
            let in_tree = self.entry_at(tree, rel)?;
            let abs = self.root.join(rel);
            let stat = match in_tree {
                Some(_) => {
                    let meta = gix::index::fs::Metadata::from_path_no_follow(&abs)
                        .map_err(io_err(&abs))?;
                    Some(Stat::from_fs(&meta).map_err(|e| StoreError::Io {
                        path: abs.clone(),
                        source: std::io::Error::other(e),
                    })?)
                }
                None => None,
            };
            match (in_tree, stat) {
                (Some(id), Some(stat)) => {
                    match index
                        .entry_mut_by_path_and_stage(rel.as_bytes().as_bstr(), Stage::Unconflicted)
                    {
                        Some(entry) => {
                            entry.id = id;
                            entry.stat = stat;
                            entry.mode = Mode::FILE;
                        }
                        None => {
                            index.dangerously_push_entry(
                                stat,
                                id,
                                Flags::empty(),
                                Mode::FILE,
                                rel.as_bytes().as_bstr(),
                            );
                            pushed = true;
                        }
                    }
                }
                _ => removed.push(rel),
            }
        }
        if pushed {
            index.sort_entries();
        }
        if !removed.is_empty() {
            index.remove_entries(|_, path, _| removed.iter().any(|r| path == r.as_bytes()));
        }
        // gix writes the TREE extension as read; after editing entries it would be stale.
        index.remove_tree();
        index
            .write(Default::default())
            .map_err(git_err("write index"))?;
        Ok(())
    }

    /// Pack loose objects the way `git commit` does: check git's own threshold cheaply (a
    /// sample of one fan-out folder) and only then pay for `git gc --auto`.
    fn maybe_gc(&self) -> GcOutcome {
        let limit = self
            .repo
            .config_snapshot()
            .integer("gc.auto")
            .unwrap_or(6700);
        if limit <= 0 {
            return GcOutcome::NotNeeded;
        }
        let sample = self.repo.objects.store_ref().path().join("17");
        let count = std::fs::read_dir(sample).map(|d| d.count()).unwrap_or(0) as i64;
        if count <= (limit + 255) / 256 {
            return GcOutcome::NotNeeded;
        }
        match std::process::Command::new("git")
            .args(["gc", "--auto", "--quiet"])
            .current_dir(&self.root)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
        {
            Ok(_) => GcOutcome::Ran,
            Err(_) => GcOutcome::GitMissing,
        }
    }
}

fn private_options() -> std::fs::OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.create(true).mode(0o600);
    options
}

/// Write `bytes` to `target` through a temporary file in `state_dir` and a rename.
pub(crate) fn write_private_file(state_dir: &Path, target: &Path, bytes: &[u8]) -> Result<()> {
    let tmp_dir = state_dir.join("tmp");
    create_private_dir(&tmp_dir)?;
    let tmp = tmp_dir.join(format!(
        "{}-{}",
        std::process::id(),
        target
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("file")
    ));
    let mut file = private_options()
        .write(true)
        .truncate(true)
        .open(&tmp)
        .map_err(io_err(&tmp))?;
    file.write_all(bytes).map_err(io_err(&tmp))?;
    drop(file);
    std::fs::rename(&tmp, target).map_err(io_err(target))
}
