//! Sharing stores through ordinary git remotes. gix has no push, so the transport (remote
//! configuration, fetch, clone, push) is the `git` binary, which brings every protocol git
//! speaks and the user's credential helpers; integrating what was fetched happens in-process
//! (`Store::integrate`). Before a push, the events it would publish are scanned for secrets.
//!
//! Nothing fetched is trusted: a fetch lands in a quarantine repository first (see [`fetch`])
//! and a clone is made without git's checkout, so a commit whose tree is not what convo
//! writes never reaches the store's refs, index or working tree. Every `git` child runs with
//! umask 077: packs and refs it writes are as private as the files convo writes.
//!
//! What git did is decided by its exit codes and porcelain output, never by its messages,
//! which change across versions and are translated; the children whose messages convo
//! quotes run with `LC_ALL=C`.

pub mod lazy;
mod publish;
pub mod secrets;

use std::path::Path;
use std::process::{Output, Stdio};

use gix::ObjectId;

use crate::clock::Clock;
use crate::store::{Catalog, Integrated, Outgoing, Store, StoreError, hub, layout};

pub use publish::{Withheld, hub_merged, last_published, published_from};

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("`git` was not found on PATH; it is needed to {0}")]
    GitMissing(&'static str),
    #[error("git {command}: {message}")]
    Git { command: String, message: String },
    #[error("no remote named `{0}`")]
    UnknownRemote(String),
    #[error("a remote named `{name}` already exists ({url})")]
    RemoteExists { name: String, url: String },
    #[error("the remote `{remote}` has commits this store does not have")]
    Rejected { remote: String },
    /// The remote received the push and turned it down itself (git's `[remote rejected]`):
    /// a hook, a protected branch, permissions. `reason` is git's word for why.
    #[error("the remote `{remote}` refused the push: {reason}")]
    Refused { remote: String, reason: String },
    /// `secrets` counts distinct secret texts, as `convo redact --secrets` replaces them;
    /// `findings` says where each place holds one.
    #[error("refusing to push: {secrets} secret{} found in what the push would publish", if *.secrets == 1 { "" } else { "s" })]
    Secrets { secrets: usize, findings: Vec<Finding> },
    /// A lazy clone of a hub no convo with catalogs pushed to (see [`hub`]).
    #[error("{url} has no catalog of its conversations to clone lazily")]
    NoCatalog { url: String },
    /// A lazy store's push of conversations the hub has appended to since they were
    /// fetched (see [`lazy::push`]).
    #[error("the remote `{remote}` has events of {} not pulled here: {}", if ids.len() == 1 { "a conversation" } else { "conversations" }, ids.join(", "))]
    LazyDiverged { remote: String, ids: Vec<String> },
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub type Result<T, E = SyncError> = std::result::Result<T, E>;

/// A secret-like string in what a push would publish: where it is (a conversation's event
/// and field, a file, a commit message) and the rules that found it (`github-pat,
/// secret-assignment`: several rules often match one text), never the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub place: String,
    pub kind: String,
}

/// One finding per place, the rules that matched there joined, in the order first found.
fn by_place(findings: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for f in findings {
        match out.iter_mut().find(|o| o.place == f.place) {
            Some(o) if o.kind.split(", ").any(|k| k == f.kind) => {}
            Some(o) => o.kind = format!("{}, {}", o.kind, f.kind),
            None => out.push(f),
        }
    }
    out
}

/// How git's own output is handled: progress goes straight to the terminal's stderr.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stderr {
    Inherit,
    Capture,
}

fn git(dir: &Path, args: &[&str], stderr: Stderr, purpose: &'static str) -> Result<Output> {
    git_with(dir, args, stderr, purpose, &[])
}

/// [`git`] with `env` set for the child.
fn git_with(dir: &Path, args: &[&str], stderr: Stderr, purpose: &'static str, env: &[(&str, &Path)]) -> Result<Output> {
    let mut command = crate::store::git_command();
    command.args(args).current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    match stderr {
        Stderr::Inherit => command.stderr(Stdio::inherit()),
        // What convo reads of git's messages (the `fatal:` lines an error quotes) must be in
        // the words it looks for, not the user's language; progress a person reads keeps it.
        Stderr::Capture => command.stderr(Stdio::piped()).env("LC_ALL", "C"),
    };
    let output = command.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => SyncError::GitMissing(purpose),
        _ => SyncError::Git { command: args.join(" "), message: e.to_string() },
    })?;
    Ok(output)
}

