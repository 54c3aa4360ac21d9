//! `watch`: which session files (and opencode databases) changed and have been quiet long
//! enough to import. The caller feeds it what the file system reports (inotify through
//! `notify`) and scans it asks for (the polling fallback, and a safety net for missed
//! events); it answers with the files due, each then imported as `import --follow` does (a
//! database as `import DB` does: what is new in each of its sessions). A database changes
//! when it or its write-ahead log (`-wal`, where opencode's writes land first) does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::import::session_files;

/// A file's size and modification time: it changed when these did.
type Stamp = (u64, Option<SystemTime>);

/// The session files under some folders, and which of them wait to be imported.
pub struct Watch {
    folders: Vec<PathBuf>,
    databases: Vec<PathBuf>,
    /// Every file seen, as it was when last imported (or first seen).
    seen: HashMap<PathBuf, Stamp>,
    /// Files changed since, and when they last changed.
    pending: HashMap<PathBuf, Instant>,
    quiet: Duration,
}

impl Watch {
    /// Watch `folders` and `databases`; a file is due once it has not changed for `quiet`.
    /// Every file there now is due at once (what changed while nothing watched).
    pub fn new(folders: Vec<PathBuf>, databases: Vec<PathBuf>, quiet: Duration, now: Instant) -> Watch {
        let mut watch = Watch { folders, databases, seen: HashMap::new(), pending: HashMap::new(), quiet };
        for path in watch.files() {
            watch.pending.insert(path, now.checked_sub(quiet).unwrap_or(now));
        }
        watch
    }

    fn files(&self) -> Vec<PathBuf> {
        let files = self.folders.iter().filter_map(|f| session_files(f).ok()).flatten();
        files.chain(self.databases.iter().filter(|d| d.is_file()).cloned()).collect()
    }

    /// The file system says `path` changed.
    pub fn touched(&mut self, path: &Path, now: Instant) {
        if path.extension().is_some_and(|e| e == "jsonl") {
            self.pending.insert(path.to_owned(), now);
        } else if let Some(db) = self.databases.iter().find(|d| **d == path || wal(d) == path) {
            self.pending.insert(db.clone(), now);
        }
    }

    /// Whether `path` is one of the databases watched.
    pub fn is_database(&self, path: &Path) -> bool {
        self.databases.iter().any(|d| d == path)
    }

    pub fn databases(&self) -> &[PathBuf] {
        &self.databases
    }

    /// Look at every file for changes nothing reported.
    pub fn scan(&mut self, now: Instant) {
        for path in self.files() {
            let stamp = stamp(&path);
            if self.seen.get(&path) != Some(&stamp) && !self.pending.contains_key(&path) {
                self.pending.insert(path, now);
            }
        }
    }

    /// Files quiet for long enough, oldest change first; `all`: every pending one (before
    /// exiting).
    pub fn due(&mut self, now: Instant, all: bool) -> Vec<PathBuf> {
        let mut due: Vec<(Instant, PathBuf)> = self
            .pending
            .iter()
            .filter(|(_, at)| all || now.duration_since(**at) >= self.quiet)
            .map(|(p, at)| (*at, p.clone()))
            .collect();
        due.sort();
        for (_, path) in &due {
            self.pending.remove(path);
            let stamp = stamp(path);
            self.seen.insert(path.clone(), stamp);
        }
        due.into_iter().map(|(_, p)| p).collect()
    }

    /// How many files wait.
    pub fn waiting(&self) -> usize {
        self.pending.len()
    }

    pub fn folders(&self) -> &[PathBuf] {
        &self.folders
    }
}

/// A file's stamp; a database's with its write-ahead log's (its size, and the later time).
fn stamp(path: &Path) -> Stamp {
    let one = |p: &Path| std::fs::metadata(p).map(|m| (m.len(), m.modified().ok())).unwrap_or((0, None));
    let (len, time) = one(path);
    match std::fs::metadata(wal(path)) {
        Ok(_) => {
            let (wal_len, wal_time) = one(&wal(path));
            (len + wal_len, time.max(wal_time))
        }
        Err(_) => (len, time),
    }
}

/// SQLite's write-ahead log beside a database.
fn wal(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}
