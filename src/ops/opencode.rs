//! `import DB` (and `import --follow DB`, `watch`) for opencode's SQLite database: every
//! session in it is a conversation of its own, a subagent's linked to its parent's, all
//! under one lock and in one commit, as a folder of session files is imported. A session
//! imported before carries on from the last message read (its record, `source` in
//! `meta.json`, or the `resumes` record of a session `convo resume` wrote, keeps where the
//! importer stood), so a re-import reads only what is new. A session a revert took imported
//! messages back from, and that went on after it, goes on in a fork of its conversation (its
//! record there names the fork, `went_on_in`, which follows the session from then on). Any
//! failure leaves the store as
//! it was: the database is checked before the store is opened, and what was written is
//! discarded unless the one commit lands.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::clock::Clock;
use crate::event::Draft;
use crate::interop::opencode::{self, Db, DbError};
use crate::interop::{self, Format, Report, skip};
use crate::ops::folder::Committed;
use crate::ops::import::{self, At, ImportFailure, RESUMES, TIP, WENT_ON_IN};
use crate::store::{Appending, Batch, Meta, Staged, Store, StoreError, subject};

/// Why an opencode database was not imported.
#[derive(Debug, thiserror::Error)]
#[error("{name}: {source}")]
pub struct DbFailure {
    pub name: String,
    #[source]
    pub source: interop::InteropError,
}

/// A database opened and checked, before any store is.
pub struct Prepared {
    name: String,
    db: Db,
}

impl Prepared {
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Whether the file at `path` is an SQLite database (its header), which `import` reads as
/// opencode's.
pub fn is_database(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 16];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && opencode::is_sqlite(&head)
}

/// Open `path` read-only and check that it is opencode's.
pub fn prepare(path: &Path) -> Result<Prepared, ImportFailure> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let db = Db::open(path).map_err(|e| failure(&name, e.into()))?;
    Ok(Prepared { name, db })
}

fn failure(name: &str, source: interop::InteropError) -> ImportFailure {
    ImportFailure::Database(Box::new(DbFailure { name: name.to_owned(), source }))
}

/// What an import of the database did.
#[derive(Debug, Default)]
pub struct Done {
    pub name: String,
    /// Every session's report, summed.
    pub report: Report,
    /// Sessions in the database.
    pub sessions: usize,
    /// The conversations made, session by session (conversation id, session id, events).
    pub started: Vec<(String, String, u64)>,
    /// The conversations appended to (conversation id, session id, events added).
    pub grew: Vec<(String, String, u64)>,
    pub unchanged: usize,
    pub committed: Option<Committed>,
}

impl Done {
    pub fn events(&self) -> u64 {
        self.started.iter().chain(&self.grew).map(|(_, _, n)| n).sum()
    }
}

/// The key, in a session's record, of how many reverts its line went on after.
const REVERTS: &str = "reverts";

/// The conversations holding opencode sessions, by session id.
fn known(store: &Store) -> Result<HashMap<String, (String, Meta, At)>, StoreError> {
    let mut known = HashMap::new();
    for id in store.conversation_ids()? {
        let meta = store.meta(&id)?;
        let is_session = |r: &Value| r.get("format").and_then(Value::as_str) == Some(Format::Opencode.name());
        let session = |r: &Value| r.get("session").and_then(Value::as_str).map(str::to_owned);
        // A record the session left for a fork (after a revert) is the fork's to follow.
        let is_session = |r: &Value| is_session(r) && !store.left_for_a_fork(&id, r);
        if let Some(s) = meta.extra.get("source").filter(|r| is_session(r)).and_then(session) {
            known.insert(s, (id.clone(), meta.clone(), At::Source));
        }
        let resumed: Vec<(usize, String)> = meta
            .extra
            .get(RESUMES)
            .and_then(Value::as_array)
            .map(|rs| rs.iter().enumerate().filter(|(_, r)| is_session(r)).filter_map(|(i, r)| Some((i, session(r)?))))
            .into_iter()
            .flatten()
            .collect();
        for (i, s) in resumed {
            known.insert(s, (id.clone(), meta.clone(), At::Resume(i)));
        }
    }
    // Hand-overs not captured yet: a record joins its conversation with the first capture.
    for handover in store.handovers()? {
        let opencode = handover.record.get("format").and_then(Value::as_str) == Some(Format::Opencode.name());
        let Some(session) = handover.session().filter(|_| opencode).map(str::to_owned) else {
            continue;
        };
        if !known.contains_key(&session)
            && let Some(handed) = store.handover_of(&session)?
        {
            known.insert(session, handed);
        }
    }
    Ok(known)
}

