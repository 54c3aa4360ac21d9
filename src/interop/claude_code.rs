//! Claude Code session JSONL.
//!
//! One API message can be spread over several lines (sharing `message.id`), each carrying
//! some of its content blocks: every block becomes an event, in order. `tool_result` blocks
//! inside `user` lines are results, not new turns; `thinking` blocks are reasoning. A
//! `/compact` (a `compact_boundary` system line, then a user line with `isCompactSummary`)
//! becomes a convo compaction with that summary. What a resume needs back to make Claude
//! Code send what its own file makes it send is kept on the event: a user line's separate
//! text blocks (`claude_texts`), a result's non-text blocks (`claude_content`), the tasks its
//! call started (`claude_task`, from `toolUseResult`), a line it wrote itself (`claude_meta`).
//!
//! The title is the one Claude Code shows: the user's own (`custom-title`, from `/rename`),
//! else its generated one (`ai-title`), else a `summary` record, else the first prompt the
//! user typed: not a line Claude Code marks `isMeta` (a command's expansion), nor a slash
//! command's markup, its output or a reminder (`title::from_prompt`); a session that holds
//! only commands is titled by its first command line. A subagent's conversation is titled by
//! the description of the `Task`/`Agent` call that started it, else its first prompt. The
//! first main line carrying `cwd` says where the session ran (with `gitBranch`).
//!
//! Sidechain lines (`isSidechain`, a subagent's work) become their own conversation, one per
//! subagent run, linked to the parent: kept in the parent they would interleave a second
//! dialogue into the parent's tool call, which no provider accepts and no reader can follow.

use std::collections::HashMap;

use serde_json::Value;

use super::{
    Builder, EMIT_BATCH, Emit, Format, Imported, InteropError, Lines, Outcome, Place, Report, SOURCE_PARENT, arguments,
    json_line, skip, text_of, title,
};
use crate::clock::Clock;
use crate::event::Kind;

pub fn parse(text: &str, clock: &Clock) -> Result<Imported, InteropError> {
    let roots = sidechain_roots(&mut super::text_lines(text))?;
    let mut drafts = Vec::new();
    let outcome = parse_lines(&mut super::text_lines(text), &roots, None, clock, &mut drafts)?;
    Ok(super::collected(outcome, drafts))
}

/// Whether `line`, the last line of a transcript, ends a turn of the main session: an
/// assistant line of the main chain whose blocks call no tool (its answer). Claude Code runs
/// its `Stop` hook as the turn ends, sometimes before this line reaches the file: the hook's
/// capture waits for it, for a bounded time. Lines that are not messages (a summary, a
/// hook's record) say nothing either way.
pub fn ends_turn(line: &str) -> Option<bool> {
    let line: Value = serde_json::from_str(line).ok()?;
    match line.get("type").and_then(Value::as_str)? {
        "assistant" if line.get("isSidechain") != Some(&Value::Bool(true)) => {
            let blocks = line.pointer("/message/content").and_then(Value::as_array);
            Some(!blocks.is_some_and(|b| b.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))))
        }
        "user" | "assistant" => Some(false),
        _ => None,
    }
}

/// First pass: for each sidechain line, the first line of its subagent run (follow parents
/// while they are sidechain lines). Only sidechain lines are kept, so memory follows them.
pub fn sidechain_roots(lines: Lines) -> Result<HashMap<String, String>, InteropError> {
    let mut parent: HashMap<String, Option<String>> = HashMap::new();
    for (i, line) in lines.enumerate() {
        let Some(l) = json_line(i + 1, &line?)? else { continue };
        if l.get("isSidechain") == Some(&Value::Bool(true))
            && let Some(uuid) = l.get("uuid").and_then(Value::as_str)
        {
            parent.insert(uuid.to_owned(), l.get("parentUuid").and_then(Value::as_str).map(str::to_owned));
        }
    }
    Ok(resolve_roots(&parent).0)
}

