//! `import --follow`: a session file imported as it grows, a line at a time, with its last
//! line half-written at every step, ends up exactly as one import of the finished file; a
//! file cut short or rewritten is refused with the store unchanged.

use std::path::Path;

use crate::common::TestEnv;

const SESSION: &str = "../shared/corpus/claude-code/ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl";

fn source() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(SESSION)).unwrap()
}

/// Each conversation's stored events, main conversation first (by title).
/// A Codex 0.169 session from the recording server: a scripted tool call, another, an
/// answer, then `codex exec resume` and a second answer, each call with its own counts.
pub(crate) const CODEX_0169: &str = "tests/fixtures/codex-0.169.jsonl";
/// A session Gemini CLI 0.61 wrote against tests/agent_server.py: a prompt, a thought, a
/// file read and a command; then, resumed a minute later, its history compressed.
pub(crate) const GEMINI_061: &str = "tests/fixtures/gemini-cli-0.61.jsonl";

fn stored(env: &TestEnv) -> Vec<(String, String)> {
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let mut out: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            let id = r["id"].as_str().unwrap();
            (
                r["title"].as_str().unwrap_or_default().to_owned(),
                env.run(&["show", id, "--format", "jsonl"]).ok().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_session_followed_as_it_grows_equals_one_import_of_the_whole() {
    let whole = source();
    let lines: Vec<&[u8]> = whole.split_inclusive(|b| *b == b'\n').collect();
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("5c0375b4.jsonl");
    let follow = |env: &TestEnv| env.run(&["import", "--follow", file.to_str().unwrap()]);
    let mut written = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        written.extend_from_slice(line);
        // Every third line, a follow; the next line half-written behind it.
        if n % 3 != 0 && n + 1 != lines.len() {
            continue;
        }
        let mut bytes = written.clone();
        if let Some(next) = lines.get(n + 1) {
            bytes.extend_from_slice(&next[..next.len() / 2]);
        }
        std::fs::write(&file, &bytes).unwrap();
        follow(&env).ok();
    }
    std::fs::write(&file, &whole).unwrap();
    let before = env.snapshot();
    let again = follow(&env);
    assert!(again.stderr.contains("nothing new"), "{}", again.stderr);
    assert!(env.snapshot() == before, "a follow with nothing new writes nothing");

    let once = TestEnv::new();
    once.run(&["import", file.to_str().unwrap()]).ok();
    assert_eq!(stored(&env), stored(&once), "followed line by line vs imported whole");
    assert_eq!(stored(&env).len(), 3, "the main conversation and two subagents'");
    // Each follow's commit says what it was: an import, not a hand-made append.
    let log = env.run(&["log", "--all", "--oneline"]).ok().to_owned();
    // Titled by the session's first command line (its only prompt), never by the file's name.
    assert!(
        log.contains(
            "import: \"/orchestrator @CLAUDE.md を最新の状態にアップデートしてください\" followed from claude-code (+"
        ),
        "{log}"
    );
    assert!(!log.contains("5c0375b4.jsonl"), "{log}");
    assert!(!log.contains("append:"), "{log}");
    env.run(&["fsck"]).ok();
}

#[test]
fn a_file_cut_short_or_rewritten_is_refused_and_the_store_is_unchanged() {
    let whole = source();
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("5c0375b4.jsonl");
    let half = whole.len() / 2;
    let cut = half + whole[half..].iter().position(|b| *b == b'\n').unwrap() + 1;
    std::fs::write(&file, &whole[..cut]).unwrap();
    env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    let before = env.snapshot();

    std::fs::write(&file, &whole[..cut / 2]).unwrap();
    let run = env.run(&["import", "--follow", file.to_str().unwrap()]);
    assert!(run.fails_with(3).starts_with("error: 5c0375b4.jsonl is shorter than the"), "{}", run.stderr);
    assert!(env.snapshot() == before, "truncated");

    let mut rewritten = whole.clone();
    let at = rewritten[..cut].iter().position(|b| *b == b'a').unwrap();
    rewritten[at] = b'b';
    std::fs::write(&file, &rewritten).unwrap();
    let run = env.run(&["import", "--follow", file.to_str().unwrap()]);
    assert!(run.fails_with(3).contains("changed in its first"), "{}", run.stderr);
    assert!(run.stderr.contains("hint: nothing was written"), "{}", run.stderr);
    assert!(env.snapshot() == before, "rewritten");

    // The file as it should be: the follow carries on where the store says.
    std::fs::write(&file, &whole).unwrap();
    env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    let once = TestEnv::new();
    once.run(&["import", file.to_str().unwrap()]).ok();
    assert_eq!(stored(&env), stored(&once));
}

/// A session imported whole before (plain `import`) is taken over by a follow, not imported
/// a second time: unchanged, it gets the session key and is continued from there; changed
/// since, it is refused with the store untouched, since which lines are new cannot be told.
#[test]
fn a_session_imported_whole_before_is_continued_not_imported_twice() {
    let whole = source();
    let half = whole.len() / 2;
    let cut = half + whole[half..].iter().position(|b| *b == b'\n').unwrap() + 1;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("5c0375b4.jsonl");
    let path = file.to_str().unwrap();
    std::fs::write(&file, &whole[..cut]).unwrap();

    let env = TestEnv::new();
    env.run(&["import", path]).ok();
    let conversations = stored(&env).len();
    env.run(&["import", "--follow", path]).ok();
    assert_eq!(stored(&env).len(), conversations, "taken over, not imported again");
    std::fs::write(&file, &whole).unwrap();
    env.run(&["import", "--follow", path]).ok();
    let once = TestEnv::new();
    once.run(&["import", path]).ok();
    assert_eq!(stored(&env), stored(&once), "continued where the whole import ended");
    env.run(&["fsck"]).ok();

    // Changed after its whole import: refused, and the folder import says so and goes on.
    let changed = TestEnv::new();
    std::fs::write(&file, &whole[..cut]).unwrap();
    changed.run(&["import", path]).ok();
    std::fs::write(&file, &whole).unwrap();
    let before = changed.snapshot();
    let run = changed.run(&["import", "--follow", path]);
    assert!(run.fails_with(3).contains("was imported whole before"), "{}", run.stderr);
    assert!(run.stderr.contains("hint: nothing was written; `convo rm "), "{}", run.stderr);
    assert!(changed.snapshot() == before, "refused, nothing written");
    let folder = changed.run(&["import", dir.path().to_str().unwrap()]);
    assert!(folder.stderr.contains("0 new, 0 continued, 0 unchanged, 0 not sessions, 1 failed"), "{}", folder.stderr);
    assert!(changed.snapshot() == before, "the folder import wrote nothing either");
}

#[test]
fn a_session_captured_by_watch_is_not_imported_a_second_time() {
    let whole = source();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("5c0375b4.jsonl");
    let path = file.to_str().unwrap();
    std::fs::write(&file, &whole).unwrap();
    let env = TestEnv::new();
    env.run(&["watch", "--once", dir.path().to_str().unwrap()]).ok();
    let captured = stored(&env);
    let main = env.run(&["list", "--format", "json"]).ok().to_owned();
    let main: Vec<serde_json::Value> = serde_json::from_str(&main).unwrap();
    let id = main.iter().find(|r| r["subagent_of"].is_null()).unwrap()["id"].as_str().unwrap().to_owned();

    let before = env.snapshot();
    let again = env.run(&["import", path]);
    assert_eq!(
        again.fails_with(3).lines().next().unwrap(),
        format!(
            "error: 5c0375b4.jsonl is already captured, as {id} \"/orchestrator @CLAUDE.md を最新の状態にアップデートしてください\""
        ),
    );
    assert!(again.stderr.contains("hint: `convo import --follow FILE` adds what it gained since"), "{}", again.stderr);
    assert!(env.snapshot() == before, "refused, nothing written");
    assert_eq!(stored(&env), captured);

    // Asked for, a second copy is still made.
    env.run(&["import", "--again", path]).ok();
    assert_eq!(stored(&env).len(), 2 * captured.len());
}

#[test]
fn the_claude_code_hook_records_its_transcript_as_it_grows() {
    let whole = source();
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let session = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7";
    let file = dir.path().join(format!("{session}.jsonl"));
    let hook = |event: &str| {
        let input = serde_json::json!({
            "session_id": session,
            "transcript_path": file,
            "hook_event_name": event,
            "cwd": "/somewhere",
        });
        env.run_stdin(&["hook", "claude-code"], &input.to_string())
    };
    let cut = whole.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(19).unwrap().0 + 1;
    std::fs::write(&file, &whole[..cut]).unwrap();
    let first = hook("Stop");
    assert_eq!((first.code, first.stdout.as_str()), (0, ""), "{}", first.stderr);
    std::fs::write(&file, &whole).unwrap();
    let second = hook("PreCompact");
    assert_eq!((second.code, second.stdout.as_str()), (0, ""), "{}", second.stderr);
    let once = TestEnv::new();
    once.run(&["import", file.to_str().unwrap()]).ok();
    assert_eq!(stored(&env), stored(&once));

    // Not a hook's JSON, or a transcript of another session: refused, nothing written.
    let before = env.snapshot();
    env.run_stdin(&["hook", "claude-code"], "not json").fails_with(3);
    let other = serde_json::json!({"session_id": "another", "transcript_path": file});
    let refused = env.run_stdin(&["hook", "claude-code"], &other.to_string());
    assert!(refused.fails_with(3).contains("not the transcript of session another"), "{}", refused.stderr);
    assert!(env.snapshot() == before);
}

#[test]
fn a_folder_imports_new_sessions_continues_grown_ones_and_skips_the_rest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let codex = std::fs::read_dir(root.join("codex")).unwrap().next().unwrap().unwrap().path();
    let whole = source();
    let dir = tempfile::tempdir().unwrap();
    let projects = dir.path().join("projects/my-app");
    std::fs::create_dir_all(&projects).unwrap();
    std::fs::create_dir_all(dir.path().join("sessions/2026/11/25")).unwrap();
    let claude = projects.join("5c0375b4.jsonl");
    let cut = whole.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(29).unwrap().0 + 1;
    std::fs::write(&claude, &whole[..cut]).unwrap();
    let rollout = dir.path().join("sessions/2026/11/25").join(codex.file_name().unwrap());
    std::fs::copy(&codex, &rollout).unwrap();
    std::fs::write(dir.path().join("notes.jsonl"), "{\"a\": 1}\n").unwrap();
    std::fs::write(dir.path().join("empty.jsonl"), "").unwrap();
    std::fs::write(dir.path().join("README.md"), "not a session").unwrap();

    let env = TestEnv::new();
    let folder = dir.path().to_str().unwrap();
    let name = dir.path().file_name().unwrap().to_str().unwrap();
    let first = env.run(&["import", folder]);
    assert!(
        first.stderr.contains("4 files: 2 new, 0 continued, 0 unchanged, 2 not sessions, 0 failed"),
        "{}",
        first.stderr
    );
    std::fs::write(&claude, &whole).unwrap();
    let second = env.run(&["import", folder]);
    assert!(
        second.stderr.contains("4 files: 0 new, 1 continued, 1 unchanged, 2 not sessions, 0 failed"),
        "{}",
        second.stderr
    );
    // One commit per run, whatever the number of sessions; and a third run with nothing
    // new makes none.
    let subjects = env.git(&["log", "--format=%s"]).replace(name, "DIR");
    let subjects: Vec<&str> = subjects.lines().collect();
    assert_eq!(subjects.len(), 2, "{subjects:?}");
    assert!(subjects[0].starts_with("import: 1 session from DIR (+"), "{subjects:?}");
    assert!(subjects[1].starts_with("import: 2 sessions from DIR (+"), "{subjects:?}");
    env.run(&["import", folder]).ok();
    assert_eq!(env.git(&["rev-list", "--count", "--all"]).trim(), "2");
    // The continued conversation's log holds both commits, from its log index and from the
    // commits' own trailers alike.
    let logs = |env: &TestEnv| -> Vec<Vec<String>> {
        let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
        rows.iter()
            .map(|r| {
                let id = r["id"].as_str().unwrap();
                let entries: Vec<serde_json::Value> =
                    serde_json::from_str(env.run(&["log", id, "--format", "json"]).ok()).unwrap();
                entries
                    .iter()
                    .map(|e| format!("{} {}", e["subject"].as_str().unwrap().replace(name, "DIR"), e["events"]))
                    .collect()
            })
            .collect()
    };
    let indexed = logs(&env);
    assert!(indexed.iter().any(|log| log.len() == 2 && log[0].starts_with("import: 1 session")), "{indexed:?}");
    // The batch commit that continued it gives its counts after the change, as an append's.
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let continued = rows
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .find(|id| env.run(&["log", id, "--format", "json"]).ok().matches("\"commit\"").count() == 2)
        .unwrap();
    let entries: Vec<serde_json::Value> =
        serde_json::from_str(env.run(&["log", continued, "--format", "json"]).ok()).unwrap();
    let listed = rows.iter().find(|r| r["id"] == continued).unwrap();
    assert_eq!(entries[0]["conversation"], continued);
    assert_eq!(entries[0]["events"], listed["events"], "{entries:?}");
    assert_eq!(entries[0]["turns"], listed["turns"], "{entries:?}");
    std::fs::remove_dir_all(env.store.join(".git/convo/log")).unwrap();
    assert_eq!(logs(&env), indexed, "rebuilt from the commits alone");

    let once = TestEnv::new();
    once.run(&["import", claude.to_str().unwrap()]).ok();
    once.run(&["import", rollout.to_str().unwrap()]).ok();
    // Events without a source id (some of the Codex fixture's) get ids and times from each
    // store's clock: compared by type and content.
    let shape = |env: &TestEnv| -> Vec<(String, Vec<String>)> {
        stored(env)
            .into_iter()
            .map(|(title, lines)| {
                let events = lines
                    .lines()
                    .map(|l| {
                        let v: serde_json::Value = serde_json::from_str(l).unwrap();
                        format!("{} {}", v["type"], v["content"])
                    })
                    .collect();
                (title, events)
            })
            .collect()
    };
    assert_eq!(shape(&env), shape(&once), "a folder imported twice as it grew vs each file once");
    env.run(&["fsck"]).ok();
}

