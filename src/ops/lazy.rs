//! Reading a lazy store (issue 43, `sync::lazy`): what is listed comes from the store and,
//! for the conversations not fetched yet, from the hub's catalog; a conversation a command
//! reads is fetched first, once. Shared by the CLI and the MCP server, which each say the
//! fetch in their own way ([`Fetching`]).

use crate::clock::Clock;
use crate::store::{CatalogLine, Store, Summary, catalog_summary};
use crate::sync::{self, SyncError, lazy};

/// A conversation about to be fetched: for the caller to say so before the network is used.
#[derive(Debug, Clone)]
pub struct Fetching {
    pub id: String,
    pub remote: String,
    /// Bytes of its events, as the catalog lists them.
    pub bytes: u64,
}

/// Every conversation to list: the store's and, in a lazy store, those its remote's catalog
/// lists that are not fetched yet, in id order (creation order) as the store lists its own.
pub fn summaries(store: &Store) -> Result<Vec<Summary>, SyncError> {
    let mut out = store.summaries()?;
    if let Some(remote) = lazy::lazy_remote(store)?
        && let Some(catalog) = sync::remote_catalog(store, &remote)?
    {
        let here: std::collections::HashSet<String> = out.iter().map(|s| s.id.clone()).collect();
        out.extend(catalog.lines.values().filter(|l| !here.contains(&l.id)).map(catalog_summary));
        out.sort_by(|a, b| a.id.cmp(&b.id));
    }
    Ok(out)
}

/// The catalog line `query` names in a lazy store when the store itself has no such
/// conversation: a full id, a unique id prefix, an exact title, a unique title prefix (smart
/// case), as [`Store::resolve`] takes them. `None` in a whole store, with no query (the
/// active conversation is one the store holds), or when the store resolves `query`.
pub fn missing(store: &Store, query: Option<&str>) -> Result<Option<(String, CatalogLine)>, SyncError> {
    let (Some(query), Some(remote)) = (query, lazy::lazy_remote(store)?) else { return Ok(None) };
    if store.resolve(query).is_ok() {
        return Ok(None);
    }
    // A whole id: its fan file alone, not the whole catalog.
    if let Some(line) = sync::remote_catalog_line(store, &remote, query)? {
        return Ok(Some((remote, line)));
    }
    let Some(catalog) = sync::remote_catalog(store, &remote)? else { return Ok(None) };
    let lines: Vec<&CatalogLine> = catalog.lines.values().collect();
    let upper = query.to_ascii_uppercase();
    let smart = |title: &str| match query.chars().any(char::is_uppercase) {
        true => title.starts_with(query),
        false => title.to_lowercase().starts_with(&query.to_lowercase()),
    };
    let rules: [&dyn Fn(&CatalogLine) -> bool; 4] = [
        &|l| l.id == query,
        &|l| !upper.is_empty() && l.id.starts_with(&upper),
        &|l| l.title.as_deref() == Some(query),
        &|l| !query.trim().is_empty() && l.title.as_deref().is_some_and(smart),
    ];
    for rule in rules {
        let found: Vec<&&CatalogLine> = lines.iter().filter(|l| rule(l)).collect();
        match found.as_slice() {
            [] => continue,
            [one] => return Ok(Some((remote, (**one).clone()))),
            // Several: the store's own error names the ambiguity it sees.
            _ => return Ok(None),
        }
    }
    Ok(None)
}

/// In a lazy store, fetch the conversation `query` names if the store does not hold it
/// yet (see [`missing`]), telling `said` first. Whether one was fetched.
pub fn ensure(
    store: &Store,
    query: Option<&str>,
    clock: &Clock,
    said: &mut dyn FnMut(&Fetching),
) -> Result<Option<lazy::FetchedConversation>, SyncError> {
    let Some((remote, line)) = missing(store, query)? else { return Ok(None) };
    said(&Fetching { id: line.id.clone(), remote: remote.clone(), bytes: line.bytes });
    lazy::fetch_conversation(store, &remote, &line, clock).map(Some)
}

/// What a search of a lazy store's own conversations leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfetched {
    pub remote: String,
    /// Conversations the store holds (fetched, or made here).
    pub held: usize,
    /// Conversations the remote's catalog lists that the store does not hold yet.
    pub count: usize,
}

/// In a lazy store, how many conversations its remote's catalog lists that are not fetched:
/// a search of the store's events cannot see them, and fetching them all to search would
/// undo the lazy clone, so the caller says it. `None` in a whole store.
pub fn unfetched(store: &Store) -> Result<Option<Unfetched>, SyncError> {
    let Some(remote) = lazy::lazy_remote(store)? else { return Ok(None) };
    let held: std::collections::HashSet<String> = store.conversation_ids()?.into_iter().collect();
    let count = match sync::remote_catalog(store, &remote)? {
        Some(catalog) => catalog.lines.values().filter(|l| !held.contains(&l.id)).count(),
        None => 0,
    };
    Ok(Some(Unfetched { remote, held: held.len(), count }))
}
