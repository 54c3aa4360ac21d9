//! opencode: its SQLite database imported session by session (`convo import DB`), again
//! with only what is new, and followed by `watch`; tested on sessions the real opencode
//! (from .ci/agents.sh) records offline against the recording server. Only malformed and
//! hostile databases are made here by hand.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::agents::{Recorder, agents, natural_opencode_session, opencode_config, opencode_db, run_agent};
use crate::handoff::project;

macro_rules! agents_or_skip {
    () => {
        match agents() {
            Some(a) => a,
            None => return,
        }
    };
}

fn events(env: &TestEnv, id: &str) -> Vec<Value> {
    env.run(&["show", id, "--format", "jsonl"]).ok().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn list(env: &TestEnv) -> Value {
    serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap()
}

/// `type name` of each event.
fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            format!("{} {}", e["type"].as_str().unwrap(), e["name"].as_str().unwrap_or_default()).trim().to_owned()
        })
        .collect()
}

/// A session reading a file, running two commands (one fails), editing a file and writing
/// one, then answering.
fn natural_session(env: &TestEnv, proj: &Path) -> (String, Recorder) {
    let agents = agents().expect("checked by the caller");
    let script = json!([
        {"thought": "The user wants the notes: I will read the file.",
         "tool": {"name": "read", "input": {"filePath": proj.join("notes.txt").to_str().unwrap()}},
         "usage": {"prompt_tokens": 1200, "completion_tokens": 40, "prompt_tokens_details": {"cached_tokens": 1000},
                   "completion_tokens_details": {"reasoning_tokens": 20}}},
        {"tool": {"name": "bash", "input": {"command": "wc -l notes.txt", "description": "count lines"}}},
        {"tool": {"name": "bash", "input": {"command": "false", "description": "fail"}}},
        {"tool": {"name": "edit", "input": {"filePath": proj.join("notes.txt").to_str().unwrap(),
                                             "oldString": "hello", "newString": "hi"}}},
        {"tool": {"name": "write", "input": {"filePath": proj.join("new.txt").to_str().unwrap(), "content": "new\n"}}},
        {"text": "The file says hello."}
    ]);
    natural_opencode_session(&agents.opencode, &env.home(), proj, &env.root, &script, "what is in notes.txt?")
}

/// What opencode's own database says of a session: its title.
fn opencode_title(db: &Path, session: &str) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT title FROM session WHERE id = ?1", [session], |r| r.get(0)).unwrap()
}

