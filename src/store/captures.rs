//! Captures that failed: a hook or `watch` that could not import an agent's session says so
//! in `.git/convo/captures` (local, never committed or pushed; one JSON object a line, the
//! newest last), so that `convo status` and the next command run at a terminal can tell the
//! user. Before, the error was seen only inside the agent's transcript, where a hook's
//! output goes. A later capture of the same file that succeeds clears its entries; at most
//! [`KEPT`] entries are kept. The file is rewritten whole (a temporary file renamed over it)
//! under the store's lock, so two captures failing together both stay.
//!
//! Captures that worked are kept too, in `.git/convo/captured` (the same way, one line per
//! file, the newest [`KEPT`]): the file's path and its size when captured, so `status` can
//! say a followed session lags (its file has grown since; only its size is looked at).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Result, Store, create_private_dir, io_err};

/// How many failures the record keeps, the newest.
const KEPT: usize = 100;

/// A capture that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedCapture {
    /// When (RFC 3339).
    pub at: String,
    /// What captured: `hook claude-code`, `watch`.
    pub by: String,
    /// The session file (or database).
    pub path: String,
    /// The error, one line.
    pub error: String,
    /// Whether a command has said it at a terminal already.
    #[serde(default)]
    pub told: bool,
}

/// A capture that worked: the file, and its size then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Captured {
    pub at: String,
    pub by: String,
    pub path: String,
    pub size: u64,
}

impl Store {
    fn captured_path(&self) -> PathBuf {
        self.state_dir().join("captured")
    }

    /// The captures that worked, one per file, oldest first.
    pub fn captured_files(&self) -> Result<Vec<Captured>> {
        let path = self.captured_path();
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io_err(&path)(e)),
        }
    }

    /// Record that capturing `path` worked when it was `size` bytes long.
    /// A file seen again at the size recorded writes nothing: a sweep of `watch` that finds
    /// nothing new leaves the store as it was.
    pub fn capture_recorded(&self, by: &str, path: &Path, size: u64, at: &str) -> Result<()> {
        let path = path.display().to_string();
        if self.captured_files()?.iter().any(|c| c.path == path && c.size == size) {
            return Ok(());
        }
        let _lock = self.lock()?;
        let mut captured = self.captured_files()?;
        captured.retain(|c| c.path != path);
        captured.push(Captured { at: at.to_owned(), by: by.to_owned(), path, size });
        let skip = captured.len().saturating_sub(KEPT);
        let text: String =
            captured[skip..].iter().map(|c| serde_json::to_string(c).unwrap_or_default() + "\n").collect();
        let dir = self.state_dir();
        create_private_dir(&dir)?;
        super::txn::write_private_file(&dir, &self.captured_path(), text.as_bytes())
    }

    fn captures_path(&self) -> PathBuf {
        self.state_dir().join("captures")
    }

    /// The failures recorded, oldest first. No record, or lines another convo cannot read
    /// (the file is local, but a torn write may end it): those are none.
    pub fn failed_captures(&self) -> Result<Vec<FailedCapture>> {
        let path = self.captures_path();
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io_err(&path)(e)),
        }
    }

    /// Record that capturing `path` failed with `error`.
    pub fn capture_failed(&self, by: &str, path: &Path, error: &str, at: &str) -> Result<()> {
        let failure = FailedCapture {
            at: at.to_owned(),
            by: by.to_owned(),
            path: path.display().to_string(),
            error: error.lines().next().unwrap_or_default().to_owned(),
            told: false,
        };
        self.edit_captures(|failures| failures.push(failure))
    }

    /// Capturing `path` worked: its earlier failures are over.
    pub fn capture_worked(&self, path: &Path) -> Result<()> {
        let path = path.display().to_string();
        if !self.failed_captures()?.iter().any(|f| f.path == path) {
            return Ok(());
        }
        self.edit_captures(|failures| failures.retain(|f| f.path != path))
    }

    /// Every failure recorded has been said at a terminal.
    pub fn failed_captures_told(&self) -> Result<()> {
        self.edit_captures(|failures| failures.iter_mut().for_each(|f| f.told = true))
    }

    fn edit_captures(&self, edit: impl FnOnce(&mut Vec<FailedCapture>)) -> Result<()> {
        let _lock = self.lock()?;
        let mut failures = self.failed_captures()?;
        edit(&mut failures);
        let skip = failures.len().saturating_sub(KEPT);
        let mut text = String::new();
        for f in &failures[skip..] {
            text += &serde_json::to_string(f).unwrap_or_default();
            text.push('\n');
        }
        let dir = self.state_dir();
        create_private_dir(&dir)?;
        super::txn::write_private_file(&dir, &self.captures_path(), text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn a_failure_is_kept_until_the_same_file_is_captured_and_said_once() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = crate::store::Store::init(dir.path()).unwrap();
        assert!(store.failed_captures().unwrap().is_empty());
        store.capture_failed("hook claude-code", Path::new("/s/a.jsonl"), "line 3: not JSON\nmore", "t1").unwrap();
        store.capture_failed("watch", Path::new("/s/b.jsonl"), "gone", "t2").unwrap();
        let failures = store.failed_captures().unwrap();
        assert_eq!(failures.len(), 2);
        assert_eq!((failures[0].error.as_str(), failures[0].told), ("line 3: not JSON", false));
        store.failed_captures_told().unwrap();
        assert!(store.failed_captures().unwrap().iter().all(|f| f.told));
        store.capture_worked(Path::new("/s/a.jsonl")).unwrap();
        let left: Vec<String> = store.failed_captures().unwrap().into_iter().map(|f| f.path).collect();
        assert_eq!(left, ["/s/b.jsonl"]);
    }
}
