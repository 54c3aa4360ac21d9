//! The catalogue: every conversation's summary (title, counts, times, relationships, where
//! its session ran) in one local file, so `list`, title resolution and completions read one file instead of a
//! `meta.json` and a cache file per conversation.
//!
//! `.git/convo/catalogue` holds one line per conversation, `<id>\t<tree>\t<entry JSON>`, where
//! `<tree>` is the id of the conversation's tree the entry was computed from. A line counts
//! only while HEAD's tree holds that conversation at exactly that tree id, so whatever moved
//! HEAD (a pull, `git reset`, a redact, another convo version) can cause a recount, never
//! a wrong answer. Later lines win over earlier ones for the same id.
//!
//! Writers append a line for each conversation they changed, under the store's lock; a
//! reader that finds lines missing or stale computes them (from the per-conversation
//! cache, else the events) and appends them too. Each batch is one `write(2)` on an
//! `O_APPEND` file, so concurrent appends do not interleave; a line torn by a crash has no
//! newline, and the next appender ends it with a tab, so it reads as lines run together
//! (a tab in the JSON), which readers ignore. When the
//! file holds far more lines than conversations it is rewritten whole (atomically). Deleting
//! it loses nothing. A line an older convo wrote has no `project` or no `who`: it counts as
//! missing, so the first reader computes it again (not believed to say "unknown", or that
//! nobody took part).
//!
//! A last line `#\t<tree>` (the marker) certifies that the file describes exactly the
//! conversations of that `conversations` tree. A reader's full pass writes it; a writer that
//! changed one conversation moves it along when it stood at the commit's parent. While it
//! names HEAD's tree, a title lookup needs neither the folder's listing nor a parse of any
//! line but those holding the title: the lookup by title costs about what one by id does.
//!
//! `.git/convo/titles` is the same file cut to what a title lookup reads: `<id>\t\t{"title":
//! ...}` lines and the same markers, a quarter of the catalogue's bytes (at 10,000
//! conversations, reading 2.5 MB cost a lookup by title a quarter more than one by id).
//! Writers append to it as to the catalogue, but move its marker only when its own last
//! line certifies the commit's parent, so a line that did not make it into one file never
//! lets the other be believed. A full pass that finds it certifying anything but HEAD
//! writes it whole from the catalogue's entries.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::cache::Cache;
use super::{ForkedFrom, Meta, Project, Result, Store, Summary, layout, txn::write_private_file};
use crate::event::Stats;
use crate::event::who::Who;

const FILE: &str = "catalogue";
/// How a line this convo wrote ends ([`Entry::turn_rule`]).
static TURN_RULE_END: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!(",\"turn_rule\":{}}}", Stats::TURN_RULE));
const TITLES: &str = "titles";

/// A catalogue entry's title alone: what a line of the titles file holds, and all a title
/// lookup parses of a catalogue line.
#[derive(Serialize, Deserialize)]
struct TitleOnly {
    title: Option<String>,
}

/// The titles file's line for a catalogue entry's JSON.
fn title_line(id: &str, json: &str) -> Option<String> {
    let TitleOnly { title } = serde_json::from_str(json).ok()?;
    Some(format!("{id}\t\t{}\n", serde_json::to_string(&TitleOnly { title }).ok()?))
}

/// What a line stores besides its id and tree; the fields of [`Summary`].
#[derive(Serialize, Deserialize)]
struct Entry {
    title: Option<String>,
    created: String,
    updated: String,
    stats: Stats,
    subagent_of: Option<String>,
    forked_from: Option<ForkedFrom>,
    /// Where the session ran; absent from a line an older convo wrote, which then says
    /// nothing about it (its summary is computed from `meta.json` instead).
    #[serde(default)]
    project: Option<Project>,
    /// The people, agents and models of its events, so `list --format json` reads none;
    /// absent from a line an older convo wrote (or one whose writer did not know them),
    /// which then counts as missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    who: Option<Who>,
    /// [`Stats::TURN_RULE`] of `stats`: a line counted under another rule (an older convo's)
    /// counts as missing. The entry's last key.
    #[serde(default)]
    turn_rule: u32,
}