/// Import every session of the database what is new in it, in one commit (none when
/// nothing is new). `progress` is told after each session.
pub fn import(
    store: &Store,
    prepared: Prepared,
    clock: &Clock,
    progress: &mut dyn FnMut(),
) -> Result<Done, ImportFailure> {
    let Prepared { name, db } = prepared;
    let lock = store.lock()?;
    let sessions = db.sessions().map_err(|e| failure(&name, e.into()))?;
    let mut known = known(store)?;
    let mut batch = Batch::default();
    let mut done = Done { name: name.clone(), sessions: sessions.len(), ..Done::default() };
    let result = (|| -> Result<(), ImportFailure> {
        for session in &sessions {
            let reading = Reading { store, lock: &lock, db: &db, clock };
            session_into(reading, session, &mut known, &mut batch, &mut done)?;
            progress();
        }
        Ok(())
    })();
    if let Err(e) = result {
        store.discard_batch(&batch);
        return Err(e);
    }
    if !batch.is_empty() {
        let changed = done.started.len() + done.grew.len();
        let subject = subject::folder(&name, changed, done.events());
        let committed = store.commit_batch(&lock, batch, &subject, clock)?;
        drop(lock);
        let active = done.started.iter().find(|_| true).map(|(id, ..)| id.clone());
        if let Some(id) = &active {
            store.set_active(id)?;
        }
        done.committed = Some(Committed { commit: committed.commit, subject, landed: committed.landed, active });
    }
    Ok(done)
}

/// What reading a session into the store needs, under the import's lock.
#[derive(Clone, Copy)]
struct Reading<'a> {
    store: &'a Store,
    lock: &'a crate::store::Lock<'a>,
    db: &'a Db,
    clock: &'a Clock,
}

