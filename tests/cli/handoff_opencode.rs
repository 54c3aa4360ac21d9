//! `convo resume --in opencode`: a conversation handed to the real opencode (from npm,
//! `common::agents`) as rows of its SQLite database makes it send the conversation, raw or
//! compacted, and the session shows for the directory it was written for. The safety rules
//! (nothing a conversation carries chooses a path or an id; no session is ever replaced;
//! a failed write leaves the database and the store as they were) are tested without
//! opencode, on a database of the tables opencode 1.18.33 makes
//! (`tests/fixtures/opencode-1.18.33-session-tables.sql`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::agents::{Recorder, agents, opencode_config, opencode_db, run_agent};
use crate::handoff::{files_under, project};

macro_rules! agents_or_skip {
    () => {
        match agents() {
            Some(a) => a,
            None => return,
        }
    };
}

fn claude_fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/claude-code/ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
}

/// Import the Claude Code fixture; its main conversation's id.
fn import_claude(env: &TestEnv) -> String {
    let out = env.run(&["import", claude_fixture().to_str().unwrap()]);
    out.ok().lines().next().unwrap().trim().to_owned()
}

/// opencode, run once in `cwd` (`session list`), makes its database as a user's first run does.
fn opencode_made_its_database(env: &TestEnv, cwd: &Path) {
    let agents = agents().unwrap();
    opencode_config(&env.home(), 9);
    let run = run_agent(&agents.opencode, &env.home(), cwd, 9, &["session", "list"]);
    assert_eq!(run.code, 0, "opencode session list: {}\n{}", run.stdout, run.stderr);
    assert!(opencode_db(&env.home()).is_file());
}

/// `convo resume --in opencode` run in `cwd`; the session id it printed.
fn convo_resume(env: &TestEnv, cwd: &Path, args: &[&str]) -> String {
    let mut cmd = env.command(&[&["resume", "--in", "opencode"], args].concat());
    cmd.current_dir(cwd);
    crate::common::run_command(cmd, "").ok().trim().to_owned()
}

/// Carry session `session` on in opencode with `prompt`; what it sent.
fn opencode_resume(env: &TestEnv, cwd: &Path, name: &str, session: &str, prompt: &str) -> Value {
    let agents = agents().unwrap();
    let rec = Recorder::start(&env.root, name, None);
    opencode_config(&env.home(), rec.port);
    let run = run_agent(&agents.opencode, &env.home(), cwd, rec.port, &["run", "--session", session, prompt]);
    assert_eq!(run.code, 0, "opencode run --session {session}: {}\n{}", run.stdout, run.stderr);
    rec.last_main_body()
}

/// The session ids `opencode session list` shows in `cwd`.
fn opencode_sessions(env: &TestEnv, cwd: &Path) -> Vec<String> {
    let agents = agents().unwrap();
    let run = run_agent(&agents.opencode, &env.home(), cwd, 9, &["session", "list", "--format", "json"]);
    assert_eq!(run.code, 0, "opencode session list: {}\n{}", run.stdout, run.stderr);
    let list: Value = serde_json::from_str(&run.stdout).unwrap_or(json!([]));
    list.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect()
}

/// What opencode sent after its system prompt, whole.
fn opencode_sent(body: &Value) -> Vec<Value> {
    body["messages"].as_array().unwrap().iter().filter(|m| m["role"] != "system").cloned().collect()
}

/// What opencode sent after its system prompt: each message's role and its text (text
/// parts joined), tool calls and tool results' ids.
fn opencode_messages(body: &Value) -> Vec<Value> {
    let text = |content: &Value| match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    };
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| json!({"role": m["role"], "text": text(&m["content"]), "tool_calls": m["tool_calls"]}))
        .collect()
}

