//! Per-conversation history without walking the whole store.
//!
//! Every commit convo makes carries trailers: `Convo-Id`, the counts after the change, and
//! `Convo-Previous`, the hash of the conversation's previous commit. `log ID` follows that
//! chain, so its cost grows with the conversation's history, not the store's. Commits made
//! by other tools break the chain; there, and when the local cache cannot name the newest
//! commit, a first-parent walk that compares the conversation's tree entry finds it.
//!
//! On top of the chain sits a local index, `.git/convo/log/<id>.jsonl`: one line per commit,
//! appended by each write, so `log ID` reads one small file instead of inflating every
//! commit. It is disposable: if its newest line is not the conversation's newest commit, it
//! is rebuilt from the chain.

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::{Result, Store, git_err, layout};

/// The machine-readable part of a convo commit message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trailers {
    pub convo_id: Option<String>,
    pub previous: Option<ObjectId>,
    pub turns: Option<u64>,
    pub events: Option<u64>,
    pub tokens: Option<u64>,
    /// The compaction event this commit added.
    pub compaction: Option<String>,
    /// For a merge: each conversation it brought in, and that conversation's previous commit.
    pub merged: Vec<(String, ObjectId)>,
    /// For a commit that appends to several conversations (`import DIR`): each one, its
    /// previous commit, and its counts after the change.
    pub appended: Vec<Appended>,
}

/// One conversation a commit appended to among others: `Convo-Appended: ID PREVIOUS TURNS
/// EVENTS TOKENS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    pub id: String,
    pub previous: ObjectId,
    pub counts: Option<(u64, u64, u64)>,
}

impl Trailers {
    pub fn parse(message: &str) -> Trailers {
        let mut t = Trailers::default();
        let last_paragraph = message.trim_end().rsplit("\n\n").next().unwrap_or("");
        for line in last_paragraph.lines() {
            let Some((key, value)) = line.split_once(": ") else {
                continue;
            };
            let value = value.trim();
            match key {
                "Convo-Id" => t.convo_id = Some(value.to_owned()),
                "Convo-Previous" => t.previous = ObjectId::from_hex(value.as_bytes()).ok(),
                "Convo-Turns" => t.turns = value.parse().ok(),
                "Convo-Events" => t.events = value.parse().ok(),
                "Convo-Tokens" => t.tokens = value.parse().ok(),
                "Convo-Compaction" => t.compaction = Some(value.to_owned()),
                "Convo-Merged" => {
                    if let Some((id, commit)) = value.split_once(' ')
                        && let Ok(commit) = ObjectId::from_hex(commit.trim().as_bytes())
                    {
                        t.merged.push((id.to_owned(), commit));
                    }
                }
                "Convo-Appended" => {
                    let words: Vec<&str> = value.split_whitespace().collect();
                    if let [id, previous, rest @ ..] = words.as_slice()
                        && let Ok(previous) = ObjectId::from_hex(previous.as_bytes())
                    {
                        let counts = match rest {
                            [turns, events, tokens] => turns
                                .parse()
                                .ok()
                                .zip(events.parse().ok())
                                .zip(tokens.parse().ok())
                                .map(|((a, b), c)| (a, b, c)),
                            _ => None,
                        };
                        t.appended.push(Appended { id: (*id).to_owned(), previous, counts });
                    }
                }
                _ => {}
            }
        }
        t
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(id) = &self.convo_id {
            out += &format!("Convo-Id: {id}\n");
        }
        if let Some(previous) = &self.previous {
            out += &format!("Convo-Previous: {previous}\n");
        }
        if let Some(turns) = self.turns {
            out += &format!("Convo-Turns: {turns}\n");
        }
        if let Some(events) = self.events {
            out += &format!("Convo-Events: {events}\n");
        }
        if let Some(tokens) = self.tokens {
            out += &format!("Convo-Tokens: {tokens}\n");
        }
        if let Some(compaction) = &self.compaction {
            out += &format!("Convo-Compaction: {compaction}\n");
        }
        for a in &self.appended {
            match a.counts {
                Some((turns, events, tokens)) => {
                    out += &format!("Convo-Appended: {} {} {turns} {events} {tokens}\n", a.id, a.previous);
                }
                None => out += &format!("Convo-Appended: {} {}\n", a.id, a.previous),
            }
        }
        out
    }
}