/// The root of every line of `parent` (line → its parent line, if it has one among them),
/// and how many steps finding them took: each line is walked at most once, then memoised,
/// so a chain of n lines costs n steps, not n²/2. A cycle (hostile input) shares one root,
/// its smallest uuid, with every line that leads into it.
fn resolve_roots(parent: &HashMap<String, Option<String>>) -> (HashMap<String, String>, usize) {
    let mut roots: HashMap<&str, &str> = HashMap::with_capacity(parent.len());
    let mut steps = 0;
    let mut path: Vec<&str> = Vec::new();
    let mut on_path: HashMap<&str, usize> = HashMap::new();
    for start in parent.keys() {
        if roots.contains_key(start.as_str()) {
            continue;
        }
        path.clear();
        on_path.clear();
        let mut at = start.as_str();
        let root = loop {
            steps += 1;
            if let Some(root) = roots.get(at) {
                break *root;
            }
            if let Some(&i) = on_path.get(at) {
                break path[i..].iter().copied().min().unwrap_or(at);
            }
            on_path.insert(at, path.len());
            path.push(at);
            match parent.get(at) {
                Some(Some(p)) if parent.contains_key(p) => at = p.as_str(),
                _ => break at,
            }
        };
        for line in &path {
            roots.insert(line, root);
        }
    }
    (roots.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(), steps)
}