/// `import DIR` killed at each step of its one commit: the next command repairs the store,
/// the folder's sessions are there exactly when the commit landed, and importing the folder
/// again ends where one clean import does.
#[test]
fn a_folder_import_killed_at_any_step_is_all_or_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let codex = std::fs::read_dir(root.join("codex")).unwrap().next().unwrap().unwrap().path();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("projects/app")).unwrap();
    std::fs::write(dir.path().join("projects/app/5c0375b4.jsonl"), source()).unwrap();
    std::fs::copy(&codex, dir.path().join(codex.file_name().unwrap())).unwrap();
    let folder = dir.path().to_str().unwrap();
    let clean = TestEnv::new();
    clean.run(&["import", folder]).ok();
    let all = event_count(&clean);
    for (step, landed) in [("journal", false), ("committed", true), ("worktree", true), ("index", true)] {
        let env = TestEnv::new();
        let mut cmd = env.command(&["import", folder]);
        cmd.env("CONVO_TEST_FAIL_AT", step);
        let out = crate::common::run_command(cmd, "");
        assert_ne!(out.code, 0, "{step}: the process should have died");
        assert_eq!(event_count(&env), if landed { all } else { 0 }, "{step}");
        env.run(&["fsck"]).ok();
        assert_eq!(env.git_status(), "", "{step}");
        let again = env.run(&["import", folder]);
        let expected = if landed { "0 new, 0 continued, 2 unchanged" } else { "2 new, 0 continued, 0 unchanged" };
        assert!(again.stderr.contains(expected), "{step}: {}", again.stderr);
        assert_eq!(event_count(&env), all, "{step}");
        env.run(&["fsck"]).ok();
    }
}

