//! Import from and export to other tools' formats. Importers turn a file into drafts of
//! convo events (and the compactions the source tool had made), with a report of what was
//! taken and what was skipped; they never touch git. Exporters render events or views.

pub mod claude_code;
pub mod codex;
pub mod export;
pub mod gemini;
pub mod html;
pub mod messages;
pub mod opencode;
pub mod openhands;
pub mod resume;
pub use crate::event::title;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::clock::Clock;
use crate::compaction::{Compaction, Record, Summary};
use crate::event::{Draft, IdSet, Kind, LineError, validate_event_id};
use crate::store::StoreError;

/// A format convo can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// convo's own JSONL (`show --format jsonl`, `export --format jsonl`).
    Convo,
    ClaudeCode,
    Codex,
    GeminiCli,
    /// A Chat Completions body, a bare `messages` array, or a SWE-agent trajectory.
    Openai,
    /// A Messages body or a bare `messages` array.
    Anthropic,
    Openhands,
    /// opencode's SQLite database: every session in it (not text, so never detected from
    /// text, and not in [`Format::ALL`]).
    Opencode,
}

impl Format {
    pub const ALL: [Format; 7] = [
        Format::Convo,
        Format::ClaudeCode,
        Format::Codex,
        Format::GeminiCli,
        Format::Openhands,
        Format::Openai,
        Format::Anthropic,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Convo => "jsonl",
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::GeminiCli => "gemini-cli",
            Format::Openai => "openai",
            Format::Anthropic => "anthropic",
            Format::Openhands => "openhands",
            Format::Opencode => "opencode",
        }
    }

    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().chain([Format::Opencode]).find(|f| f.name() == name)
    }
}

/// What an import took and left.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Lines (or array items) read.
    pub records: usize,
    pub events: BTreeMap<&'static str, usize>,
    /// Why records or parts of them were not imported, and how many.
    pub skipped: BTreeMap<String, usize>,
    pub compactions: usize,
}

/// One conversation from a file.
#[derive(Debug, Clone)]
pub struct Conversation {
    pub title: Option<String>,
    pub drafts: Vec<Draft>,
    /// For a subagent's conversation: the index (in [`Imported::conversations`]) of its parent.
    pub parent: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct Imported {
    pub format: Format,
    /// The main conversation first, then subagents' (Claude Code sidechains).
    pub conversations: Vec<Conversation>,
    pub report: Report,
    pub place: Place,
}

impl Imported {
    /// One conversation with no title of its own: titled by its first user prompt.
    pub(crate) fn one(format: Format, drafts: Vec<Draft>, report: Report) -> Imported {
        let title = first_prompt(&drafts);
        Imported {
            format,
            conversations: vec![Conversation { title, drafts, parent: None }],
            report,
            place: Place::default(),
        }
    }
}

/// Where a session ran, as its file records it: data from the file, never checked against
/// this machine (the caller decides whether to look at the path).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// The agent's working directory.
    pub cwd: Option<String>,
    /// The git branch checked out there.
    pub branch: Option<String>,
    /// The repository's remote URL, when the agent recorded one (Codex does).
    pub remote: Option<String>,
}

impl Place {
    /// The longest value kept: a path (`PATH_MAX`), a branch or a URL longer than this is
    /// not a real one.
    pub const MAX_LEN: usize = 4096;

    /// `value` as a recorded field: a non-empty string of at most [`Place::MAX_LEN`] bytes
    /// without control characters, else nothing.
    pub fn field(value: Option<&serde_json::Value>) -> Option<String> {
        let s = value?.as_str()?.trim();
        (!s.is_empty() && s.len() <= Self::MAX_LEN && !s.chars().any(char::is_control)).then(|| s.to_owned())
    }
}

/// Where an importer puts its drafts as it reads, conversation by conversation (0 is the
/// main one): a store writes them out at once (bounded memory), tests keep them. The
/// store's error comes back typed, as [`InteropError::Store`].
pub trait Emit {
    fn drafts(&mut self, conversation: usize, drafts: Vec<Draft>) -> Result<(), StoreError>;
}

impl Emit for Vec<Vec<Draft>> {
    fn drafts(&mut self, conversation: usize, drafts: Vec<Draft>) -> Result<(), StoreError> {
        while self.len() <= conversation {
            self.push(Vec::new());
        }
        self[conversation].extend(drafts);
        Ok(())
    }
}

