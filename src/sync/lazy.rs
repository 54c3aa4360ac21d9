//! Lazy clones (issue 43): `convo clone URL --lazy` fetches a hub's catalog, not its branch
//! nor any conversation; a conversation is fetched alone, from its own ref, when something
//! reads it. See [`crate::store::hub`] for what a hub publishes.
//!
//! A lazy store is marked by `convo.lazy = <remote>` in its `.git/config` (local, never
//! pushed). Its branch holds only the conversations fetched so far, each folded in by one
//! commit of its own, so it is no line of the hub's and is never pushed as it is. Its
//! [`push`] publishes one commit on the hub's tip instead, as a store keeping conversations
//! private does (`store::published`): the tip is rebuilt from the catalog down to the fan
//! folders it touches ([`Store::hub_tip`], every object checked against its id), and each
//! conversation changed here since its fetch is put in. git's push sends only what that
//! commit adds: its walk marks the hub's folders as the hub's without reading them.
//!
//! Every fetch goes through a quarantine, as a pull's does. The catalog is fetched with
//! `--depth 1` (its parents are the hub's branch and older catalogs, which a lazy store
//! never wants), so the store is shallow at the catalog: git's `.git/shallow` names it.
//! A conversation's snapshot is fetched with `--depth 1` too: it has no parent, so that
//! cuts nothing, but it makes upload-pack leave out the objects of every snapshot the
//! store already has (its refs under `refs/convo/remotes/<remote>/conversations/`, which
//! the quarantine sees through its alternates), where a plain fetch of a newer snapshot
//! sends the whole conversation again. A snapshot is checked by
//! [`Store::check_snapshot`] before anything of it reaches a ref.

use std::path::Path;

use gix::ObjectId;

use super::{Pushed, Result, Stderr, SyncError, checked, git, hub, require_remote};
use crate::clock::Clock;
use crate::store::{Catalog, CatalogIndex, CatalogLine, Integrated, LazyPut, Moved, Quarantine, Store};

/// The git config key naming the remote a lazy store fetches conversations from.
pub const LAZY_KEY: &str = "convo.lazy";

/// The remote a lazy store fetches from; `None` for a whole store.
pub fn lazy_remote(store: &Store) -> Result<Option<String>> {
    Ok(store.local_config_string(LAZY_KEY))
}

/// Where a lazy store keeps the snapshot of conversation `id` it last fetched from `remote`.
fn snapshot_ref(remote: &str, id: &str) -> String {
    format!("refs/convo/remotes/{remote}/conversations/{id}")
}

/// The URL of `remote`.
fn url_of(store: &Store, remote: &str) -> Result<String> {
    require_remote(store, remote)?;
    Ok(checked(store.root(), &["remote", "get-url", remote], Stderr::Capture, "fetch")?.trim().to_owned())
}

/// `-c include.path=<the store's config>`: the user's credential helpers and `http.*`
/// settings for a fetch run with the quarantine's `--git-dir` (see [`super::fetch`]).
pub(super) fn include(store: &Store) -> String {
    let config = store.root().join(".git").join("config");
    let config = std::path::absolute(&config).unwrap_or(config);
    format!("include.path={}", config.display())
}

/// `git fetch --depth 1` of `refspec` from `url` into `quarantine`; the commit it fetched.
fn fetch_shallow(store: &Store, quarantine: &Path, url: &str, refspec: &str, name: &str) -> Result<ObjectId> {
    let git_dir = quarantine.join(".git");
    // The store is shallow at its catalog, whose parents it never has: the quarantine,
    // which offers the store's refs as what it has, must know where that history stops.
    let shallow = store.root().join(".git").join("shallow");
    if shallow.exists() {
        std::fs::copy(&shallow, git_dir.join("shallow")).map_err(|e| SyncError::Git {
            command: "fetch".into(),
            message: format!("copy {}: {e}", shallow.display()),
        })?;
    }
    let git_dir = git_dir.to_string_lossy();
    let include = include(store);
    let args = [
        "-c",
        include.as_str(),
        "--git-dir",
        &git_dir,
        "fetch",
        "--no-write-fetch-head",
        "--no-tags",
        "--quiet",
        "--depth",
        "1",
        url,
        refspec,
    ];
    checked(store.root(), &args, Stderr::Capture, "fetch")?;
    let tip = checked(store.root(), &["--git-dir", &git_dir, "rev-parse", "--verify", name], Stderr::Capture, "fetch")?;
    ObjectId::from_hex(tip.trim().as_bytes())
        .map_err(|e| SyncError::Git { command: "fetch".into(), message: e.to_string() })
}