#[test]
fn a_natural_opencode_session_imports_part_by_part_and_again_only_what_is_new() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let (session, rec) = natural_session(&env, &proj);
    let db = opencode_db(&env.home());
    let run = env.run(&["import", db.to_str().unwrap()]);
    let id = run.ok().trim().to_owned();
    assert!(run.stderr.contains("1 session, 1 new, 0 continued, 0 unchanged"), "{}", run.stderr);
    let mut evs = events(&env, &id);
    assert_eq!(
        kinds(&evs),
        [
            "user",
            "reasoning",
            "tool_call read",
            "tool_result",
            "tool_call bash",
            "tool_result",
            "tool_call bash",
            "tool_result",
            "tool_call edit",
            "tool_result",
            "tool_call write",
            "tool_result",
            "assistant"
        ]
    );
    assert_eq!(evs[1]["content"], "The user wants the notes: I will read the file.");
    // opencode's count of the first call: 200 outside the cache, 1000 read from it, 20 of
    // 40 out spent thinking.
    assert_eq!(
        evs[1]["usage"],
        json!({"input_tokens": 200, "output_tokens": 40, "cache_read_tokens": 1000, "reasoning_tokens": 20})
    );
    assert_eq!(evs[1]["model"], "test-model");
    assert!(evs[2].get("usage").is_none());
    let reasoning = evs.remove(1);
    assert!(evs[0]["content"].as_str().unwrap().contains("what is in notes.txt?"), "{}", evs[0]);
    assert!(evs[0]["id"].as_str().unwrap().starts_with("prt_"), "{}", evs[0]);
    assert!(evs[0]["opencode_message"]["id"].as_str().unwrap().starts_with("msg_"), "{}", evs[0]);
    assert_eq!(evs[1]["arguments"], json!({"filePath": proj.join("notes.txt").to_str().unwrap()}));
    assert_eq!(evs[1]["opencode_part"]["callID"], evs[1]["call_id"]);
    assert_eq!(evs[1]["opencode_part"]["state"]["status"], "completed");
    assert_eq!(evs[2]["id"], format!("{}.result", evs[1]["id"].as_str().unwrap()));
    assert!(evs[2]["content"].as_str().unwrap().contains("1: hello from notes"), "{}", evs[2]);
    assert_eq!(evs[3]["arguments"]["command"], "wc -l notes.txt");
    assert!(evs[4]["content"].as_str().unwrap().contains("1 notes.txt"), "{}", evs[4]);
    assert_eq!((&evs[4]["exit_code"], &evs[4]["is_error"]), (&json!(0), &json!(false)));
    assert_eq!(evs[6]["exit_code"], 1, "the failed command's exit code is kept: {}", evs[6]);
    assert_eq!(evs[7]["arguments"]["oldString"], "hello");
    assert_eq!(evs[8]["content"], "Edit applied successfully.");
    assert_eq!(evs[9]["arguments"]["content"], "new\n");
    assert_eq!(evs[11]["content"], "The file says hello.");
    // Each other model call's usage and model, once, on the first event of its message.
    for i in [3, 5, 7, 9, 11] {
        assert_eq!(evs[i]["usage"], json!({"input_tokens": 10, "output_tokens": 5}), "{i}");
        assert_eq!(evs[i]["model"], "test-model", "{i}");
    }
    assert!(evs[4].get("usage").is_none());
    // opencode's step records travel with the events, for a writer to put back.
    assert_eq!(reasoning["agent_records"][0]["opencode_part"]["type"], "step-start");
    assert_eq!(evs[3]["agent_records"][0]["opencode_part"]["type"], "step-finish");
    let listed = list(&env);
    assert_eq!(listed[0]["title"], opencode_title(&db, &session).as_str());
    assert_eq!(listed[0]["cwd"], proj.to_str().unwrap());

    // Again: nothing new, nothing written.
    let before = env.snapshot();
    let again = env.run(&["import", db.to_str().unwrap()]);
    assert!(again.ok().is_empty());
    assert!(again.stderr.contains("0 new, 0 continued, 1 unchanged; 0 records read"), "{}", again.stderr);
    assert!(env.snapshot() == before, "an unchanged database wrote to the store");

    // opencode goes on in the same session: a re-import reads the new messages alone.
    let go_on = run_agent(&agents.opencode, &env.home(), &proj, rec.port, &["run", "--session", &session, "and now?"]);
    assert_eq!(go_on.code, 0, "{}", go_on.stderr);
    let more = env.run(&["import", "--follow", db.to_str().unwrap()]);
    assert_eq!(more.ok().trim(), id);
    assert!(more.stderr.contains("0 new, 1 continued"), "{}", more.stderr);
    let all = events(&env, &id);
    assert_eq!(kinds(&all[evs.len() + 1..]), ["user", "assistant"]);
    assert!(all[evs.len() + 1]["content"].as_str().unwrap().contains("and now?"));
    assert_eq!(list(&env).as_array().unwrap().len(), 1);

    // A record opencode's database holds broken is skipped whole and counted; the others come in.
    let broken = env.root.join("broken.db");
    // A copy with what opencode's write-ahead log holds too.
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let source = rusqlite::Connection::open_with_flags(&db, flags).unwrap();
    source.execute("VACUUM INTO ?1", [broken.to_str().unwrap()]).unwrap();
    drop(source);
    let conn = rusqlite::Connection::open(&broken).unwrap();
    let part = evs[3]["opencode_part"]["id"].as_str().unwrap();
    conn.execute("UPDATE part SET data = '{\"type\": \"tool\", ' WHERE id = ?1", [part]).unwrap();
    let message = evs[11]["opencode_message"]["id"].as_str().unwrap();
    conn.execute("UPDATE message SET data = 'not json' WHERE id = ?1", [message]).unwrap();
    drop(conn);
    let other = TestEnv::new();
    let run = other.run(&["import", broken.to_str().unwrap()]);
    let skipped: Vec<&str> = run.stderr.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(
        skipped,
        [
            "  skipped 1: opencode message whose data is not a JSON object (with its parts)",
            "  skipped 1: opencode part whose data is not a JSON object"
        ],
        "{}",
        run.stderr
    );
    let imported = kinds(&events(&other, run.ok().trim()));
    // The call and result of the broken part, and the answer of the broken message.
    assert_eq!(imported.len(), all.len() - 3, "{imported:?}");
    assert_eq!(imported.iter().filter(|k| *k == "assistant").count(), 1, "{imported:?}");
}

