//! Which conversations this store keeps to itself (`convo private ID`) or publishes
//! (`convo share ID`), as chosen one by one (issue 43). Kept in `.git/convo/sharing`, local
//! state never committed or pushed: a choice committed through the store's transaction
//! would put the private conversation's id in the very branch a push sends (and a pull
//! would hand a teammate's choices to everyone), so it lives beside the lock, as the
//! active conversation does. A JSON object, written whole (a temporary file renamed over
//! it) under the store's lock; a file that cannot be read is an error, never "nothing is
//! private": reading it as empty would publish what the user kept back.
//!
//! A conversation no one chose for is decided at push time by `share.default` (see
//! `ops::share`): this file holds only the choices.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Result, Store, StoreError, create_private_dir, io_err};

/// The name of the file under `.git/convo/`.
pub const FILE: &str = "sharing";

/// The choices made with `convo private` and `convo share`. An id is in one set at most.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sharing {
    /// Conversations kept out of every push, whatever `share.default` says.
    #[serde(default)]
    pub private: BTreeSet<String>,
    /// Conversations published, whatever `share.default` says.
    #[serde(default)]
    pub shared: BTreeSet<String>,
}

impl Store {
    fn sharing_path(&self) -> PathBuf {
        self.state_dir().join(FILE)
    }

    /// The choices made so far (none when nothing was chosen).
    pub fn sharing(&self) -> Result<Sharing> {
        let path = self.sharing_path();
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| StoreError::BadFile { path: path.display().to_string(), message: e.to_string() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Sharing::default()),
            Err(e) => Err(io_err(&path)(e)),
        }
    }

    /// Keep `ids` out of every push (`private`), or publish them; the others' choices stand.
    /// Returns the ids whose choice changed.
    pub fn choose_sharing(&self, ids: &[String], private: bool) -> Result<Vec<String>> {
        let _lock = self.lock()?;
        let mut sharing = self.sharing()?;
        let mut changed = Vec::new();
        for id in ids {
            let (into, from) = if private {
                (&mut sharing.private, &mut sharing.shared)
            } else {
                (&mut sharing.shared, &mut sharing.private)
            };
            from.remove(id);
            if into.insert(id.clone()) {
                changed.push(id.clone());
            }
        }
        let dir = self.state_dir();
        create_private_dir(&dir)?;
        let bytes = serde_json::to_vec_pretty(&sharing).unwrap_or_default();
        super::txn::write_private_file(&dir, &self.sharing_path(), &bytes)?;
        Ok(changed)
    }
}
