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

/// What [`Store::remove_torn_objects`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TornObjects {
    /// Unreachable objects that were empty or did not inflate to their id: removed.
    pub removed: Vec<String>,
    /// Torn objects a ref still reaches: the store is corrupt (see [`Store::fsck`]).
    pub reachable: Vec<String>,
}

impl Store {
    /// After a power cut: loose objects written but never synced may be empty or torn
    /// under their final names (see `durable`). None is reachable from a ref that was
    /// synced after them; such an object is removed here, under the lock, so `git fsck`
    /// and a later write of the same object do not meet it. One a ref reaches is left and
    /// reported: the store is corrupt (a commit made with `store.fsync = "none"`, or a
    /// disk that lied). Objects are checked only when some object fails to read whole:
    /// a sound store costs one inflate and hash per loose object.
    pub fn remove_torn_objects(&self) -> Result<TornObjects> {
        let objects = self.repo.objects.store_ref().path().to_owned();
        let mut torn = Vec::new();
        let Ok(fans) = std::fs::read_dir(&objects) else { return Ok(TornObjects::default()) };
        for fan in fans.flatten() {
            let fan_name = fan.file_name().to_string_lossy().into_owned();
            if fan_name.len() != 2 || !fan_name.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(fan.path()) else { continue };
            for entry in entries.flatten() {
                let hex = format!("{fan_name}{}", entry.file_name().to_string_lossy());
                let Ok(id) = ObjectId::from_hex(hex.as_bytes()) else { continue };
                if !whole_object(&entry.path(), id, self.repo.object_hash()) {
                    torn.push((id, entry.path()));
                }
            }
        }
        if torn.is_empty() {
            return Ok(TornObjects::default());
        }
        let _lock = self.lock()?;
        let reachable = self.reachable_ids(torn.iter().map(|(id, _)| *id).collect())?;
        let mut found = TornObjects::default();
        for (id, path) in torn {
            if reachable.contains(&id) {
                found.reachable.push(id.to_string());
            } else {
                match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_err(path)(e)),
                    _ => found.removed.push(id.to_string()),
                }
            }
        }
        Ok(found)
    }

    /// Which of `wanted` any ref reaches (through commits, their trees and blobs). A walk
    /// that meets one of `wanted` as a commit or tree does not descend into it: it cannot be
    /// read, and it is reachable either way.
    fn reachable_ids(&self, wanted: HashSet<ObjectId>) -> Result<HashSet<ObjectId>> {
        let mut found = HashSet::new();
        let mut seen: HashSet<ObjectId> = HashSet::new();
        let mut commits: Vec<ObjectId> = Vec::new();
        let refs = self.repo.references().map_err(git_err("list refs"))?;
        for reference in refs.all().map_err(git_err("list refs"))?.flatten() {
            if let Some(id) = reference.target().try_id() {
                commits.push(id.to_owned());
            }
        }
        let mut trees = Vec::new();
        while let Some(commit) = commits.pop() {
            if !seen.insert(commit) {
                continue;
            }
            if wanted.contains(&commit) {
                found.insert(commit);
                continue;
            }
            let object = self.repo.find_object(commit).map_err(git_err(format!("read {commit}")))?;
            let Ok(decoded) = object.try_into_commit() else { continue };
            trees.push(decoded.tree_id().map_err(git_err(format!("read {commit}")))?.detach());
            commits.extend(decoded.parent_ids().map(|p| p.detach()));
        }
        while let Some(tree) = trees.pop() {
            if !seen.insert(tree) {
                continue;
            }
            if wanted.contains(&tree) {
                found.insert(tree);
                continue;
            }
            for (_, id, is_tree) in self.tree_entries(tree)? {
                if is_tree {
                    trees.push(id);
                } else if wanted.contains(&id) {
                    found.insert(id);
                }
            }
        }
        Ok(found)
    }
}

/// Whether the loose object file at `path` is object `id` whole, as `git fsck` checks it: one
/// complete zlib stream (its checksum included, nothing after it), a header whose size is
/// the data's, and data that hashes to `id`. A file torn inside the stream's trailer still
/// inflates to the right data: git refuses it, so this does too.
pub(super) fn whole_object(path: &Path, id: ObjectId, hash: gix::hash::Kind) -> bool {
    let Ok(input) = std::fs::read(path) else { return false };
    let mut size = input.len() * 4 + 1024;
    loop {
        let mut out = vec![0; size];
        let mut inflate = gix_zlib::Inflate::default();
        match inflate.once(&input, &mut out) {
            Ok((gix_zlib::Status::StreamEnd, consumed, written)) => {
                if consumed != input.len() {
                    return false;
                }
                out.truncate(written);
                let Ok((kind, len, header)) = gix::objs::decode::loose_header(&out) else { return false };
                return len as usize == out.len() - header
                    && gix::objs::compute_hash(hash, kind, &out[header..]).ok() == Some(id);
            }
            Ok((_, _, written)) if written == size && size < (1 << 31) => size *= 4,
            _ => return false,
        }
    }
}
