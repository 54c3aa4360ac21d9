//! Per-conversation history without walking the whole store.
//!
//! Every commit convo makes carries trailers: `Convo-Id`, the counts after the change, and
//! `Convo-Previous`, the hash of the conversation's previous commit. `log ID` follows that
//! chain, so its cost grows with the conversation's history, not the store's. Commits made
//! by other tools break the chain; there, and when the local cache cannot name the newest
//! commit, a first-parent walk that compares the conversation's tree entry finds it.

use gix::ObjectId;
use serde::Serialize;

use super::{Result, Store, git_err, layout};

/// The machine-readable part of a convo commit message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trailers {
    pub convo_id: Option<String>,
    pub previous: Option<ObjectId>,
    pub turns: Option<u64>,
    pub events: Option<u64>,
    pub tokens: Option<u64>,
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
        out
    }
}

/// One commit as `log` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

impl Store {
    fn log_entry(&self, id: ObjectId) -> Result<(LogEntry, Trailers, Vec<ObjectId>)> {
        let commit = self.repo.find_commit(id).map_err(git_err(format!("read commit {id}")))?;
        let decoded = commit.decode().map_err(git_err(format!("decode commit {id}")))?;
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
        };
        Ok((entry, trailers, parents))
    }

    /// The commits that changed conversation `id`, newest first, at most `limit`.
    pub fn log(&self, id: &str, limit: Option<usize>) -> Result<Vec<LogEntry>> {
        let dir = layout::conversation_dir(id);
        let mut out = Vec::new();
        let mut next = self.last_commit_of(id)?;
        while let Some(commit) = next {
            if limit.is_some_and(|n| out.len() >= n) {
                break;
            }
            let (entry, trailers, parents) = self.log_entry(commit)?;
            out.push(entry);
            next = match (trailers.convo_id.as_deref() == Some(id), trailers.previous) {
                (true, Some(previous)) => Some(previous),
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
            && self.entry_at(self.commit_tree_id(last)?, &dir)? == head_entry
        {
            return Ok(Some(last));
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

    fn commit_exists(&self, id: ObjectId) -> bool {
        self.repo.find_commit(id).is_ok()
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
        };
        let message = format!("append: \"x\" turn 2 (+3 events)\n\n{}", t.render());
        assert_eq!(Trailers::parse(&message), t);
    }

    #[test]
    fn a_message_without_trailers_has_none() {
        assert_eq!(Trailers::parse("fix typo\n\nsome body text"), Trailers::default());
    }
}