fn checked(dir: &Path, args: &[&str], stderr: Stderr, purpose: &'static str) -> Result<String> {
    let output = git(dir, args, stderr, purpose)?;
    if !output.status.success() {
        // Name the git command, not the options before it.
        let command = args.iter().enumerate().find_map(|(i, a)| {
            let is_value = i > 0 && matches!(args[i - 1], "-c" | "--git-dir");
            (!a.starts_with('-') && !is_value).then_some(a)
        });
        return Err(git_failure(command.copied().unwrap_or(""), stderr, &String::from_utf8_lossy(&output.stderr)));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `(name, url)` of each remote.
pub fn remotes(store: &Store) -> Result<Vec<(String, String)>> {
    let out = checked(store.root(), &["remote", "-v"], Stderr::Capture, "list remotes")?;
    let mut remotes: Vec<(String, String)> = Vec::new();
    for line in out.lines() {
        let mut parts = line.split_whitespace();
        if let (Some(name), Some(url)) = (parts.next(), parts.next())
            && !remotes.iter().any(|(n, _)| n == name)
        {
            remotes.push((name.to_owned(), url.to_owned()));
        }
    }
    Ok(remotes)
}

pub fn remote_add(store: &Store, name: &str, url: &str) -> Result<()> {
    if let Some((_, existing)) = remotes(store)?.into_iter().find(|(n, _)| n == name) {
        return Err(SyncError::RemoteExists { name: name.to_owned(), url: existing });
    }
    checked(store.root(), &["remote", "add", name, url], Stderr::Capture, "add a remote").map(drop)
}

/// Whether git takes `url` for a path on this machine: no `scheme://`, and no ssh
/// `[user@]host:path` (a colon before the first slash), as git's own rule has it.
pub fn is_local_path(url: &str) -> bool {
    if url.contains("://") {
        return false;
    }
    match (url.find(':'), url.find('/')) {
        (Some(colon), Some(slash)) => slash < colon,
        (Some(_), None) => false,
        (None, _) => true,
    }
}

pub fn remote_remove(store: &Store, name: &str) -> Result<()> {
    require_remote(store, name)?;
    checked(store.root(), &["remote", "remove", name], Stderr::Capture, "remove a remote").map(drop)
}

pub fn remote_set_url(store: &Store, name: &str, url: &str) -> Result<()> {
    require_remote(store, name)?;
    checked(store.root(), &["remote", "set-url", name, url], Stderr::Capture, "change a remote").map(drop)
}

fn require_remote(store: &Store, name: &str) -> Result<()> {
    if remotes(store)?.iter().any(|(n, _)| n == name) { Ok(()) } else { Err(SyncError::UnknownRemote(name.to_owned())) }
}

/// The branch HEAD is on (`main`).
fn branch(store: &Store) -> Result<String> {
    match store.branch_name()? {
        Some(name) => Ok(name),
        None => Err(SyncError::Git { command: "symbolic-ref".into(), message: "HEAD is not on a branch".into() }),
    }
}

/// git's own progress (objects, bytes) on stderr when `progress`, else its messages
/// captured for a one-line error.
fn progress_args(progress: bool) -> (&'static str, Stderr) {
    if progress { ("--progress", Stderr::Inherit) } else { ("--quiet", Stderr::Capture) }
}

/// Fetch `remote`. Nothing local changes but the remote-tracking ref of HEAD's branch, and
/// that only if the fetch completes and its tip passes [`Store::check_fetched`].
///
/// The objects go to a quarantine first: a scratch repository under `.git/convo/` that
/// borrows the store's objects (alternates), so only what is new crosses the network. Only
/// an accepted tip's objects are moved into the store ([`Store::promote`]); a refused one, or
/// a failed network fetch, leaves the store byte for byte as it was.
/// Where a fetch left the remote-tracking branch (`refs/remotes/REMOTE/BRANCH`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// `REMOTE/BRANCH`.
    pub tracking: String,
    pub before: Option<ObjectId>,
    /// `None`: the remote has no such branch yet (a new, empty hub).
    pub after: Option<ObjectId>,
}

/// What a push did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// The remote branch moved.
    Updated,
    /// The remote already had everything (`git push` says "Everything up-to-date").
    UpToDate,
}