/// What a streaming import found besides the drafts it emitted.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub format: Format,
    /// Title and parent of each conversation, by index.
    pub conversations: Vec<(Option<String>, Option<usize>)>,
    pub report: Report,
    /// Where the importer stood at the end, to carry on from there with the lines that come
    /// next ([`stream_from`]); none when it cannot (a Claude Code file with subagent lines,
    /// whose runs may continue anywhere).
    pub checkpoint: Option<Checkpoint>,
    /// Where the session ran, as far as the file says.
    pub place: Place,
    /// Conversations that go on from another (Gemini CLI: after a rewind).
    pub forks: Vec<gemini::Fork>,
}

/// An importer's state after some lines of a session file: what reading only the lines
/// after them needs to make the same events a read of the whole file makes. Kept in
/// `meta.json` by `import --follow`, so a capture costs what is new, not the whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    /// User events so far, and the first and latest event: what a compaction covers.
    pub turns: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    /// Calls still waiting for their result: the id each was given, by the source's id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub open_calls: BTreeMap<String, String>,
    /// Claude Code: a compact boundary was read and its summary line has not come yet.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub boundary: bool,
    /// The agent's records read since the last event, which go with the next one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<Value>,
    /// Claude Code: the description of each subagent call so far, by its prompt (what a
    /// subagent's lines, which may come later, are titled by).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tasks: BTreeMap<String, String>,
    /// Events made and kept back, not emitted yet ([`Builder::keep_back`]), as stored lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<Value>,
    /// Whether the events made next are kept back too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keeping: bool,
    /// Claude Code: the uuid of the last line of the main chain read, so a line that does
    /// not continue from it (a rewind: the user went back and the session branched) is told
    /// apart in a later capture too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tip: Option<String>,
    /// Links of lines read since the last event that made none (see `Builder::link`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Value>,
    /// Codex: what its token counts have said so far (see `codex`'s module doc).
    #[serde(default, skip_serializing_if = "codex::Tokens::is_empty")]
    pub tokens: codex::Tokens,
    /// opencode: the last message read of the session.
    #[serde(default, skip_serializing_if = "opencode::State::is_empty")]
    pub opencode: opencode::State,
    /// Gemini CLI: what was imported of its latest messages.
    #[serde(default, skip_serializing_if = "gemini::State::is_empty")]
    pub gemini: gemini::State,
    /// The agent's version as the session said it ([`AGENT_VERSION`]), for the events a
    /// later capture reads after the record that said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
}

/// Lines of a file, read one at a time.
pub type Lines<'a> = &'a mut dyn Iterator<Item = Result<String, ReadError>>;

/// A line that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("line {line}: not UTF-8 text")]
    NotUtf8 { line: usize },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Why a text is not (or not wholly) in a format, or its drafts could not be put away.
