//! A push the secret scan refused: `sync` run by an agent's hook or a cron job (or a `push`
//! in a script) that cannot publish because a secret sits in what it would send says so in
//! `.git/convo/refused` (local, never committed or pushed; one JSON object), so `status`
//! and the next command run at a terminal can tell the user. Before, the refusal was seen
//! only where the hook's output went, and the hook kept refusing unnoticed.
//!
//! Only the latest refusal is kept: it names the remote, how many secrets and where they
//! are (conversation, event, field, rule; never the secret). A push that succeeds clears
//! it. The file is written whole (a temporary file renamed over it) under the store's lock;
//! a file another convo cannot read is none.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Result, Store, create_private_dir, io_err};

/// The name of the file under `.git/convo/`: a caller may look for it without opening the store.
pub const FILE: &str = "refused";

/// A push the secret scan refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedPush {
    /// When (RFC 3339).
    pub at: String,
    /// What pushed: `push`, `sync`.
    pub by: String,
    pub remote: String,
    /// Distinct secret texts, as `redact --secrets` counts them.
    pub secrets: usize,
    /// Where each is: `conversation ID event ID FIELD: RULE`.
    pub places: Vec<String>,
    /// Whether a command has said it at a terminal already.
    #[serde(default)]
    pub told: bool,
}

impl Store {
    fn refused_path(&self) -> PathBuf {
        self.state_dir().join(FILE)
    }

    /// The latest refused push, if one is recorded and no push succeeded since.
    pub fn refused_push(&self) -> Result<Option<RefusedPush>> {
        let path = self.refused_path();
        match std::fs::read(&path) {
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).ok()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(&path)(e)),
        }
    }

    /// Record that the secret scan refused a push.
    pub fn push_refused(&self, refused: &RefusedPush) -> Result<()> {
        let _lock = self.lock()?;
        let dir = self.state_dir();
        create_private_dir(&dir)?;
        let bytes = serde_json::to_vec(refused).unwrap_or_default();
        super::txn::write_private_file(&dir, &self.refused_path(), &bytes)
    }

    /// The refused push has been said at a terminal.
    pub fn refused_push_told(&self) -> Result<()> {
        match self.refused_push()? {
            Some(refused) if !refused.told => self.push_refused(&RefusedPush { told: true, ..refused }),
            _ => Ok(()),
        }
    }

    /// A push went through: no refusal stands.
    pub fn push_worked(&self) -> Result<()> {
        let path = self.refused_path();
        if !path.exists() {
            return Ok(());
        }
        let _lock = self.lock()?;
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(&path)(e)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RefusedPush;

    #[test]
    fn a_refusal_stays_until_a_push_works_and_is_said_once() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = crate::store::Store::init(dir.path()).unwrap();
        assert_eq!(store.refused_push().unwrap(), None);
        let refused = RefusedPush {
            at: "t1".into(),
            by: "sync".into(),
            remote: "origin".into(),
            secrets: 1,
            places: vec!["conversation c event e content: github-pat".into()],
            told: false,
        };
        store.push_refused(&refused).unwrap();
        assert_eq!(store.refused_push().unwrap().as_ref(), Some(&refused));
        store.refused_push_told().unwrap();
        assert!(store.refused_push().unwrap().unwrap().told);
        store.push_worked().unwrap();
        assert_eq!(store.refused_push().unwrap(), None);
        store.push_worked().unwrap();
    }
}