/// A Claude Code conversation carries on in opencode: opencode sends its prompts and
/// answers, its tool calls and results as text it reads (none as calls of its own), then
/// the new prompt; the session shows in `opencode session list` for the directory.
#[test]
fn a_claude_code_conversation_carries_on_in_opencode_with_its_tool_calls_as_text() {
    agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let id = import_claude(&env);
    opencode_made_its_database(&env, &proj);
    let session = convo_resume(&env, &proj, &[&id]);
    assert!(session.starts_with("ses_") && session.len() == 30, "{session}");
    assert_eq!(opencode_sessions(&env, &proj), std::slice::from_ref(&session));

    let sent = opencode_messages(&opencode_resume(&env, &proj, "claude-in-opencode", &session, "and now?"));
    let all = serde_json::to_string(&sent).unwrap();
    assert!(all.contains("Thanks! Please update CLAUDE.md for current changes"), "{all}");
    assert!(all.contains("[tool call: Write]"), "{all}");
    assert!(all.contains("[tool result: Write]"), "{all}");
    assert!(sent.iter().all(|m| m["tool_calls"].is_null() && m["role"] != "tool"), "a call sent as opencode's own");
    let last = sent.last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(last["text"].as_str().unwrap().contains("and now?"), "{last}");
    // What came before the new prompt: the conversation's user and assistant turns in turn.
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert!(roles.windows(2).all(|w| w[0] != w[1]), "{roles:?}");
}

/// In a git repository opencode knows the project by the repository's first commit: the
/// session convo writes there is listed in the repository and not outside it.
#[test]
fn an_opencode_session_written_in_a_repository_is_listed_in_that_repository() {
    agents_or_skip!();
    let env = TestEnv::new();
    let outside = project(&env);
    let repo = env.root.join("repo");
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&repo)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "first"]);
    let id = import_claude(&env);
    opencode_made_its_database(&env, &outside);
    let session = convo_resume(&env, &repo.join("sub"), &[&id]);
    assert_eq!(opencode_sessions(&env, &repo), [session]);
    assert_eq!(opencode_sessions(&env, &outside), Vec::<String>::new());
}

/// A conversation compacted in convo hands over as the view an LLM is sent: opencode sends
/// the summary as its own compaction (its question, the summary as the answer) and what
/// follows it, under half of what the raw hand-over makes it send.
#[test]
fn a_compacted_hand_over_reaches_opencode_as_its_own_compaction() {
    agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let id = import_claude(&env);
    opencode_made_its_database(&env, &proj);
    let raw = convo_resume(&env, &proj, &[&id]);
    env.run(&["compact", &id, "--digest", "--to", "-0"]).ok();
    let compacted = convo_resume(&env, &proj, &[&id, "--compacted"]);
    let raw_sent = opencode_messages(&opencode_resume(&env, &proj, "raw", &raw, "and now?"));
    let compacted_sent = opencode_messages(&opencode_resume(&env, &proj, "compacted", &compacted, "and now?"));
    let size = |m: &[Value]| serde_json::to_string(m).unwrap().len();
    assert!(size(&compacted_sent) * 2 < size(&raw_sent), "{} against {}", size(&compacted_sent), size(&raw_sent));
    assert_eq!(compacted_sent[0], json!({"role": "user", "text": "What did we do so far?", "tool_calls": null}));
    assert_eq!(compacted_sent[1]["role"], "assistant");
    let shown = env.run(&["show", &id, "--compacted", "--format", "jsonl"]).ok().to_owned();
    let summary = shown
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "assistant")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(compacted_sent[1]["text"], summary);
}

/// An opencode database with the session tables opencode 1.18.33 makes, for the tests that
/// run no opencode.
fn opencode_tables(env: &TestEnv) -> PathBuf {
    let db = opencode_db(&env.home());
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let schema = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode-1.18.33-session-tables.sql");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(&std::fs::read_to_string(schema).unwrap()).unwrap();
    db
}

/// Every row of the session tables, as text, in order.
fn rows(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut out = Vec::new();
    for table in ["project", "session", "message", "part"] {
        let mut stmt = conn.prepare(&format!("SELECT * FROM {table} ORDER BY 1")).unwrap();
        let n = stmt.column_count();
        let mut q = stmt.query([]).unwrap();
        while let Some(row) = q.next().unwrap() {
            let cells: Vec<String> = (0..n)
                .map(|i| match row.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Null => "NULL".to_owned(),
                    rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                    rusqlite::types::ValueRef::Real(v) => v.to_string(),
                    rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                        String::from_utf8_lossy(t).into_owned()
                    }
                })
                .collect();
            out.push(format!("{table}|{}", cells.join("|")));
        }
    }
    out
}