#[derive(Debug, thiserror::Error)]
pub enum InteropError {
    /// The text does not look like this format: what is missing or wrong.
    #[error("{0}")]
    NotThisFormat(&'static str),
    #[error("{} is one JSON document, not lines", .0.name())]
    NotLines(Format),
    #[error("not one JSON document ({0})")]
    NotJson(#[source] serde_json::Error),
    #[error("a JSON array, not JSON lines")]
    JsonArray,
    #[error("line {line}: not valid JSON ({source})")]
    NotJsonLine {
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    /// A line of convo's own JSONL that is not an event.
    #[error(transparent)]
    Event(#[from] LineError),
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Read from a checkpoint, the lines after it change what came before it (a Gemini CLI
    /// rewind): the file must be read from its start.
    #[error("the session changed what came before the lines read last: it is to be read whole")]
    ReadWhole,
    /// opencode's database could not be read.
    #[error(transparent)]
    Database(#[from] opencode::DbError),
    /// The store the drafts were emitted to failed (a full disk, a repeated id).
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl InteropError {
    /// The error of lines read after the file's first `before` lines, counted from their
    /// start, with its line counted from the file's start (what a user opens the file at).
    pub fn after_lines(self, before: usize) -> Self {
        match self {
            InteropError::NotJsonLine { line, source } => InteropError::NotJsonLine { line: line + before, source },
            InteropError::Event(e) => InteropError::Event(LineError { line: e.line + before, ..e }),
            InteropError::Read(ReadError::NotUtf8 { line }) => {
                InteropError::Read(ReadError::NotUtf8 { line: line + before })
            }
            InteropError::Store(StoreError::DuplicateId { line, id }) => {
                InteropError::Store(StoreError::DuplicateId { line: line + before, id })
            }
            InteropError::Store(StoreError::DuplicateCallId { line, call_id }) => {
                InteropError::Store(StoreError::DuplicateCallId { line: line + before, call_id })
            }
            InteropError::Store(StoreError::UnknownCallId { line, call_id }) => {
                InteropError::Store(StoreError::UnknownCallId { line: line + before, call_id })
            }
            other => other,
        }
    }
}

/// Drafts emitted once this many have piled up in one conversation.
pub(crate) const EMIT_BATCH: usize = 512;

/// The formats read line by line, in bounded memory (the others are one JSON document).
pub fn streams(format: Format) -> bool {
    matches!(format, Format::Convo | Format::ClaudeCode | Format::Codex | Format::GeminiCli)
}

/// What a line-based format's first pass over a file finds, for [`stream`]: Claude Code's
/// sidechain roots ([`claude_code::sidechain_roots`]), Gemini CLI's messages copied into
/// forks ([`gemini::copies`]); nothing for the others.
pub fn first_pass(format: Format, lines: Lines) -> Result<std::collections::HashMap<String, String>, InteropError> {
    match format {
        Format::ClaudeCode => claude_code::sidechain_roots(lines),
        Format::GeminiCli => gemini::copies(lines),
        _ => Ok(Default::default()),
    }
}

/// Import a line-based format from `lines`, emitting drafts as they are made, with what a
/// first pass over the same file found ([`first_pass`]).
pub fn stream(
    format: Format,
    lines: Lines,
    roots: &std::collections::HashMap<String, String>,
    clock: &Clock,
    emit: &mut dyn Emit,
) -> Result<Outcome, InteropError> {
    stream_from(format, lines, roots, None, clock, emit)
}

/// [`stream`] of the lines after those a [`Checkpoint`] was taken at: the events they make
/// are the ones a read of the whole file makes after the checkpoint's.
pub fn stream_from(
    format: Format,
    lines: Lines,
    roots: &std::collections::HashMap<String, String>,
    from: Option<&Checkpoint>,
    clock: &Clock,
    emit: &mut dyn Emit,
) -> Result<Outcome, InteropError> {
    match format {
        Format::ClaudeCode => claude_code::parse_lines(lines, roots, from, clock, emit),
        Format::Codex => codex::parse_lines(lines, from, clock, emit),
        Format::GeminiCli => gemini::parse_lines(lines, roots, from, clock, emit),
        Format::Convo => convo_lines(lines, emit),
        other => Err(InteropError::NotLines(other)),
    }
}

/// Collect a streaming import in memory. A conversation the importer gave no title is
/// titled by its first user prompt.
fn collected(outcome: Outcome, mut drafts: Vec<Vec<Draft>>) -> Imported {
    drafts.resize_with(outcome.conversations.len().max(drafts.len()), Vec::new);
    let conversations = drafts
        .into_iter()
        .enumerate()
        .filter(|(i, drafts)| *i == 0 || !drafts.is_empty())
        .map(|(i, drafts)| {
            let (title, parent) = outcome.conversations.get(i).cloned().unwrap_or_default();
            let title = title.or_else(|| first_prompt(&drafts));
            Conversation { title, drafts, parent }
        })
        .collect();
    Imported { format: outcome.format, conversations, report: outcome.report, place: outcome.place }
}

/// The title of the first user event that is the user's own words ([`title::from_prompt`]):
/// one that starts a turn ([`crate::event::starts_turn`]).
pub(crate) fn first_prompt(drafts: &[Draft]) -> Option<String> {
    drafts.iter().find_map(|d| match &d.kind {
        Kind::User { content } if crate::event::starts_turn(&d.kind, &d.extra) => title::from_prompt(content),
        _ => None,
    })
}

/// The lines of an in-memory text, for the streaming importers.
pub(crate) fn text_lines(text: &str) -> impl Iterator<Item = Result<String, ReadError>> + '_ {
    text.lines().map(|l| Ok(l.to_owned()))
}

/// Parse line `n` as JSON; a JSON array on the first line is not JSON lines.
pub(crate) fn json_line(n: usize, line: &str) -> Result<Option<Value>, InteropError> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    if n == 1 && line.trim_start().starts_with('[') {
        return Err(InteropError::JsonArray);
    }
    serde_json::from_str(line).map(Some).map_err(|source| InteropError::NotJsonLine { line: n, source })
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("the file is empty")]
    Empty,
    #[error("the file is binary, not text")]
    Binary,
    /// Not the format asked for (or, streaming, not the format detected).
    #[error(transparent)]
    Invalid(#[from] InteropError),
    #[error("not a format convo reads ({})", tried.iter().map(|(f, why)| format!("{}: {why}", f.name())).collect::<Vec<_>>().join("; "))]
    Unknown { tried: Vec<(Format, InteropError)> },
}

/// Read `text` as `format`, or as the first format that fits.
pub fn import(text: &str, format: Option<Format>, clock: &Clock) -> Result<Imported, ImportError> {
    if text.trim().is_empty() {
        return Err(ImportError::Empty);
    }
    if text.contains('\0') {
        return Err(ImportError::Binary);
    }
    match format {
        Some(format) => Ok(parse(format, text, clock)?),
        None => {
            let mut tried = Vec::new();
            for format in Format::ALL {
                match parse(format, text, clock) {
                    Ok(imported) => return Ok(imported),
                    Err(why) => tried.push((format, why)),
                }
            }
            Err(ImportError::Unknown { tried })
        }
    }
}

fn parse(format: Format, text: &str, clock: &Clock) -> Result<Imported, InteropError> {
    match format {
        Format::Convo => convo_jsonl(text),
        Format::ClaudeCode => claude_code::parse(text, clock),
        Format::Codex => codex::parse(text, clock),
        Format::GeminiCli => gemini::parse(text, clock),
        Format::Openai => messages::openai(text, clock),
        Format::Anthropic => messages::anthropic(text, clock),
        Format::Openhands => openhands::parse(text, clock),
        Format::Opencode => Err(InteropError::NotThisFormat("an opencode database is SQLite, not text")),
    }
}

fn convo_jsonl(text: &str) -> Result<Imported, InteropError> {
    let mut drafts = Vec::new();
    let outcome = convo_lines(&mut text_lines(text), &mut drafts)?;
    Ok(collected(outcome, drafts))
}

fn convo_lines(lines: Lines, emit: &mut dyn Emit) -> Result<Outcome, InteropError> {
    let mut report = Report::default();
    let mut batch = Vec::new();
    let mut title = None;
    for (i, line) in lines.enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        report.records += 1;
        // One line at a time, so the error names line 1: make it the line of the file.
        let Some(mut draft) = crate::event::parse_input_any(&line).map_err(|e| LineError { line: i + 1, ..e })?.pop()
        else {
            continue;
        };
        draft.line = i + 1;
        if draft.id.is_none() {
            return Err(InteropError::NotThisFormat("events without ids (plain input belongs in `convo append`)"));
        }
        *report.events.entry(kind_name(&draft.kind)).or_default() += 1;
        if matches!(draft.kind, Kind::Compaction) {
            report.compactions += 1;
        }
        if title.is_none() {
            title = first_prompt(std::slice::from_ref(&draft));
        }
        batch.push(draft);
        if batch.len() >= EMIT_BATCH {
            emit.drafts(0, std::mem::take(&mut batch))?;
        }
    }
    if report.records == 0 {
        return Err(InteropError::NotThisFormat("no events"));
    }
    emit.drafts(0, batch)?;
    Ok(Outcome {
        format: Format::Convo,
        conversations: vec![(title, None)],
        report,
        place: Place::default(),
        checkpoint: None,
        forks: Vec::new(),
    })
}

fn kind_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::System { .. } => "system",
        Kind::User { .. } => "user",
        Kind::Assistant { .. } => "assistant",
        Kind::Reasoning { .. } => "reasoning",
        Kind::ToolCall { .. } => "tool_call",
        Kind::ToolResult { .. } => "tool_result",
        Kind::Config { .. } => "config",
        Kind::Compaction => "compaction",
        Kind::Other(_) => "other",
    }
}

/// Builds one conversation's drafts: keeps source ids and timestamps where they fit, keeps
/// every tool result with its call, and counts what it takes.
pub(crate) struct Builder<'c> {
    clock: &'c Clock,
    pub drafts: Vec<Draft>,
    ids: IdSet,
    calls: IdSet,
    /// Source call ids that are not valid convo ids, and the ids given instead.
    renamed_calls: std::collections::HashMap<String, String>,
    turns: u64,
    /// What a source compaction covers: from the first user event to the latest event.
    first_user: Option<String>,
    last: Option<String>,
    /// Calls without their result yet: the id given, by the source's id.
    open: std::collections::HashMap<String, String>,
    /// The agent's own records seen since the last event (Claude Code's rendered
    /// attachments, Codex's turn context), kept with the next event as `agent_records`: not
    /// messages, but the agent sends them (or decides what to send by them) when it resumes.
    held: Vec<Value>,
    /// Events made but not given to [`take`](Self::take) yet ([`keep_back`](Self::keep_back)).
    kept: Vec<Draft>,
    /// Whether the events pushed now are kept back.
    keeping: bool,
    /// `[uuid, parent]` of the agent's lines that made no event since the last one, kept
    /// with the next event as `source_links`: what a resume follows to find the line a
    /// branch continues from (see [`SOURCE_PARENT`]).
    links: Vec<Value>,
    /// A call whose id must change takes one made from its event's source id, not from the
    /// clock ([`Builder::stable_renames`]).
    stable_renames: bool,
    /// The source line being read ([`at_line`](Self::at_line)): what an error about an
    /// event made from it names. 0 when the importer does not say (a JSON document).
    line: usize,
}

impl<'c> Builder<'c> {
    pub fn new(clock: &'c Clock) -> Self {
        Builder {
            clock,
            drafts: Vec::new(),
            ids: IdSet::default(),
            calls: IdSet::default(),
            renamed_calls: Default::default(),
            turns: 0,
            first_user: None,
            last: None,
            open: Default::default(),
            held: Vec::new(),
            kept: Vec::new(),
            keeping: false,
            links: Vec::new(),
            stable_renames: false,
            line: 0,
        }
    }

