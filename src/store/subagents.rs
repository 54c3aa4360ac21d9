//! Which conversations go with a removed one: the subagents' work convo captured here.
//!
//! An import writes a subagent's conversation with `subagent_of: PARENT` in its `meta.json`,
//! and `convo rm PARENT` takes it along. But `meta.json` is content: a pull brings whatever
//! anyone who can push wrote, and a `subagent_of` naming one of our conversations would let
//! outside data choose what our `rm` deletes (and, once pushed, deletes for everyone). So
//! convo also notes each link it writes itself in `.git/convo/subagents` (local, never
//! committed or pushed; one `SUBAGENT PARENT` line each, appended), and `rm` follows a link
//! only when that file vouches for it. Others are kept and said, as `git rm` removes only
//! what it was named: a clone (or a store whose links predate the file) keeps its
//! subagents' conversations until they are named by id.

use std::collections::HashSet;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use super::{Result, Store, create_private_dir, io_err};

/// What goes with conversations when they are removed (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subagents {
    /// Subagents' conversations captured here, of those named and of each other, oldest
    /// first: removed with them.
    pub captured: Vec<String>,
    /// Conversations whose `meta.json` names one of them as its parent but that convo did not
    /// capture here (a pull brought the claim, or it predates the record), oldest first:
    /// kept.
    pub claimed: Vec<String>,
}

impl Store {
    /// `.git/convo/subagents`: the subagent links this store's imports wrote.
    fn subagent_record_path(&self) -> PathBuf {
        self.state_dir().join("subagents")
    }

    /// Note that convo writes conversation `subagent` as subagent work in `parent`, before
    /// the commit that writes it: a note for a commit that never lands vouches for a link
    /// no tree states.
    pub(super) fn record_subagents(&self, links: &[(String, String)]) -> Result<()> {
        if links.is_empty() {
            return Ok(());
        }
        let dir = self.state_dir();
        create_private_dir(&dir)?;
        let path = self.subagent_record_path();
        let text: String = links.iter().map(|(subagent, parent)| format!("{subagent} {parent}\n")).collect();
        // One write on an O_APPEND file: concurrent notes do not interleave.
        let mut file = open_record(&path, true).map_err(io_err(&path))?;
        file.write_all(text.as_bytes()).map_err(io_err(&path))
    }

    /// The links the record vouches for, as `(subagent, parent)`. No record: none.
    fn recorded_subagents(&self) -> Result<HashSet<(String, String)>> {
        let path = self.subagent_record_path();
        let mut text = String::new();
        match open_record(&path, false) {
            Ok(mut file) => file.read_to_string(&mut text).map_err(io_err(&path))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
            Err(e) => return Err(io_err(&path)(e)),
        };
        Ok(text
            .lines()
            .filter_map(|line| line.split_once(' '))
            .map(|(subagent, parent)| (subagent.to_owned(), parent.to_owned()))
            .collect())
    }

    /// The conversations that are subagents' work in `ids` (and in theirs, and so on), not
    /// among `ids`: those captured here go with them when they are removed, the others are
    /// only claimed.
    pub fn subagents_of(&self, ids: &[String]) -> Result<Subagents> {
        let summaries = self.summaries()?;
        let recorded = self.recorded_subagents()?;
        let mut family: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let mut found = Subagents::default();
        let mut claimed: HashSet<&str> = HashSet::new();
        // Until no conversation joins: a subagent's own subagents go too.
        loop {
            let joining: Vec<&super::Summary> = summaries
                .iter()
                .filter(|s| !family.contains(s.id.as_str()))
                .filter(|s| s.subagent_of.as_deref().is_some_and(|p| family.contains(p)))
                .collect();
            let (vouched, unvouched): (Vec<&super::Summary>, Vec<&super::Summary>) =
                joining.into_iter().partition(|s| {
                    s.subagent_of.as_ref().is_some_and(|parent| recorded.contains(&(s.id.clone(), parent.clone())))
                });
            claimed.extend(unvouched.iter().map(|s| s.id.as_str()));
            if vouched.is_empty() {
                break;
            }
            for s in vouched {
                family.insert(&s.id);
                found.captured.push(s.id.clone());
            }
        }
        found.claimed = summaries.iter().filter(|s| claimed.contains(s.id.as_str())).map(|s| s.id.clone()).collect();
        Ok(found)
    }
}

/// The record at `path`, never through a symlink and only if it is a regular file (as the
/// journal: a planted link must not aim an append anywhere else); appended to when `append`.
fn open_record(path: &Path, append: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = if append { super::txn::private_options() } else { std::fs::OpenOptions::new() };
    let file = options.read(true).append(append).custom_flags(libc::O_NOFOLLOW).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok(file)
}
