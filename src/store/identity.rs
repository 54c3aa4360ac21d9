//! Who a commit is by, and who recorded the events it writes.
//!
//! A commit's author and committer is the person: the identity the caller hands in (convo's
//! own `user.name` and `user.email`, which the CLI reads from the user's config), else git's
//! (`user.name`/`user.email` of the repository's config), else the fallback
//! `convo <convo@localhost>`, so a machine without any identity can still record. A commit
//! signed with the fallback is noted ([`Recorder::fallback_signed`]) for the caller to say how
//! to set one, once a store (`.git/convo/identity-hint`): this module never prints.
//!
//! Every event that enters the store from outside (appended, imported, captured) or that
//! convo writes itself is stamped with [`PERSON`], the person whose convo recorded it, and
//! with [`MACHINE`] when the user opted in. Neither is ever taken from the input: what an
//! input line claimed is kept beside them as data (`claimed_person`, `claimed_machine`), so
//! a file cannot make an event look recorded by someone else. Events copied within the store
//! (a fork's) keep theirs. The fallback is no person: its events carry no [`PERSON`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value};

use super::{Result, Store, io_err};

pub use crate::event::who::{MACHINE, PERSON};
/// Where an input's own [`PERSON`] and [`MACHINE`] go: kept, never believed.
const CLAIMED: [(&str, &str); 2] = [(PERSON, "claimed_person"), (MACHINE, "claimed_machine")];

/// The identity convo signs with when none is configured anywhere.
pub const FALLBACK_NAME: &str = "convo";
pub const FALLBACK_EMAIL: &str = "convo@localhost";

/// A name and an email address, shown as git shows an author: `Name <email>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub name: String,
    pub email: String,
}

impl std::fmt::Display for Person {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} <{}>", self.name, self.email)
    }
}

/// Where the identity a store signs with came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentitySource {
    /// Handed in by the caller (convo's `user.name` and `user.email`).
    Convo,
    /// git's `user.name` and `user.email`.
    Git,
    /// Nothing was configured: `convo <convo@localhost>`.
    Fallback,
}

/// What the caller knows of the person recording: their identity from convo's config, the
/// machine name if they opted in, and a flag set when a commit had to use the fallback.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    pub person: Option<Person>,
    pub machine: Option<String>,
    pub fallback_signed: Arc<AtomicBool>,
}

/// [`PERSON`] and [`MACHINE`] as this store records them.
pub(super) struct Stamp {
    ours: [Option<String>; 2],
}

impl Stamp {
    /// Stamp one event's extra fields (not a compaction's, whose fields are its record).
    pub(super) fn apply(&self, kind: &crate::event::Kind, extra: &mut Map<String, Value>) {
        if matches!(kind, crate::event::Kind::Compaction) {
            return;
        }
        for ((key, claimed), ours) in CLAIMED.into_iter().zip(&self.ours) {
            let ours = ours.as_ref().map(|o| Value::String(o.clone()));
            if let Some(theirs) = extra.get(key).cloned()
                && Some(&theirs) != ours.as_ref()
            {
                extra.shift_remove(key);
                extra.insert(claimed.into(), theirs);
            }
            if let Some(ours) = ours {
                extra.insert(key.into(), ours);
            }
        }
    }
}

impl Store {
    pub fn with_recorder(mut self, recorder: Recorder) -> Self {
        self.recorder = recorder;
        self
    }

    /// The person this store signs commits with, and where that came from.
    pub fn identity(&self) -> (Person, IdentitySource) {
        if let Some(person) = &self.recorder.person {
            return (person.clone(), IdentitySource::Convo);
        }
        // Read the config keys directly: gix's persona lookup also works out the local time
        // zone, which walks the whole zoneinfo database on every commit.
        let config = self.repo.config_snapshot();
        match (config.string("user.name"), config.string("user.email")) {
            (Some(name), Some(email)) => {
                (Person { name: name.to_string(), email: email.to_string() }, IdentitySource::Git)
            }
            _ => (Person { name: FALLBACK_NAME.into(), email: FALLBACK_EMAIL.into() }, IdentitySource::Fallback),
        }
    }

    /// The person for a commit about to be signed: a fallback is noted for the caller.
    pub(super) fn signing_person(&self) -> Person {
        let (person, source) = self.identity();
        if source == IdentitySource::Fallback {
            self.recorder.fallback_signed.store(true, Ordering::Relaxed);
        }
        person
    }

    /// What stamps events new to the store with who recorded them (see the module doc).
    pub(super) fn stamp(&self) -> Stamp {
        let person = match self.identity() {
            (_, IdentitySource::Fallback) => None,
            (person, _) => Some(person.to_string()),
        };
        Stamp { ours: [person, self.recorder.machine.clone()] }
    }

    /// Whether the hint on setting an identity is due: `true` the first time only, for this
    /// store (a marker under `.git/convo/` remembers it was said).
    pub fn identity_hint_due(&self) -> Result<bool> {
        super::create_private_dir(&self.state_dir())?;
        let path = self.state_dir().join("identity-hint");
        match super::txn::private_options().write(true).create_new(true).open(&path) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(io_err(&path)(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Kind;

    fn stamp(person: Option<&str>, machine: Option<&str>) -> Stamp {
        Stamp { ours: [person.map(str::to_owned), machine.map(str::to_owned)] }
    }

    fn extra(json: serde_json::Value) -> Map<String, Value> {
        json.as_object().unwrap().clone()
    }

    #[test]
    fn a_claimed_person_is_kept_aside_and_the_recorder_named() {
        let user = Kind::User { content: "hi".into() };
        let mut e = extra(serde_json::json!({"person": "Mallory <m@x>", "agent": "codex"}));
        stamp(Some("Alice <a@x>"), None).apply(&user, &mut e);
        assert_eq!(
            e,
            extra(serde_json::json!({"agent": "codex", "claimed_person": "Mallory <m@x>", "person": "Alice <a@x>"}))
        );
        // The same claim as ours is no claim; with no person (the fallback) a claim is still
        // not believed.
        let mut e = extra(serde_json::json!({"person": "Alice <a@x>"}));
        stamp(Some("Alice <a@x>"), None).apply(&user, &mut e);
        assert_eq!(e, extra(serde_json::json!({"person": "Alice <a@x>"})));
        let mut e = extra(serde_json::json!({"person": "Mallory <m@x>", "machine": "box"}));
        stamp(None, Some("here")).apply(&user, &mut e);
        assert_eq!(
            e,
            extra(serde_json::json!({"claimed_person": "Mallory <m@x>", "claimed_machine": "box", "machine": "here"}))
        );
        // A compaction's fields are its record's.
        let mut e = Map::new();
        stamp(Some("Alice <a@x>"), None).apply(&Kind::Compaction, &mut e);
        assert!(e.is_empty());
    }
}
