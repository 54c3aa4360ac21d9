//! `config set`, `config unset` and `config trust`: change one key in one layer, keeping the
//! rest of the file (comments included), and refuse an edit that would leave the layer
//! invalid before anything is written.

use std::path::Path;

use crate::clock::Clock;
use crate::config::{self, Source};
use crate::event::{Draft, Kind};
use crate::store::{Appended, Fixed, Store, Subject, Transaction, subject};

use super::{OpsError, Result, STORE_CONFIG, write_private};

/// Whether dotted `key` is `prefix` or below it (`*` in `prefix` matches any one name).
pub fn key_under(key: &str, prefix: &str) -> bool {
    let (key, prefix) = (config::split_key(key), config::split_key(prefix));
    key.len() >= prefix.len() && key.iter().zip(&prefix).all(|(k, p)| p == "*" || k == p)
}

/// `text` (a layer from `origin`) with `key` set to `value`, checked as a layer.
fn edited(source: Source, origin: &str, text: &str, key: &str, value: &toml::Value) -> Result<String> {
    let updated = config::set_in_document(text, key, value)
        .map_err(|source| OpsError::ConfigEdit { origin: origin.to_owned(), source })?;
    config::parse_layer(source, origin, &updated)?;
    Ok(updated)
}

/// The user file's text, empty when it does not exist yet.
pub fn read_user_file(path: &Path) -> Result<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(source) => Err(OpsError::File { path: path.to_owned(), source }),
    }
}

/// Set `key` in the user's config file at `path`. The file is the user's alone (0600, its
/// folder 0700 when created): it names endpoints and the variables holding keys.
pub fn set_in_user_file(path: &Path, key: &str, value: &toml::Value) -> Result<()> {
    let text = read_user_file(path)?;
    let updated = edited(Source::User, &path.display().to_string(), &text, key, value)?;
    let file_err = |source| OpsError::File { path: path.to_owned(), source };
    if let Some(dir) = path.parent() {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| OpsError::File { path: dir.to_owned(), source })?;
    }
    write_private(path, updated.as_bytes()).map_err(file_err)
}

/// Set `key` in the store's committed `convo.toml`, as one commit.
pub fn set_in_store(
    store: &Store,
    tx: Transaction<'_>,
    key: &str,
    value: &toml::Value,
    clock: &Clock,
) -> Result<Fixed> {
    let text = store.head_file(STORE_CONFIG)?.map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let updated = edited(Source::Store, STORE_CONFIG, &text, key, value)?;
    let message = subject::config(None, key, &value.to_string());
    Ok(store.commit_file(tx, STORE_CONFIG, updated.into_bytes(), &message, clock)?)
}

/// Remove `key` from the user's config file at `path`; whether it was set there.
pub fn unset_in_user_file(path: &Path, key: &str) -> Result<bool> {
    let text = read_user_file(path)?;
    let origin = path.display().to_string();
    let Some(updated) = removed(Source::User, &origin, &text, key)? else { return Ok(false) };
    write_private(path, updated.as_bytes()).map_err(|source| OpsError::File { path: path.to_owned(), source })?;
    Ok(true)
}

/// Remove `key` from the store's committed `convo.toml`, as one commit; `None` when it was
/// not set there (nothing is committed).
pub fn unset_in_store(store: &Store, tx: Transaction<'_>, key: &str, clock: &Clock) -> Result<Option<Fixed>> {
    let text = store.head_file(STORE_CONFIG)?.map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let Some(updated) = removed(Source::Store, STORE_CONFIG, &text, key)? else { return Ok(None) };
    let message = subject::config_unset(key);
    Ok(Some(store.commit_file(tx, STORE_CONFIG, updated.into_bytes(), &message, clock)?))
}

/// `text` without `key`, checked as a layer; `None` when it does not set it.
fn removed(source: Source, origin: &str, text: &str, key: &str) -> Result<Option<String>> {
    let updated = config::remove_in_document(text, key)
        .map_err(|source| OpsError::ConfigEdit { origin: origin.to_owned(), source })?;
    if let Some(updated) = &updated {
        config::parse_layer(source, origin, updated)?;
    }
    Ok(updated)
}

/// Set `key` for one conversation: a `config` event appended as one commit.
pub fn set_in_conversation(
    store: &Store,
    tx: Transaction<'_>,
    id: &str,
    key: &str,
    value: &toml::Value,
    clock: &Clock,
) -> Result<Appended> {
    let json = serde_json::to_value(value).map_err(|e| OpsError::Invalid(e.to_string()))?;
    let mut set = serde_json::Map::new();
    set.insert(key.to_owned(), json);
    let title = store.meta(id)?.title;
    let subject = Subject {
        text: subject::config(Some(&subject::name(id, title.as_deref())), key, &value.to_string()),
        compaction: None,
    };
    Ok(store.append_as(tx, id, vec![Draft::new(Kind::Config { set })], clock, Some(subject))?)
}

/// Put `store` (a canonical path) into, or with `remove` take it out of, `trust.stores` in
/// the user file at `path`. Returns whether anything changed.
pub fn set_trust(path: &Path, store: &str, same: &dyn Fn(&str) -> bool, remove: bool) -> Result<bool> {
    let text = read_user_file(path)?;
    let layer = config::parse_layer(Source::User, &path.display().to_string(), &text)?;
    let mut stores = config::trusted_stores(std::slice::from_ref(&layer));
    let before = stores.len();
    if remove {
        stores.retain(|s| !same(s));
    } else if !stores.iter().any(|s| same(s)) {
        stores.push(store.to_owned());
    }
    if stores.len() == before {
        return Ok(false);
    }
    let list = toml::Value::Array(stores.into_iter().map(toml::Value::String).collect());
    set_in_user_file(path, "trust.stores", &list)?;
    Ok(true)
}
