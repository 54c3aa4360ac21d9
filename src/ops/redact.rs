//! `redact`: take a secret out of history that has not left the machine. The store rewrites
//! the unpushed commits ([`Store::redact_unpublished`]); this operation decides what to
//! replace (text the user names, or the secrets `push` would refuse, from `sync`), refuses
//! when a remote already has it, and prunes the old objects afterwards.

use crate::clock::Clock;
use crate::store::{Lock, Rewritten, Store, StoreError};
use crate::sync::{self, Finding, SyncError};

/// What replaces a redacted text.
pub const MARKER: &str = "[REDACTED]";

/// Texts shorter than this would match far too much to be a secret.
pub const MIN_LEN: usize = 4;

/// What to redact.
pub enum Target {
    /// These exact texts.
    Texts(Vec<String>),
    /// The secrets a push to this remote would refuse.
    Secrets { remote: String },
}

/// What [`redact`] did.
#[derive(Debug)]
pub struct Redacted {
    /// How many distinct texts were looked for (never the texts themselves).
    pub texts: usize,
    /// `None` when no unpushed commit held any of them: nothing was rewritten.
    pub rewritten: Option<Rewritten>,
    /// Whether the reflog was expired and the old objects pruned; else why not.
    pub pruned: Result<(), crate::store::StoreError>,
    /// For [`Target::Secrets`]: what the push scan still finds afterwards (a secret only
    /// URL-encoded, say), which the user can name as text.
    pub left: Vec<Finding>,
}

#[derive(Debug, thiserror::Error)]
pub enum RedactError {
    #[error("a text to redact must be at least {MIN_LEN} characters")]
    TooShort,
    /// The text is in history a remote-tracking ref reaches: it has left the machine.
    #[error("refusing to redact: {place} already holds it, and a remote has that commit")]
    Published { place: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Sync(#[from] SyncError),
}

/// Replace `target` with [`MARKER`] in every unpushed commit, then prune the old objects.
pub fn redact(store: &Store, lock: &Lock, target: &Target, clock: &Clock) -> Result<Redacted, RedactError> {
    let texts = match target {
        Target::Texts(texts) => {
            if texts.iter().any(|t| t.chars().count() < MIN_LEN) {
                return Err(RedactError::TooShort);
            }
            texts.clone()
        }
        Target::Secrets { remote } => sync::unpublished_secret_texts(store, remote)?,
    };
    let mut redacted = Redacted { texts: texts.len(), rewritten: None, pruned: Ok(()), left: Vec::new() };
    if texts.is_empty() {
        return Ok(redacted);
    }
    let published = store.published_tips()?;
    if let Some(place) = store.published_place_of(&published, &texts)? {
        return Err(RedactError::Published { place });
    }
    redacted.rewritten = store.redact_unpublished(lock, &published, &texts, MARKER, clock)?;
    if redacted.rewritten.is_some() {
        redacted.pruned = store.prune_unreachable(lock);
    }
    if let Target::Secrets { remote } = target {
        redacted.left = sync::scan_unpublished(store, remote)?;
    }
    Ok(redacted)
}