/// One session: a new conversation, or what is new appended to its conversation.
fn session_into(
    reading: Reading<'_>,
    session: &opencode::Session,
    known: &mut HashMap<String, (String, Meta, At)>,
    batch: &mut Batch,
    done: &mut Done,
) -> Result<(), ImportFailure> {
    let Reading { store, lock, db, clock } = reading;
    let name = done.name.clone();
    let previous = known.get(&session.id).cloned();
    let checkpoint: Option<interop::Checkpoint> = previous
        .as_ref()
        .and_then(|(_, meta, at)| at.get(meta)?.get("checkpoint").cloned())
        .and_then(|c| serde_json::from_value(c).ok());
    if let (Some(previous), Some(read)) = (&previous, &checkpoint)
        && opencode::taken_back(db, session, &read.opencode).map_err(|e| failure(&name, e.into()))?
    {
        return fork_into(reading, session, previous, &read.opencode, known, batch, done);
    }
    // A session that goes on from an earlier point than its conversation's end (another
    // session of this sweep appended to it, or it went on elsewhere) goes on in a fork.
    let went_on = match &previous {
        Some((id, meta, at)) => {
            let recorded = at.get(meta).cloned().unwrap_or_default();
            import::diverged(store, id, &recorded, Some(batch))?
        }
        None => None,
    };
    let fork = match &went_on {
        Some(kept) => Some(import::fork_of(store, kept, clock)?),
        None => None,
    };
    let mut emit = SessionEmit {
        store,
        lock,
        clock,
        existing: previous.as_ref().filter(|_| fork.is_none()).map(|(id, ..)| id.clone()),
        staged: fork,
        appending: None,
    };
    let outcome = match opencode::read_session(db, session, checkpoint.as_ref(), clock, &mut emit) {
        Ok(outcome) => outcome,
        Err(source) => {
            emit.discard();
            return Err(failure(&name, source));
        }
    };
    add_report(&mut done.report, &outcome.report);
    let record = |r: Map<String, Value>, drafts: u64| record(r, &name, session, &outcome, drafts);
    let project = crate::ops::import::project_value(&outcome.place);
    match previous {
        None => {
            let mut staged = emit.staged.take().unwrap_or_else(|| store.stage(clock));
            let events = staged.stats.events;
            staged.title = outcome.conversations.first().and_then(|c| c.0.clone());
            let mut source = record(Map::new(), events);
            if let Some(tip) = &staged.last_said {
                source.insert(TIP.into(), json!(tip));
            }
            staged.extra.insert("source".into(), Value::Object(source));
            if let Some(project) = project {
                staged.extra.insert(crate::store::Project::KEY.into(), project);
            }
            if let Some(parent) = session.parent.as_ref().and_then(|p| known.get(p)) {
                staged.extra.insert("subagent_of".into(), json!(parent.0));
            }
            let meta = Meta {
                title: staged.title.clone(),
                created: clock.timestamp(),
                forked_from: None,
                extra: staged.extra.clone(),
            };
            known.insert(session.id.clone(), (staged.id.clone(), meta, At::Source));
            done.started.push((staged.id.clone(), session.id.clone(), events));
            store.batch_make(batch, vec![staged]);
        }
        Some((id, mut meta, at)) => {
            let recorded_title = at.get(&meta).and_then(|r| r.get("title")).and_then(Value::as_str).map(str::to_owned);
            let retitled = session.title.is_some()
                && session.title != recorded_title
                && (meta.title.is_none() || meta.title == recorded_title);
            let before = at.get(&meta).and_then(|r| r.get("drafts")).and_then(Value::as_u64).unwrap_or(0);
            if let (Some(kept), Some(fork)) = (&went_on, emit.staged.take()) {
                let added = fork.stats.events - kept.len() as u64;
                if added == 0 {
                    // Nothing new said: no fork, and the record stays as it is.
                    store.discard([&fork]);
                    done.unchanged += 1;
                    return Ok(());
                }
                let left = meta.clone();
                if let Some(r) = at.get_mut(&mut meta) {
                    let mut updated = record(std::mem::take(r), before + added);
                    if let Some(tip) = &fork.last_said {
                        updated.insert(TIP.into(), json!(tip));
                    }
                    *r = updated;
                }
                let commits = &mut import::Commits::Into(batch);
                let went = import::went_on_in(
                    store,
                    lock,
                    commits,
                    (fork, added, import::last_said(kept).as_deref()),
                    (&id, &left, at),
                    meta,
                    Format::Opencode,
                    clock,
                )?;
                known.insert(session.id.clone(), (went.id.clone(), went.meta, went.at));
                done.grew.push((went.id, session.id.clone(), added));
                return Ok(());
            }
            if outcome.report.records == 0 && !retitled {
                done.unchanged += 1;
                return Ok(());
            }
            let appending = match emit.appending.take() {
                Some(a) => a,
                None => store.begin_append(lock, &id, clock)?,
            };
            let added = if appending.is_empty() { 0 } else { appending.len() as u64 };
            if let Some(r) = at.get_mut(&mut meta) {
                let mut updated = record(std::mem::take(r), before + added);
                if let Some(tip) = appending.last_said() {
                    updated.insert(TIP.into(), json!(tip));
                }
                *r = updated;
            }
            if retitled {
                meta.title = session.title.clone();
            }
            if !meta.extra.contains_key(crate::store::Project::KEY)
                && let Some(project) = project
            {
                meta.extra.insert(crate::store::Project::KEY.into(), project);
            }
            known.insert(session.id.clone(), (id.clone(), meta.clone(), at));
            done.grew.push((id, session.id.clone(), added));
            store.batch_append(batch, appending, Some(meta));
        }
    }
    Ok(())
}

/// A session's record (`r`, updated) after a read that gave `outcome`, `drafts` in all.
fn record(
    mut r: Map<String, Value>,
    name: &str,
    session: &opencode::Session,
    outcome: &interop::Outcome,
    drafts: u64,
) -> Map<String, Value> {
    r.insert("format".into(), json!(Format::Opencode.name()));
    r.insert("file".into(), json!(name));
    r.insert("session".into(), json!(session.id));
    r.insert("part".into(), json!(0));
    r.insert("drafts".into(), json!(drafts));
    if let Some(title) = &session.title {
        r.insert("title".into(), json!(title));
    }
    match outcome.checkpoint.as_ref().and_then(|c| serde_json::to_value(c).ok()) {
        Some(c) => r.insert("checkpoint".into(), c),
        None => r.remove("checkpoint"),
    };
    r
}

