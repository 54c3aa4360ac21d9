//! `fsck`: everything committed parses, ids are unique, every tool result has its call, HEAD's
//! tree holds only convo's layout, no event id was ever reused for other content, the
//! working tree has no symlinks, and it and the index agree with HEAD.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use gix::ObjectId;

use super::{Result, Store, StoreError, git_err, io_err, layout, parse_meta};
use crate::event::Kind;

/// One thing wrong, and where.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
    /// What mends it from HEAD, when that is all it takes; said as a hint, not listed.
    #[serde(skip)]
    pub mend: Option<Mend>,
}

/// A problem whose cure is to bring a copy of HEAD's files back in line with HEAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mend {
    /// The git index: derived from HEAD, so rebuilding it loses nothing.
    RebuildIndex,
    /// A working-tree file that differs from HEAD or is missing: restored from HEAD (a
    /// hand edit is lost, which is why convo does not do it unasked).
    RestoreFile,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

fn problem(path: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem { path: path.into(), message: message.into(), mend: None }
}

fn index_problem(path: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem { mend: Some(Mend::RebuildIndex), ..problem(path, message) }
}

fn file_problem(path: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem { mend: Some(Mend::RestoreFile), ..problem(path, message) }
}

impl Store {
    /// Check the store; an empty list means it is sound.
    pub fn fsck(&self) -> Result<Vec<Problem>> {
        let mut problems = Vec::new();
        if let Some(head) = self.head_commit_id()? {
            match self.check_incoming(head, None) {
                Ok(()) => {}
                Err(StoreError::Refused { path, reason, .. }) => problems.push(problem(path, reason)),
                Err(e) => return Err(e),
            }
        }
        for id in self.conversation_ids()? {
            self.check_conversation(&id, &mut problems)?;
        }
        self.check_history(&mut problems)?;
        self.check_worktree(&mut problems)?;
        self.check_git_locks(&mut problems);
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(problems)
    }

    /// Git locks nobody holds (a killed git left them): each blocks `git gc`, and so the
    /// packing convo's automatic gc does, which otherwise fails without a word.
    fn check_git_locks(&self, problems: &mut Vec<Problem>) {
        let locks = self.git_locks();
        if locks.is_empty() || !self.git_at_work().is_empty() {
            return;
        }
        for lock in &locks {
            problems.push(problem(
                &lock.path,
                format!(
                    "stale git lock ({}s old, no git runs in the store): it makes `git gc` fail; \
                     the next convo write removes it, or run `rm {}`",
                    lock.age.as_secs(),
                    self.root.join(&lock.path).display()
                ),
            ));
        }
        let (loose, limit, due) = self.loose_objects();
        if due {
            problems.push(problem(
                ".git/objects",
                format!(
                    "about {loose} loose objects need packing (gc.auto is {limit}), and `git gc` fails while {} exists",
                    locks[0].path
                ),
            ));
        }
    }