impl Entry {
    fn of(meta: Meta, cache: &Cache) -> Entry {
        Entry {
            project: Some(Project::of(&meta)),
            title: meta.title,
            updated: cache.updated.clone().unwrap_or_else(|| meta.created.clone()),
            created: meta.created,
            stats: cache.stats,
            subagent_of: meta.extra.get("subagent_of").and_then(|v| v.as_str()).map(str::to_owned),
            forked_from: meta.forked_from,
            who: cache.who.clone(),
            turn_rule: Stats::TURN_RULE,
        }
    }

    /// `None` for a line without the project or who took part, or counted under another
    /// turn rule (an older convo's).
    fn into_summary(self, id: &str) -> Option<Summary> {
        if self.turn_rule != Stats::TURN_RULE {
            return None;
        }
        Some(Summary {
            project: self.project?,
            who: self.who?,
            id: id.to_owned(),
            title: self.title,
            created: self.created,
            updated: self.updated,
            tokens: self.stats.tokens(),
            stats: self.stats,
            subagent_of: self.subagent_of,
            forked_from: self.forked_from,
        })
    }

    fn line(&self, id: &str, tree: ObjectId) -> Option<String> {
        let json = serde_json::to_string(self).ok()?;
        Some(format!("{id}\t{tree}\t{json}\n"))
    }
}

/// The catalogue as it stands for HEAD: every conversation's id and entry JSON, in id
/// order. The JSON is borrowed from the file's text or from the lines computed now, so
/// reading 10,000 lines copies none of them.
pub(super) struct Fresh {
    text: String,
    added: String,
    /// `(id, in added?, span of the JSON)`.
    entries: Vec<(String, bool, std::ops::Range<usize>)>,
}

impl Fresh {
    fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(id, added, span)| {
            let buffer = if *added { &self.added } else { &self.text };
            (id.as_str(), &buffer[span.clone()])
        })
    }

    fn parse(id: &str, json: &str) -> Option<Summary> {
        serde_json::from_str::<Entry>(json).ok().and_then(|e| e.into_summary(id))
    }
}

impl Store {
    fn catalogue_path(&self) -> PathBuf {
        self.state_dir().join(FILE)
    }

    /// Every conversation at HEAD as `list` shows it, oldest first.
    pub fn summaries(&self) -> Result<Vec<Summary>> {
        let fresh = self.catalogue()?;
        let mut out = Vec::with_capacity(fresh.entries.len());
        for (id, json) in fresh.entries() {
            match Fresh::parse(id, json) {
                Some(summary) => out.push(summary),
                // Written by this version a moment ago; unreadable only if the file was
                // edited between our read and now, or written by an older convo (no
                // project, no who): compute it the slow way.
                None => out.push(self.summary(id)?),
            }
        }
        Ok(out)
    }

    /// Ids of the conversations titled exactly `title`, oldest first. Only lines whose
    /// JSON holds the title as serde_json spells it are parsed: those of the titles file
    /// when it certifies HEAD, else of a full pass (which writes the titles file again).
    pub(super) fn titled(&self, title: &str) -> Result<Vec<String>> {
        let needle = format!("\"title\":{}", serde_json::to_string(title).unwrap_or_default());
        if let Some((file, len)) = self.complete(&self.titles_path())? {
            return Ok(titled_in(std::io::Read::take(file, len), &needle, title));
        }
        let fresh = self.catalogue()?;
        let mut ids = Vec::new();
        for (id, json) in fresh.entries() {
            let matches = match serde_json::from_str::<TitleOnly>(json) {
                Ok(entry) => json.contains(&needle) && entry.title.as_deref() == Some(title),
                // Edited between the full pass and now: ask the conversation, as `list` does.
                Err(_) => self.summary(id)?.title.as_deref() == Some(title),
            };
            if matches {
                ids.push(id.to_owned());
            }
        }
        Ok(ids)
    }