    /// The events made from now on come from line `n` of the file (1-based, counted from
    /// where the reading started): an error about one names it, not its place in a batch.
    pub fn at_line(&mut self, n: usize) {
        self.line = n;
    }

    /// Give a call whose id is invalid or taken the id `call_<its event's source id>`: the
    /// same whichever read made it, where source ids are unique (Gemini CLI's, whose
    /// compression records calls again under the same ids).
    pub fn stable_renames(mut self) -> Self {
        self.stable_renames = true;
        self
    }

    /// A builder that carries on where `checkpoint` was taken.
    pub fn from_checkpoint(clock: &'c Clock, checkpoint: &Checkpoint) -> Self {
        let mut b = Builder::new(clock);
        b.turns = checkpoint.turns;
        b.first_user = checkpoint.first_user.clone();
        b.last = checkpoint.last.clone();
        b.held = checkpoint.held.clone();
        b.links = checkpoint.links.clone();
        b.kept = checkpoint.kept.iter().filter_map(draft_of).collect();
        b.keeping = checkpoint.keeping;
        for (source, given) in &checkpoint.open_calls {
            b.calls.insert(given);
            if source != given {
                b.renamed_calls.insert(source.clone(), given.clone());
            }
            b.open.insert(source.clone(), given.clone());
        }
        b
    }