/// Copy `name` (a ref of the quarantine naming `commit`, already checked) into the store:
/// objects first, synced, then the ref (see `durable`), as [`super::fetch`] does.
fn keep(store: &Store, quarantine: &Quarantine, name: &str, commit: ObjectId, message: &str) -> Result<()> {
    // The quarantine is shallow at the catalog: the store takes that boundary.
    store.promote(quarantine)?;
    let hex = commit.to_string();
    checked(store.root(), &["update-ref", "-m", message, name, &hex], Stderr::Capture, "fetch")?;
    store.sync_ref_written_by_git(name)?;
    Ok(())
}

/// Fetch `remote`'s catalog (`--depth 1`, through the quarantine, checked by
/// [`Store::check_catalog_since`] against the one kept before) and keep it as the remote's
/// catalog.
pub fn fetch_catalog(store: &Store, remote: &str) -> Result<CatalogIndex> {
    let url = url_of(store, remote)?;
    let name = super::catalog_ref(remote);
    let quarantine = store.quarantine()?;
    let result = (|| {
        let refspec = format!("+{}:{name}", hub::CATALOG_REF);
        let commit = match fetch_shallow(store, quarantine.path(), &url, &refspec, &name) {
            Ok(commit) => commit,
            Err(SyncError::Git { .. }) if no_such_ref(store, quarantine.path(), &url, hub::CATALOG_REF)? => {
                return Err(SyncError::NoCatalog { url: url.clone() });
            }
            Err(e) => return Err(e),
        };
        let previous = super::tracking_tip(store, &name);
        let catalog = store.check_fetched_catalog(quarantine.path(), commit, previous)?;
        keep(store, &quarantine, &name, commit, &format!("fetch: {url}"))?;
        Ok(catalog)
    })();
    drop(quarantine);
    result
}

/// Whether `url` has no ref `name`, asked after a failed fetch (see [`super::fetch`]).
fn no_such_ref(store: &Store, quarantine: &Path, url: &str, name: &str) -> Result<bool> {
    let git_dir = quarantine.join(".git");
    let git_dir = git_dir.to_string_lossy();
    let include = include(store);
    let args = ["-c", include.as_str(), "--git-dir", &git_dir, "ls-remote", "--exit-code", url, name];
    Ok(git(store.root(), &args, Stderr::Capture, "fetch")?.status.code() == Some(2))
}

/// Clone `url` into `path` lazily: a store with the remote `origin`, its catalog, and no
/// conversation. The folder is removed again (emptied, if it existed) when anything fails.
pub fn clone(url: &str, path: &Path, durability: crate::store::Durability) -> Result<(Store, CatalogIndex)> {
    let existed = path.exists();
    let result = (|| {
        let (store, _) = Store::init(path)?;
        let store = store.with_durability(durability);
        super::remote_add(&store, "origin", url)?;
        let catalog = fetch_catalog(&store, "origin")?;
        checked(store.root(), &["config", "--local", LAZY_KEY, "origin"], Stderr::Capture, "clone")?;
        store.sync_new_repository()?;
        Ok((store, catalog))
    })();
    if result.is_err() {
        super::undo_clone(path, existed);
    }
    result
}