/// Two files of one session name in a folder (a copy, a backup) are not both taken for the
/// session within one commit: the first is imported, the second refused with a warning.
#[test]
fn a_folder_with_two_files_of_one_session_imports_it_once() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["projects/app", "backup"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        std::fs::write(dir.path().join(sub).join("5c0375b4.jsonl"), source()).unwrap();
    }
    let env = TestEnv::new();
    let run = env.run(&["import", dir.path().to_str().unwrap()]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("a file of the same session name was imported in this run (skipped)"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("1 new, 0 continued, 0 unchanged, 0 not sessions, 1 failed"), "{}", run.stderr);
    let once = TestEnv::new();
    once.run(&["import", dir.path().join("backup/5c0375b4.jsonl").to_str().unwrap()]).ok();
    assert_eq!(stored(&env).len(), stored(&once).len());
    env.run(&["fsck"]).ok();
}

/// Events in the store's conversations, all of them.
fn event_count(env: &TestEnv) -> u64 {
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    rows.iter().map(|r| r["events"].as_u64().unwrap_or(0)).sum()
}

#[test]
fn watch_imports_a_session_as_it_grows_and_commits_what_it_saw_on_ctrl_c() {
    let whole = source();
    let dir = tempfile::tempdir().unwrap();
    let projects = dir.path().join("projects/app");
    std::fs::create_dir_all(&projects).unwrap();
    let file = projects.join("5c0375b4.jsonl");
    let lines: Vec<&[u8]> = whole.split_inclusive(|b| *b == b'\n').collect();
    std::fs::write(&file, lines[..10].concat()).unwrap();

    let once = TestEnv::new();
    once.run(&["import", file.to_str().unwrap()]).ok();
    let at_ten = event_count(&once);
    // What twenty whole lines import as, from a file of the same name elsewhere.
    let twenty = tempfile::tempdir().unwrap();
    let twenty = twenty.path().join("5c0375b4.jsonl");
    std::fs::write(&twenty, lines[..20].concat()).unwrap();
    let once = TestEnv::new();
    once.run(&["import", twenty.to_str().unwrap()]).ok();
    let at_twenty = event_count(&once);
    assert!(at_twenty > at_ten);

    let env = TestEnv::new();
    env.run(&["list"]).ok();
    let mut cmd = env.command(&["watch", dir.path().to_str().unwrap(), "--quiet-ms", "200", "--poll", "1"]);
    let mut child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let wait_for = |events: u64| {
        let start = std::time::Instant::now();
        while event_count(&env) < events {
            assert!(start.elapsed().as_secs() < 30, "watch did not import {events} events");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    };
    wait_for(at_ten);
    // Grown a line at a time, the last one half-written for a while: the twentieth line
    // goes in with half the next, so the watch never sees twenty lines without it, and
    // the rest is written only once it has imported those twenty and left the half line.
    for line in &lines[10..19] {
        let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
        std::io::Write::write_all(&mut f, line).unwrap();
    }
    let half = lines[20].len() / 2;
    let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
    std::io::Write::write_all(&mut f, &[lines[19], &lines[20][..half]].concat()).unwrap();
    wait_for(at_twenty);
    std::io::Write::write_all(&mut f, &lines[20][half..]).unwrap();
    for line in &lines[21..] {
        std::io::Write::write_all(&mut f, line).unwrap();
    }
    drop(f);
    // Ctrl-C at once: what was written is imported before it exits.
    // SAFETY: a signal to our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    let whole_import = TestEnv::new();
    whole_import.run(&["import", file.to_str().unwrap()]).ok();
    assert_eq!(stored(&env), stored(&whole_import), "{stderr}");
    env.run(&["fsck"]).ok();
}

/// `watch` started before Codex first ran, with no `~/.codex/sessions`: it says it waits for
/// the folder, and when Codex makes it with a dated folder and a session file in one go, it
/// captures the session from the file system's reports alone (scans are an hour apart),
/// exactly as one import of the file.
#[test]
fn watch_waits_for_codexs_sessions_folder_and_captures_the_first_session_in_it() {
    use std::io::BufRead as _;
    let env = TestEnv::new();
    let sessions = env.home().join(".codex/sessions");
    let mut cmd = env.command(&["watch", "--quiet-ms", "200", "--poll", "3600"]);
    let mut child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    // Its watches are in place once it has said what it waits for.
    let waiting = format!("waiting for {} (not there yet)", sessions.display());
    let mut said = String::new();
    while !said.lines().any(|l| l == waiting) {
        assert!(stderr.read_line(&mut said).unwrap() > 0, "watch ended before it said it waits:\n{said}");
    }
    let day = sessions.join("2026/11/29");
    std::fs::create_dir_all(&day).unwrap();
    let file = day.join("rollout-2026-11-29T06-03-43-01a220c0-9bb2-7ac2-9abb-c3e6ba6ce77c.jsonl");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(CODEX_0169), &file).unwrap();
    let once = TestEnv::new();
    once.run(&["import", file.to_str().unwrap()]).ok();
    let start = std::time::Instant::now();
    while event_count(&env) < event_count(&once) {
        assert!(start.elapsed().as_secs() < 30, "watch did not capture the session in a folder made after it began");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // SAFETY: a signal to our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    std::io::Read::read_to_string(&mut stderr, &mut said).unwrap();
    assert!(status.success(), "{said}");
    assert!(!said.contains("warning"), "{said}");
    assert!(said.lines().any(|l| l == format!("watching {}", sessions.display())), "{said}");
    assert_eq!(stored(&env), stored(&once), "{said}");
}

/// One import commit that continues a session and adds another changes two conversations:
/// the ids file (prefixes, short ids, and what a later import checks for sessions it has
/// already) must list both afterwards, so a third run imports nothing twice.
#[test]
fn a_folder_import_that_continues_one_session_and_adds_another_keeps_the_ids_in_step() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let codex = std::fs::read_dir(root.join("codex")).unwrap().next().unwrap().unwrap().path();
    let whole = source();
    let dir = tempfile::tempdir().unwrap();
    let projects = dir.path().join("projects/my-app");
    std::fs::create_dir_all(&projects).unwrap();
    let claude = projects.join("5c0375b4.jsonl");
    let cut = whole.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(29).unwrap().0 + 1;
    std::fs::write(&claude, &whole[..cut]).unwrap();

    let env = TestEnv::new();
    let folder = dir.path().to_str().unwrap();
    env.run(&["import", folder]).ok();
    env.run(&["list"]).ok();
    std::fs::write(&claude, &whole).unwrap();
    std::fs::create_dir_all(dir.path().join("sessions/2026/11/25")).unwrap();
    std::fs::copy(&codex, dir.path().join("sessions/2026/11/25").join(codex.file_name().unwrap())).unwrap();
    let second = env.run(&["import", folder]);
    assert!(second.stderr.contains("1 new, 1 continued"), "{}", second.stderr);

    let text = std::fs::read_to_string(env.store.join(".git/convo/ids")).unwrap();
    let list: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let mut ids: Vec<String> = list.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect();
    ids.sort();
    let header = format!("{} {}", env.git(&["rev-parse", "HEAD:conversations"]).trim(), ids.len());
    assert_eq!(text, format!("{header}\n{}\n", ids.join("\n")));
    let listed = env.run(&["list", "--format", "json"]).ok().to_owned();
    env.run(&["import", folder]).ok();
    assert_eq!(env.run(&["list", "--format", "json"]).ok(), listed, "nothing imported twice");
}