    /// Where this builder stands (the importer adds its own fields).
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            turns: self.turns,
            first_user: self.first_user.clone(),
            last: self.last.clone(),
            open_calls: self.open.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            held: self.held.clone(),
            links: self.links.clone(),
            kept: self.kept.iter().map(draft_value).collect(),
            keeping: self.keeping,
            ..Default::default()
        }
    }

    /// Keep the events pushed from now on back from [`take`](Self::take), until
    /// [`release`](Self::release): an importer that learns something about them from a
    /// later record (Codex's token count of a call) puts it on them before they go out.
    /// They travel in the [`Checkpoint`], so a read that stops here and one that reads on
    /// emit the same events.
    pub fn keep_back(&mut self) {
        self.keeping = true;
    }

    /// Whether the call the source named `source` is waiting for its result.
    pub fn is_open(&self, source: &str) -> bool {
        self.open.contains_key(source)
    }

    /// User events so far (what a compaction made now covers).
    pub fn turns(&self) -> u64 {
        self.turns
    }

    /// Whether events are being kept back.
    pub fn keeping(&self) -> bool {
        self.keeping
    }

    /// The events kept back, in order.
    pub fn kept_mut(&mut self) -> &mut [Draft] {
        &mut self.kept
    }

    /// Give the events kept back out with the next [`take`](Self::take), and stop keeping.
    pub fn release(&mut self) {
        self.drafts.append(&mut self.kept);
        self.keeping = false;
    }

    /// How many records are held for the next event.
    pub fn holds(&self) -> usize {
        self.held.len()
    }

    /// Keep the link of an agent's line that made no event with the next event (see
    /// `links`).
    pub fn link(&mut self, uuid: &str, parent: &str) {
        self.links.push(Value::Array(vec![Value::String(uuid.to_owned()), Value::String(parent.to_owned())]));
    }

    /// Keep an agent's record with the next event (see `held`).
    pub fn hold(&mut self, record: Value) {
        self.held.push(record);
    }

    /// How many drafts wait to be taken.
    pub fn drafts_len(&self) -> usize {
        self.drafts.len()
    }

    /// The drafts made since the last call, to emit.
    pub fn take(&mut self) -> Vec<Draft> {
        std::mem::take(&mut self.drafts)
    }

    /// Add an event; `source_id` and `ts` are kept when they are valid (else as extra
    /// fields). A result whose call is unknown is not added: `false` tells the caller to count it.
    pub fn push(&mut self, report: &mut Report, kind: Kind, source_id: Option<&str>, ts: Option<&str>) -> bool {
        self.push_with(report, kind, source_id, ts, Map::new())
    }

    /// [`push`](Self::push), keeping `extra` with the event: what the source agent needs
    /// back to resume it (a thinking block's signature, an encrypted reasoning item).
    pub fn push_with(
        &mut self,
        report: &mut Report,
        mut kind: Kind,
        source_id: Option<&str>,
        ts: Option<&str>,
        mut extra: Map<String, Value>,
    ) -> bool {
        match &mut kind {
            Kind::ToolCall { call_id, name, .. } => {
                let source = call_id.clone();
                if validate_event_id(call_id).is_err() || self.calls.contains(call_id) {
                    let stable = source_id
                        .map(|s| format!("call_{s}"))
                        .filter(|s| self.stable_renames && validate_event_id(s).is_ok() && !self.calls.contains(s));
                    let new = stable.unwrap_or_else(|| format!("call_{}", self.clock.new_id()));
                    extra.insert("source_call_id".into(), Value::String(call_id.clone()));
                    self.renamed_calls.insert(call_id.clone(), new.clone());
                    *call_id = new;
                }
                if name.trim().is_empty() {
                    *name = "unknown".into();
                }
                self.calls.insert(call_id);
                self.open.insert(source, call_id.clone());
            }
            Kind::ToolResult { call_id, .. } => {
                let source = call_id.clone();
                if let Some(new) = self.renamed_calls.get(call_id.as_str()) {
                    *call_id = new.clone();
                }
                if !self.calls.contains(call_id) {
                    return false;
                }
                self.open.remove(&source);
            }
            _ => {}
        }
        let id = match source_id {
            Some(s) if validate_event_id(s).is_ok() && !self.ids.contains(s) => s.to_owned(),
            other => {
                if let Some(s) = other {
                    extra.insert("source_id".into(), Value::String(s.to_owned()));
                }
                self.clock.new_id()
            }
        };
        self.ids.insert(&id);
        if !self.links.is_empty() {
            extra.insert(SOURCE_LINKS.into(), Value::Array(std::mem::take(&mut self.links)));
        }
        if !self.held.is_empty() {
            extra.insert(AGENT_RECORDS.into(), Value::Array(std::mem::take(&mut self.held)));
        }
        let ts = match ts {
            Some(t) if chrono::DateTime::parse_from_rfc3339(t).is_ok() => Some(t.to_owned()),
            Some(t) => {
                extra.insert("source_ts".into(), Value::String(t.to_owned()));
                None
            }
            None => None,
        };
        // Scaffolding the importer marked ([`crate::event::META`]) starts no turn.
        if matches!(kind, Kind::User { .. }) && extra.get(crate::event::META) != Some(&Value::Bool(true)) {
            self.turns += 1;
            self.first_user.get_or_insert_with(|| id.clone());
        }
        self.last = Some(id.clone());
        *report.events.entry(kind_name(&kind)).or_default() += 1;
        self.put(Draft {
            id: Some(id),
            ts,
            kind,
            extra,
            line: if self.line > 0 { self.line } else { self.drafts.len() + 1 },
        });
        true
    }

    /// Mark the drafts made since the `from`th as lines Claude Code marked `isMeta`: its
    /// caveat is scaffolding ([`crate::event::scaffolding`], [`mark_meta`](Self::mark_meta));
    /// any other such line (a command's expanded template) keeps `claude_meta`, which only
    /// Claude Code's resume reads.
    pub fn mark_claude_meta(&mut self, from: usize) {
        let caveat = self.drafts.iter().skip(from).any(|d| {
            let mut unmarked = d.extra.clone();
            unmarked.insert(AGENT.into(), Value::String("claude-code".into()));
            crate::event::scaffolding(&d.kind, &unmarked)
        });
        if caveat {
            return self.mark_meta(from);
        }
        for d in self.drafts.iter_mut().skip(from) {
            d.extra.insert(crate::event::CLAUDE_META.into(), Value::Bool(true));
        }
    }

    /// Mark the events made from `from` on (one source line's) as the agent's scaffolding
    /// ([`crate::event::META`]): a user event among them then starts no turn.
    pub fn mark_meta(&mut self, from: usize) {
        for d in self.drafts.iter_mut().skip(from) {
            if matches!(d.kind, Kind::User { .. }) && d.extra.get(crate::event::META) != Some(&Value::Bool(true)) {
                self.turns -= 1;
                if self.first_user == d.id {
                    self.first_user = None;
                }
            }
            d.extra.insert(crate::event::META.into(), Value::Bool(true));
        }
    }

    /// Out with the next [`take`](Self::take), or kept back while [`keeping`](Self::keeping).
    fn put(&mut self, draft: Draft) {
        if self.keeping { self.kept.push(draft) } else { self.drafts.push(draft) }
    }

    /// The source tool compacted here: a convo compaction of every turn so far with its
    /// summary, so `show --compacted` sends what the tool sent. `false` if there is nothing
    /// to cover yet.
    pub fn compaction(&mut self, report: &mut Report, summary: &str, by: &str, ts: Option<&str>) -> bool {
        self.compaction_with(report, summary, by, ts, None)
    }

    /// [`compaction`](Self::compaction), with what the agent sends in place of the range
    /// (Codex's `replacement_history`), which its resume sends instead of the summary alone.
    pub fn compaction_with(
        &mut self,
        report: &mut Report,
        summary: &str,
        by: &str,
        ts: Option<&str>,
        agent_history: Option<Value>,
    ) -> bool {
        let (Some(first), Some(last)) = (self.first_user.clone(), self.last.clone()) else { return false };
        if summary.trim().is_empty() || self.turns == 0 {
            return false;
        }
        let record = Record::Apply(Compaction {
            from_turn: 0,
            to_turn: self.turns - 1,
            from_event: first,
            to_event: last,
            summary: Some(Summary { text: summary.trim().to_owned(), by: by.to_owned(), usage: None, agent_history }),
            ..Default::default()
        });
        let mut draft = record.to_draft();
        let id = self.clock.new_id();
        self.last = Some(id.clone());
        draft.id = Some(id);
        draft.ts = ts.filter(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok()).map(str::to_owned);
        self.put(draft);
        report.compactions += 1;
        true
    }
}