/// opencode compacts a session that outgrew its model's context (the recording server says
/// it used 9,500 of 10,000 tokens) and hands work to a subagent: the compaction is a convo
/// compaction with opencode's summary, the subagent's session a conversation of its own,
/// linked to its parent's.
#[test]
fn an_opencode_compaction_and_subagent_import_as_a_compaction_and_a_linked_conversation() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let script = json!([
        {"tool": {"name": "task", "input": {"description": "look around", "prompt": "read notes.txt",
                                             "subagent_type": "general"}}},
        {"tool": {"name": "read", "input": {"filePath": proj.join("notes.txt").to_str().unwrap()}}},
        {"text": "the notes say hello"},
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
    let db = opencode_db(&env.home());
    let imported = env.run(&["import", db.to_str().unwrap()]);
    let ids: Vec<String> = imported.ok().lines().map(str::to_owned).collect();
    assert_eq!(ids.len(), 2, "{}", imported.stderr);
    assert!(imported.stderr.contains("compactions from the source: 1"), "{}", imported.stderr);
    let main = events(&env, &ids[0]);
    assert_eq!(
        kinds(&main),
        ["user", "tool_call task", "tool_result", "assistant", "compaction", "user", "assistant"],
        "{main:?}"
    );
    let compaction = &main[4];
    assert_eq!(compaction["summary"]["by"], "opencode");
    assert_eq!(compaction["summary"]["text"], "ok from the recording server");
    assert_eq!(compaction["from_event"], main[0]["id"]);
    assert_eq!(compaction["to_event"], main[3]["id"]);
    let history = compaction["summary"]["agent_history"].as_array().unwrap();
    assert_eq!(history[0]["parts"][0]["type"], "compaction");
    assert_eq!(history[1]["message"]["summary"], true);
    assert_eq!(main[5]["opencode_part"]["synthetic"], true, "opencode's own prompt to go on: {}", main[5]);
    let sub = events(&env, &ids[1]);
    assert_eq!(kinds(&sub), ["user", "tool_call read", "tool_result", "assistant"]);
    assert_eq!(sub[3]["content"], "the notes say hello");
    let listed = list(&env);
    let child = listed.as_array().unwrap().iter().find(|c| c["id"] == ids[1].as_str()).unwrap();
    assert_eq!(child["subagent_of"], ids[0].as_str());
    assert_eq!(child["title"], "look around (@general subagent)");
    let compacted = env.run(&["show", &ids[0], "--compacted"]).ok().to_owned();
    assert!(compacted.contains("ok from the recording server") && !compacted.contains("first answer"), "{compacted}");
}

/// A database made by hand: opencode's three tables, as few columns as are read.
fn hand_made(path: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, title TEXT NOT NULL, directory TEXT NOT NULL,
                               time_created INTEGER NOT NULL);
         CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
                               data TEXT NOT NULL);
         CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
                            data TEXT NOT NULL);",
    )
    .unwrap();
    conn.execute_batch(sql).unwrap();
}

#[test]
fn a_database_that_is_not_opencodes_is_refused_in_one_line_and_nothing_is_written() {
    let env = TestEnv::new();
    let other = env.root.join("other.db");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE notes (text TEXT);").unwrap();
    let corrupt = env.root.join("corrupt.db");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend(std::iter::repeat_n(0x5a, 4000));
    std::fs::write(&corrupt, bytes).unwrap();
    let before = env.snapshot();
    let err = env.run(&["import", other.to_str().unwrap()]).fails_with(3).to_owned();
    insta::assert_snapshot!(err, @r"
    error: other.db: not an opencode database (no `session` table)
    hint: nothing was written
    ");
    let err = env.run(&["import", corrupt.to_str().unwrap()]).fails_with(3).to_owned();
    insta::assert_snapshot!(err, @r"
    error: corrupt.db: not a readable SQLite database (file is not a database)
    hint: nothing was written
    ");
    assert!(env.snapshot() == before);
    // And on a machine with no store yet, none is made.
    let bare = TestEnv::bare();
    bare.command_without_store(&["import", other.to_str().unwrap()]).output().unwrap();
    assert!(!bare.home().join(".local/share/convo").exists());
}

/// Session ids, directories and titles are opencode's data: one made to climb out of a
/// folder names no file convo reads or writes.
#[test]
fn hostile_values_in_an_opencode_database_choose_no_path() {
    let env = TestEnv::new();
    let db = env.root.join("opencode.db");
    let evil = "../../../../../../tmp/evil-opencode";
    hand_made(
        &db,
        &format!(
            "INSERT INTO session VALUES ('{evil}', '{evil}', '../../../.bashrc', '{evil}', 1);
             INSERT INTO message VALUES ('../msg', '{evil}', 2, '{{\"role\":\"user\",\"time\":{{\"created\":2}}}}');
             INSERT INTO part VALUES ('../../prt', '../msg', '{evil}', '{{\"type\":\"text\",\"text\":\"hi\"}}');"
        ),
    );
    let outside = files(&env.root);
    let run = env.run(&["import", db.to_str().unwrap()]);
    let id = run.ok().trim().to_owned();
    assert_eq!(files(&env.root), outside, "a file outside the store changed");
    assert!(!Path::new("/tmp/evil-opencode").exists());
    let listed = list(&env);
    assert_eq!(listed[0]["title"], "../../../.bashrc");
    assert!(listed[0].get("cwd").is_none_or(|c| c == evil), "{listed}");
    // The part id is no event id convo takes: the event has one of its own, the source's kept.
    let evs = events(&env, &id);
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0]["source_id"], "../../prt");
}