/// A session without subagent lines is followed from where the last capture stopped (its
/// record keeps the importer's checkpoint), reading only the new bytes; grown a line at a
/// time with a torn line behind, it still ends exactly as one import of the whole file.
#[test]
fn a_session_followed_from_its_checkpoint_equals_one_import_of_the_whole() {
    // Codex 0.169 writes each call's token count after the items it counts (where they
    // wait, kept back in the checkpoint), twice: a `token_usage_record` at once, a
    // `token_count` after the tool's output; the versions between wrote only the latter.
    // 0.39 wrote the count before the items. A Codex session is cut at every line.
    let current = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(CODEX_0169)).unwrap();
    let counts_only: String =
        current.split_inclusive('\n').filter(|l| !l.contains(r#""type":"token_usage_record""#)).collect();
    // Gemini CLI writes a message again as its calls come in, and its resume and
    // compression rewrite the list (read whole from there: a follow that meets them reads
    // the file from its start and skips what it took before).
    let sessions: [(&str, Option<&str>); 6] = [
        ("../shared/corpus-current/claude-code/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl", None),
        ("../shared/corpus-current/codex/vibecodingtracker__codex-0.39.jsonl", None),
        (CODEX_0169, None),
        ("codex-token-counts-only.jsonl", Some(&counts_only)),
        ("../shared/corpus-current/gemini-cli/vibecodingtracker__gemini.jsonl", None),
        (GEMINI_061, None),
    ];
    for (session, text) in sessions {
        let whole = match text {
            Some(text) => text.as_bytes().to_vec(),
            None => std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(session)).unwrap(),
        };
        let every_line = session.contains("codex") || session.contains("gemini");
        let lines: Vec<&[u8]> = whole.split_inclusive(|b| *b == b'\n').collect();
        let env = TestEnv::new();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(Path::new(session).file_name().unwrap());
        let mut written = Vec::new();
        for (n, line) in lines.iter().enumerate() {
            written.extend_from_slice(line);
            // From the fifth line: a format is told from its first lines.
            if n < 4 || (!every_line && n % 2 != 0 && n + 1 != lines.len()) {
                continue;
            }
            let mut bytes = written.clone();
            if let Some(next) = lines.get(n + 1) {
                bytes.extend_from_slice(&next[..next.len() / 2]);
            }
            std::fs::write(&file, &bytes).unwrap();
            env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
        }
        std::fs::write(&file, &whole).unwrap();
        env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
        let list: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
        let id = list[0]["id"].as_str().unwrap().to_owned();
        let meta = env.git(&["show", &format!("HEAD:{}/meta.json", crate::common::conversation_dir(&id))]);
        let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
        assert!(meta["source"]["checkpoint"].is_object(), "{session}: no checkpoint in {meta}");

        let once = TestEnv::new();
        once.run(&["import", file.to_str().unwrap()]).ok();
        // Events the source gave no id get one from the clock of the command that read
        // them: each capture is its own command.
        let without_ids = |env: &TestEnv| -> Vec<serde_json::Value> {
            stored(env)
                .iter()
                .flat_map(|(_, events)| events.lines().map(|l| serde_json::from_str(l).unwrap()).collect::<Vec<_>>())
                .map(|mut e: serde_json::Value| {
                    e.as_object_mut().unwrap().remove("id");
                    e
                })
                .collect()
        };
        let followed = without_ids(&env);
        assert_eq!(followed, without_ids(&once), "{session}: followed line by line vs imported whole");
        assert!(followed.iter().any(|e| e.get("usage").is_some()), "{session}: no usage kept");
        env.run(&["fsck"]).ok();
    }
}