/// A draft as the line convo would store (without `ts` when it has none), for a checkpoint.
fn draft_value(draft: &Draft) -> Value {
    let (id, ts) = (draft.id.clone().unwrap_or_default(), draft.ts.clone().unwrap_or_default());
    let mut value = draft.clone().into_event(id, ts).to_value();
    if let (None, Value::Object(map)) = (&draft.ts, &mut value) {
        map.shift_remove("ts");
    }
    value
}

/// The draft [`draft_value`] made `value` of.
fn draft_of(value: &Value) -> Option<Draft> {
    crate::event::parse_input_any(&value.to_string()).ok()?.pop()
}

/// The key of an event's extra fields holding the agent's own records that came before it
/// (see `Builder::hold`), which `convo resume` writes back for the same agent.
pub const AGENT_RECORDS: &str = "agent_records";

/// The key naming the source line an event's line continued from, where that is not the
/// line read before it (a Claude Code rewind), so `convo resume` writes the branch back.
pub const SOURCE_PARENT: &str = "source_parent";

/// The key holding `[uuid, parent]` of the source lines read before an event that made no
/// event themselves (Claude Code's `progress` and `system` lines), which a branch's parent
/// may be: `convo resume` follows them to a line it wrote.
pub const SOURCE_LINKS: &str = "source_links";