/// Second pass: the events, emitted as they are made.
/// From a [`super::Checkpoint`], `lines` are those after it: the file was recognised then.
pub fn parse_lines(
    lines: Lines,
    roots: &HashMap<String, String>,
    from: Option<&super::Checkpoint>,
    clock: &Clock,
    emit: &mut dyn Emit,
) -> Result<Outcome, InteropError> {
    let emit = &mut super::Stamped::new(super::resume::Agent::ClaudeCode, emit);
    let mut report = Report::default();
    // Conversation 0 is the main one; subagent runs get 1, 2, ... in order of appearance.
    let main = match from {
        Some(c) => Builder::from_checkpoint(clock, c),
        None => Builder::new(clock),
    };
    let mut builders: Vec<Builder> = vec![main];
    let mut runs: HashMap<String, usize> = HashMap::new();
    let mut titles = Titles::default();
    // A subagent run's title, by conversation index.
    let mut parts: Vec<Option<String>> = vec![None];
    // The description of each `Task`/`Agent` call, by the prompt it gave the subagent.
    let mut tasks: HashMap<String, String> =
        from.map(|c| c.tasks.iter().map(|(k, v)| (k.clone(), v.clone())).collect()).unwrap_or_default();
    let mut place = Place::default();
    let mut side_place = Place::default();
    let mut boundary = from.is_some_and(|c| c.boundary);
    let mut tip = from.and_then(|c| c.tip.clone());
    let mut recognised = from.is_some();
    for (i, line) in lines.enumerate() {
        let Some(line) = json_line(i + 1, &line?)? else { continue };
        report.records += 1;
        let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
        if matches!(kind, "user" | "assistant" | "summary")
            && (line.get("uuid").is_some() || line.get("leafUuid").is_some())
        {
            recognised = true;
        } else if !recognised && report.records >= 20 {
            return Err(InteropError::NotThisFormat("no line with a Claude Code `type` and `uuid`"));
        }
        let uuid = line.get("uuid").and_then(Value::as_str);
        let ts = line.get("timestamp").and_then(Value::as_str);
        let sidechain = line.get("isSidechain") == Some(&Value::Bool(true));
        let index = if sidechain {
            let root = uuid.and_then(|u| roots.get(u)).cloned().unwrap_or_default();
            let next = builders.len();
            let index = *runs.entry(root).or_insert(next);
            if index == next {
                builders.push(Builder::new(clock));
                parts.push(None);
            }
            index
        } else {
            0
        };
        for b in &mut builders {
            b.at_line(i + 1);
        }
        let at = if sidechain { &mut side_place } else { &mut place };
        if at.cwd.is_none() {
            at.cwd = Place::field(line.get("cwd"));
            at.branch = at.cwd.as_ref().and_then(|_| Place::field(line.get("gitBranch")));
        }
        // A rewind: the line does not continue from the line read before it. Its first
        // event names its parent, and every line that makes no event leaves its link, so a
        // resume writes the branch as Claude Code's own file has it and the agent takes the
        // same chain. Decided by the line before alone: a capture a line at a time decides
        // as one import of the whole file does.
        let parent = line.get("parentUuid").and_then(Value::as_str);
        let rewinds = !sidechain && parent.is_some() && parent != tip.as_deref();
        let builder = &mut builders[index];
        let made = builder.drafts.len();
        let held = builder.holds();
        match kind {
            "summary" => {
                if titles.summary.is_none() {
                    titles.summary = line.get("summary").and_then(Value::as_str).and_then(title::from_record);
                }
                skip(&mut report, "summary record (used as the title)");
            }
            "custom-title" => {
                titles.custom =
                    line.get("customTitle").and_then(Value::as_str).and_then(title::from_record).or(titles.custom);
                skip(&mut report, "`custom-title` record (used as the title)");
            }
            "ai-title" => {
                titles.ai = line.get("aiTitle").and_then(Value::as_str).and_then(title::from_record).or(titles.ai);
                skip(&mut report, "`ai-title` record (used as the title)");
            }
            "system" if line.get("subtype").and_then(Value::as_str) == Some("compact_boundary") => {
                boundary = true;
                skip(&mut report, "compact boundary (becomes the compaction)");
            }
            "user" => {
                let content = line.pointer("/message/content").cloned().unwrap_or_default();
                if line.get("isCompactSummary") == Some(&Value::Bool(true)) || (boundary && !sidechain) {
                    boundary = false;
                    if !builder.compaction(&mut report, &text_of(&content), "claude-code", ts) {
                        skip(&mut report, "compact summary with nothing before it");
                    }
                } else {
                    let meta = line.get("isMeta") == Some(&Value::Bool(true));
                    if !meta && (titles.wants(sidechain) || parts[index].is_none()) {
                        let text = user_text(&content);
                        if sidechain && parts[index].is_none() {
                            parts[index] = tasks.get(text.trim()).cloned().or_else(|| title::from_prompt(&text));
                        }
                        titles.prompt_seen(sidechain, &text);
                    }
                    user_line(builder, &mut report, &content, uuid, ts, task_record(line.get("toolUseResult")));
                    // A line Claude Code wrote itself: its caveat before a command's output is
                    // scaffolding; a command's expanded template is what the model was asked,
                    // kept as the user's words, marked for Claude Code's resume alone.
                    if meta {
                        builder.mark_claude_meta(made);
                    }
                }
            }
            "assistant" => {
                let content = line.pointer("/message/content").cloned().unwrap_or_default();
                note_tasks(&content, &mut tasks);
                let message = (line.pointer("/message/id"), line.pointer("/message/model"));
                let usage = line.pointer("/message/usage").and_then(crate::event::Usage::from_anthropic);
                assistant_line(builder, &mut report, &content, uuid, (message, usage), ts);
            }
            // What Claude Code renders into its requests (environment, date, reminders): kept
            // with the next event, so a resume sends them as the agent's own file does.
            // (Claude Code 2.1 renders hook output, tool and skill listings from attachments
            // that carry no `rendered` text: each is kept.)
            "attachment" if line.get("attachment").is_some() || line.get("rendered").is_some_and(|r| !r.is_null()) => {
                builder.hold(line.clone())
            }
            "" => skip(&mut report, "line without a type"),
            other => skip(&mut report, format!("`{other}` record")),
        }
        if !sidechain && let Some(uuid) = uuid {
            let holds = builder.holds();
            if let Some(parent) = parent {
                match builder.drafts.get_mut(made) {
                    Some(first) if rewinds => {
                        first.extra.insert(SOURCE_PARENT.into(), Value::String(parent.to_owned()));
                    }
                    Some(_) => {}
                    // A held record keeps its own uuid and parent.
                    None if holds == held => builder.link(uuid, parent),
                    None => {}
                }
            }
            tip = Some(uuid.to_owned());
        }
        // Each line says the version of Claude Code that wrote it.
        if let Some(version) = line.get("version").filter(|v| v.as_str().is_some_and(|v| !v.is_empty())) {
            // Not a compaction's: its fields are its record's.
            for d in builders[index].drafts.iter_mut().skip(made).filter(|d| !matches!(d.kind, Kind::Compaction)) {
                d.extra.entry(super::AGENT_VERSION).or_insert_with(|| version.clone());
            }
        }
        let builder = &mut builders[index];
        if builder.drafts.len() >= EMIT_BATCH {
            emit.drafts(index, builder.take())?;
        }
    }
    if !recognised {
        return Err(InteropError::NotThisFormat("no line with a Claude Code `type` and `uuid`"));
    }
    // Subagent runs may continue anywhere in the file: no carrying on past them.
    let checkpoint = (builders.len() == 1).then(|| super::Checkpoint {
        boundary,
        tip: tip.clone(),
        tasks: tasks.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        ..builders[0].checkpoint()
    });
    let mut conversations = vec![(titles.main(), None)];
    for (i, builder) in builders.iter_mut().enumerate() {
        emit.drafts(i, builder.take())?;
        if i > 0 {
            let title = parts[i].take().unwrap_or_else(|| format!("subagent {i}"));
            conversations.push((Some(title), Some(0)));
        }
    }
    // A file of a subagent's lines alone (Claude Code 2.1 keeps each in its own file).
    if place.cwd.is_none() {
        place = side_place;
    }
    Ok(Outcome { format: Format::ClaudeCode, conversations, report, place, checkpoint, forks: Vec::new() })
}