#[test]
fn the_import_report_and_commit_count_the_main_conversation_and_subagents_apart() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("5c0375b4.jsonl");
    std::fs::write(&file, source()).unwrap();
    let env = TestEnv::new();
    let import = env.run(&["import", file.to_str().unwrap()]);
    let said = import.ok_status();
    assert!(said.contains("\n  turns: 2\n"), "{said}");
    let subagents: Vec<&str> = said.lines().filter(|l| l.starts_with("  subagent conversation: ")).collect();
    assert_eq!(subagents.len(), 2, "{said}");
    assert!(subagents[0].ends_with(" (1 turn, 7 events)"), "{said}");
    assert!(subagents[1].ends_with(" (1 turn, 15 events)"), "{said}");
    let subject = env.git(&["log", "-1", "--format=%s"]);
    assert!(subject.ends_with(" from claude-code (+31 events; 2 subagent conversations, +22 events)\n"), "{subject}");

    // One event more: "1 event", as everywhere.
    let env = TestEnv::new();
    std::fs::write(&file, source()).unwrap();
    env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    let mut grown = source();
    grown.extend_from_slice(
        br#"{"type":"user","message":{"role":"user","content":"one more"},"uuid":"u-more","parentUuid":null,"sessionId":"x","timestamp":"2025-09-08T00:00:00Z"}
"#,
    );
    std::fs::write(&file, grown).unwrap();
    let follow = env.run(&["import", "--follow", file.to_str().unwrap()]);
    assert!(follow.ok_status().contains(": 1 new event in "), "{}", follow.stderr);
    assert!(env.git(&["log", "-1", "--format=%s"]).ends_with("(+1 event)\n"));
}