pub fn fetch(store: &Store, remote: &str, progress: bool) -> Result<Fetched> {
    require_remote(store, remote)?;
    if lazy::lazy_remote(store)?.is_some() {
        // A lazy store never takes the hub's branch (see `lazy`): its catalog only.
        lazy::fetch_catalog(store, remote)?;
        let tracking = format!("{remote}/{}", branch(store)?);
        return Ok(Fetched { tracking, before: None, after: None });
    }
    let url = checked(store.root(), &["remote", "get-url", remote], Stderr::Capture, "fetch")?.trim().to_owned();
    let branch = branch(store)?;
    let quarantine = store.quarantine()?;
    let result = (|| {
        let git_dir = quarantine.path().join(".git");
        let git_dir = git_dir.to_string_lossy();
        let (flag, stderr) = progress_args(progress);
        let refspec = format!("+refs/heads/{branch}:refs/remotes/{remote}/{branch}");
        // A pattern, so a hub without a catalog (one only an older convo pushed to) is no
        // error; its fixed part is the ref-prefix protocol v2 asks for.
        let quarantined = format!("refs/convo/remotes/{remote}/catalog");
        let catalog_spec = format!("+{}*:{quarantined}*", hub::CATALOG_REF);
        let tracking = format!("{remote}/{branch}");
        let before = tracking_tip(store, &format!("refs/remotes/{tracking}"));
        // Run from the store's root so a relative remote path means what it does to git,
        // with the store's own config included (the user's credential helpers, http.*
        // settings), as a plain `git fetch` in the store would have it.
        // Absolute: git takes no relative include from the command line (`-C store2`).
        let config = store.root().join(".git").join("config");
        let config = std::path::absolute(&config).unwrap_or(config);
        let include = format!("include.path={}", config.display());
        let fetched = git(
            store.root(),
            &[
                "-c",
                &include,
                "--git-dir",
                &git_dir,
                "fetch",
                "--no-write-fetch-head",
                "--no-tags",
                flag,
                &url,
                &refspec,
                &catalog_spec,
            ],
            stderr,
            "fetch",
        )?;
        if !fetched.status.success() {
            // A remote without our branch (a new, empty hub) has nothing to bring. Asked of
            // `ls-remote --exit-code` (2: no such ref), never read from fetch's message, which
            // git words differently across versions, translates, and on a terminal does not
            // let convo see. Only after a failure: asking first would cost every fetch a
            // second connection (and a second password prompt without a credential helper).
            let wanted = format!("refs/heads/{branch}");
            let args = ["-c", &include, "--git-dir", &git_dir, "ls-remote", "--exit-code", &url, &wanted];
            if git(store.root(), &args, Stderr::Capture, "fetch")?.status.code() == Some(2) {
                return Ok(Fetched { tracking, before, after: None });
            }
            return Err(git_failure("fetch", stderr, &String::from_utf8_lossy(&fetched.stderr)));
        }
        let name = format!("refs/remotes/{remote}/{branch}");
        let tip =
            checked(store.root(), &["--git-dir", &git_dir, "rev-parse", "--verify", &name], Stderr::Capture, "fetch")?;
        let tip = ObjectId::from_hex(tip.trim().as_bytes())
            .map_err(|e| SyncError::Git { command: "fetch".into(), message: e.to_string() })?;
        store.check_fetched(quarantine.path(), tip)?;
        // The catalog only if it is one convo writes; a refused one is dropped here too, so
        // the next push publishes every conversation again and the hub's is replaced.
        let catalog = checked(
            store.root(),
            &["--git-dir", &git_dir, "rev-parse", "--verify", "--quiet", &quarantined],
            Stderr::Capture,
            "fetch",
        )
        .ok()
        .and_then(|hex| ObjectId::from_hex(hex.trim().as_bytes()).ok())
        .filter(|commit| {
            let previous = tracking_tip(store, &catalog_ref(remote));
            store.check_fetched_catalog(quarantine.path(), *commit, previous).is_ok()
        });
        if catalog.is_none() {
            forget_catalog(store, remote)?;
        }
        // Objects only, no ref: they are moved in and synced (see `durable`), and the ref
        // is moved after.
        store.promote(&quarantine)?;
        let hex = tip.to_string();
        let message = format!("fetch: {url}");
        checked(store.root(), &["update-ref", "-m", &message, &name, &hex], Stderr::Capture, "fetch")?;
        store.sync_ref_written_by_git(&name)?;
        if let Some(catalog) = catalog {
            let hex = catalog.to_string();
            checked(store.root(), &["update-ref", "-m", &message, &quarantined, &hex], Stderr::Capture, "fetch")?;
            store.sync_ref_written_by_git(&quarantined)?;
        }
        Ok(Fetched { tracking, before, after: Some(tip) })
    })();
    drop(quarantine);
    result
}