/// The key of an event's extra fields naming the agent whose session the event was read
/// from (`claude-code`, `codex`, `gemini-cli`, `opencode`): set by that agent's importer on
/// every event it makes, so a conversation that went through several agents says, event by
/// event, whose records and tool calls are whose. `convo resume` hands an agent its own
/// events natively and every other agent's converted ([`resume::origin`]).
pub const AGENT: &str = crate::event::who::AGENT;

/// The key of an event's extra fields holding the version of the agent that recorded it,
/// where its session says it (Claude Code's `version` on each line, Codex's `cli_version`,
/// opencode's session `version`): data, as the agent claimed it.
pub const AGENT_VERSION: &str = crate::event::who::AGENT_VERSION;

/// What an agent's importer emits, each event (not a compaction record, whose fields are
/// its own) marked with the agent ([`AGENT`]), and its scaffolding as such
/// ([`crate::event::META`]: what the importer did not mark itself, recognised by its shape).
pub(crate) struct Stamped<'e> {
    agent: &'static str,
    /// The agent's version, where the session says it for the whole session: marked on
    /// every event that does not carry its own ([`AGENT_VERSION`]).
    pub version: Option<String>,
    inner: &'e mut dyn Emit,
}

impl<'e> Stamped<'e> {
    pub fn new(agent: resume::Agent, inner: &'e mut dyn Emit) -> Self {
        Stamped { agent: agent.name(), version: None, inner }
    }
}