/// The candidates for a session's title, in the order Claude Code prefers them.
#[derive(Default)]
struct Titles {
    /// The last `custom-title` (a later `/rename` wins).
    custom: Option<String>,
    /// The last `ai-title`.
    ai: Option<String>,
    /// The first `summary` record.
    summary: Option<String>,
    /// The first prompt the user typed in the main conversation.
    prompt: Option<String>,
    /// The first slash command's command line, for a session of commands alone.
    command: Option<String>,
    /// The first prompt of a subagent, for a file of a subagent's lines alone.
    side: Option<String>,
}

impl Titles {
    /// Whether a user line of the main conversation (or a sidechain) can still give a title.
    fn wants(&self, sidechain: bool) -> bool {
        if sidechain { self.side.is_none() } else { self.prompt.is_none() }
    }

    fn prompt_seen(&mut self, sidechain: bool, text: &str) {
        if sidechain {
            self.side = self.side.take().or_else(|| title::from_prompt(text));
            return;
        }
        self.prompt = self.prompt.take().or_else(|| title::from_prompt(text));
        if self.command.is_none() {
            self.command = title::from_command(text);
        }
    }

    fn main(self) -> Option<String> {
        self.custom.or(self.ai).or(self.summary).or(self.prompt).or(self.command).or(self.side)
    }
}

/// The text blocks of a user line's content, joined (tool results left out).
fn user_text(content: &Value) -> String {
    match content {
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        other => text_of(other),
    }
}

/// Remember the description of each subagent call (`Task`, or `Agent` since Claude Code
/// 2.1) by its prompt: the subagent's first user line is that prompt.
fn note_tasks(content: &Value, tasks: &mut HashMap<String, String>) {
    let Value::Array(blocks) = content else { return };
    for block in blocks {
        if block.get("type").and_then(Value::as_str) != Some("tool_use")
            || !matches!(block.get("name").and_then(Value::as_str), Some("Task" | "Agent"))
        {
            continue;
        }
        let input = block.get("input");
        let prompt = input.and_then(|i| i.get("prompt")).and_then(Value::as_str);
        let description = input.and_then(|i| i.get("description")).and_then(Value::as_str).and_then(title::from_record);
        if let (Some(prompt), Some(description)) = (prompt, description) {
            tasks.insert(prompt.trim().to_owned(), description);
        }
    }
}

/// The id of the `n`th event made from one line.
fn part_id(uuid: Option<&str>, n: usize) -> Option<String> {
    uuid.map(|u| if n == 0 { u.to_owned() } else { format!("{u}.{n}") })
}