    /// Record what a writer just committed for conversation `id` (its new tree and counts).
    /// Best effort: a line that does not make it is computed by the next reader.
    ///
    /// `alone`: the commit changed only conversation `id`. Then a file that was complete
    /// for the commit's parent is complete for the commit once this line is in, so the line
    /// goes in with the new marker; otherwise the caller refreshes both files afterwards.
    pub(super) fn catalogue_note(&self, id: &str, cache: &Cache, alone: bool) {
        let Ok(meta) = self.meta_of(cache.tree, id) else { return };
        let entry = Entry::of(meta, cache);
        let Some(line) = entry.line(id, cache.tree) else { return };
        let Some(titled) = serde_json::to_string(&TitleOnly { title: entry.title }).ok() else { return };
        let titled = format!("{id}\t\t{titled}\n");
        // A commit that changed other conversations too certifies nothing here: its caller
        // refreshes both files once every line is in.
        let trees = alone.then(|| self.head_commit_id().ok().flatten()).flatten().and_then(|head| {
            let parent = self.first_parent(head).ok()?;
            Some((self.conversations_tree(Some(head)).ok()??, self.conversations_tree(parent).ok()?))
        });
        note_to(&self.catalogue_path(), &line, trees);
        note_to(&self.titles_path(), &titled, trees);
        if let Some((now, before)) = trees {
            self.ids_moved(before, now, id);
        }
    }

    /// The catalogue or titles file at `path`, open, and how many of its bytes to read,
    /// when its last line is the marker of HEAD's `conversations` tree: then those bytes
    /// describe exactly HEAD's conversations (the latest line of each id). Lines a writer
    /// appends later are left unread.
    fn complete(&self, path: &std::path::Path) -> Result<Option<(std::fs::File, u64)>> {
        use std::os::unix::fs::FileExt as _;
        let Some(now) = self.conversations_tree(self.head_commit_id()?)? else { return Ok(None) };
        let Ok(file) = std::fs::File::open(path) else { return Ok(None) };
        let Ok(len) = file.metadata().map(|m| m.len()) else { return Ok(None) };
        let expected = marker(now);
        let mut tail = vec![0; expected.len() + 1];
        let from = len.saturating_sub(tail.len() as u64);
        let Ok(n) = file.read_at(&mut tail, from) else { return Ok(None) };
        let tail = &tail[..n];
        // The marker, as a whole line.
        let complete =
            tail.ends_with(expected.as_bytes()) && (n == expected.len() && from == 0 || tail.first() == Some(&b'\n'));
        Ok(complete.then_some((file, len)))
    }

    /// The id of the `conversations` folder in `commit`'s tree.
    pub(super) fn conversations_tree(&self, commit: Option<ObjectId>) -> Result<Option<ObjectId>> {
        let Some(commit) = commit else { return Ok(None) };
        let root = self.commit_tree_id(commit)?;
        let data = self.object_data(root, gix::objs::Kind::Tree)?;
        Ok(Store::entry_in(&data, layout::CONVERSATIONS).filter(|(_, is_tree)| *is_tree).map(|(id, _)| id))
    }

    /// Bring the catalogue in step with HEAD after a writer that changed many
    /// conversations (an import, a pull, a removal). Best effort, like every cache.
    pub(super) fn catalogue_refresh(&self) {
        let _ = self.catalogue();
        if let Ok(Some(dir)) = self.head_commit_id().and_then(|head| self.conversations_tree(head)) {
            self.ids_refresh(dir);
        }
    }

