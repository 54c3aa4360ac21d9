//! `watch`: which session files (and opencode databases) changed and have been quiet long
//! enough to import. The caller feeds it what the file system reports (inotify through
//! `notify`) and scans it asks for (the polling fallback, and a safety net for missed
//! events); it answers with the files due, each then imported as `import --follow` does (a
//! database as `import DB` does: what is new in each of its sessions). A database changes
//! when it or its write-ahead log (`-wal`, where opencode's writes land first) does.
//!
//! A folder may not be there yet (Codex makes `~/.codex/sessions` on its first run): it is
//! waited for, the file system watched at its nearest ancestor that is ([`Watch::spots`]),
//! and when it appears everything already in it is due ([`Watch::arrived`], then
//! [`Watch::folder_appeared`]), as it is for a folder made inside a watched one (Codex's
//! `YYYY/MM/DD/`): files written there before its watch was in place are never reported.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::import::session_files;

/// A file's size and modification time: it changed when these did.
type Stamp = (u64, Option<SystemTime>);

/// The session files under some folders, and which of them wait to be imported.
pub struct Watch {
    folders: Vec<PathBuf>,
    /// The folders that were not there when last looked at.
    awaited: Vec<PathBuf>,
    databases: Vec<PathBuf>,
    /// Every file seen, as it was when last imported (or first seen).
    seen: HashMap<PathBuf, Stamp>,
    /// Files changed since, and when they last changed.
    pending: HashMap<PathBuf, Instant>,
    quiet: Duration,
}

impl Watch {
    /// Watch `folders` and `databases`; a file is due once it has not changed for `quiet`.
    /// Every file there now is due at once (what changed while nothing watched). A folder
    /// that is not there is waited for.
    pub fn new(folders: Vec<PathBuf>, databases: Vec<PathBuf>, quiet: Duration, now: Instant) -> Watch {
        let awaited = folders.iter().filter(|f| !f.is_dir()).cloned().collect();
        let mut watch = Watch { folders, awaited, databases, seen: HashMap::new(), pending: HashMap::new(), quiet };
        for path in watch.files() {
            watch.pending.insert(path, now.checked_sub(quiet).unwrap_or(now));
        }
        watch
    }

    fn files(&self) -> Vec<PathBuf> {
        let files = self.folders.iter().filter_map(|f| session_files(f).ok()).flatten();
        files.chain(self.databases.iter().filter(|d| d.is_file()).cloned()).collect()
    }

    /// The file system says `path` changed. Only a session file in a watched folder counts:
    /// the watch on a folder's ancestor reports the ancestor's other files too.
    pub fn touched(&mut self, path: &Path, now: Instant) {
        if path.extension().is_some_and(|e| e == "jsonl") && self.folders.iter().any(|f| path.starts_with(f)) {
            self.pending.insert(path.to_owned(), now);
        } else if let Some(db) = self.databases.iter().find(|d| **d == path || wal(d) == path) {
            self.pending.insert(db.clone(), now);
        }
    }

    /// The file system says `path` was made (or moved) there. A folder made in a watched
    /// one: what is in it already is due. (Only for a folder made: a scan opens every
    /// folder, and a watch reports each opening.)
    pub fn made(&mut self, path: &Path, now: Instant) {
        if self.folders.iter().any(|f| path.starts_with(f) && !self.awaited.contains(f))
            && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
        {
            self.folder_appeared(path, now);
        }
    }

    /// `folder` appeared (or its watch has just been put in place): every session file in
    /// it is due, since the file system reported none of those written before.
    pub fn folder_appeared(&mut self, folder: &Path, now: Instant) {
        for path in session_files(folder).unwrap_or_default() {
            self.pending.insert(path, now);
        }
    }

    /// The folders waited for that are there now, waited for no longer; a folder that has
    /// gone is waited for again. The caller puts its watch on each arrival (see
    /// [`Watch::spots`]), then calls [`Watch::folder_appeared`]: in that order, so nothing
    /// written between the two is missed.
    pub fn arrived(&mut self) -> Vec<PathBuf> {
        let mut arrived = Vec::new();
        for folder in &self.folders {
            match (self.awaited.iter().position(|f| f == folder), folder.is_dir()) {
                (Some(at), true) => {
                    self.awaited.remove(at);
                    arrived.push(folder.clone());
                }
                (None, false) => self.awaited.push(folder.clone()),
                _ => {}
            }
        }
        arrived
    }

    /// Whether `path` is a folder waited for or on the way to one: its appearing may bring
    /// one.
    pub fn leads_to_awaited(&self, path: &Path) -> bool {
        self.awaited.iter().any(|f| f.starts_with(path))
    }