impl Emit for Stamped<'_> {
    fn drafts(&mut self, conversation: usize, mut drafts: Vec<Draft>) -> Result<(), StoreError> {
        for d in drafts.iter_mut().filter(|d| !matches!(d.kind, Kind::Compaction)) {
            d.extra.entry(AGENT).or_insert_with(|| Value::String(self.agent.to_owned()));
            if let Some(version) = &self.version {
                d.extra.entry(AGENT_VERSION).or_insert_with(|| Value::String(version.clone()));
            }
            if !d.extra.contains_key(crate::event::META) && crate::event::scaffolding(&d.kind, &d.extra) {
                d.extra.insert(crate::event::META.into(), Value::Bool(true));
            }
        }
        self.inner.drafts(conversation, drafts)
    }
}

/// Count one skipped record or part, with its reason.
pub(crate) fn skip(report: &mut Report, why: impl Into<String>) {
    *report.skipped.entry(why.into()).or_default() += 1;
}

/// Text of a content value: a string, or the `text` of an array of parts.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => o.get("text").and_then(Value::as_str).map(str::to_owned),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Arguments as JSON when they parse, kept as a string when they do not.
pub(crate) fn arguments(value: Option<&Value>) -> Value {
    match value {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        Some(v) => v.clone(),
        None => Value::Object(Map::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store that is full.
    struct Full;

    impl Emit for Full {
        fn drafts(&mut self, _: usize, _: Vec<Draft>) -> Result<(), StoreError> {
            Err(StoreError::Io { path: "objects".into(), source: std::io::ErrorKind::StorageFull.into() })
        }
    }

    fn clock() -> Clock {
        Clock::fixed(chrono::DateTime::UNIX_EPOCH)
    }

    #[test]
    fn the_store_error_of_an_emit_comes_back_typed() {
        let text = r#"{"id":"a","type":"user","content":"hi"}"#;
        let err = stream(Format::Convo, &mut text_lines(text), &Default::default(), &clock(), &mut Full).unwrap_err();
        assert!(matches!(err, InteropError::Store(StoreError::Io { .. })), "{err:?}");
    }

    /// Events kept back travel in a checkpoint as stored lines: each kind an importer makes
    /// comes back the same, with or without a time.
    #[test]
    fn a_kept_event_survives_its_checkpoint() {
        let clock = clock();
        let mut b = Builder::new(&clock);
        let mut report = Report::default();
        b.keep_back();
        let mut extra = Map::new();
        extra.insert("usage".into(), serde_json::json!({"input_tokens": 3}));
        extra.insert("codex_role".into(), serde_json::json!("developer"));
        let call = Kind::ToolCall { call_id: "c 1".into(), name: "".into(), arguments: Value::String("x".into()) };
        b.push_with(
            &mut report,
            Kind::Reasoning { content: "r".into() },
            Some("r1"),
            Some("2025-01-01T00:00:00Z"),
            extra,
        );
        b.push(&mut report, call, None, Some("not a time"));
        b.push(
            &mut report,
            Kind::ToolResult { call_id: "c 1".into(), content: "out".into(), is_error: true },
            None,
            None,
        );
        b.push(&mut report, Kind::System { content: "s".into() }, Some("bad id!"), None);
        let checkpoint: Checkpoint = serde_json::from_value(serde_json::to_value(b.checkpoint()).unwrap()).unwrap();
        let mut again = Builder::from_checkpoint(&clock, &checkpoint);
        assert!(again.keeping() && b.take().is_empty());
        again.release();
        let line = |d: &Draft| Draft { line: 0, ..d.clone() };
        let (kept, back) = (b.kept.iter().map(line).collect::<Vec<_>>(), again.take());
        assert_eq!(kept.len(), 4);
        assert_eq!(kept, back.iter().map(line).collect::<Vec<_>>());
    }

    #[test]
    fn a_bad_line_of_convo_jsonl_is_named_by_its_line_in_the_file() {
        let text = "{\"id\":\"a\",\"type\":\"user\",\"content\":\"hi\"}\n\n{\"id\":\"b\",\"type\":\"user\"}\n";
        let err = import(text, Some(Format::Convo), &clock()).unwrap_err();
        assert_eq!(err.to_string(), "line 3, field `content`: missing");
        let err = import("{\"type\":\"user\",\"content\":\"hi\"}\n", Some(Format::Convo), &clock()).unwrap_err();
        assert_eq!(err.to_string(), "events without ids (plain input belongs in `convo append`)");
    }
}