/// Every file under `dir` but the store's, with its length.
fn files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            if path.starts_with(dir.join("store")) {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), e.metadata().unwrap().len()));
            }
        }
    }
    out.sort();
    out
}

/// Each event as `id type content` (a message record opencode updates later, such as the
/// diff summary of a user message, is as it was when read).
fn shapes(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            format!("{} {} {}", e["id"], e["type"], e.get("content").or(e.get("arguments")).unwrap_or(&Value::Null))
        })
        .collect()
}

/// `watch` follows opencode's database where opencode keeps it (XDG's data folder), also
/// while opencode is writing to it, and takes each message once: what it captured equals
/// one import of the finished database.
#[test]
fn watch_follows_opencodes_database_by_default_while_opencode_writes_it() {
    let agents = agents_or_skip!();
    let env = TestEnv::new();
    let proj = project(&env);
    let (session, rec) = natural_session(&env, &proj);
    let swept = env.run(&["watch", "--once"]);
    assert!(swept.ok_status().contains("1 session new, 0 continued, 13 events"), "{}", swept.stderr);
    assert_eq!(list(&env)[0]["events"], 13);

    let mut cmd = env.command(&["watch", "--quiet-ms", "100", "--poll", "1"]);
    let mut watch = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let script_more = ["run", "--session", &session, "read it again"];
    let go_on = run_agent(&agents.opencode, &env.home(), &proj, rec.port, &script_more);
    assert_eq!(go_on.code, 0, "{}", go_on.stderr);
    let start = std::time::Instant::now();
    while list(&env)[0]["events"].as_u64().unwrap() < 15 {
        assert!(start.elapsed().as_secs() < 60, "watch did not import what opencode added");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // SAFETY: a signal to our own child.
    unsafe {
        libc::kill(watch.id() as i32, libc::SIGINT);
    }
    let status = watch.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(watch.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");

    let once = TestEnv::new();
    let id = once.run(&["import", opencode_db(&env.home()).to_str().unwrap()]).ok().trim().to_owned();
    let captured = list(&env)[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(shapes(&events(&env, &captured)), shapes(&events(&once, &id)));
    env.run(&["fsck"]).ok();
}

/// opencode's data folder holds its one database, not session files: `import` of the folder
/// imports the database, as a user pointing at `~/.local/share/opencode` means.
#[test]
fn importing_opencodes_folder_imports_its_database() {
    let env = TestEnv::new();
    let folder = env.root.join("opencode");
    std::fs::create_dir_all(&folder).unwrap();
    hand_made(
        &folder.join("opencode.db"),
        r#"INSERT INTO session VALUES ('ses_1', NULL, 'Fix the login', '/work', 1);
           INSERT INTO message VALUES ('msg_1', 'ses_1', 1, '{"role":"user","time":{"created":1}}');
           INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_1', '{"type":"text","text":"the login fails"}');"#,
    );
    env.run(&["import", folder.to_str().unwrap()]).ok();
    let list = list(&env);
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["title"], "Fix the login");
    assert_eq!(kinds(&events(&env, list[0]["id"].as_str().unwrap())), ["user"]);
}