/// A session a revert took imported messages back from, which went on after it: its
/// conversation stays as it was (its record says where the session went), and the session
/// goes on in a fork of it, read whole: the messages the revert kept, then the new line, as
/// a Gemini CLI session after a rewind.
fn fork_into(
    reading: Reading<'_>,
    session: &opencode::Session,
    (id, meta, at): &(String, Meta, At),
    read: &opencode::State,
    known: &mut HashMap<String, (String, Meta, At)>,
    batch: &mut Batch,
    done: &mut Done,
) -> Result<(), ImportFailure> {
    let Reading { store, lock, db, clock } = reading;
    let name = done.name.clone();
    let mut emit = SessionEmit { store, lock, clock, staged: None, appending: None, existing: None };
    let (mut outcome, turn) = match opencode::read_fork(db, session, read, clock, &mut emit) {
        Ok(read) => read,
        Err(source) => {
            emit.discard();
            return Err(failure(&name, source));
        }
    };
    skip(
        &mut outcome.report,
        "opencode messages taken back (reverted) after they were imported: kept, and the session goes on in a fork",
    );
    add_report(&mut done.report, &outcome.report);
    let mut staged = emit.staged.take().unwrap_or_else(|| store.stage(clock));
    let events = staged.stats.events;
    let reverts = at.get(meta).and_then(|r| r.get(REVERTS)).and_then(Value::as_u64).unwrap_or(0) + 1;
    let base = outcome.conversations.first().and_then(|c| c.0.clone()).or_else(|| meta.title.clone());
    staged.title = Some(format!("{} (after revert {reverts})", base.as_deref().unwrap_or("session")));
    staged.forked_from = Some(crate::store::ForkedFrom { id: id.clone(), turn });
    let mut source = record(Map::new(), &name, session, &outcome, events);
    source.insert(REVERTS.into(), json!(reverts));
    staged.extra.insert("source".into(), Value::Object(source));
    let project = crate::ops::import::project_value(&outcome.place)
        .or_else(|| meta.extra.get(crate::store::Project::KEY).cloned());
    if let Some(project) = project {
        staged.extra.insert(crate::store::Project::KEY.into(), project);
    }
    if let Some(parent) = meta.extra.get("subagent_of") {
        staged.extra.insert("subagent_of".into(), parent.clone());
    }
    // The conversation the session left: as it was, its record saying where the session went.
    let mut left = meta.clone();
    if let Some(r) = at.get_mut(&mut left) {
        r.insert(WENT_ON_IN.into(), json!(staged.id));
    }
    let appending = store.begin_append(lock, id, clock)?;
    store.batch_append(batch, appending, Some(left));
    let fork_meta = Meta {
        title: staged.title.clone(),
        created: clock.timestamp(),
        forked_from: staged.forked_from.clone(),
        extra: staged.extra.clone(),
    };
    known.insert(session.id.clone(), (staged.id.clone(), fork_meta, At::Source));
    done.started.push((staged.id.clone(), session.id.clone(), events));
    store.batch_make(batch, vec![staged]);
    Ok(())
}

fn add_report(total: &mut Report, one: &Report) {
    total.records += one.records;
    total.compactions += one.compactions;
    for (k, v) in &one.events {
        *total.events.entry(k).or_default() += v;
    }
    for (k, v) in &one.skipped {
        *total.skipped.entry(k.clone()).or_default() += v;
    }
}

/// Where one session's drafts go: a conversation staged for it, or an append to its own.
struct SessionEmit<'a> {
    store: &'a Store,
    lock: &'a crate::store::Lock<'a>,
    clock: &'a Clock,
    staged: Option<Staged>,
    appending: Option<Appending>,
    existing: Option<String>,
}

impl SessionEmit<'_> {
    fn discard(&self) {
        if let Some(s) = &self.staged {
            self.store.discard([s]);
        }
        if let Some(a) = &self.appending {
            self.store.discard_append(a);
        }
    }
}

impl interop::Emit for SessionEmit<'_> {
    fn drafts(&mut self, _: usize, drafts: Vec<Draft>) -> Result<(), StoreError> {
        if drafts.is_empty() {
            return Ok(());
        }
        match &self.existing {
            None => {
                let staged = self.staged.get_or_insert_with(|| self.store.stage(self.clock));
                self.store.stage_drafts(staged, drafts, self.clock)
            }
            Some(id) => {
                let appending = match self.appending.take() {
                    Some(appending) => self.appending.insert(appending),
                    None => self.appending.insert(self.store.begin_append(self.lock, id, self.clock)?),
                };
                self.store.append_more(appending, drafts, self.clock)
            }
        }
    }
}

/// The failure's one-line cause, for a database that is not opencode's.
pub fn is_not_opencode(e: &ImportFailure) -> bool {
    matches!(e, ImportFailure::Database(f) if matches!(f.source, interop::InteropError::Database(DbError::NotOpencode(_))))
}