/// What [`fetch_conversation`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedConversation {
    pub id: String,
    pub remote: String,
    /// The commit that put it on the branch.
    pub commit: ObjectId,
}

/// Fetch conversation `line.id`'s snapshot from `remote` (its ref, `--depth 1`, into the
/// quarantine), check it ([`Store::check_snapshot`]) and keep it: its folder's tree.
fn fetch_snapshot(store: &Store, remote: &str, line: &CatalogLine) -> Result<ObjectId> {
    let url = url_of(store, remote)?;
    let name = snapshot_ref(remote, &line.id);
    let quarantine = store.quarantine()?;
    let result = (|| {
        let refspec = format!("+{}:{name}", hub::conversation_ref(&line.id));
        let commit = fetch_shallow(store, quarantine.path(), &url, &refspec, &name)?;
        let tree = store.check_snapshot(quarantine.path(), commit, line)?;
        keep(store, &quarantine, &name, commit, &format!("fetch: {url}"))?;
        Ok(tree)
    })();
    drop(quarantine);
    result
}

/// Fetch conversation `line.id` from `remote` ([`fetch_snapshot`]) and fold it into the
/// branch in one commit.
pub fn fetch_conversation(
    store: &Store,
    remote: &str,
    line: &CatalogLine,
    clock: &Clock,
) -> Result<FetchedConversation> {
    let tree = fetch_snapshot(store, remote, line)?;
    let commit = store.fold_in(&line.id, tree, remote, clock)?;
    Ok(FetchedConversation { id: line.id.clone(), remote: remote.to_owned(), commit })
}

/// What a lazy store's pull did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LazyPulled {
    /// Conversations fetched again because the hub's changed.
    pub updated: Vec<String>,
    /// Conversations changed both here and on the hub since they were fetched, each merged
    /// as a whole store's pull merges ([`Store::merge_fetched`]).
    pub merged: Vec<(String, Integrated)>,
    /// Conversations the catalog lists that this store holds without having fetched them
    /// (no snapshot to merge from), left as they are.
    pub kept: Vec<String>,
    /// Conversations the catalog lists in all.
    pub listed: usize,
}

/// `pull` in a lazy store: the catalog again, then each conversation present whose folder
/// in the catalog is neither the one here nor the one fetched: fetched again and put in
/// when it did not change here, merged with what was added here when it did.
pub fn pull(store: &Store, remote: &str, clock: &Clock) -> Result<LazyPulled> {
    let catalog = fetch_catalog(store, remote)?;
    let mut pulled = LazyPulled { listed: store.catalog_len(&catalog)?, ..Default::default() };
    for id in store.conversation_ids()? {
        // The conversations here, each looked up in its fan file: the cost follows what
        // this store holds, not the hub's size.
        let Some(line) = store.catalog_line(catalog.commit, &id)? else { continue };
        let line = &line;
        let Some(here) = store.conversation_tree(&id)? else { continue };
        let listed = ObjectId::from_hex(line.tree.as_bytes()).ok();
        if listed == Some(here) {
            continue;
        }
        let fetched = match super::tracking_tip(store, &snapshot_ref(remote, &id)) {
            Some(commit) => store.snapshot_tree(commit, &id)?,
            None => None,
        };
        if fetched == listed {
            // Only this side moved: the push sends it.
            continue;
        }
        let Some(base) = fetched else {
            pulled.kept.push(id);
            continue;
        };
        if base == here {
            fetch_conversation(store, remote, line, clock)?;
            pulled.updated.push(id);
            continue;
        }
        let theirs = fetch_snapshot(store, remote, line)?;
        let merged = store.merge_fetched(&id, base, theirs, remote, clock)?;
        pulled.merged.push((id, merged));
    }
    Ok(pulled)
}

/// How a conversation of a lazy store stands against its hub: event lines added here since
/// its fetch (which its push sends), and lines the catalog lists beyond what was
/// fetched (which `pull` brings in).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Standing {
    pub here: usize,
    pub there: usize,
}