    /// Drop every cache that names commits or trees of a history just replaced (redact's
    /// rewrite): they are disposable and rebuild themselves from HEAD. The catalogue keeps
    /// superseded lines (old titles) until it is rewritten, so it goes whole, and redacted
    /// text is left in no file. The ids file names only ids: it moves along to HEAD.
    pub(super) fn forget_derived(&self) {
        for dir in ["cache", "log", "outline"] {
            let _ = std::fs::remove_dir_all(self.state_dir().join(dir));
        }
        let _ = std::fs::remove_file(self.catalogue_path());
        let _ = std::fs::remove_file(self.titles_path());
        if let Ok(Some(dir)) = self.head_commit_id().and_then(|head| self.conversations_tree(head)) {
            self.ids_refresh(dir);
        }
    }

    fn titles_path(&self) -> PathBuf {
        self.state_dir().join(TITLES)
    }

    /// The catalogue for HEAD: the file's lines that still hold, plus a line computed for
    /// every conversation the file lacks or has stale (appended to the file).
    pub(super) fn catalogue(&self) -> Result<Fresh> {
        // One look at HEAD for the lines and the marker: a writer moving HEAD meanwhile
        // must not get its tree certified by lines computed from the one before.
        let conversations = self.conversations_tree(self.head_commit_id()?)?;
        let at_head = match conversations {
            Some(dir) => self.conversations_in(dir)?,
            None => Vec::new(),
        };
        let bytes = std::fs::read(self.catalogue_path()).unwrap_or_default();
        // Not UTF-8 (a torn write inside a title): start over, rewriting the file whole.
        let (text, damaged) = match String::from_utf8(bytes) {
            Ok(text) => (text, false),
            Err(_) => (String::new(), true),
        };
        // id -> (tree hex, span of the JSON in `text`); later lines win.
        let mut known: HashMap<&str, (&str, std::ops::Range<usize>)> = HashMap::with_capacity(at_head.len());
        let mut lines = 0usize;
        let mut at = 0usize;
        for line in text.split_inclusive('\n') {
            let start = at;
            at += line.len();
            lines += 1;
            let Some(line) = line.strip_suffix('\n') else { continue };
            let mut fields = line.splitn(3, '\t');
            let (Some(id), Some(tree), Some(json)) = (fields.next(), fields.next(), fields.next()) else { continue };
            // serde_json escapes tabs: a tab here is two lines run together by a torn write.
            if json.contains('\t') {
                continue;
            }
            // An older convo's line, without where the session ran or who took part, or with
            // turns counted under another rule: computed again (once, the line it gets then
            // supersedes this one). The rule is the entry's last key, who the one before and
            // the project before that, so looked for from the end; none can occur inside a
            // JSON string, whose quotes are escaped.
            if !json.ends_with(TURN_RULE_END.as_str())
                || json.rfind(",\"who\":").is_none()
                || json.rfind(",\"project\":").is_none()
            {
                continue;
            }
            let json_start = start + id.len() + tree.len() + 2;
            known.insert(id, (tree, json_start..json_start + json.len()));
        }
        let mut entries = Vec::with_capacity(at_head.len());
        let mut added = String::new();
        for (id, tree) in &at_head {
            match known.get(id.as_str()) {
                Some((t, span)) if ObjectId::from_hex(t.as_bytes()).is_ok_and(|t| t == *tree) => {
                    entries.push((id.clone(), false, span.clone()))
                }
                _ => {
                    let cache = self.cached_stats_in(id, Some(*tree))?;
                    let entry = Entry::of(self.meta_of(*tree, id)?, &cache);
                    if let Some(line) = entry.line(id, *tree) {
                        let json_start = added.len() + id.len() + tree.kind().len_in_hex() + 2;
                        added.push_str(&line);
                        entries.push((id.clone(), true, json_start..added.len() - 1));
                    }
                }
            }
        }
        let trees: HashMap<&str, ObjectId> = at_head.iter().map(|(id, t)| (id.as_str(), *t)).collect();
        // Lines of conversations HEAD no longer has would make the file describe more than
        // HEAD: then, or when superseded lines pile up, it is rewritten.
        let vanished = known.keys().any(|id| !trees.contains_key(id));
        drop(known);
        let fresh = Fresh { text, added, entries };
        let head_marker = conversations.map(marker);
        if damaged || vanished || lines > 2 * at_head.len() + 64 {
            let mut whole = String::new();
            for (id, json) in fresh.entries() {
                whole.push_str(&format!("{id}\t{}\t{json}\n", trees[id]));
            }
            whole.push_str(head_marker.as_deref().unwrap_or_default());
            let _ = write_private_file(&self.state_dir(), &self.catalogue_path(), whole.as_bytes());
        } else if let Some(head_marker) = &head_marker
            && (!fresh.added.is_empty() || !fresh.text.ends_with(head_marker.as_str()))
        {
            // Certified only if no writer appended since the text was read.
            let expected = fresh.text.len() as u64;
            with_file(&self.catalogue_path(), |len, _| {
                let marker = if len == expected { head_marker.as_str() } else { "" };
                format!("{}{marker}", fresh.added)
            });
        }
        // The titles file is written whole when it certifies anything but HEAD, unless HEAD
        // moved since the text was read (a writer then keeps the file in step).
        if let Some(head_marker) = head_marker
            && tail_of(&self.titles_path()).as_deref() != Some(head_marker.as_str())
            && self.head_commit_id().ok().flatten().and_then(|head| self.conversations_tree(Some(head)).ok())
                == Some(conversations)
            // Every entry must give its line: a file missing one must not be certified.
            && let Some(lines) = fresh.entries().map(|(id, json)| title_line(id, json)).collect::<Option<Vec<_>>>()
        {
            let mut titles = lines.concat();
            titles.push_str(&head_marker);
            let _ = write_private_file(&self.state_dir(), &self.titles_path(), titles.as_bytes());
        }
        Ok(fresh)
    }
}

