//! `import DIR`: every session file under a folder, each as `import --follow` takes it (new
//! ones whole, imported ones continued, unchanged ones left, plain imports taken over),
//! under one lock and in one commit: a folder imports whole or, if that commit fails, not at
//! all. A file that is not a line-based session is counted apart; one that fails is
//! reported and the rest go on.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::clock::Clock;
use crate::interop::Format;
use crate::ops::import::{self, Commits, Followed, ImportFailure, Options};
use crate::store::{Batch, Landed, Store, subject};

/// Why one file of a folder was not imported.
#[derive(Debug)]
pub enum Failed {
    /// A second file of a session name already imported in this run (a copy, a backup):
    /// within one commit it would be taken for the same session.
    SameSession(PathBuf),
    Import(PathBuf, ImportFailure),
}

/// What [`import`] did with a folder.
#[derive(Debug, Default)]
pub struct Imported {
    pub files: usize,
    pub started: usize,
    pub grew: usize,
    pub unchanged: usize,
    /// Files that are not line-based sessions, or hold no whole line yet.
    pub skipped: usize,
    /// Imported whole before with plain `import`, and followed from now on.
    pub taken: usize,
    pub failed: Vec<Failed>,
    /// Events imported, in all conversations.
    pub events: u64,
    /// The folder's one commit, when anything was new.
    pub committed: Option<Committed>,
}

/// The folder's commit.
#[derive(Debug)]
pub struct Committed {
    pub commit: ObjectId,
    pub subject: String,
    pub landed: Landed,
    /// The main conversation of the last session started, made active.
    pub active: Option<String>,
}

/// Import every session file under `dir` (see the module docs). `progress` is told after
/// each file.
pub fn import(
    store: &Store,
    dir: &Path,
    format: Option<Format>,
    clock: &Clock,
    progress: &mut dyn FnMut(),
) -> Result<Imported, ImportFailure> {
    let files = import::session_files(dir)?;
    let mut done = Imported { files: files.len(), ..Imported::default() };
    if files.is_empty() {
        return Ok(done);
    }
    let options = Options { title: None, again: false };
    let lock = store.lock()?;
    let mut batch = Batch::default();
    let mut last_started = None;
    // A session is known by its file name.
    let mut sessions = std::collections::HashSet::new();
    for path in &files {
        let stem = path.file_stem().map(|s| s.to_owned());
        if sessions.contains(&stem) {
            done.failed.push(Failed::SameSession(path.clone()));
            progress();
            continue;
        }
        let mut commits = Commits::Into(&mut batch);
        let followed = import::follow_into(store, &lock, path, format, &options, clock, &mut commits);
        if followed.is_ok() {
            sessions.insert(stem);
        }
        match followed {
            Ok(Followed::Started(started)) => {
                done.started += 1;
                done.events += started.conversations.iter().map(|(_, s)| s.events).sum::<u64>();
                last_started = Some(started.conversations[0].0.clone());
            }
            Ok(Followed::Grew { added, new_parts, .. }) => {
                done.grew += 1;
                done.events += added + new_parts;
            }
            Ok(Followed::Unchanged { .. }) => done.unchanged += 1,
            Ok(Followed::TakenOver { .. }) => done.taken += 1,
            Err(e) if e.is_not_a_session() => done.skipped += 1,
            Err(e) => done.failed.push(Failed::Import(path.clone(), e)),
        }
        progress();
    }
    if !batch.is_empty() {
        let name =
            dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| dir.display().to_string());
        let subject = subject::folder(&name, done.started + done.grew + done.taken, done.events);
        let committed = store.commit_batch(&lock, batch, &subject, clock)?;
        drop(lock);
        if let Some(id) = &last_started {
            store.set_active(id)?;
        }
        done.committed =
            Some(Committed { commit: committed.commit, subject, landed: committed.landed, active: last_started });
    }
    Ok(done)
}