/// [`Standing`] of every conversation this lazy store fetched from `remote` that differs
/// from the hub's copy, as last fetched (no network), by id.
pub fn standing(store: &Store, remote: &str) -> Result<std::collections::BTreeMap<String, Standing>> {
    let mut out = std::collections::BTreeMap::new();
    let Some(head) = store.head()? else { return Ok(out) };
    let catalog = super::tracking_tip(store, &super::catalog_ref(remote));
    for id in store.conversation_ids()? {
        let Some(here) = store.conversation_tree(&id)? else { continue };
        let line = match catalog {
            Some(commit) => store.catalog_line(commit, &id)?,
            None => None,
        };
        let line = line.as_ref();
        if line.and_then(|l| ObjectId::from_hex(l.tree.as_bytes()).ok()) == Some(here) {
            continue;
        }
        let Some(fetched) = super::tracking_tip(store, &snapshot_ref(remote, &id)) else { continue };
        let mut standing = Standing::default();
        if store.snapshot_tree(fetched, &id)? != Some(here) {
            let moved = store.moved_by_conversation(Some(fetched), head)?;
            standing.here = moved.get(&id).map_or(0, |m| m.events);
        }
        if let Some(line) = line
            && store
                .snapshot_tree(fetched, &id)?
                .is_some_and(|t| ObjectId::from_hex(line.tree.as_bytes()).ok() != Some(t))
        {
            let had = store.moved_by_conversation(None, fetched)?.get(&id).map_or(0, |m| m.events);
            standing.there = usize::try_from(line.events).unwrap_or(usize::MAX).saturating_sub(had);
        }
        if standing != Standing::default() {
            out.insert(id, standing);
        }
    }
    Ok(out)
}

/// What a lazy store's push sends ([`outgoing`]), and the conversations it cannot send.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outgoing {
    pub puts: Vec<LazyPut>,
    /// Changed here, and on the hub since they were fetched: `pull` first.
    pub diverged: Vec<String>,
}

/// What a lazy store's push sends: each conversation here (none of `withheld`) whose folder
/// is not the one the catalog lists, and, for one the catalog lists, the folder this store
/// fetched, which must still be the catalog's (otherwise the hub has events not pulled
/// here: [`Outgoing::diverged`]).
pub fn outgoing(store: &Store, remote: &str, catalog: &Catalog, withheld: &super::Withheld) -> Result<Outgoing> {
    let mut out = Outgoing::default();
    for id in store.conversation_ids()? {
        if withheld.contains(&id) {
            continue;
        }
        let Some(tree) = store.conversation_tree(&id)? else { continue };
        let listed = catalog.lines.get(&id).map(|l| ObjectId::from_hex(l.tree.as_bytes()).ok());
        if listed == Some(Some(tree)) {
            continue;
        }
        let hub = match listed {
            None => None,
            Some(listed) => {
                let fetched = match super::tracking_tip(store, &snapshot_ref(remote, &id)) {
                    Some(commit) => store.snapshot_tree(commit, &id)?,
                    None => None,
                };
                if fetched.is_none() || fetched != listed {
                    out.diverged.push(id);
                    continue;
                }
                fetched
            }
        };
        out.puts.push(LazyPut { id, tree, hub });
    }
    Ok(out)
}

/// The secret scan of what a lazy store's push of `puts` sends: the findings, and how many
/// distinct secret texts they hold.
pub fn scan(store: &Store, puts: &[LazyPut]) -> Result<(Vec<super::Finding>, usize)> {
    super::scan_lazy(store, puts)
}

/// What a lazy store's push did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LazyPushed {
    pub pushed: Pushed,
    pub moved: Moved,
}