/// Where the store keeps the catalog of `remote` as last fetched or pushed: outside
/// `refs/remotes/`, where a plain `git fetch` of a hub's branch of that name could land.
fn catalog_ref(remote: &str) -> String {
    format!("refs/convo/remotes/{remote}/catalog")
}

fn forget_catalog(store: &Store, remote: &str) -> Result<()> {
    let name = catalog_ref(remote);
    if tracking_tip(store, &name).is_some() {
        checked(store.root(), &["update-ref", "-d", &name], Stderr::Capture, "fetch")?;
    }
    Ok(())
}

/// The catalog of `remote` as last fetched or pushed (see [`hub`]), if it had one convo
/// accepts.
pub fn remote_catalog(store: &Store, remote: &str) -> Result<Option<Catalog>> {
    match tracking_tip(store, &catalog_ref(remote)) {
        Some(commit) => Ok(store.read_catalog(commit).ok()),
        None => Ok(None),
    }
}

/// The line of conversation `id` in the catalog of `remote` as last fetched, read from its
/// fan file alone (see [`Store::catalog_line`]).
pub fn remote_catalog_line(store: &Store, remote: &str, id: &str) -> Result<Option<crate::store::CatalogLine>> {
    match tracking_tip(store, &catalog_ref(remote)) {
        Some(commit) => Ok(store.catalog_line(commit, id)?),
        None => Ok(None),
    }
}

/// The commit a ref of the store points at, if it exists.
fn tracking_tip(store: &Store, name: &str) -> Option<ObjectId> {
    store.ref_target(name).ok().flatten()
}

/// A failed git command's stderr on one line: its `fatal:`/`error:` lines (what went wrong,
/// prefixes dropped) joined with `; `, then its advice (`Please make sure ... exists.`) as
/// one sentence; git's last line alone is often only the end of that advice. Or a pointer to
/// the output git already printed.
fn git_failure(command: &str, stderr: Stderr, text: &str) -> SyncError {
    let message = match stderr {
        Stderr::Capture => {
            let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            let prefixed = |l: &str| l.starts_with("fatal: ") || l.starts_with("error: ");
            let errors: Vec<&str> = lines
                .iter()
                .filter(|l| prefixed(l))
                .map(|l| l.trim_start_matches("fatal: ").trim_start_matches("error: "))
                .collect();
            let advice: Vec<&str> =
                lines.iter().filter(|l| !prefixed(l) && !l.starts_with("hint: ")).copied().collect();
            match (errors.is_empty(), advice.is_empty()) {
                (true, true) => "failed".to_owned(),
                (true, false) => advice.join(" "),
                (false, true) => errors.join("; "),
                (false, false) => format!("{} ({})", errors.join("; "), advice.join(" ")),
            }
        }
        Stderr::Inherit => "failed (git's message is above)".to_owned(),
    };
    SyncError::Git { command: command.to_owned(), message }
}

/// The fetched tip of `remote`'s copy of our branch, if it has one.
pub fn remote_tip(store: &Store, remote: &str) -> Result<Option<ObjectId>> {
    let name = format!("refs/remotes/{remote}/{}", branch(store)?);
    Ok(store.ref_target(&name)?)
}

/// Fetch `remote` and integrate it (see [`Store::integrate`]). The store's lock is taken
/// only once the fetch is complete, not while the network is slow.
pub fn pull(store: &Store, remote: &str, progress: bool, clock: &Clock) -> Result<Integrated> {
    fetch(store, remote, progress)?;
    match remote_tip(store, remote)? {
        Some(tip) => {
            let lock = store.lock()?;
            Ok(store.integrate(&lock, tip, &format!("{remote}/{}", branch(store)?), clock)?)
        }
        None => Ok(Integrated::UpToDate),
    }
}

/// Every secret-like string in what a push to `remote` would publish (see
/// [`Store::outgoing`]): every string of every new event (all fields, JSON nested in them,
/// unknown fields), `meta.json` (titles, imported file names), `convo.toml`, any other file,
/// and commit messages.
pub fn scan_unpublished(store: &Store, remote: &str) -> Result<Vec<Finding>> {
    scan_withholding(store, remote, &Withheld::new(), true)
}