/// One commit as `log` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub commit: String,
    /// Committer time, RFC 3339.
    pub date: String,
    pub author: String,
    pub subject: String,
    pub conversation: Option<String>,
    pub turns: Option<u64>,
    pub events: Option<u64>,
    /// Estimated tokens after the change, characters / 4.
    pub tokens: Option<u64>,
    /// The compaction this commit added, if it is a compaction.
    pub compaction: Option<String>,
    /// Set by callers who know the compaction was later withdrawn.
    #[serde(default)]
    pub undone: bool,
    /// Who and what made the events the commit added, set by [`attribute`]: the events
    /// are the source, so a rewritten history (`redact`) still says it.
    #[serde(default, flatten)]
    pub who: crate::event::who::Who,
}

/// Name on each of `entries` (one conversation's log, newest first) who and what made the
/// events it added: those between the count after the commit before it and its own
/// (`counts`, one per entry: the entry's `events`, or what the caller found where the commit
/// says none), of the conversation's `events`. `whole`: the oldest entry is the
/// conversation's first commit (its events start at 0); else the oldest is left unnamed.
pub fn attribute(entries: &mut [LogEntry], counts: &[Option<u64>], events: &[crate::event::Event], whole: bool) {
    for (i, entry) in entries.iter_mut().enumerate() {
        let before = match counts.get(i + 1) {
            Some(before) => *before,
            None if whole => Some(0),
            None => None,
        };
        if let (Some(from), Some(Some(to))) = (before, counts.get(i))
            && let Some(added) = events.get(from as usize..(*to as usize).min(events.len()))
        {
            entry.who = crate::event::who::Who::of(added);
        }
    }
}

impl Store {
    /// [`Store::log_entry`], as conversation `conversation`'s log shows it: a commit that
    /// appended to it among others names it, with its counts.
    fn log_entry_of(&self, id: ObjectId, conversation: &str) -> Result<(LogEntry, Trailers, Vec<ObjectId>)> {
        let (mut entry, trailers, parents) = self.log_entry(id)?;
        if entry.conversation.is_none()
            && let Some(a) = trailers.appended.iter().find(|a| a.id == conversation)
        {
            entry.conversation = Some(a.id.clone());
            if let Some((turns, events, tokens)) = a.counts {
                (entry.turns, entry.events, entry.tokens) = (Some(turns), Some(events), Some(tokens));
            }
        }
        Ok((entry, trailers, parents))
    }

    fn log_entry(&self, id: ObjectId) -> Result<(LogEntry, Trailers, Vec<ObjectId>)> {
        let data = self.object_data(id, gix::objs::Kind::Commit)?;
        let decoded =
            gix::objs::CommitRef::from_bytes(&data, id.kind()).map_err(git_err(format!("decode commit {id}")))?;
        let message = decoded.message.to_string();
        let trailers = Trailers::parse(&message);
        let committer = decoded.committer().map_err(git_err(format!("read committer of {id}")))?;
        let time = committer.time().map_err(git_err(format!("read time of {id}")))?;
        let date = chrono::DateTime::from_timestamp(time.seconds, 0)
            .zip(chrono::FixedOffset::east_opt(time.offset))
            .map(|(utc, offset)| utc.with_timezone(&offset).to_rfc3339())
            .unwrap_or_default();
        let author = decoded.author().map(|a| format!("{} <{}>", a.name, a.email)).unwrap_or_default();
        let parents: Vec<ObjectId> = decoded.parents().collect();
        let entry = LogEntry {
            commit: id.to_string(),
            date,
            author,
            subject: message.lines().next().unwrap_or("").to_owned(),
            conversation: trailers.convo_id.clone(),
            turns: trailers.turns,
            events: trailers.events,
            tokens: trailers.tokens,
            compaction: trailers.compaction.clone(),
            undone: false,
            who: Default::default(),
        };
        Ok((entry, trailers, parents))
    }

    /// The commits that changed conversation `id`, newest first, at most `limit`.
    pub fn log(&self, id: &str, limit: Option<usize>) -> Result<Vec<LogEntry>> {
        let newest = self.last_commit_of(id)?;
        let mut entries = match self.read_log_index(id) {
            Some(entries) if entries.last().map(|e| e.commit.as_str()) == newest.map(|c| c.to_string()).as_deref() => {
                entries
            }
            _ => {
                let mut entries = self.walk_log(id, newest)?;
                entries.reverse();
                self.write_log_index(id, &entries);
                entries
            }
        };
        entries.reverse();
        if let Some(n) = limit {
            entries.truncate(n);
        }
        Ok(entries)
    }