/// Push from a lazy store (see the module doc): the catalog fetched again, the
/// conversations changed here ([`outgoing`]) scanned for secrets unless `allow_secrets`,
/// one commit on the hub's tip holding them, their refs and the catalog after it, in one
/// atomic `git push` to the remote's URL (no remote-tracking ref: this store's branch is
/// not the hub's). Then the snapshots and the catalog pushed are kept, as a fetch keeps
/// them, so `status` and the next push start from what the hub now has.
pub fn push(
    store: &Store,
    remote: &str,
    allow_secrets: bool,
    progress: bool,
    withheld: &super::Withheld,
) -> Result<LazyPushed> {
    let url = url_of(store, remote)?;
    // Every line: the hub's tip is rebuilt from all of them.
    let catalog = store.read_catalog(fetch_catalog(store, remote)?.commit)?;
    let Outgoing { puts, diverged } = outgoing(store, remote, &catalog, withheld)?;
    if !diverged.is_empty() {
        return Err(SyncError::LazyDiverged { remote: remote.to_owned(), ids: diverged });
    }
    let up_to_date = LazyPushed { pushed: Pushed::UpToDate, moved: Moved::default() };
    if puts.is_empty() {
        return Ok(up_to_date);
    }
    if !allow_secrets {
        let (findings, secrets) = scan(store, &puts)?;
        if !findings.is_empty() {
            return Err(SyncError::Secrets { secrets: secrets.max(1), findings });
        }
    }
    let moved = store.lazy_moved(&puts)?;
    let quarantine = store.quarantine()?;
    let result: Result<Pushed> = (|| {
        let fans = puts.iter().map(|p| crate::store::layout::fan(&p.id).to_owned()).collect();
        let theirs = store.hub_tip(&catalog, &fans, quarantine.path())?;
        let commit = store.lazy_published_commit(theirs, &puts, quarantine.path())?;
        let publication = store.publication(commit, Some(theirs), Some(&catalog), quarantine.path())?;
        let branch = super::branch(store)?;
        let refspec = format!("{commit}:refs/heads/{branch}");
        let mut extra: Vec<String> =
            publication.refs.iter().map(|(name, commit)| format!("+{commit}:{name}")).collect();
        if let Some(catalog) = publication.catalog {
            extra.push(format!("+{catalog}:{}", hub::CATALOG_REF));
        }
        let objects = quarantine.path().join(".git").join("objects");
        let git_dir = quarantine.path().join(".git");
        let pushed = super::push_lazy_once(store, &git_dir, &url, remote, &refspec, &extra, progress, &objects)?;
        // What the hub now has: the snapshots pushed and the catalog, kept as a fetch keeps
        // them (the catalog shallow, as the store's is), objects first.
        let mut shallow = std::fs::read_to_string(git_dir.join("shallow")).unwrap_or_default();
        if let Some(catalog) = publication.catalog {
            shallow.push_str(&format!("{catalog}\n"));
        }
        std::fs::write(git_dir.join("shallow"), shallow)
            .map_err(|e| SyncError::Git { command: "push".into(), message: e.to_string() })?;
        store.promote(&quarantine)?;
        for (name, commit) in &publication.refs {
            let Some(id) = name.strip_prefix(hub::CONVERSATION_REFS) else { continue };
            let local = snapshot_ref(remote, id);
            let hex = commit.to_string();
            checked(store.root(), &["update-ref", "-m", "push", &local, &hex], Stderr::Capture, "push")?;
            store.sync_ref_written_by_git(&local)?;
        }
        if let Some(catalog) = publication.catalog {
            let name = super::catalog_ref(remote);
            let hex = catalog.to_string();
            checked(store.root(), &["update-ref", "-m", "push: catalog", &name, &hex], Stderr::Capture, "push")?;
            store.sync_ref_written_by_git(&name)?;
        }
        Ok(pushed)
    })();
    drop(quarantine);
    let pushed = result?;
    Ok(if pushed == Pushed::UpToDate { up_to_date } else { LazyPushed { pushed, moved } })
}