/// What Claude Code reads back from a result's `toolUseResult` when it resumes: the
/// background tasks, subagents and workflows a call started, which it tells the model about
/// if no record says they ended (a shell started with `run_in_background`, then "didn't
/// finish before the previous session ended"). Only a record naming a task is kept, and only
/// the fields that scan reads: the rest repeats the result's own text (a command's whole
/// output, a file read), which would double what convo stores.
fn task_record(record: Option<&Value>) -> Option<Value> {
    const NAMES: [&str; 6] = ["backgroundTaskId", "taskId", "task_id", "agentId", "resumedAgentId", "revivedAgentId"];
    const READ: [&str; 18] = [
        "agentId",
        "background",
        "backgroundTaskId",
        "canContinueAgent",
        "canReadOutputFile",
        "commandName",
        "endedLoopWakeup",
        "outputFile",
        "resumedAgentId",
        "revivedAgentId",
        "runId",
        "status",
        "success",
        "taskId",
        "taskType",
        "task_id",
        "task_type",
        "timeoutMs",
    ];
    let Value::Object(record) = record? else { return None };
    if !NAMES.iter().any(|k| record.get(*k).is_some_and(Value::is_string)) && record.get("endedLoopWakeup").is_none() {
        return None;
    }
    let mut kept: serde_json::Map<String, Value> =
        record.iter().filter(|(k, _)| READ.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    // A shell moved to the background is told by its `stdout` being a string; what it printed
    // before is in the result's text already.
    if kept.contains_key("backgroundTaskId") && record.get("stdout").is_some_and(Value::is_string) {
        kept.insert("stdout".into(), Value::String(String::new()));
    }
    // Strings a launch names itself by (a subagent's description, a workflow's name, a
    // resumed agent's message, an error), short where they are read.
    for key in ["description", "workflowName", "message", "error"] {
        if let Some(v) = record.get(key).filter(|v| v.as_str().is_some_and(|s| s.len() <= 1000)) {
            kept.insert(key.into(), v.clone());
        }
    }
    Some(Value::Object(kept))
}

/// The byte lengths of a user line's text blocks, when it has several: the importer joins
/// them with newlines into one event, and Claude Code sends each as its own block (an
/// `<ide_opened_file>` note and the prompt typed after it), so a resume splits them again.
fn text_parts(texts: &[String]) -> Option<Value> {
    (texts.len() > 1).then(|| Value::Array(texts.iter().map(|t| Value::from(t.len())).collect()))
}

fn user_line(
    b: &mut Builder,
    report: &mut Report,
    content: &Value,
    uuid: Option<&str>,
    ts: Option<&str>,
    mut task: Option<Value>,
) {
    let blocks = match content {
        Value::Array(blocks) => blocks.clone(),
        other => vec![serde_json::json!({"type": "text", "text": text_of(other)})],
    };
    let mut n = 0;
    let mut texts = Vec::new();
    for block in &blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => texts.push(block.get("text").and_then(Value::as_str).unwrap_or("").to_owned()),
            Some("tool_result") => {
                let call_id = block.get("tool_use_id").and_then(Value::as_str).unwrap_or("").to_owned();
                let content = block.get("content").unwrap_or(&Value::Null);
                let kind = Kind::ToolResult {
                    call_id,
                    content: text_of(content),
                    is_error: block.get("is_error") == Some(&Value::Bool(true)),
                };
                // Blocks that are not text (ToolSearch's `tool_reference`s, which the agent
                // renders itself when it resumes) are kept as they came, for `resume`.
                let mut extra = serde_json::Map::new();
                if let Value::Array(parts) = content
                    && parts.iter().any(|p| p.get("type").and_then(Value::as_str) != Some("text"))
                {
                    extra.insert("claude_content".into(), content.clone());
                }
                if let Some(task) = task.take() {
                    extra.insert("claude_task".into(), task);
                }
                if b.push_with(report, kind, part_id(uuid, n).as_deref(), ts, extra) {
                    n += 1;
                } else {
                    skip(report, "tool result without its call");
                }
            }
            Some(other) => skip(report, format!("user `{other}` block")),
            None => skip(report, "user block without a type"),
        }
    }
    let text = texts.join("\n");
    if !text.trim().is_empty() {
        let mut extra = serde_json::Map::new();
        if let Some(parts) = text_parts(&texts) {
            extra.insert("claude_texts".into(), parts);
        }
        b.push_with(report, Kind::User { content: text }, part_id(uuid, n).as_deref(), ts, extra);
    } else if n == 0 {
        skip(report, "empty user line");
    }
}