    /// The conversation's commits from `newest` back, following the trailer chain.
    fn walk_log(&self, id: &str, newest: Option<ObjectId>) -> Result<Vec<LogEntry>> {
        // The conversation whose chain is followed: a fork made by a merge (both sides had
        // appended) holds another id's events, and its history continues in that id's chain.
        let mut following = id.to_owned();
        let mut dir = layout::conversation_dir(id);
        let mut out = Vec::new();
        let mut next = newest;
        while let Some(commit) = next {
            let (entry, trailers, parents) = self.log_entry_of(commit, &following)?;
            out.push(entry);
            let mut merged = trailers.merged.iter().find(|(c, _)| *c == following).map(|(_, commit)| *commit);
            // The side the fork came from has no folder of that name: switch to its source
            // (named in its metadata), wherever the hop lands (a convo commit or not).
            if let Some(target) = merged
                && following == id
                && self.entry_at(self.commit_tree_id(target)?, &dir)?.is_none()
            {
                match self.meta(id).ok().and_then(|m| m.forked_from) {
                    Some(source) => {
                        following = source.id;
                        dir = layout::conversation_dir(&following);
                    }
                    None => merged = None,
                }
            }
            let appended = trailers.appended.iter().find(|a| a.id == following).map(|a| a.previous);
            next = match (trailers.convo_id.as_deref() == Some(following.as_str()), trailers.previous) {
                (true, Some(previous)) => Some(previous),
                // A merge that brought this conversation in: continue on the side it came from.
                _ if merged.is_some() => merged,
                // One of several conversations a commit appended to.
                _ if appended.is_some() => appended,
                // The first commit of the conversation, or a commit outside convo's chain:
                // ask the tree which commit before it touched the conversation.
                _ => match parents.first() {
                    Some(parent) => self.newest_change(*parent, &dir)?,
                    None => None,
                },
            };
        }
        Ok(out)
    }

    fn log_index_path(&self, id: &str) -> std::path::PathBuf {
        self.state_dir().join("log").join(format!("{id}.jsonl"))
    }