/// [`scan_unpublished`] of what a push withholding `withheld` publishes: their files are
/// not sent, nor, without `messages` (a published line), any local commit's message.
pub fn scan_withholding(store: &Store, remote: &str, withheld: &Withheld, messages: bool) -> Result<Vec<Finding>> {
    let tip = remote_tip(store, remote)?;
    let mut findings: Vec<Finding> = Vec::new();
    store.outgoing(tip, &mut |item| {
        match publish::sent(item, withheld, messages) {
            None => {}
            Some(Outgoing::Message { commit, text }) => {
                for kind in secrets::scan(&text) {
                    findings.push(Finding { place: format!("commit {} message", short(commit)), kind });
                }
            }
            Some(Outgoing::File { path, commit, data, published }) => {
                scan_file(&path, commit, &data, published, &mut findings)
            }
        }
        Ok(())
    })?;
    Ok(by_place(findings))
}

/// The secrets themselves in what a push to `remote` would publish: the text behind each
/// finding of [`scan_unpublished`], for `convo redact --secrets` to replace. Never shown.
pub fn unpublished_secret_texts(store: &Store, remote: &str) -> Result<Vec<String>> {
    secret_texts_withholding(store, remote, &Withheld::new(), true)
}

/// [`unpublished_secret_texts`] of what a push withholding `withheld` publishes (see
/// [`scan_withholding`]).
pub fn secret_texts_withholding(
    store: &Store,
    remote: &str,
    withheld: &Withheld,
    messages: bool,
) -> Result<Vec<String>> {
    let tip = remote_tip(store, remote)?;
    let mut texts: Vec<String> = Vec::new();
    let mut add = |found: Vec<String>| {
        for text in found {
            if !texts.contains(&text) {
                texts.push(text);
            }
        }
    };
    store.outgoing(tip, &mut |item| {
        match publish::sent(item, withheld, messages) {
            None => {}
            Some(Outgoing::Message { text, .. }) => add(secrets::secret_texts(&text)),
            Some(Outgoing::File { path, data, published, .. }) => add(file_secret_texts(&path, &data, published)),
        }
        Ok(())
    })?;
    Ok(texts)
}

/// The secret texts in one outgoing file's lines the remote does not have (`published`).
fn file_secret_texts(path: &str, data: &[u8], published: Option<Vec<u8>>) -> Vec<String> {
    let text = String::from_utf8_lossy(data);
    let published = published.map(|p| String::from_utf8_lossy(&p).into_owned()).unwrap_or_default();
    let known: std::collections::HashSet<&str> = published.lines().collect();
    let json = path.ends_with(".jsonl") || path.ends_with(".json");
    let lines: Vec<&str> = if path.ends_with(".jsonl") { text.lines().collect() } else { vec![&text] };
    let mut found = Vec::new();
    for line in lines.into_iter().filter(|l| !known.contains(l)) {
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(value) if json => secrets::secret_texts_json(&value, &mut found),
            _ => found.extend(secrets::secret_texts(line)),
        }
    }
    found
}

/// The secret scan of a lazy store's push of `puts` (see [`lazy::push`]): the findings, and
/// how many distinct secret texts they hold (as `convo redact --secrets` counts them).
fn scan_lazy(store: &Store, puts: &[crate::store::LazyPut]) -> Result<(Vec<Finding>, usize)> {
    let mut findings = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    store.lazy_outgoing(puts, &mut |item| {
        if let Outgoing::File { path, commit, data, published } = item {
            for text in file_secret_texts(&path, &data, published.clone()) {
                if !texts.contains(&text) {
                    texts.push(text);
                }
            }
            scan_file(&path, commit, &data, published, &mut findings);
        }
        Ok(())
    })?;
    Ok((by_place(findings), texts.len()))
}

fn short(commit: ObjectId) -> String {
    commit.to_hex_with_len(7).to_string()
}