/// A conversation that arrives by `pull` carrying hostile values (a cwd, session id, title
/// and branch made to climb out of the agent's folder) becomes one session in opencode's
/// database, under an id of opencode's shape, for the directory the user named, and no
/// file anywhere.
#[test]
fn hostile_values_in_a_pulled_conversation_choose_no_opencode_path_or_id() {
    let a = TestEnv::new();
    let planted = a.root.join("planted.jsonl");
    let evil = "../../../../../../tmp/evil";
    let lines = [
        json!({"type": "summary", "summary": "../../../.bashrc", "leafUuid": "u2"}),
        json!({"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": evil, "cwd": evil, "gitBranch": "../../x",
               "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": "hi"}}),
        json!({"type": "assistant", "uuid": "u2", "parentUuid": "u1", "sessionId": evil, "cwd": evil,
               "timestamp": "2099-01-01T00:00:01Z", "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}}),
    ];
    std::fs::write(&planted, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    a.run(&["import", planted.to_str().unwrap()]).ok();
    let hub = crate::common::bare(&a.root, "hub");
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();

    let b = TestEnv::bare_at(5);
    b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();
    let work = b.root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let db = opencode_tables(&b);
    let before = files_under(&b.root);
    let session = convo_resume(&b, &work, &["../../../.bashrc"]);
    let shape = session.strip_prefix("ses_").is_some_and(|rest| {
        rest.len() == 26
            && rest[..12].chars().all(|c| c.is_ascii_hexdigit())
            && rest.chars().all(|c| c.is_ascii_alphanumeric())
    });
    assert!(shape, "{session}");
    let made: Vec<String> =
        files_under(&b.root).into_iter().filter(|f| !before.contains(f) && !f.starts_with("store/")).collect();
    assert_eq!(made, Vec::<String>::new());
    assert!(!Path::new("/tmp/evil").exists());
    let rows = rows(&db);
    let text = rows.join("\n");
    assert!(!text.contains("tmp/evil"), "the recorded cwd or session id was written: {text}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (id, directory, project): (String, String, String) = conn
        .query_row("SELECT id, directory, project_id FROM session", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    assert_eq!(
        (id.as_str(), directory.as_str(), project.as_str()),
        (session.as_str(), work.to_str().unwrap(), "global")
    );
    // A time from the future is no later than the hand-over: what opencode adds sorts after it.
    let (latest, created): (i64, i64) = conn
        .query_row(
            "SELECT max(m.time_created), s.time_created FROM message m JOIN session s ON s.id = m.session_id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(latest <= created + 1, "{latest} {created}");
}

/// A session already under the id a hand-over would take is never replaced: the command
/// fails with one line, and the database and the store stay as they were.
#[test]
fn an_existing_opencode_session_is_never_replaced() {
    let env = TestEnv::new();
    env.new_conversation("kept");
    env.run(&["append", "--user", "hi"]).ok();
    let work = env.root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let db = opencode_tables(&env);
    // The same instant makes the same id: the second hand-over meets the first one's session.
    let at = "2026-03-01T00:00:00Z";
    let mut cmd = env.command(&["resume", "--in", "opencode"]);
    cmd.current_dir(&work).env("CONVO_NOW", at);
    crate::common::run_command(cmd, "").ok();
    let (tables, store) = (rows(&db), env.snapshot());
    let mut cmd = env.command(&["resume", "--in", "opencode"]);
    cmd.current_dir(&work).env("CONVO_NOW", at);
    let again = crate::common::run_command(cmd, "");
    let stderr = again.fails_with(5);
    assert!(stderr.contains("a session ses_") && stderr.contains(" exists"), "{stderr}");
    assert_eq!(rows(&db), tables, "the database changed");
    assert!(env.snapshot() == store, "the store changed");
}

/// A write that fails half-way (the database refuses a part) leaves no row of the session
/// behind, and the store as it was.
#[test]
fn a_failed_write_leaves_opencodes_database_and_the_store_as_they_were() {
    let env = TestEnv::new();
    env.new_conversation("kept");
    env.run(&["append", "--user", "hi"]).ok();
    env.run(&["append", "--assistant", "hello"]).ok();
    let work = env.root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let db = opencode_tables(&env);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER refuse AFTER INSERT ON part WHEN (SELECT count(*) FROM part) > 1
         BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
    )
    .unwrap();
    drop(conn);
    // What a read of the store caches, cached before the store is taken as it was.
    env.run(&["show", "--format", "jsonl"]).ok();
    let (tables, store) = (rows(&db), env.snapshot());
    let mut cmd = env.command(&["resume", "--in", "opencode"]);
    cmd.current_dir(&work);
    let failed = crate::common::run_command(cmd, "");
    let stderr = failed.fails_with(5);
    assert!(stderr.contains("disk full"), "{stderr}");
    assert!(stderr.contains("hint: nothing was written"), "{stderr}");
    assert_eq!(rows(&db), tables, "the database changed");
    let now = env.snapshot();
    let changed: Vec<_> = now.keys().chain(store.keys()).filter(|k| now.get(*k) != store.get(*k)).collect();
    assert!(changed.is_empty(), "the store changed: {changed:?}");
}

/// Before opencode has ever run there is no database: convo says so in one line with what
/// to do, and makes nothing (opencode's schema is opencode's to make).
#[test]
fn resuming_in_opencode_before_it_ever_ran_says_to_run_it_once() {
    let env = TestEnv::new();
    env.new_conversation("kept");
    env.run(&["append", "--user", "hi"]).ok();
    let work = env.root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    env.run(&["show", "--format", "jsonl"]).ok();
    let store = env.snapshot();
    let mut cmd = env.command(&["resume", "--in", "opencode"]);
    cmd.current_dir(&work);
    let failed = crate::common::run_command(cmd, "");
    let stderr = failed.fails_with(3);
    let db = opencode_db(&env.home());
    insta::assert_snapshot!(stderr.replace(db.to_str().unwrap(), "$DB"), @"
    error: $DB: no opencode database (opencode has not run as this user yet)
    hint: run opencode once (it makes its database), or point XDG_DATA_HOME at the one it uses
    ");
    assert!(!db.parent().unwrap().exists(), "opencode's folder was made");
    assert!(env.snapshot() == store, "the store changed");
}

/// The events `capture` appends to conversation `id`.
fn events_added(env: &TestEnv, id: &str, capture: impl FnOnce()) -> Vec<Value> {
    let before = env.run(&["show", id, "--format", "jsonl"]).ok().lines().count();
    capture();
    let after = env.run(&["show", id, "--format", "jsonl"]).ok().to_owned();
    after.lines().skip(before).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A session opencode recorded (a file read, a command, an answer), imported and handed
/// back, makes opencode send what its own session makes it send: the same messages, tool
/// calls with their ids and results. What opencode adds to convo's session comes back into
/// the same conversation, once.
#[test]
fn an_opencode_session_resumed_from_convo_sends_what_its_own_session_sends() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let script = json!([
        {"thought": "The user wants the notes: I will read the file.",
         "tool": {"name": "read", "input": {"filePath": proj.join("notes.txt").to_str().unwrap()}}},
        {"tool": {"name": "bash", "input": {"command": "wc -l notes.txt", "description": "count lines"}}},
        {"text": "The file says hello."}
    ]);
    let (own, rec) = crate::common::agents::natural_opencode_session(
        &agents.opencode,
        &env.home(),
        &proj,
        &env.root,
        &script,
        "what is in notes.txt?",
    );
    drop(rec);
    let db = opencode_db(&env.home());
    let id = env.run(&["import", db.to_str().unwrap()]).ok().lines().next().unwrap().to_owned();
    let ours = convo_resume(&env, &proj, &[&id]);
    let mine = opencode_sent(&opencode_resume(&env, &proj, "ours", &ours, "and now?"));

    // The loop closes: the turn opencode added to convo's session, and nothing convo wrote.
    let added = events_added(&env, &id, || {
        let first = env.run(&["import", "--follow", db.to_str().unwrap()]);
        assert!(first.stderr.contains("0 new, 1 continued, 1 unchanged"), "{}", first.stderr);
        let again = env.run(&["import", "--follow", db.to_str().unwrap()]);
        assert!(again.stderr.contains("0 new, 0 continued, 2 unchanged"), "{}", again.stderr);
    });
    let kinds: Vec<&str> = added.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["user", "assistant"], "{added:?}");
    assert!(added[0]["content"].as_str().unwrap().contains("and now?"), "{added:?}");
    assert_eq!(env.run(&["list", "--format", "json"]).ok().matches("\"id\"").count(), 1);

    let theirs = opencode_sent(&opencode_resume(&env, &proj, "theirs", &own, "and now?"));
    assert_eq!(mine, theirs, "convo's session makes opencode send something else");
    assert!(theirs.iter().any(|m| m["role"] == "tool"), "{theirs:?}");
    assert!(serde_json::to_string(&theirs).unwrap().contains("I will read the file"), "{theirs:?}");
}

/// A session whose history opencode compacted hands over raw and compacted: opencode sends
/// for either what it sends for its own session, the summary and what followed it.
#[test]
fn a_compacted_opencode_session_resumes_raw_and_compacted_as_from_its_own_session() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let script = json!([
        {"tool": {"name": "read", "input": {"filePath": proj.join("notes.txt").to_str().unwrap()}}},
        {"text": "first answer", "usage": {"prompt_tokens": 9500, "completion_tokens": 5}},
        {"text": "after the compaction"}
    ]);
    let rec = Recorder::start(&env.root, "opencode-record", Some(&script));
    opencode_config(&env.home(), rec.port);
    let config_file = env.home().join(".config/opencode/opencode.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&config_file).unwrap()).unwrap();
    config["provider"]["rec"]["models"]["test-model"]["limit"] = json!({"context": 10000, "output": 1000});
    std::fs::write(&config_file, config.to_string()).unwrap();
    let run = run_agent(&agents.opencode, &env.home(), &proj, rec.port, &["run", "--auto", "look at the notes"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    drop(rec);
    let own = opencode_sessions(&env, &proj).remove(0);
    let db = opencode_db(&env.home());
    let imported = env.run(&["import", db.to_str().unwrap()]);
    assert!(imported.stderr.contains("compactions from the source: 1"), "{}", imported.stderr);
    let id = imported.ok().lines().next().unwrap().to_owned();

    let raw = convo_resume(&env, &proj, &[&id]);
    let compacted = convo_resume(&env, &proj, &[&id, "--compacted"]);
    let theirs = opencode_sent(&opencode_resume(&env, &proj, "theirs", &own, "and now?"));
    let raw_sent = opencode_sent(&opencode_resume(&env, &proj, "raw", &raw, "and now?"));
    let compacted_sent = opencode_sent(&opencode_resume(&env, &proj, "compacted", &compacted, "and now?"));
    assert_eq!(opencode_messages(&json!({"messages": theirs}))[0]["text"], "What did we do so far?", "{theirs:?}");
    assert_eq!(raw_sent, theirs, "raw");
    assert_eq!(compacted_sent, theirs, "compacted");
}

/// An opencode conversation carries on in Claude Code: its tool calls and results arrive as
/// text Claude Code reads, none as a call of Claude Code's own.
#[test]
fn an_opencode_conversation_carries_on_in_claude_code_with_its_tool_calls_as_text() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let script = json!([
        {"tool": {"name": "read", "input": {"filePath": proj.join("notes.txt").to_str().unwrap()}}},
        {"text": "The file says hello."}
    ]);
    let (_, rec) = crate::common::agents::natural_opencode_session(
        &agents.opencode,
        &env.home(),
        &proj,
        &env.root,
        &script,
        "what is in notes.txt?",
    );
    drop(rec);
    let db = opencode_db(&env.home());
    let id = env.run(&["import", db.to_str().unwrap()]).ok().lines().next().unwrap().to_owned();
    let mut cmd = env.command(&["resume", &id, "--in", "claude-code"]);
    cmd.current_dir(&proj);
    let session = crate::common::run_command(cmd, "").ok().trim().to_owned();
    let rec = Recorder::start(&env.root, "opencode-in-claude", None);
    let run = run_agent(&agents.claude, &env.home(), &proj, rec.port, &["-p", "--resume", &session, "and now?"]);
    assert_eq!(run.code, 0, "claude --resume {session}: {}\n{}", run.stdout, run.stderr);
    let sent = rec.last_main_body()["messages"].to_string();
    assert!(sent.contains("what is in notes.txt?"), "{sent}");
    assert!(sent.contains("[tool call: read]"), "{sent}");
    assert!(sent.contains("[tool result: read]") && sent.contains("hello from notes"), "{sent}");
    assert!(!sent.contains("\"tool_use\""), "an opencode call was sent as a Claude tool_use");
}

/// A database another process holds locked for writing (an opencode writing, for longer
/// than convo waits): the hand-over fails in one line, writing nothing to it or the store.
#[test]
fn a_locked_opencode_database_fails_the_hand_over_and_nothing_is_written() {
    let env = TestEnv::new();
    env.new_conversation("kept");
    env.run(&["append", "--user", "hi"]).ok();
    let work = env.root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let db = opencode_tables(&env);
    env.run(&["show", "--format", "jsonl"]).ok();
    let (tables, store) = (rows(&db), env.snapshot());
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let mut cmd = env.command(&["resume", "--in", "opencode"]);
    cmd.current_dir(&work);
    let failed = crate::common::run_command(cmd, "");
    let stderr = failed.fails_with(5).to_owned();
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert!(stderr.contains("database is locked"), "{stderr}");
    assert!(stderr.contains("a running opencode may hold it"), "{stderr}");
    assert_eq!(rows(&db), tables, "the database changed");
    assert!(env.snapshot() == store, "the store changed");
}

/// A teammate's opencode session, recorded with a provider this machine's opencode does not
/// have, carries on here with the model this machine's config names (opencode takes the
/// next turn's model from the last user message, and refuses one it cannot find).
#[test]
fn a_teammates_opencode_session_carries_on_with_this_machines_model() {
    let agents = agents_or_skip!();
    let theirs = TestEnv::new();
    let proj = project(&theirs);
    let script = json!([{"text": "The file says hello."}]);
    let (_, rec) = crate::common::agents::natural_opencode_session(
        &agents.opencode,
        &theirs.home(),
        &proj,
        &theirs.root,
        &script,
        "what is in notes.txt?",
    );
    drop(rec);

    // Here: the same conversation (imported from their database, as a pull brings it), and
    // an opencode whose only provider is another one.
    let here = TestEnv::new();
    let here_proj = project(&here);
    here.run(&["import", opencode_db(&theirs.home()).to_str().unwrap()]).ok();
    let rec = Recorder::start(&here.root, "here", None);
    let dir = here.home().join(".config/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let config = json!({
        "provider": {"mine": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "this machine's provider",
            "options": {"baseURL": format!("http://127.0.0.1:{}/v1", rec.port), "apiKey": "test"},
            "models": {"my-model": {"name": "my model", "tool_call": true}},
        }},
        "model": "mine/my-model",
        "autoupdate": false,
        "share": "disabled",
    });
    std::fs::write(dir.join("opencode.json"), config.to_string()).unwrap();
    let first = run_agent(&agents.opencode, &here.home(), &here_proj, rec.port, &["session", "list"]);
    assert_eq!(first.code, 0, "{}", first.stderr);

    let session = convo_resume(&here, &here_proj, &[]);
    let run =
        run_agent(&agents.opencode, &here.home(), &here_proj, rec.port, &["run", "--session", &session, "and now?"]);
    assert_eq!(run.code, 0, "opencode run --session {session}: {}\n{}", run.stdout, run.stderr);
    let body = rec.last_main_body();
    assert_eq!(body["model"], "my-model");
    assert!(serde_json::to_string(&body["messages"]).unwrap().contains("The file says hello."), "{body}");
}

/// The last user message of session `session` in opencode's database `db`.
fn last_prompt(db: &Path, session: &str) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(
        "SELECT id FROM message WHERE session_id = ?1 AND json_extract(data, '$.role') = 'user' \
         ORDER BY time_created DESC, id DESC LIMIT 1",
        [session],
        |r| r.get(0),
    )
    .unwrap()
}

/// Each event's type and text or tool name, what a line of a conversation says.
fn said(events: &str) -> Vec<String> {
    events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|e| format!("{} {}", e["type"].as_str().unwrap(), e["content"].as_str().or(e["name"].as_str()).unwrap()))
        .collect()
}

/// opencode takes a turn back (a revert, as its `/undo`, through `opencode serve`) and the
/// session goes on: what convo imported of the turn stays in the conversation, as it was,
/// and the session goes on in a fork that starts with the messages the revert kept, for
/// `import --follow` and `watch` alike; handed back, the fork makes opencode send what its
/// own reverted session makes it send.
#[test]
fn an_opencode_revert_goes_on_in_a_fork_that_resumes_as_opencodes_own_session() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let script = json!([
        {"tool": {"name": "read", "input": {"filePath": proj.join("notes.txt").to_str().unwrap()}}},
        {"text": "The file says hello."}
    ]);
    let (own, rec) = crate::common::agents::natural_opencode_session(
        &agents.opencode,
        &env.home(),
        &proj,
        &env.root,
        &script,
        "what is in notes.txt?",
    );
    let go_on = |prompt: &str| {
        let run = run_agent(&agents.opencode, &env.home(), &proj, rec.port, &["run", "--session", &own, prompt]);
        assert_eq!(run.code, 0, "opencode run --session: {}\n{}", run.stdout, run.stderr);
    };
    go_on("and the second line?");
    let db = opencode_db(&env.home());
    let dbs = db.to_str().unwrap();
    let watched = TestEnv::new();
    let id = env.run(&["import", dbs]).ok().lines().next().unwrap().to_owned();
    let before = env.run(&["show", &id, "--format", "jsonl"]).ok().to_owned();
    watched.run(&["watch", "--once", dbs]).ok();

    let taken_back = last_prompt(&db, &own);
    crate::common::agents::opencode_revert(&agents.opencode, &env.home(), &proj, &own, &taken_back);
    let reverted = env.run(&["import", "--follow", dbs]);
    assert!(reverted.stderr.contains("0 new, 0 continued, 1 unchanged"), "{}", reverted.stderr);
    go_on("and the first line?");
    drop(rec);

    let follow = env.run(&["import", "--follow", dbs]);
    assert!(follow.stderr.contains("1 session, 1 new, 0 continued, 0 unchanged"), "{}", follow.stderr);
    assert!(follow.stderr.contains("the session goes on in a fork"), "{}", follow.stderr);
    assert_eq!(env.run(&["show", &id, "--format", "jsonl"]).ok(), before, "the conversation changed");
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let fork = list.as_array().unwrap().iter().find(|c| c["id"] != id.as_str()).expect("a fork").clone();
    let title = list.as_array().unwrap().iter().find(|c| c["id"] == id.as_str()).unwrap()["title"].clone();
    assert_eq!(fork["title"], format!("{} (after revert 1)", title.as_str().unwrap()));
    assert_eq!(fork["forked_from"], json!({"id": id, "turn": 1}));
    let fork_id = fork["id"].as_str().unwrap().to_owned();
    let kept = said(&before);
    assert_eq!(kept[kept.len() - 2..], ["user \"and the second line?\"", "assistant ok from the recording server"]);
    let forked = said(env.run(&["show", &fork_id, "--format", "jsonl"]).ok());
    let expected: Vec<String> = kept[..kept.len() - 2]
        .iter()
        .cloned()
        .chain(["user \"and the first line?\"".to_owned(), "assistant ok from the recording server".to_owned()])
        .collect();
    assert_eq!(forked, expected);
    let again = env.run(&["import", "--follow", dbs]);
    assert!(again.stderr.contains("0 new, 0 continued, 1 unchanged"), "{}", again.stderr);

    // `watch` makes the same fork of the same conversation.
    let swept = watched.run(&["watch", "--once", dbs]);
    assert!(swept.ok_status().contains("1 session new, 0 continued"), "{}", swept.stderr);
    let watched_list: Value = serde_json::from_str(watched.run(&["list", "--format", "json"]).ok()).unwrap();
    let titles = |l: &Value| {
        let mut t: Vec<String> = l.as_array().unwrap().iter().map(|c| c["title"].to_string()).collect();
        t.sort();
        t
    };
    assert_eq!(titles(&watched_list), titles(&list));
    let watched_fork = watched_list.as_array().unwrap().iter().find(|c| c["forked_from"].is_object()).unwrap();
    assert_eq!(said(watched.run(&["show", watched_fork["id"].as_str().unwrap(), "--format", "jsonl"]).ok()), forked);

    let ours = convo_resume(&env, &proj, &[&fork_id]);
    let mine = opencode_sent(&opencode_resume(&env, &proj, "ours", &ours, "and now?"));
    let theirs = opencode_sent(&opencode_resume(&env, &proj, "theirs", &own, "and now?"));
    assert_eq!(mine, theirs, "convo's fork makes opencode send something else");
    let sent = serde_json::to_string(&theirs).unwrap();
    assert!(sent.contains("and the first line?") && !sent.contains("and the second line?"), "{sent}");
    env.run(&["fsck"]).ok();
}