/// A Gemini CLI `/rewind` takes messages back: the conversation keeps them, and the
/// session goes on in a fork that starts with what the rewind kept. Followed line by line
/// (each capture after the rewind reads the file whole and skips what it took) it is what
/// one import of the whole file makes.
#[test]
fn a_gemini_session_rewound_goes_on_in_a_fork_whether_followed_or_imported_whole() {
    let message = |id: &str, kind: &str, text: &str| {
        serde_json::json!({"id": id, "timestamp": "2026-01-01T00:00:00Z", "type": kind, "content": text}).to_string()
    };
    let lines = [
        serde_json::json!({"sessionId": "s1", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"})
            .to_string(),
        message("u1", "user", "plan the login fix"),
        message("g1", "gemini", "First, the session cookie."),
        message("u2", "user", "no, start with the tests"),
        message("g2", "gemini", "Writing the tests."),
        r#"{"$rewindTo":"u2"}"#.to_owned(),
        message("u3", "user", "start with the form"),
        message("g3", "gemini", "The form, then."),
    ];
    let whole: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session-2026-01-01T00-00-s1.jsonl");
    let env = TestEnv::new();
    for n in 2..=lines.len() {
        let part: String = lines[..n].iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&file, part).unwrap();
        env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    }
    let once = TestEnv::new();
    std::fs::write(&file, &whole).unwrap();
    once.run(&["import", file.to_str().unwrap()]).ok();
    assert_eq!(stored(&env), stored(&once), "followed line by line vs imported whole");

    let list: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let titles: Vec<(&str, bool)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["title"].as_str().unwrap(), c["forked_from"]["turn"] == 1))
        .collect();
    assert!(titles.contains(&("plan the login fix", false)), "{list}");
    assert!(titles.contains(&("plan the login fix (after rewind 1)", true)), "{list}");
    let fork = list.as_array().unwrap().iter().find(|c| c["forked_from"].is_object()).unwrap();
    let texts: Vec<String> = env
        .run(&["show", fork["id"].as_str().unwrap(), "--format", "jsonl"])
        .ok()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(texts, ["plan the login fix", "First, the session cookie.", "start with the form", "The form, then."]);
    env.run(&["fsck"]).ok();
}

/// `watch` follows Gemini CLI's sessions by default (`~/.gemini/tmp/<project>/chats/`),
/// and passes over a file Gemini CLI made for a chat that never got a message (as it does
/// at each start, and beside a session it resumes) without a word.
#[test]
fn watch_follows_gemini_cli_sessions_by_default_and_passes_over_empty_ones() {
    let env = TestEnv::new();
    let chats = env.home().join(".gemini/tmp/proj/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let session = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(GEMINI_061)).unwrap();
    std::fs::write(chats.join("session-2026-11-28T07-23-7170941b.jsonl"), &session).unwrap();
    let startup: String = session.split(|b| *b == b'\n').take(2).map(|l| String::from_utf8_lossy(l) + "\n").collect();
    std::fs::write(chats.join("session-2026-11-28T07-24-7170941b.jsonl"), startup).unwrap();
    let out = env.run(&["watch", "--once"]);
    let said = out.ok_status();
    assert!(!said.contains("warning"), "{said}");
    let list: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{list}");
    assert_eq!(rows[0]["title"], "what is in notes.txt?");
    assert_eq!(rows[0]["cwd"], "/tmp/gx/proj");
    assert_eq!(rows[0]["events"], 15);
    // Nothing new: a second sweep writes nothing.
    let before = env.snapshot();
    env.run(&["watch", "--once"]).ok();
    assert!(env.snapshot() == before, "a second sweep changed the store");
}

/// `watch` finds Claude Code's and Codex's sessions where they keep them: under
/// `$CLAUDE_CONFIG_DIR` and `$CODEX_HOME` when those are set (as `resume` writes them
/// there), not in the home's `.claude` and `.codex`, which those agents then never read.
#[test]
fn watch_follows_sessions_under_claude_config_dir_and_codex_home() {
    let env = TestEnv::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let (claude, codex) = (elsewhere.path().join("claude"), elsewhere.path().join("codex"));
    let session = "0b7a1f52-8c1e-4b55-9d3f-5c2d8e7f6a10";
    let line = |uuid: &str, parent: Option<&str>, kind: &str, content: serde_json::Value| {
        serde_json::json!({"parentUuid": parent, "isSidechain": false, "type": kind, "uuid": uuid,
            "sessionId": session, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/x",
            "message": {"role": if kind == "user" { "user" } else { "assistant" }, "content": content}})
        .to_string()
            + "\n"
    };
    let transcript = line("u1", None, "user", serde_json::json!("what is here?"))
        + &line("a1", Some("u1"), "assistant", serde_json::json!([{"type": "text", "text": "Nothing yet."}]));
    let project = claude.join("projects/-tmp-x");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(format!("{session}.jsonl")), transcript).unwrap();
    let rollout = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(CODEX_0169)).unwrap();
    let day = codex.join("sessions/2026/01/01");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::write(day.join("rollout-2026-01-01T00-00-00-019a0000-0000-7000-8000-000000000001.jsonl"), &rollout)
        .unwrap();
    // What the home's folders hold is not what these agents read now.
    let stale = env.home().join(".codex/sessions/2026/01/01");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("rollout-2026-01-01T00-00-00-019a0000-0000-7000-8000-000000000002.jsonl"), &rollout)
        .unwrap();

    let mut cmd = env.command(&["watch", "--once"]);
    cmd.env("CLAUDE_CONFIG_DIR", &claude).env("CODEX_HOME", &codex);
    let out = crate::common::run_command(cmd, "");
    let said = out.ok_status();
    assert!(!said.contains("warning"), "{said}");
    assert!(said.contains(&format!("{}: new", project.join(format!("{session}.jsonl")).display())), "{said}");
    assert!(said.contains(&day.display().to_string()), "{said}");
    assert!(!said.contains(&stale.display().to_string()), "{said}");
    let list: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{list}");
    assert!(rows.iter().any(|r| r["title"] == "what is here?"), "{list}");
}