/// `message`: the id of the API message the line is part of (kept: Claude Code joins the
/// lines of one message back into one when it resumes) and the model that wrote it.
/// `usage`: the tokens the line records, kept on its first event. Every line of one message
/// records the message's usage, its output count growing as the message streamed: a sum
/// counts a `message_id` once, by its last line ([`crate::event::usage_of`]).
fn assistant_line(
    b: &mut Builder,
    report: &mut Report,
    content: &Value,
    uuid: Option<&str>,
    ((message_id, model), usage): ((Option<&Value>, Option<&Value>), Option<crate::event::Usage>),
    ts: Option<&str>,
) {
    let blocks = match content {
        Value::Array(blocks) => blocks.clone(),
        other => vec![serde_json::json!({"type": "text", "text": text_of(other)})],
    };
    let mut usage_kept = false;
    for (n, block) in blocks.iter().enumerate() {
        let id = part_id(uuid, n);
        let mut extra = serde_json::Map::new();
        for (key, value) in [("message_id", message_id), ("model", model)] {
            if let Some(value) = value.filter(|v| v.is_string()) {
                extra.insert(key.into(), value.clone());
            }
        }
        let kept_usage = usage.map(|u| serde_json::to_value(u).unwrap_or_default());
        let kind = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                Kind::Assistant { content: block.get("text").and_then(Value::as_str).unwrap_or("").to_owned() }
            }
            Some("thinking") => {
                // The API checks a thinking block's signature when it is sent back: a resume
                // (`convo resume`) needs it.
                if let Some(signature) = block.get("signature").filter(|s| s.is_string()) {
                    extra.insert("signature".into(), signature.clone());
                }
                Kind::Reasoning { content: block.get("thinking").and_then(Value::as_str).unwrap_or("").to_owned() }
            }
            Some("tool_use") => {
                // Who made the call (Claude Code 2.1: `{"type": "direct"}`), sent back as it came.
                if let Some(caller) = block.get("caller").filter(|c| c.is_object()) {
                    extra.insert("claude_caller".into(), caller.clone());
                }
                Kind::ToolCall {
                    call_id: block.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
                    name: block.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned(),
                    arguments: arguments(block.get("input")),
                }
            }
            Some(other) => {
                skip(report, format!("assistant `{other}` block"));
                continue;
            }
            None => {
                skip(report, "assistant block without a type");
                continue;
            }
        };
        if let Some(u) = kept_usage.filter(|_| !usage_kept) {
            extra.insert("usage".into(), u);
            usage_kept = true;
        }
        b.push_with(report, kind, id.as_deref(), ts, extra);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_turn_ends_with_an_answer_of_the_main_session() {
        let said = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"done"}]}}"#;
        let calls =
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}}"#;
        let result =
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}}"#;
        let sidechain = r#"{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"text","text":"x"}]}}"#;
        assert_eq!(ends_turn(said), Some(true));
        assert_eq!(ends_turn(calls), Some(false));
        assert_eq!(ends_turn(result), Some(false));
        assert_eq!(ends_turn(sidechain), Some(false));
        assert_eq!(ends_turn(r#"{"type":"system","subtype":"stop_hook_summary"}"#), None);
        assert_eq!(ends_turn("{not json"), None);
    }

    #[test]
    fn a_result_keeps_what_claude_code_reads_of_the_task_its_call_started() {
        let shell = json!({"stdout": "long output", "stderr": "", "interrupted": false, "backgroundTaskId": "dce0af"});
        assert_eq!(task_record(Some(&shell)), Some(json!({"backgroundTaskId": "dce0af", "stdout": ""})));
        let agent = json!({"status": "async_launched", "agentId": "a1", "description": "look", "content": [1, 2]});
        assert_eq!(
            task_record(Some(&agent)),
            Some(json!({"status": "async_launched", "agentId": "a1", "description": "look"}))
        );
        // A result that started nothing keeps nothing.
        assert_eq!(task_record(Some(&json!({"stdout": "x", "stderr": ""}))), None);
        assert_eq!(task_record(Some(&json!("Error: no"))), None);
        assert_eq!(task_record(None), None);
    }

    fn parents(pairs: &[(&str, Option<&str>)]) -> HashMap<String, Option<String>> {
        pairs.iter().map(|(c, p)| (c.to_string(), p.map(str::to_owned))).collect()
    }

    /// A chain of n sidechain lines resolves in at most 2n steps (each line is walked once,
    /// plus one memo hit per walk), whatever order the map yields them in.
    #[test]
    fn a_long_chain_resolves_in_linear_steps() {
        let n = 16_000;
        let mut parent = HashMap::new();
        parent.insert("s0".to_owned(), Some("main".to_owned()));
        for i in 1..n {
            parent.insert(format!("s{i}"), Some(format!("s{}", i - 1)));
        }
        let (roots, steps) = resolve_roots(&parent);
        assert_eq!(roots.len(), n);
        assert!(roots.values().all(|r| r == "s0"));
        assert!(steps <= 2 * n, "{steps} steps for {n} lines");
    }

    #[test]
    fn runs_branches_and_cycles_get_one_root_each() {
        let parent = parents(&[
            ("a1", Some("main")),
            ("a2", Some("a1")),
            ("a3", Some("a2")),
            ("b1", None),
            ("b2", Some("b1")),
            ("b3", Some("b1")),
            // A cycle, and a line leading into it.
            ("c2", Some("c1")),
            ("c1", Some("c3")),
            ("c3", Some("c2")),
            ("d", Some("c3")),
        ]);
        let (roots, steps) = resolve_roots(&parent);
        let root = |u: &str| roots[u].as_str();
        assert_eq!([root("a1"), root("a2"), root("a3")], ["a1"; 3]);
        assert_eq!([root("b1"), root("b2"), root("b3")], ["b1"; 3]);
        assert_eq!([root("c1"), root("c2"), root("c3"), root("d")], ["c1"; 4]);
        assert!(steps <= 2 * parent.len(), "{steps}");
    }
}