/// Append `line` to the catalogue or titles file at `path`, with the marker of `now` after
/// it when the file's last line is the marker of `before` (`None`: the file is empty, as
/// before the store's first conversation): a file that certified the parent certifies the
/// commit once this line is in.
fn note_to(path: &std::path::Path, line: &str, trees: Option<(ObjectId, Option<ObjectId>)>) {
    with_file(path, |len, tail| {
        let certifies = match trees {
            Some((_, Some(before))) => tail == Some(marker(before).as_str()),
            Some((_, None)) => len == 0,
            None => false,
        };
        match trees {
            Some((now, _)) if certifies => format!("{line}{}", marker(now)),
            _ => line.to_owned(),
        }
    });
}

/// Append what `make` returns (whole lines) to the file at `path` in one write, `make`
/// seeing the file's length and last line as they are then. The look and the write go
/// through one open file under its `flock`: two appenders cannot both judge the same last
/// line, and a reader renaming a rewritten file into place meanwhile leaves this write in
/// the file it replaced, so the new file certifies the reader's tree (not HEAD's, which
/// moved) and is not believed.
pub(super) fn with_file(path: &std::path::Path, make: impl FnOnce(u64, Option<&str>) -> String) {
    let Ok(mut file) = super::txn::private_options().create(true).read(true).append(true).open(path) else {
        return;
    };
    if file.lock().is_err() {
        return;
    }
    let Ok(len) = file.metadata().map(|m| m.len()) else { return };
    let (tail, torn) = tail_in(&file, len);
    let bytes = make(len, tail.as_deref());
    // A line torn by a crash has no newline: end it with a tab first, so it cannot run
    // into (and take down) the line written now, nor pass for a line (a tab in a line's
    // JSON marks lines run together, which readers skip).
    let mut batch = Vec::with_capacity(bytes.len() + 2);
    if torn {
        batch.extend_from_slice(b"\t\n");
    }
    batch.extend_from_slice(bytes.as_bytes());
    let _ = file.write_all(&batch);
}