    /// The index, oldest first; `None` if missing or unreadable.
    fn read_log_index(&self, id: &str) -> Option<Vec<LogEntry>> {
        let text = std::fs::read_to_string(self.log_index_path(id)).ok()?;
        text.lines().map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// Best effort, like every cache: a store we cannot write still answers.
    fn write_log_index(&self, id: &str, oldest_first: &[LogEntry]) {
        let text: String =
            oldest_first.iter().filter_map(|e| serde_json::to_string(e).ok()).map(|l| l + "\n").collect();
        if super::create_private_dir(&self.state_dir().join("log")).is_ok() {
            let _ = super::txn::write_private_file(&self.state_dir(), &self.log_index_path(id), text.as_bytes());
        }
    }

    /// Record commit `commit` of conversation `id` in its log index, if the index is up to
    /// date with the commit before it; otherwise drop the index so the next read rebuilds it.
    pub(super) fn record_log(&self, id: &str, commit: ObjectId, previous: Option<ObjectId>) {
        use std::io::{Read, Seek, SeekFrom, Write};
        let path = self.log_index_path(id);
        let Ok((entry, _, _)) = self.log_entry_of(commit, id) else { return };
        let Ok(line) = serde_json::to_string(&entry) else { return };
        let Some(previous) = previous else {
            // A new conversation: its index starts here.
            self.write_log_index(id, &[entry]);
            return;
        };
        let up_to_date = std::fs::File::open(&path).ok().and_then(|mut f| {
            // Only the last line matters: read the tail.
            let len = f.metadata().ok()?.len();
            f.seek(SeekFrom::Start(len.saturating_sub(4096))).ok()?;
            let mut tail = String::new();
            f.read_to_string(&mut tail).ok()?;
            let last: LogEntry = serde_json::from_str(tail.lines().last()?).ok()?;
            Some(ObjectId::from_hex(last.commit.as_bytes()).ok() == Some(previous))
        });
        if up_to_date == Some(true)
            && let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(&path)
            && f.write_all(format!("{line}\n").as_bytes()).is_ok()
        {
            return;
        }
        let _ = std::fs::remove_file(&path);
    }

    /// Every commit of the store, newest first (first parents only, as `git log --first-parent`).
    pub fn log_all(&self, limit: Option<usize>) -> Result<Vec<LogEntry>> {
        let mut out = Vec::new();
        let mut next = self.head_commit_id()?;
        while let Some(commit) = next {
            if limit.is_some_and(|n| out.len() >= n) {
                break;
            }
            let (entry, _, parents) = self.log_entry(commit)?;
            out.push(entry);
            next = parents.first().copied();
        }
        Ok(out)
    }

    /// The newest commit at or before `start` whose tree entry for `path` differs from its
    /// first parent's. A walk of history: only for when the trailer chain cannot answer.
    pub(super) fn newest_change(&self, start: ObjectId, path: &str) -> Result<Option<ObjectId>> {
        let entry = self.entry_at(self.commit_tree_id(start)?, path)?;
        if entry.is_none() {
            return Ok(None);
        }
        let mut commit = start;
        loop {
            let parent = {
                let c = self.repo.find_commit(commit).map_err(git_err(format!("read commit {commit}")))?;
                c.parent_ids().next().map(|p| p.detach())
            };
            match parent {
                Some(parent) if self.entry_at(self.commit_tree_id(parent)?, path)? == entry => commit = parent,
                _ => return Ok(Some(commit)),
            }
        }
    }

    /// The newest commit that changed conversation `id`: from the local cache when it still
    /// describes HEAD, else by walking history.
    pub(super) fn last_commit_of(&self, id: &str) -> Result<Option<ObjectId>> {
        let Some(head) = self.head_commit_id()? else {
            return Ok(None);
        };
        let dir = layout::conversation_dir(id);
        let head_entry = self.entry_at(self.commit_tree_id(head)?, &dir)?;
        if let Some(cache) = self.read_cache(id)
            && Some(cache.tree) == head_entry
            && let Some(last) = cache.last_commit
            && self.commit_exists(last)
        {
            // The commit must still hold the conversation as HEAD does: checked by the
            // `conversations` tree recorded with it (trees never change, so that one holds
            // the conversation as the cache says), else by looking the conversation up.
            let root = self.commit_tree_id(last)?;
            let holds = match cache.conversations_at_last {
                Some(conversations) => self.entry_at(root, layout::CONVERSATIONS)? == Some(conversations),
                None => self.entry_at(root, &dir)? == head_entry,
            };
            if holds {
                return Ok(Some(last));
            }
        }
        let found = self.newest_change(head, &dir)?;
        if let Some(mut cache) = self.read_cache(id)
            && Some(cache.tree) == head_entry
        {
            cache.last_commit = found;
            self.write_cache(id, &cache);
        }
        Ok(found)
    }

    /// The commit that added event `event` to conversation `id`, from the trees alone (a
    /// first-parent walk over the history of the segment holding it): the newest commit
    /// whose segment holds the event while its first parent's does not. Commit messages are
    /// not asked, so a pulled commit cannot claim an event it did not add. `None`: the
    /// conversation holds no such event.
    pub fn commit_adding(&self, id: &str, event: &str) -> Result<Option<ObjectId>> {
        let Some(head) = self.head_commit_id()? else { return Ok(None) };
        let holds = |blob: ObjectId, path: &str| -> Result<bool> {
            Ok(self.parse_segment(path, blob)?.iter().any(|e| e.id == event))
        };
        // The newest segments first: an event named by a compaction is usually recent.
        let mut found = None;
        for (path, blob) in self.segments(id)?.into_iter().rev() {
            if holds(blob, &path)? {
                found = Some(path);
                break;
            }
        }
        let Some(path) = found else { return Ok(None) };
        let mut commit = self.newest_change(head, &path)?;
        while let Some(c) = commit {
            let Some(parent) = self.first_parent(c)? else { return Ok(Some(c)) };
            match self.entry_at(self.commit_tree_id(parent)?, &path)? {
                Some(blob) if holds(blob, &path)? => commit = self.newest_change(parent, &path)?,
                _ => return Ok(Some(c)),
            }
        }
        Ok(None)
    }

    fn commit_exists(&self, id: ObjectId) -> bool {
        // A loose object's `stat` answers without reading it. Not the memo: a long-running
        // `watch` keeps its store for hours, and a remembered object can be pruned since.
        self.repo.objects.exists_without_refresh(&id) || self.repo.find_commit(id).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_round_trip() {
        let t = Trailers {
            convo_id: Some("01ABC".into()),
            previous: Some(ObjectId::null(gix::hash::Kind::Sha1)),
            turns: Some(3),
            events: Some(9),
            tokens: Some(120),
            compaction: Some("01C".into()),
            merged: Vec::new(),
            appended: vec![
                Appended {
                    id: "01D".into(),
                    previous: ObjectId::null(gix::hash::Kind::Sha1),
                    counts: Some((3, 9, 120)),
                },
                Appended { id: "01E".into(), previous: ObjectId::null(gix::hash::Kind::Sha1), counts: None },
            ],
        };
        let message = format!("append: \"x\" turn 2 (+3 events)\n\n{}", t.render());
        assert_eq!(Trailers::parse(&message), t);
    }

    #[test]
    fn a_message_without_trailers_has_none() {
        assert_eq!(Trailers::parse("fix typo\n\nsome body text"), Trailers::default());
    }
}