/// Two opencode sessions carrying one conversation on from the same point, captured in one
/// import of the database: both land, each once, one of them in a fork of the
/// conversation; the next import adds each session's next turn to its own line.
#[test]
fn two_opencode_sessions_continuing_one_conversation_both_land_in_one_import() {
    agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    opencode_made_its_database(&env, &proj);
    let id = import_claude(&env);
    let before = env.run(&["list", "--format", "json"]).ok().matches("\"id\"").count();
    let one = convo_resume(&env, &proj, &[&id]);
    let two = convo_resume(&env, &proj, &[&id]);
    opencode_resume(&env, &proj, "one", &one, "first line");
    opencode_resume(&env, &proj, "two", &two, "second line");
    let db = opencode_db(&env.home());
    env.run(&["import", db.to_str().unwrap()]).ok();
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), before + 1, "{list:?}");
    let prompts = |c: &str| -> Vec<String> {
        let events = env.run(&["show", c, "--format", "jsonl"]).ok().to_owned();
        let events: Vec<Value> = events.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let ids: std::collections::HashSet<&str> = events.iter().map(|e| e["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), events.len(), "an event twice in {c}");
        events.iter().filter(|e| e["type"] == "user").map(|e| e["content"].as_str().unwrap().to_owned()).collect()
    };
    let holding = |prompt: &str| -> Vec<String> {
        list.iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .filter(|c| prompts(c).iter().any(|p| p.contains(prompt)))
            .collect()
    };
    let (a, b) = (holding("first line"), holding("second line"));
    assert_eq!((a.len(), b.len()), (1, 1));
    assert_ne!(a, b, "two sessions interleaved in one conversation");
    assert!(a[0] == id || b[0] == id, "one of them goes on in the conversation");
    let fork = if a[0] == id { &b[0] } else { &a[0] };
    let meta = list.iter().find(|c| c["id"] == json!(fork)).unwrap();
    assert_eq!(meta["forked_from"]["id"], json!(id));
    // The next turn of each goes to its own line.
    opencode_resume(&env, &proj, "two-again", &two, "second again");
    opencode_resume(&env, &proj, "one-again", &one, "first again");
    env.run(&["import", db.to_str().unwrap()]).ok();
    let list: Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    assert_eq!(list.as_array().unwrap().len(), before + 1);
    let shows = |c: &str, p: &str| prompts(c).iter().any(|s| s.contains(p));
    assert!(shows(&a[0], "first again") && !shows(&a[0], "second again"));
    assert!(shows(&b[0], "second again") && !shows(&b[0], "first again"));
}