/// Scan one outgoing file: event segments line by line (lines the remote already has are
/// skipped), JSON files value by value, anything else as text.
fn scan_file(path: &str, commit: Option<ObjectId>, data: &[u8], published: Option<Vec<u8>>, out: &mut Vec<Finding>) {
    let text = String::from_utf8_lossy(data);
    let in_commit = commit.map(|c| format!(" in commit {}", short(c))).unwrap_or_default();
    let (conversation, rest) = match layout::split_conversation_path(path) {
        Some((id, rest)) => (Some(id), rest),
        None => (None, Vec::new()),
    };
    let is_segment = conversation.is_some() && rest.first() == Some(&layout::EVENTS_DIR) && path.ends_with(".jsonl");
    if let (true, Some(id)) = (is_segment, conversation) {
        let published = published.map(|p| String::from_utf8_lossy(&p).into_owned()).unwrap_or_default();
        let known: std::collections::HashSet<&str> = published.lines().collect();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() || known.contains(line) {
                continue;
            }
            match serde_json::from_str::<serde_json::Value>(line) {
                Ok(value) => {
                    let event = value.get("id").and_then(|v| v.as_str()).unwrap_or("?").to_owned();
                    secrets::scan_json(&value, &mut |field, kind| {
                        out.push(Finding { place: format!("conversation {id} event {event} {field}{in_commit}"), kind })
                    });
                }
                Err(_) => {
                    for kind in secrets::scan(line) {
                        out.push(Finding { place: format!("{path} line {}{in_commit}", n + 1), kind });
                    }
                }
            }
        }
        return;
    }
    let name = match (conversation, rest.as_slice()) {
        (Some(id), [file]) => format!("conversation {id} {file}"),
        _ => path.to_owned(),
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) if path.ends_with(".json") => secrets::scan_json(&value, &mut |field, kind| {
            out.push(Finding { place: format!("{name} {field}{in_commit}"), kind })
        }),
        _ => {
            for kind in secrets::scan(&text) {
                out.push(Finding { place: format!("{name}{in_commit}"), kind });
            }
        }
    }
}

/// Push HEAD's branch to `remote`, after a secret scan unless `allow_secrets`; nothing of
/// the conversations `withheld` (kept private) is sent (see [`publish`]).
pub fn push(
    store: &Store,
    remote: &str,
    force_with_lease: bool,
    allow_secrets: bool,
    progress: bool,
    withheld: &Withheld,
) -> Result<Pushed> {
    require_remote(store, remote)?;
    if lazy::lazy_remote(store)?.is_some() {
        return Ok(lazy::push(store, remote, allow_secrets, progress, withheld)?.pushed);
    }
    let quarantine = store.quarantine()?;
    // The branch as it is, or the published line that leaves the private ones out.
    let sent = match store.head()? {
        Some(head) => publish::choose(store, remote, head, withheld, quarantine.path())?,
        None => publish::Sent::Head,
    };
    if !allow_secrets {
        let messages = matches!(sent, publish::Sent::Head);
        let findings = scan_withholding(store, remote, withheld, messages)?;
        if !findings.is_empty() {
            // Counted as redact counts them, so the two commands name the same number.
            let secrets = secret_texts_withholding(store, remote, withheld, messages)?.len().max(1);
            return Err(SyncError::Secrets { secrets, findings });
        }
    }
    let branch = branch(store)?;
    let (refspec, tip) = match sent {
        publish::Sent::Head => (format!("HEAD:refs/heads/{branch}"), store.head()?),
        publish::Sent::Published(commit) => (format!("{commit}:refs/heads/{branch}"), Some(commit)),
        publish::Sent::Nothing(tip) => (format!("{tip}:refs/heads/{branch}"), Some(tip)),
        publish::Sent::None => return Ok(Pushed::UpToDate),
    };
    // What the hub gets besides the branch (see `store::hub`), worked out from the last
    // fetch; nothing when HEAD has no commit (git refuses that push itself).
    let publication = match tip {
        Some(head) => {
            let catalog = remote_catalog(store, remote)?;
            store.publication(head, remote_tip(store, remote)?, catalog.as_ref(), quarantine.path())?
        }
        None => hub::Publication::default(),
    };
    // The push reads what the publication wrote from the quarantine's objects.
    let objects = quarantine.path().join(".git").join("objects");
    let mut extra: Vec<String> = Vec::new();
    extra.extend(publication.refs.iter().map(|(name, commit)| format!("+{commit}:{name}")));
    extra.extend(publication.deletes.iter().map(|name| format!(":{name}")));
    // A command line holds some thousands of refspecs: a first push to a big hub goes in
    // batches, each with the branch, so each lands only where the branch may.
    let mut batches: Vec<Vec<String>> = extra.chunks(PUSH_BATCH).map(<[String]>::to_vec).collect();
    if batches.is_empty() {
        batches.push(Vec::new());
    }
    if let Some(catalog) = publication.catalog {
        batches.last_mut().expect("one at least").push(format!("+{catalog}:{}", hub::CATALOG_REF));
    }
    let lease = format!("--force-with-lease=refs/heads/{branch}");
    let mut pushed = Pushed::UpToDate;
    for batch in &batches {
        if push_once(store, remote, &refspec, batch, force_with_lease.then_some(lease.as_str()), progress, &objects)?
            == Pushed::Updated
        {
            pushed = Pushed::Updated;
        }
    }
    if let (publish::Sent::Published(commit), Some(head)) = (sent, store.head()?) {
        publish::keep(store, remote, &quarantine, commit, head)?;
    }
    if let Some(catalog) = publication.catalog {
        // What the hub now has, for the next push to start from (and to be the next
        // catalog's parent), copied in from the quarantine. A failure here costs the next
        // push a full publication, nothing else.
        let _ = keep_catalog(store, remote, &quarantine, catalog);
    }
    drop(quarantine);
    Ok(pushed)
}