    /// The folders waited for, each with its nearest ancestor that is there (none when not
    /// even the root is).
    pub fn awaited(&self) -> Vec<(&Path, Option<&Path>)> {
        self.awaited.iter().map(|f| (f.as_path(), f.ancestors().skip(1).find(|a| a.is_dir()))).collect()
    }

    /// Where the file system's watches go, and whether each takes in its subfolders: each
    /// folder that is there, whole; for one waited for, its nearest ancestor that is, alone
    /// (it reports the next folder down appearing); a database's folder, alone. A spot
    /// inside a folder watched whole is left out: that watch reports it already.
    pub fn spots(&self) -> Vec<(PathBuf, bool)> {
        let whole: Vec<&Path> =
            self.folders.iter().filter(|f| !self.awaited.contains(f)).map(PathBuf::as_path).collect();
        let alone = self.awaited().into_iter().filter_map(|(_, at)| at);
        let alone = alone.chain(self.databases.iter().filter_map(|d| d.parent()));
        let mut spots: Vec<(PathBuf, bool)> = whole.iter().map(|f| (f.to_path_buf(), true)).collect();
        for at in alone {
            if !whole.iter().any(|f| at.starts_with(f)) && !spots.iter().any(|(s, _)| s == at) {
                spots.push((at.to_owned(), false));
            }
        }
        spots
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

#[cfg(test)]
mod tests {
    use super::*;

    const QUIET: Duration = Duration::from_millis(10);

    /// A folder not there is waited for at its nearest ancestor; once it is there it is
    /// watched whole, and what was written in it before is due.
    #[test]
    fn a_folder_not_there_yet_is_waited_for_and_taken_in_when_it_appears() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join(".codex/sessions");
        let start = Instant::now();
        let mut watch = Watch::new(vec![sessions.clone()], Vec::new(), QUIET, start);
        assert_eq!(watch.awaited(), [(sessions.as_path(), Some(home.path()))]);
        assert_eq!(watch.spots(), [(home.path().to_owned(), false)]);
        assert!(watch.leads_to_awaited(&home.path().join(".codex")));
        assert!(!watch.leads_to_awaited(&home.path().join(".bashrc")));
        assert!(watch.arrived().is_empty());

        std::fs::create_dir(home.path().join(".codex")).unwrap();
        assert_eq!(watch.spots(), [(home.path().join(".codex"), false)], "the watch moves a folder down");
        let day = sessions.join("2026/11/29");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(day.join("rollout-1.jsonl"), "{}\n").unwrap();
        assert_eq!(watch.arrived(), std::slice::from_ref(&sessions));
        assert_eq!(watch.spots(), [(sessions.clone(), true)]);
        watch.folder_appeared(&sessions, start);
        assert_eq!(watch.due(start + QUIET, false), [day.join("rollout-1.jsonl")]);

        // Gone, it is waited for again.
        std::fs::remove_dir_all(&sessions).unwrap();
        assert!(watch.arrived().is_empty());
        assert_eq!(watch.awaited(), [(sessions.as_path(), Some(home.path().join(".codex").as_path()))]);
    }

    /// A folder made inside a watched one (Codex's day folder): the files written in it
    /// before its watch was placed are due; a session file outside the folders (an
    /// ancestor's watch reports it) is not.
    #[test]
    fn a_folder_made_in_a_watched_one_brings_its_files() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        std::fs::create_dir(&sessions).unwrap();
        let start = Instant::now();
        let mut watch = Watch::new(vec![sessions.clone()], Vec::new(), QUIET, start);
        assert!(watch.due(start, true).is_empty());
        let day = sessions.join("2026/11/29");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(day.join("rollout-1.jsonl"), "{}\n").unwrap();
        std::fs::write(home.path().join("notes.jsonl"), "{}\n").unwrap();
        watch.touched(&home.path().join("notes.jsonl"), start);
        watch.made(&home.path().join("notes.jsonl"), start);
        assert_eq!(watch.waiting(), 0);
        watch.made(&sessions.join("2026"), start);
        assert_eq!(watch.due(start + QUIET, false), [day.join("rollout-1.jsonl")]);
    }

    /// The scan lists a folder that appeared after the watch began as any other.
    #[test]
    fn a_scan_finds_the_files_of_a_folder_that_appeared_later() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        let start = Instant::now();
        let mut watch = Watch::new(vec![sessions.clone()], Vec::new(), QUIET, start);
        std::fs::create_dir_all(sessions.join("2026/11/29")).unwrap();
        std::fs::write(sessions.join("2026/11/29/rollout-1.jsonl"), "{}\n").unwrap();
        watch.scan(start);
        assert_eq!(watch.due(start + QUIET, false), [sessions.join("2026/11/29/rollout-1.jsonl")]);
    }
}