/// Claude Code may run its `Stop` hook before the turn's last lines reach the transcript:
/// the hook waits (briefly) for the answer that ends the turn, and captures the whole turn.
#[test]
fn the_claude_code_stop_hook_waits_for_the_turn_to_reach_the_transcript() {
    use std::io::Write as _;
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let session = "0b7a1f52-8c1e-4b55-9d3f-5c2d8e7f6a10";
    let file = dir.path().join(format!("{session}.jsonl"));
    let line = |uuid: &str, parent: Option<&str>, kind: &str, content: serde_json::Value| {
        serde_json::json!({"parentUuid": parent, "isSidechain": false, "type": kind, "uuid": uuid,
            "sessionId": session, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": if kind == "user" { "user" } else { "assistant" }, "content": content}})
        .to_string()
            + "\n"
    };
    let call = serde_json::json!([{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]);
    let result = serde_json::json!([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "notes.txt"}]);
    let answer = serde_json::json!([{"type": "text", "text": "There is one file: notes.txt."}]);
    let begun =
        line("u1", None, "user", serde_json::json!("what is here?")) + &line("a1", Some("u1"), "assistant", call);
    std::fs::write(&file, begun).unwrap();
    let input = serde_json::json!({"session_id": session, "transcript_path": file, "hook_event_name": "Stop"});
    let mut hook = env.command(&["hook", "claude-code"]);
    hook.stdin(std::process::Stdio::piped());
    let mut child = hook.spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    // The rest of the turn arrives after the hook started.
    std::thread::sleep(std::time::Duration::from_millis(400));
    let rest = line("u2", Some("a1"), "user", result) + &line("a2", Some("u2"), "assistant", answer);
    std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all(rest.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    let events = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let kinds: Vec<String> = events
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["user", "tool_call", "tool_result", "assistant"], "{events}");
}

/// A hook that cannot capture its transcript says why where the agent shows a hook's
/// output, and keeps it for `convo status` and the next command run at a terminal (said
/// once); a later capture of the same file clears it.
#[test]
fn a_failed_capture_is_kept_for_status_and_said_at_the_next_terminal_command() {
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let session = "7d0c2b1e-1f2a-4c3b-8d4e-5f6a7b8c9d0e";
    let file = dir.path().join(format!("{session}.jsonl"));
    let line = |uuid: &str, kind: &str, content: &str| {
        serde_json::json!({"type": kind, "uuid": uuid, "sessionId": session, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": kind, "content": [{"type": "text", "text": content}]}})
        .to_string()
            + "\n"
    };
    std::fs::write(&file, line("u1", "user", "hello") + "{not json\n" + &line("a1", "assistant", "hi")).unwrap();
    let input = serde_json::json!({"session_id": session, "transcript_path": file, "hook_event_name": "Stop"});
    let failed = env.run_stdin(&["hook", "claude-code"], &input.to_string());
    assert!(failed.fails_with(3).contains("not valid JSON"), "{}", failed.stderr);

    // The next command at a terminal says it, once.
    let at_terminal = || {
        let line = format!("{} list", env!("CARGO_BIN_EXE_convo"));
        let mut cmd = env.sealed("script");
        cmd.args(["-qec", &line, "/dev/null"]).env("CONVO_DIR", &env.store).env("TERM", "xterm");
        crate::common::run_command(cmd, "").stdout.replace("\r\n", "\n")
    };
    let said = at_terminal();
    let path = file.display().to_string();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(said.contains(&format!("a capture failed: {path}: {name}: line 2: not valid JSON")), "{said}");
    assert!(said.contains("`convo status` lists the captures that failed"), "{said}");
    assert!(!at_terminal().contains("a capture failed"), "said twice");
    // Not said where no one reads it.
    assert!(!env.run(&["list"]).stderr.contains("capture failed"));

    let status = env.run(&["status"]).ok().replace(&path, "[FILE]");
    let status = regex::Regex::new(r"\d{4}-\d\d-\d\dT[\d:.]+Z").unwrap().replace_all(&status, "[TIME]");
    assert!(status.starts_with("No active conversation.\n1 failed capture (the newest first):\n"), "{status}");
    let error = format!("  [TIME]  hook claude-code  [FILE]\n      {name}: line 2: not valid JSON");
    assert!(status.contains(&error), "{status}");

    // The file mended, the next capture clears it.
    std::fs::write(&file, line("u1", "user", "hello") + &line("a1", "assistant", "hi")).unwrap();
    env.run_stdin(&["hook", "claude-code"], &input.to_string()).ok();
    assert!(env.run(&["status"]).ok().ends_with("No failed captures.\n"));
}

/// A Claude Code session line of `kind` (`user` or `assistant`) for the tests below.
pub(crate) fn claude_line(
    session: &str,
    uuid: &str,
    parent: Option<&str>,
    kind: &str,
    content: serde_json::Value,
) -> String {
    serde_json::json!({"parentUuid": parent, "isSidechain": false, "type": kind, "uuid": uuid,
        "sessionId": session, "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": kind, "content": content}})
    .to_string()
        + "\n"
}

/// A followed session whose agent reuses a tool call id (a model server repeating its ids)
/// keeps being captured: the second call and its result land beside the first.
#[test]
fn a_followed_session_that_reuses_a_call_id_keeps_capturing() {
    use std::io::Write as _;
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let session = "5e1d7c3a-2b4f-4a6e-9c8d-1f2e3d4c5b6a";
    let file = dir.path().join(format!("{session}.jsonl"));
    let line = |uuid: &str, parent: Option<&str>, kind: &str, content: serde_json::Value| {
        claude_line(session, uuid, parent, kind, content)
    };
    let call = |cmd: &str| serde_json::json!([{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": cmd}}]);
    let result = |out: &str| serde_json::json!([{"type": "tool_result", "tool_use_id": "toolu_1", "content": out}]);
    let first = line("u1", None, "user", serde_json::json!("what is here?"))
        + &line("a1", Some("u1"), "assistant", call("ls"))
        + &line("u2", Some("a1"), "user", result("notes.txt"));
    std::fs::write(&file, first).unwrap();
    env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    let again = line("a2", Some("u2"), "assistant", call("pwd")) + &line("u3", Some("a2"), "user", result("/work"));
    std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all(again.as_bytes()).unwrap();
    env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    let events: Vec<serde_json::Value> =
        env.run(&["show", "--format", "jsonl"]).ok().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["user", "tool_call", "tool_result", "tool_call", "tool_result"], "{events:?}");
    // The second call got an id of its own, and its result follows it there.
    assert_ne!(events[3]["call_id"], events[1]["call_id"], "{events:?}");
    assert_eq!(events[4]["call_id"], events[3]["call_id"], "{events:?}");
    assert_eq!(events[3]["source_call_id"], "toolu_1", "{events:?}");
}

/// An error in lines a follow reads after its checkpoint names the line of the file, not
/// of the lines read this time; the store is left as it was.
#[test]
fn an_error_in_a_followed_file_names_the_files_line() {
    use std::io::Write as _;
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let session = "6f2e8d4b-3c5a-4b7f-8d9e-2a3b4c5d6e7f";
    let file = dir.path().join(format!("{session}.jsonl"));
    let text = |t: &str| serde_json::json!([{"type": "text", "text": t}]);
    let first = claude_line(session, "u1", None, "user", text("hello"))
        + &claude_line(session, "a1", Some("u1"), "assistant", text("hi"))
        + &claude_line(session, "u2", Some("a1"), "user", text("again"));
    std::fs::write(&file, first).unwrap();
    env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
    let before = env.snapshot();
    let more = claude_line(session, "a2", Some("u2"), "assistant", text("yes")) + "{not json\n";
    std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all(more.as_bytes()).unwrap();
    let out = env.run(&["import", "--follow", file.to_str().unwrap()]);
    assert!(env.snapshot() == before, "a refused capture changed the store");
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 3
    --- stderr
    error: 6f2e8d4b-3c5a-4b7f-8d9e-2a3b4c5d6e7f.jsonl: line 5: not valid JSON (key must be a string at line 1 column 2)
    hint: nothing was written; --format names the format
    "#);
}

/// A followed file that grows only by a line that makes no event (Claude Code's `progress`
/// records, written while a tool runs) makes no commit, whether `import --follow`, the hook
/// or `watch --once` reads it; the next line with an event then lands once, as one import
/// of the whole file has it.
#[test]
fn a_session_grown_by_a_line_that_makes_no_event_makes_no_commit() {
    let whole = source();
    let lines: Vec<&[u8]> = whole.split_inclusive(|b| *b == b'\n').collect();
    let before: serde_json::Value = serde_json::from_slice(lines[19]).unwrap();
    let session = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7";
    let progress = serde_json::json!({
        "type": "progress",
        "uuid": "00000000-0000-4000-8000-000000000001",
        "parentUuid": before["uuid"],
        "sessionId": session,
        "timestamp": before["timestamp"],
        "data": {"type": "hook_progress", "hookEvent": "PostToolUse"},
    });
    let progress = format!("{progress}\n");
    let grown = [lines[..20].concat(), progress.into_bytes()].concat();
    let finished = [grown.clone(), lines[20..].concat()].concat();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{session}.jsonl"));
    let path = file.to_str().unwrap();
    let commits = |env: &TestEnv| env.git(&["rev-list", "--count", "--all"]).trim().to_owned();

    let follow = |env: &TestEnv| env.run(&["import", "--follow", path]);
    let hook = |env: &TestEnv| {
        let input = serde_json::json!({"session_id": session, "transcript_path": file, "hook_event_name": "Stop"});
        env.run_stdin(&["hook", "claude-code"], &input.to_string())
    };
    let watch = |env: &TestEnv| env.run(&["watch", "--once", dir.path().to_str().unwrap()]);
    let once = TestEnv::new();
    let whole_file = tempfile::tempdir().unwrap();
    let whole_path = whole_file.path().join(format!("{session}.jsonl"));
    std::fs::write(&whole_path, &finished).unwrap();
    once.run(&["import", whole_path.to_str().unwrap()]).ok();
    type Capture<'a> = &'a dyn Fn(&TestEnv) -> crate::common::Run;
    let ways: [(&str, Capture); 3] = [("import --follow", &follow), ("hook", &hook), ("watch --once", &watch)];
    for (way, capture) in ways {
        let env = TestEnv::new();
        std::fs::write(&file, lines[..20].concat()).unwrap();
        capture(&env).ok();
        let at = commits(&env);
        std::fs::write(&file, &grown).unwrap();
        capture(&env).ok();
        assert_eq!(commits(&env), at, "{way}: no commit for a line with no event");
        assert_eq!(env.git_status(), "", "{way}: nothing written");
        assert!(!env.git(&["log", "--format=%s"]).contains("+0 events"), "{way}");
        if way == "import --follow" {
            let again = follow(&env);
            assert!(again.stderr.contains("nothing new since the last import"), "{}", again.stderr);
        }
        // Read again from where the store says: its events land once.
        std::fs::write(&file, &finished).unwrap();
        capture(&env).ok();
        assert!(commits(&env).parse::<u32>().unwrap() > at.parse::<u32>().unwrap(), "{way}");
        assert_eq!(stored(&env), stored(&once), "{way}");
        capture(&env).ok();
        assert_eq!(stored(&env), stored(&once), "{way}: nothing imported twice");
        env.run(&["fsck"]).ok();
    }
}

/// A follow where only subagents' conversations gain events (a subagent's turn, read while
/// the main conversation waits for it) makes one commit saying so, never one of "+0 events"
/// for the main conversation beside theirs.
#[test]
fn a_follow_that_only_feeds_subagents_makes_one_commit_naming_them() {
    let whole = source();
    let lines: Vec<&[u8]> = whole.split_inclusive(|b| *b == b'\n').collect();
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("5c0375b4.jsonl");
    let mut written = Vec::new();
    let mut subagents_only = 0;
    for line in &lines {
        written.extend_from_slice(line);
        std::fs::write(&file, &written).unwrap();
        let before = env.git(&["rev-list", "--count", "--all"]);
        env.run(&["import", "--follow", file.to_str().unwrap()]).ok();
        let commits: u32 = env.git(&["rev-list", "--count", "--all"]).trim().parse::<u32>().unwrap()
            - before.trim().parse::<u32>().unwrap_or(0);
        assert!(commits <= 1, "a follow of one line made {commits} commits:\n{}", env.git(&["log", "--format=%s"]));
        subagents_only += usize::from(env.git(&["log", "-1", "--format=%s"]).contains(" in subagents' conversations)"));
    }
    let subjects = env.git(&["log", "--format=%s"]);
    assert!(!subjects.contains("(+0 events)"), "{subjects}");
    assert!(subagents_only > 0, "no follow fed only subagents:\n{subjects}");
}