/// The last line of `file` (`len` bytes), with its newline, and whether the file ends in
/// a torn line (no newline).
fn tail_in(file: &std::fs::File, len: u64) -> (Option<String>, bool) {
    use std::os::unix::fs::FileExt as _;
    let from = len.saturating_sub(128);
    let mut tail = vec![0; (len - from) as usize];
    let Ok(()) = file.read_exact_at(&mut tail, from) else { return (None, false) };
    let torn = tail.last().is_some_and(|b| *b != b'\n');
    // The window may begin inside a character of an earlier line: only the last line is
    // decoded.
    let Some(body) = tail.strip_suffix(b"\n") else { return (None, torn) };
    let start = memchr::memrchr(b'\n', body).map_or(0, |i| i + 1);
    let line = (start > 0 || from == 0).then(|| String::from_utf8(tail[start..].to_vec()).ok()).flatten();
    (line, torn)
}

/// The last line of the file at `path`, with its newline.
fn tail_of(path: &std::path::Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    tail_in(&file, len).0
}

/// The line that says the lines before it describe exactly the conversations of one
/// `conversations` tree (not an id, so older readers skip it).
const MARKER: &str = "#\t";

fn marker(conversations: ObjectId) -> String {
    format!("{MARKER}{conversations}\n")
}

/// The ids titled `title` in a complete catalogue read from `text`: only lines holding
/// `needle` (the title as serde_json spells it, which cannot occur inside another JSON
/// string, where its quotes would be escaped) are looked at, and each only if no later line
/// has its id. Read a chunk at a time through one buffer: a 3 MB catalogue read whole cost
/// more in page faults than the search.
fn titled_in(mut text: impl std::io::Read, needle: &str, title: &str) -> Vec<String> {
    // aho-corasick's searchers use SIMD prefilters: `str::find` would stop at the
    // `"title":` every line starts its JSON with.
    let Ok(finder) = aho_corasick::AhoCorasick::new([needle]) else { return Vec::new() };
    // Matching lines so far, by id: a later line of the same id replaces or drops one.
    let mut found: Vec<String> = Vec::new();
    let mut buffer = vec![0u8; 256 * 1024];
    let mut filled = 0;
    loop {
        if filled == buffer.len() {
            // One line longer than the buffer: make room.
            buffer.resize(buffer.len() * 2, 0);
        }
        let n = match text.read(&mut buffer[filled..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Vec::new(),
        };
        filled += n;
        // Whole lines only; the rest waits for the next read.
        let whole = match memchr::memrchr(b'\n', &buffer[..filled]) {
            Some(i) => i + 1,
            None if n == 0 => filled,
            None => continue,
        };
        titled_lines(&buffer[..whole], &finder, title, &mut found);
        buffer.copy_within(whole..filled, 0);
        filled -= whole;
        if n == 0 {
            break;
        }
    }
    let mut ids = found;
    ids.sort();
    ids.dedup();
    ids
}

/// [`titled_in`] over whole lines `text`, in order: a line holding the needle adds its id
/// (if its JSON says so), any other line of an id found drops it.
fn titled_lines(text: &[u8], finder: &aho_corasick::AhoCorasick, title: &str, found: &mut Vec<String>) {
    let drop_superseded = |lines: &[u8], found: &mut Vec<String>| {
        if found.is_empty() {
            return;
        }
        for line in lines.split(|b| *b == b'\n') {
            found.retain(|id| !(line.starts_with(id.as_bytes()) && line.get(id.len()) == Some(&b'\t')));
        }
    };
    let mut done = 0;
    for m in finder.find_iter(text) {
        let at = m.start();
        if at < done {
            continue;
        }
        let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
        drop_superseded(&text[done..start], found);
        done = (end + 1).min(text.len());
        let Ok(line) = std::str::from_utf8(&text[start..end]) else { continue };
        let mut fields = line.splitn(3, '\t');
        let (Some(id), Some(_), Some(json)) = (fields.next(), fields.next(), fields.next()) else { continue };
        found.retain(|known| known != id);
        if !json.contains('\t')
            && serde_json::from_str::<TitleOnly>(json).is_ok_and(|t| t.title.as_deref() == Some(title))
        {
            found.push(id.to_owned());
        }
    }
    drop_superseded(&text[done..], found);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(byte: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[byte; 20])
    }

    #[test]
    fn a_writer_certifies_only_the_file_it_looked_at_even_when_a_reader_replaces_it_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TITLES);
        let (before, now, reader) = (tree(1), tree(2), tree(3));
        std::fs::write(&path, format!("A\t\t{{\"title\":\"a\"}}\n{}", marker(before))).unwrap();
        // The writer saw its parent's marker; then a reader renames its own rewrite (for
        // another tree) into place before the writer's bytes go in.
        with_file(&path, |len, tail| {
            assert_eq!(tail, Some(marker(before).as_str()));
            assert!(len > 0);
            let fresh = dir.path().join("fresh");
            std::fs::write(&fresh, format!("A\t\t{{\"title\":\"a\"}}\n{}", marker(reader))).unwrap();
            std::fs::rename(&fresh, &path).unwrap();
            format!("B\t\t{{\"title\":\"b\"}}\n{}", marker(now))
        });
        // The writer's marker must not certify the reader's file, which lacks its line.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with(&marker(reader)), "{text}");
        assert!(!text.contains(&marker(now)), "{text}");
    }

    #[test]
    fn the_last_line_is_found_whatever_the_window_cuts_through() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TITLES);
        // A title of multi-byte characters longer than the window before the marker.
        let title = "é".repeat(200);
        std::fs::write(&path, format!("A\t\t{{\"title\":\"{title}\"}}\n{}", marker(tree(7)))).unwrap();
        assert_eq!(tail_of(&path), Some(marker(tree(7))));
        // A torn last line has no tail, and is ended before the next line goes in.
        std::fs::write(&path, format!("{}A\t\t{{\"ti", marker(tree(7)))).unwrap();
        assert_eq!(tail_of(&path), None);
        note_to(&path, "B\t\t{}\n", Some((tree(8), Some(tree(7)))));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("{\"ti\t\nB\t\t{}\n"), "{text:?}");
    }

    /// A reader that hands out a few bytes at a time, so lines straddle every read.
    struct Trickle<'a>(&'a [u8], usize);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(self.0.len()).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_title_lookup_takes_the_latest_line_of_each_id_whatever_the_reads() {
        let line = |id: &str, title: &str| {
            let json = format!(
                r#"{{"title":{},"created":"c","updated":"u","stats":{{"turns":1,"events":2,"chars":3}},"subagent_of":null,"forked_from":null}}"#,
                serde_json::to_string(title).unwrap()
            );
            format!("{id}\t{}\t{json}\n", "0".repeat(40))
        };
        let mut text = String::new();
        for n in 0..300 {
            text += &line(&format!("ID{n:03}"), &format!("other {n}"));
        }
        text += &line("ID001", "wanted"); // renamed to it
        text += &line("ID002", "wanted");
        text += &line("ID002", "gone"); // renamed away again, later
        text += &line("ID250", "wanted");
        text += "ID250\ttorn"; // a torn later line of the same id still supersedes
        text += "\n";
        text += &line("ID299", "wanted \"quoted\"");
        text += &line("ID003", "wanted");
        let needle = |t: &str| format!("\"title\":{}", serde_json::to_string(t).unwrap());
        for step in [1, 7, 64, 1 << 20] {
            let found = titled_in(Trickle(text.as_bytes(), step), &needle("wanted"), "wanted");
            assert_eq!(found, ["ID001", "ID003"], "reads of {step} bytes");
            let quoted = titled_in(Trickle(text.as_bytes(), step), &needle("wanted \"quoted\""), "wanted \"quoted\"");
            assert_eq!(quoted, ["ID299"], "reads of {step} bytes");
        }
    }
}