/// Copy catalog `commit` from the quarantine it was written in into the store, as the
/// catalog of `remote`.
fn keep_catalog(store: &Store, remote: &str, quarantine: &crate::store::Quarantine, commit: ObjectId) -> Result<()> {
    let name = catalog_ref(remote);
    let hex = commit.to_string();
    // Objects only, synced, then the ref: as a fetch does (see `durable`), or a power cut
    // could keep the ref and lose the pack's name.
    store.promote(quarantine)?;
    checked(store.root(), &["update-ref", "-m", "push: catalog", &name, &hex], Stderr::Capture, "push")?;
    store.sync_ref_written_by_git(&name)?;
    Ok(())
}

/// Refspecs besides the branch in one `git push`.
const PUSH_BATCH: usize = 2_000;

/// One `git push` of the branch (`refspec`) and `extra` refspecs, atomically when there are
/// any: whether the branch moved.
fn push_once(
    store: &Store,
    remote: &str,
    refspec: &str,
    extra: &[String],
    lease: Option<&str>,
    progress: bool,
    objects: &Path,
) -> Result<Pushed> {
    let (flag, stderr) = progress_args(progress);
    // --quiet would also silence the porcelain lines that say what happened to the ref.
    let flag = if flag == "--quiet" { "--no-progress" } else { flag };
    let mut args = vec!["push", "--porcelain", flag];
    if !extra.is_empty() {
        args.push("--atomic");
    }
    args.extend(lease);
    args.extend([remote, refspec]);
    args.extend(extra.iter().map(String::as_str));
    let output = git_with(store.root(), &args, stderr, "push", &[("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects)])?;
    if output.status.success() {
        // The remote-tracking ref git moved names commits the store already had synced; its
        // rename is made durable too, so a power cut cannot leave it behind what the remote
        // has (redact would then take published commits for unpublished ones).
        store.sync_ref_written_by_git(&format!("refs/remotes/{remote}/{}", branch(store)?))?;
    }
    pushed(&output, remote, refspec)
}

/// A lazy store's `git push` (see [`lazy::push`]): run on the quarantine `git_dir`, whose
/// objects and shallow file hold the hub's tip as rebuilt, to `url` (so no remote-tracking
/// ref moves: the store's branch is not the hub's), with the store's config included for
/// its credential helpers.
#[allow(clippy::too_many_arguments)]
fn push_lazy_once(
    store: &Store,
    git_dir: &Path,
    url: &str,
    remote: &str,
    refspec: &str,
    extra: &[String],
    progress: bool,
    objects: &Path,
) -> Result<Pushed> {
    let (flag, stderr) = progress_args(progress);
    let flag = if flag == "--quiet" { "--no-progress" } else { flag };
    let include = lazy::include(store);
    let git_dir = git_dir.to_string_lossy();
    let mut args = vec!["-c", include.as_str(), "--git-dir", &git_dir, "push", "--porcelain", flag, "--atomic", url];
    args.push(refspec);
    args.extend(extra.iter().map(String::as_str));
    let output = git_with(store.root(), &args, stderr, "push", &[("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects)])?;
    pushed(&output, remote, refspec)
}

/// What `git push --porcelain` of branch `refspec` to `remote` said: whether the branch
/// moved, or why nothing was pushed.
fn pushed(output: &Output, remote: &str, refspec: &str) -> Result<Pushed> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Porcelain: one `<flag>\t<from>:<to>\t<summary>` line per ref; the branch's says what
    // the push did (`=`: up to date).
    let branch_line = |l: &&str| l.split('\t').nth(1).is_some_and(|spec| spec == refspec);
    if output.status.success() {
        let up_to_date = stdout.lines().find(branch_line).is_some_and(|l| l.starts_with("=\t"));
        return Ok(if up_to_date { Pushed::UpToDate } else { Pushed::Updated });
    }
    // Porcelain's summaries are not translated; a rejection is always among them (git's
    // `fetch first` advice on stderr says nothing they do not).
    if stdout.contains("[rejected]") || stdout.contains("non-fast-forward") || stdout.contains("stale info") {
        return Err(SyncError::Rejected { remote: remote.to_owned() });
    }
    // Porcelain: `!\t<from>:<to>\t[remote rejected] (<reason>)`.
    // The branch's line first: in an atomic push the other refs' reason is only that.
    let refused = stdout.lines().filter(branch_line).chain(stdout.lines()).filter_map(|l| l.strip_prefix('!'));
    if let Some(summary) = refused.filter_map(|l| l.split('\t').nth(2)).find(|s| s.starts_with("[remote rejected]"))
        && let Some(reason) = summary.strip_prefix("[remote rejected]")
    {
        let reason = reason.trim().trim_start_matches('(').trim_end_matches(')');
        let reason = if reason.is_empty() { "no reason given" } else { reason };
        return Err(SyncError::Refused { remote: remote.to_owned(), reason: reason.to_owned() });
    }
    Err(git_failure("push", Stderr::Capture, &stderr))
}

/// Clone `url` into `path` and make it a convo store. git only copies objects and refs
/// (`--no-checkout`); the tip is checked like any fetched commit and convo writes the working
/// tree itself. The folder is user-only; if anything fails it is removed again.
pub fn clone(url: &str, path: &Path, progress: bool, durability: crate::store::Durability) -> Result<Store> {
    let existed = path.exists();
    crate::store::create_private_dir(path)?;
    let result = clone_into(url, path, progress, durability);
    if result.is_err() {
        undo_clone(path, existed);
    }
    result
}

/// Remove what a failed clone made at `path`: an empty folder the user gave is emptied again.
fn undo_clone(path: &Path, existed: bool) {
    if existed {
        if let Ok(entries) = std::fs::read_dir(path) {
            for entry in entries.flatten() {
                let _ = std::fs::remove_dir_all(entry.path()).or_else(|_| std::fs::remove_file(entry.path()));
            }
        }
    } else {
        let _ = std::fs::remove_dir_all(path);
    }
}

fn clone_into(url: &str, path: &Path, progress: bool, durability: crate::store::Durability) -> Result<Store> {
    let target = path.to_string_lossy().into_owned();
    let (flag, stderr) = progress_args(progress);
    checked(Path::new("."), &["clone", "--no-checkout", flag, url, &target], stderr, "clone")?;
    // A bare repository made with another default branch (`master`) points its HEAD at a
    // branch convo never pushed: take the one it did.
    if !git(path, &["rev-parse", "--verify", "--quiet", "HEAD"], Stderr::Capture, "clone")?.status.success() {
        let branches = checked(
            path,
            &["for-each-ref", "--format=%(refname:short)", "refs/remotes/origin"],
            Stderr::Capture,
            "clone",
        )?;
        let branch = branches
            .lines()
            .find(|b| *b == "origin/main")
            .or_else(|| branches.lines().find(|b| *b != "origin/HEAD" && !b.is_empty()))
            .map(str::to_owned);
        if let Some(branch) = branch {
            let local = branch.trim_start_matches("origin/").to_owned();
            checked(path, &["branch", "--quiet", "--force", &local, &branch], Stderr::Capture, "clone")?;
            checked(path, &["symbolic-ref", "HEAD", &format!("refs/heads/{local}")], Stderr::Capture, "clone")?;
        }
    }
    let store = Store::init_clone(path)?.with_durability(durability);
    let lock = store.lock()?;
    store.check_out(&lock)?;
    drop(lock);
    // git's clone took the branches only: the catalog comes through the quarantine, so the
    // first push publishes what changed, not every conversation again.
    if remotes(&store)?.iter().any(|(name, _)| name == "origin") {
        fetch(&store, "origin", false)?;
    }
    // git synced the files it wrote but none of the names: a clone said done survives a
    // power cut only once every folder of the new repository is on disk too.
    store.sync_new_repository()?;
    Ok(store)
}