    /// Every version of every conversation in HEAD's history: an event id must always name
    /// the same content. A reuse means some line of history replaced an event, which convo
    /// never does (a pull diverts such a line into a fork). Each segment blob is read once.
    fn check_history(&self, problems: &mut Vec<Problem>) -> Result<()> {
        let Some(head) = self.head_commit_id()? else {
            return Ok(());
        };
        let walk = self.repo.rev_walk([head]).all().map_err(git_err("walk history"))?;
        let mut seen_trees: HashSet<ObjectId> = HashSet::new();
        let mut seen_blobs: HashSet<ObjectId> = HashSet::new();
        // (conversation, event id) -> (hash of its line, commit it was first seen in).
        let mut lines: HashMap<(String, String), (u64, ObjectId)> = HashMap::new();
        let mut reported: HashSet<(String, String)> = HashSet::new();
        for info in walk {
            let commit = info.map_err(git_err("walk history"))?.id;
            let root = self.commit_tree_id(commit)?;
            let Some(dir) = self.entry_at(root, layout::CONVERSATIONS)? else { continue };
            if !seen_trees.insert(dir) {
                continue;
            }
            for (id, tree) in self.conversations_in(dir)? {
                if !seen_trees.insert(tree) {
                    continue;
                }
                // Layout and parse errors are reported for HEAD above; history is best effort.
                let Ok(segments) = self.segments_in(root, &id) else { continue };
                for (path, blob) in segments {
                    if !seen_blobs.insert(blob) {
                        continue;
                    }
                    let Ok(events) = self.parse_segment(&path, blob) else { continue };
                    for event in events {
                        let hash = {
                            use std::hash::{Hash, Hasher};
                            let mut h = std::collections::hash_map::DefaultHasher::new();
                            event.to_line().hash(&mut h);
                            h.finish()
                        };
                        let key = (id.clone(), event.id.clone());
                        match lines.get(&key) {
                            None => {
                                lines.insert(key, (hash, commit));
                            }
                            Some((first, at)) if *first != hash && reported.insert(key.clone()) => {
                                problems.push(problem(
                                    layout::conversation_dir(&id),
                                    format!(
                                        "event id `{}` names different content in commits {} and {}",
                                        event.id,
                                        &at.to_string()[..7],
                                        &commit.to_string()[..7]
                                    ),
                                ));
                            }
                            Some(_) => {}
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn check_conversation(&self, id: &str, problems: &mut Vec<Problem>) -> Result<()> {
        let dir = layout::conversation_dir(id);
        if !crate::clock::is_ulid(id) {
            problems.push(problem(&dir, "conversation folder name is not a convo id"));
        }
        let root = self.head_tree_id()?.ok_or(StoreError::Empty)?;
        match self.entry_at(root, &layout::meta_path(id))? {
            Some(blob) => {
                if let Err(e) = parse_meta(&layout::meta_path(id), &self.read_blob(blob)?) {
                    problems.push(problem(layout::meta_path(id), e.to_string()));
                }
            }
            None => problems.push(problem(layout::meta_path(id), "missing")),
        }
        let segments = match self.segments(id) {
            Ok(segments) => segments,
            Err(StoreError::BadFile { path, message }) => {
                problems.push(problem(path, message));
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let mut ids: HashMap<String, String> = HashMap::new();
        let mut calls: HashSet<String> = HashSet::new();
        for (path, blob) in segments {
            let events = match self.parse_segment(&path, blob) {
                Ok(events) => events,
                Err(StoreError::Corrupt { path, error }) => {
                    problems.push(problem(path, error.to_string()));
                    continue;
                }
                Err(StoreError::BadFile { path, message }) => {
                    problems.push(problem(path, message));
                    continue;
                }
                Err(e) => return Err(e),
            };
            for (index, event) in events.iter().enumerate() {
                let at = format!("{path}:{}", index + 1);
                if let Some(first) = ids.insert(event.id.clone(), at.clone()) {
                    problems.push(problem(&at, format!("duplicate event id `{}` (first at {first})", event.id)));
                }
                match &event.kind {
                    Kind::ToolCall { call_id, .. } => {
                        calls.insert(call_id.clone());
                    }
                    Kind::ToolResult { call_id, .. } if !calls.contains(call_id) => {
                        problems.push(problem(
                            &at,
                            format!("tool_result for call_id `{call_id}` has no tool_call before it"),
                        ));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Compare the working tree and the index with HEAD, file by file.
    fn check_worktree(&self, problems: &mut Vec<Problem>) -> Result<()> {
        let mut committed: HashMap<String, ObjectId> = HashMap::new();
        if let Some(root) = self.head_tree_id()? {
            self.collect_blobs(root, "", &mut committed)?;
        }
        for (path, id) in &committed {
            let abs = match self.worktree_path(path) {
                Ok(abs) => abs,
                Err(StoreError::Symlink { path }) => {
                    problems.push(problem(path, "symlink in the working tree; convo never follows it"));
                    continue;
                }
                // Not convo's layout: reported by the tree check, never read.
                Err(StoreError::BadFile { .. }) => continue,
                Err(e) => return Err(e),
            };
            match std::fs::read(&abs) {
                Ok(bytes) => {
                    let actual = gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, &bytes)
                        .map_err(git_err("hash file"))?;
                    if actual != *id {
                        problems.push(file_problem(path, "working tree file differs from HEAD"));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    problems.push(file_problem(path, "missing from the working tree"));
                }
                Err(e) => return Err(io_err(abs)(e)),
            }
        }
        let mut on_disk = Vec::new();
        let mut links = Vec::new();
        walk_files(&self.root.join(layout::CONVERSATIONS), layout::CONVERSATIONS, &mut on_disk, &mut links)?;
        for path in links {
            if !problems.iter().any(|p| p.path == path) {
                problems.push(problem(path, "symlink in the working tree; convo never follows it"));
            }
        }
        for path in on_disk {
            if !committed.contains_key(&path) {
                problems.push(problem(path, "in the working tree but not in HEAD"));
            }
        }
        if self.repo.index_path().exists() {
            let index = match self.repo.open_index() {
                Ok(index) => index,
                Err(e) => {
                    // git cannot reset an index it cannot read: convo's next write mends it.
                    problems.push(problem(".git/index", format!("unreadable ({e}); the next convo write rebuilds it")));
                    problems.sort_by(|a, b| a.path.cmp(&b.path));
                    return Ok(());
                }
            };
            let mut indexed = HashSet::new();
            for entry in index.entries() {
                let path = entry.path(&index).to_string();
                match committed.get(&path) {
                    Some(id) if *id == entry.id => {}
                    Some(_) => problems.push(index_problem(&path, "index entry differs from HEAD")),
                    None => problems.push(index_problem(&path, "in the index but not in HEAD")),
                }
                indexed.insert(path);
            }
            for path in committed.keys().filter(|p| !indexed.contains(*p)) {
                problems.push(index_problem(path, "in HEAD but not in the index"));
            }
        } else if !committed.is_empty() {
            problems.push(index_problem(".git/index", "missing; the next convo write rebuilds it"));
        }
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(())
    }
}

/// Files below `dir` into `out`, symlinks (never followed) into `links`.
fn walk_files(dir: &Path, rel: &str, out: &mut Vec<String>, links: &mut Vec<String>) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io_err(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{rel}/{name}");
        let kind = entry.file_type().map_err(io_err(entry.path()))?;
        if kind.is_symlink() {
            links.push(path);
        } else if kind.is_dir() {
            walk_files(&entry.path(), &path, out, links)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}
