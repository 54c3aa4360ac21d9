//! The store's guarantees: bad input changes nothing, concurrent writers both land, and a
//! writer killed at any step leaves a store the next command accepts with every committed
//! event intact.

use std::process::Stdio;

use crate::common::{TestEnv, conversation_dir, run_command};

fn store_with_history() -> (TestEnv, String) {
    let env = TestEnv::new();
    let id = env.new_conversation("safety");
    env.run(&["append", "--user", "hello"]).ok();
    env.run(&["append", "--tool-call", "grep", "--args", r#"{"q":"x"}"#, "--call-id", "c1"]).ok();
    env.run(&["append", "--tool-result", "c1", "--content", "found"]).ok();
    (env, id)
}

/// Each case: arguments, stdin, expected exit code, and the exact error line.
#[test]
fn bad_input_is_refused_with_one_line_and_the_store_is_unchanged() {
    let (env, _) = store_with_history();
    let stored_id = {
        let jsonl = env.run(&["show", "--format", "jsonl"]);
        let first: serde_json::Value = serde_json::from_str(jsonl.ok().lines().next().unwrap()).unwrap();
        first["id"].as_str().unwrap().to_owned()
    };
    let dup_line = format!("{{\"id\":\"{stored_id}\",\"type\":\"user\",\"content\":\"again\"}}\n");
    let cases: Vec<(Vec<&str>, String, i32, String)> = vec![
        (
            vec!["append"],
            "{\"type\":\"user\",\"content\":\"ok\"}\nnot json\n".into(),
            3,
            "error: stdin line 2: not valid JSON (expected ident at line 1 column 2)".into(),
        ),
        (
            vec!["append"],
            "{\"type\":\"user\",\"content\":\"ok\"}\n{\"type\":\"assistant\"}\n".into(),
            3,
            "error: stdin line 2, field `content`: missing".into(),
        ),
        (vec!["append"], "[1,2]\n".into(), 3, "error: stdin line 1: expected a JSON object".into()),
        (
            vec!["append"],
            "{\"type\":\"user\",\"content\":7}\n".into(),
            3,
            "error: stdin line 1, field `content`: must be a string".into(),
        ),
        (
            vec!["append"],
            "{\"type\":\"usr\",\"content\":\"x\"}\n".into(),
            3,
            "error: stdin line 1, field `type`: unknown event type `usr` (expected one of system, user, assistant, reasoning, tool_call, tool_result, config)".into(),
        ),
        (
            vec!["append"],
            "{\"type\":\"compaction\",\"from_turn\":0}\n".into(),
            3,
            "error: stdin line 1, field `type`: `compaction` events are written by convo only (use `convo compact`)".into(),
        ),
        (
            vec!["append"],
            "{\"id\":\"../x\",\"type\":\"user\",\"content\":\"x\"}\n".into(),
            3,
            "error: stdin line 1, field `id`: invalid character '/' (allowed: letters, digits, - _ . :)".into(),
        ),
        (
            vec!["append"],
            "{\"type\":\"user\",\"content\":\"x\",\"ts\":\"yesterday\"}\n".into(),
            3,
            "error: stdin line 1, field `ts`: not an RFC 3339 timestamp (premature end of input)".into(),
        ),
        (
            vec!["append"],
            "{\"type\":\"tool_result\",\"call_id\":\"nope\",\"content\":\"x\"}\n".into(),
            3,
            "error: input line 1, field `call_id`: no tool_call with call_id `nope` in this conversation".into(),
        ),
        (
            vec!["append"],
            "{\"id\":\"a1\",\"type\":\"user\",\"content\":\"x\"}\n{\"id\":\"a1\",\"type\":\"user\",\"content\":\"y\"}\n".into(),
            3,
            "error: input line 2, field `id`: id `a1` is already used in this conversation".into(),
        ),
        (
            vec!["append"],
            dup_line,
            3,
            format!("error: input line 1, field `id`: id `{stored_id}` is already used in this conversation"),
        ),
        (vec!["append"], "\n\n".into(), 3, "error: stdin: no events".into()),
        (
            vec!["append", "--tool-result", "nope", "--content", "x"],
            String::new(),
            3,
            "error: --tool-result: no tool_call with call_id `nope` in this conversation".into(),
        ),
        (
            vec!["append", "--tool-call", "grep", "--args", "{oops"],
            String::new(),
            3,
            "error: --args: not valid JSON (key must be a string at line 1 column 2)".into(),
        ),
        (
            vec!["append", "--tool-call", "grep", "--args", "{}", "--call-id", "../x"],
            String::new(),
            3,
            "error: --call-id: invalid character '/' (allowed: letters, digits, - _ . :)".into(),
        ),
        (vec!["append", "../x", "--user", "x"], String::new(), 4, "error: no conversation matches `../x`".into()),
        (vec!["append", "--file", "missing.jsonl"], String::new(), 3, "error: missing.jsonl: No such file or directory (os error 2)".into()),
        (vec!["new", "--title", " "], String::new(), 3, "error: --title: must not be empty".into()),
    ];
    let before = env.snapshot();
    let mut refusals = String::new();
    for (args, stdin, code, expected) in cases {
        let out = env.run_stdin(&args, &stdin);
        let stderr = out.fails_with(code);
        let mut lines = stderr.lines();
        assert_eq!(lines.next(), Some(expected.as_str()), "for {args:?} with {stdin:?}");
        for rest in lines {
            assert!(rest.starts_with("hint: "), "only hints follow the error line: {stderr}");
        }
        assert_eq!(out.stdout, "", "nothing on stdout for {args:?}");
        assert!(env.snapshot() == before, "store changed by {args:?} with {stdin:?}");
        refusals += &format!("$ convo {} <<< {stdin:?}\n{}\n", args.join(" "), env.transcript(&out));
    }
    // The whole of each refusal, hints included.
    insta::assert_snapshot!("refusals", refusals);
}

#[test]
fn bad_input_does_not_create_the_default_store() {
    let env = TestEnv::bare();
    let out = run_command(env.command_without_store(&["append"]), "nope\n");
    out.fails_with(3);
    assert!(!env.home().join(".local/share/convo").exists());
}

/// `lines` JSONL events of an agent turn each (~1.5 KB), `n` turns, calls named `{tag}N`.
fn agent_lines(n: usize, tag: &str) -> String {
    let mut out = String::new();
    for t in 0..n {
        out += &format!("{{\"type\":\"user\",\"content\":\"step {t}\"}}\n");
        out += &format!(
            "{{\"type\":\"tool_call\",\"call_id\":\"{tag}{t}\",\"name\":\"Read\",\"arguments\":{{\"path\":\"src/{t}.rs\"}}}}\n"
        );
        out += &format!("{{\"type\":\"tool_result\",\"call_id\":\"{tag}{t}\",\"content\":\"{}\"}}\n", "x".repeat(1400));
    }
    out
}

#[test]
fn a_bad_line_after_megabytes_of_good_ones_leaves_the_store_exactly_as_it_was() {
    // The input is read and written a batch at a time: by the bad line, segments of the good
    // ones are already blobs, and must be gone again.
    let env = TestEnv::new();
    env.new_conversation("bulk");
    env.run_stdin(&["append"], &agent_lines(3, "a")).ok();
    let good = agent_lines(3000, "c");
    assert!(good.len() > 4 << 20);
    let tails = [
        ("{\"type\":\"user\"}\n", 3, "stdin line 9001, field `content`: missing"),
        (
            "{\"type\":\"tool_result\",\"call_id\":\"nope\",\"content\":\"x\"}\n",
            3,
            "input line 9001, field `call_id`: no tool_call",
        ),
        ("{\"type\":\"tool_call\",\"call_id\":\"a1\",\"name\":\"Read\"}\n", 3, "input line 9001, field `call_id`"),
        ("\u{FFFD}not json\n", 3, "stdin line 9001: not valid JSON"),
    ];
    let before = env.snapshot();
    for (tail, code, start) in tails {
        let out = env.run_stdin(&["append"], &format!("{good}{tail}"));
        let stderr = out.fails_with(code);
        assert!(stderr.starts_with(&format!("error: {start}")), "{stderr}");
        assert!(env.snapshot() == before, "the store changed after {tail:?}");
    }
    // The same input without the bad line lands whole, in one commit.
    env.run_stdin(&["append"], &good).ok();
    let stored = env.run(&["show", "--format", "jsonl"]).ok().lines().count();
    assert_eq!(stored, 9 + 9000);
    env.run(&["fsck"]).ok();
}

#[test]
fn eight_concurrent_writers_all_land() {
    let env = TestEnv::new();
    env.new_conversation("race");
    let writers: Vec<_> = (0..8)
        .map(|w| {
            // Commands are built here (the environment is single-threaded) and run there.
            let commands: Vec<_> = (0..50)
                .map(|i| {
                    let mut cmd = env.command(&["append", "--user", &format!("writer {w} message {i}")]);
                    // Real time, so the writers' ids do not depend on one shared fake clock.
                    cmd.env_remove("CONVO_NOW");
                    cmd
                })
                .collect();
            std::thread::spawn(move || {
                for cmd in commands {
                    let out = run_command(cmd, "");
                    assert_eq!(out.code, 0, "{}", out.stderr);
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let jsonl = env.run(&["show", "--format", "jsonl"]);
    let lines: Vec<&str> = jsonl.ok().lines().collect();
    assert_eq!(lines.len(), 400);
    for w in 0..8 {
        for i in 0..50 {
            let needle = format!("\"writer {w} message {i}\"");
            assert_eq!(lines.iter().filter(|l| l.contains(&needle)).count(), 1, "{needle}");
        }
    }
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
    assert_eq!(env.git(&["rev-list", "--count", "HEAD"]).trim(), "401");
}

/// Simulate `kill -9` at each step of a commit; the next command must repair the store, and
/// the event is there exactly when the commit landed.
#[test]
fn a_writer_killed_at_any_step_leaves_a_usable_store() {
    for (step, landed) in [("journal", false), ("committed", true), ("worktree", true), ("index", true)] {
        let (env, _) = store_with_history();
        let mut cmd = env.command(&["append", "--user", "the last words"]);
        cmd.env("CONVO_TEST_FAIL_AT", step);
        let out = run_command(cmd, "");
        assert_ne!(out.code, 0, "{step}: the process should have died");
        let shown = env.run(&["show", "--format", "jsonl"]);
        assert_eq!(shown.ok().contains("the last words"), landed, "{step}");
        assert_journal_blank(&env, step);
        env.run(&["fsck"]).ok();
        assert_eq!(env.git_status(), "", "{step}");
        // And the store keeps working.
        env.run(&["append", "--user", "after"]).ok();
        env.run(&["fsck"]).ok();
    }
}

/// The journal is kept between commits, blank when no commit is under way.
fn assert_journal_blank(env: &TestEnv, step: &str) {
    let journal = std::fs::read(env.store.join(".git/convo/journal")).unwrap_or_default();
    assert!(
        journal.iter().all(u8::is_ascii_whitespace),
        "{step}: journal left behind: {}",
        String::from_utf8_lossy(&journal)
    );
    assert!(!env.store.join(".git/convo/txn").exists(), "{step}: an older convo's journal left behind");
}

/// The journal is rewritten in place: written over a longer one that was never blanked (a
/// torn one, which names nothing), it must not read as torn in turn, and go unreplayed, for
/// the bytes the longer one left after it.
#[test]
fn a_journal_written_over_a_longer_torn_one_is_still_replayed() {
    let (env, _) = store_with_history();
    let journal = env.store.join(".git/convo/journal");
    std::fs::write(&journal, "x".repeat(4096)).unwrap();
    let mut cmd = env.command(&["append", "--user", "the last words"]);
    cmd.env("CONVO_TEST_FAIL_AT", "committed");
    assert_ne!(run_command(cmd, "").code, 0, "the process should have died");
    assert_ne!(env.git_status(), "", "the working tree should lag behind HEAD");
    assert!(env.run(&["show", "--format", "jsonl"]).ok().contains("the last words"));
    assert_eq!(env.git_status(), "");
    assert_journal_blank(&env, "after the replay");
    env.run(&["fsck"]).ok();
}

/// A journal that is not JSON was torn by a writer that died writing it, before it wrote
/// anything else: it names nothing, and the next writer goes on.
#[test]
fn a_torn_journal_names_nothing_and_the_next_writer_goes_on() {
    let (env, _) = store_with_history();
    let head = env.git(&["rev-parse", "HEAD"]);
    std::fs::write(env.store.join(".git/convo/journal"), r#"{"paths":["conversations/"#).unwrap();
    assert!(!env.run(&["show", "--format", "jsonl"]).ok().is_empty());
    env.run(&["append", "--user", "after a torn journal"]).ok();
    assert_eq!(env.git(&["rev-parse", "HEAD~1"]), head);
    assert_journal_blank(&env, "after the append");
    assert_eq!(env.git_status(), "");
    env.run(&["fsck"]).ok();
}

/// Both journals at once (an older convo left one, this one was killed after its commit):
/// the paths of both are replayed.
#[test]
fn both_journals_are_replayed_when_both_are_there() {
    let (env, id) = store_with_history();
    let mut cmd = env.command(&["append", "--user", "the last words"]);
    cmd.env("CONVO_TEST_FAIL_AT", "committed");
    assert_ne!(run_command(cmd, "").code, 0, "the process should have died");
    let meta = format!("{}/meta.json", conversation_dir(&id));
    std::fs::write(env.store.join(".git/convo/txn"), format!(r#"{{"paths":["{meta}"]}}"#)).unwrap();
    std::fs::write(env.store.join(&meta), "edited by hand").unwrap();
    assert!(env.run(&["show", "--format", "jsonl"]).ok().contains("the last words"));
    assert_eq!(env.git_status(), "", "both journals' paths are back as HEAD has them");
    assert_journal_blank(&env, "after the replay");
    env.run(&["fsck"]).ok();
}

/// A journal a big commit made long is cut back when it is blanked, so later commits do
/// not write and read its whole length.
#[test]
fn a_long_journal_is_cut_back_when_it_ends() {
    let (env, _) = store_with_history();
    std::fs::write(env.store.join(".git/convo/journal"), " ".repeat(1 << 20)).unwrap();
    env.run(&["append", "--user", "after a long journal"]).ok();
    let len = std::fs::metadata(env.store.join(".git/convo/journal")).unwrap().len();
    assert!(len <= 4096, "the journal stayed {len} bytes");
    assert_journal_blank(&env, "after the append");
}

/// The journal is written in place: a symlink there must not aim that write anywhere. It
/// is refused, and what it points at is untouched.
#[test]
fn a_journal_that_is_a_symlink_is_refused_and_its_target_untouched() {
    let (env, _) = store_with_history();
    let victim = env.root.join("victim.txt");
    std::fs::write(&victim, "important data").unwrap();
    let journal = env.store.join(".git/convo/journal");
    let _ = std::fs::remove_file(&journal);
    std::os::unix::fs::symlink(&victim, &journal).unwrap();
    let head = env.git(&["rev-parse", "HEAD"]);
    let out = env.run(&["append", "--user", "through the link"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(
        out.stderr.contains("journal: is a symlink; convo does not follow symlinks inside a store"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "important data");
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head, "nothing was committed");
}

/// A journal in a shape this convo does not know (a later convo's) is not taken for a torn
/// one and skipped: it is reported.
#[test]
fn a_journal_of_another_shape_is_reported_not_skipped() {
    let (env, _) = store_with_history();
    let journal = env.store.join(".git/convo/journal");
    std::fs::write(&journal, r#"{"version":2,"changes":[]}"#).unwrap();
    let out = env.run(&["append", "--user", "after it"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("unreadable journal"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&journal).unwrap(), r#"{"version":2,"changes":[]}"#);
}

/// A journal an older convo left (`.git/convo/txn`, a file of its own) is replayed too.
#[test]
fn an_older_convos_journal_is_replayed_and_removed() {
    let (env, _) = store_with_history();
    let mut cmd = env.command(&["append", "--user", "the last words"]);
    cmd.env("CONVO_TEST_FAIL_AT", "committed");
    assert_ne!(run_command(cmd, "").code, 0, "the process should have died");
    // As the older convo would have left it.
    let journal = env.store.join(".git/convo/journal");
    std::fs::write(env.store.join(".git/convo/txn"), std::fs::read(&journal).unwrap()).unwrap();
    std::fs::remove_file(&journal).unwrap();
    assert_ne!(env.git_status(), "");
    assert!(env.run(&["show", "--format", "jsonl"]).ok().contains("the last words"));
    assert_eq!(env.git_status(), "");
    assert_journal_blank(&env, "after the replay");
    env.run(&["fsck"]).ok();
}

#[test]
fn stale_git_locks_and_a_torn_worktree_file_are_recovered() {
    let (env, id) = store_with_history();
    let mut cmd = env.command(&["append", "--user", "committed but not mirrored"]);
    cmd.env("CONVO_TEST_FAIL_AT", "committed");
    assert_ne!(run_command(cmd, "").code, 0);
    // What a killed writer might leave: git lock files and a half-written segment.
    std::fs::write(env.store.join(".git/index.lock"), b"").unwrap();
    let segment = env.store.join(format!("{}/events/0000/000000.jsonl", conversation_dir(&id)));
    let bytes = std::fs::read(&segment).unwrap();
    std::fs::write(&segment, &bytes[..bytes.len() - 7]).unwrap();

    let shown = env.run(&["show", "--format", "jsonl"]);
    assert!(shown.ok().contains("committed but not mirrored"));
    assert!(!env.store.join(".git/index.lock").exists());
    assert!(std::fs::read_to_string(&segment).unwrap().ends_with("\"committed but not mirrored\"}\n"));
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
}

/// Kill real processes at random moments; every append that reported success must survive.
/// The kills are spread over one append's own duration, measured here, and the test fails
/// unless some append was killed inside its commit (its journal left behind) and some was
/// acknowledged: a machine where every kill landed before the append began, or after it
/// ended, proves nothing.
#[test]
fn kill_nine_at_random_moments_loses_no_committed_event() {
    use std::os::unix::process::ExitStatusExt as _;
    let env = TestEnv::new();
    env.new_conversation("kill");
    let append = |text: &str| {
        let mut cmd = env.command(&["append", "--user", text]);
        cmd.env_remove("CONVO_NOW").stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
        cmd.spawn().unwrap()
    };
    let mut acknowledged = Vec::new();
    let mut took = Vec::new();
    for i in 0..3 {
        let text = format!("timed {i}");
        let started = std::time::Instant::now();
        assert!(append(&text).wait().unwrap().success());
        took.push(started.elapsed());
        acknowledged.push(text);
    }
    took.sort();
    let one_append = took[1];
    let mut killed_mid_commit = 0;
    let mut acknowledged_under_fire = 0;
    // Thirty kills at least; more (up to 300) while either kind is still unseen: a loaded
    // machine shifts when a commit happens, never whether one can be cut in the middle.
    for i in 0..300u32 {
        if i >= 30 && killed_mid_commit > 0 && acknowledged_under_fire > 0 {
            break;
        }
        let text = format!("message {i}");
        let mut child = append(&text);
        // From at once to half again an append's time, so kills land before, during and
        // after the commit.
        std::thread::sleep(one_append * ((i * 7919) % 30) / 20);
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            acknowledged.push(text);
            acknowledged_under_fire += 1;
        } else if out.status.signal() == Some(9) && journal_pending(&env) {
            // Killed between naming its paths and finishing: the next append replays it.
            killed_mid_commit += 1;
        }
    }
    assert!(killed_mid_commit > 0, "no append was killed inside its commit (one takes {one_append:?})");
    assert!(acknowledged_under_fire > 0, "no append outran its kill (one takes {one_append:?})");
    let shown = env.run(&["show", "--format", "jsonl"]);
    let stored = shown.ok();
    for text in &acknowledged {
        assert!(stored.contains(&format!("\"{text}\"")), "acknowledged append lost: {text}");
    }
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
}

/// Whether a commit's journal names paths: a writer died between starting and finishing.
fn journal_pending(env: &TestEnv) -> bool {
    let journal = std::fs::read(env.store.join(".git/convo/journal")).unwrap_or_default();
    journal.iter().any(|b| !b.is_ascii_whitespace())
}

#[test]
fn a_hand_edited_working_file_is_replaced_not_appended_to() {
    let (env, id) = store_with_history();
    let segment = format!("{}/events/0000/000000.jsonl", conversation_dir(&id));
    let edited = std::fs::read_to_string(env.store.join(&segment)).unwrap().replace("hello", "HELLO");
    std::fs::write(env.store.join(&segment), edited).unwrap();
    env.run(&["append", "--user", "next"]).ok();
    assert_eq!(
        std::fs::read_to_string(env.store.join(&segment)).unwrap(),
        env.git(&["show", &format!("HEAD:{segment}")])
    );
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
}

/// The index is derived state: a zeroed one (what a power loss can leave) is reported by
/// fsck and rebuilt by the next write.
#[test]
fn a_corrupt_index_is_reported_and_rebuilt() {
    let (env, _) = store_with_history();
    let index = env.store.join(".git/index");
    let len = std::fs::metadata(&index).unwrap().len() as usize;
    std::fs::write(&index, vec![0u8; len]).unwrap();
    let out = env.run(&["fsck"]);
    // No git mend: git cannot reset an index it cannot read.
    assert_eq!(out.fails_with(1), "error: 1 problem found\n");
    assert!(out.stdout.starts_with(".git/index: unreadable ("), "{}", out.stdout);
    env.run(&["append", "--user", "heal"]).ok();
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
}

/// A git process holding the index (an editor's `git status`) when convo commits: the commit
/// has landed, so convo must say so with exit 0, not fail and invite a retry that would append
/// twice; the next command brings the working tree and index up to date.
#[test]
fn a_commit_that_lands_is_never_reported_as_failed() {
    let (env, _) = store_with_history();
    // A live git in the store: its lock is never taken over.
    let holder = crate::common::FakeGit::start(&env, "30");
    std::fs::write(env.store.join(".git/index.lock"), b"held by another git").unwrap();
    let out = env.run(&["append", "--user", "exactly once"]);
    drop(holder);
    out.ok();
    let second = out.stderr.lines().nth(1).unwrap_or_default();
    assert!(second.starts_with("warning: committed "), "{}", out.stderr);
    std::fs::remove_file(env.store.join(".git/index.lock")).unwrap();
    let shown = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    assert_eq!(shown.matches("exactly once").count(), 1);
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
}

/// Run `args` while a live git holds the index (an editor's `git status`): the command's
/// commit lands, so it must succeed and say the working tree lags, not fail and invite a
/// retry; its journal stays, and once the index is free the next command brings the working
/// tree and index up to date. The command's output is returned.
pub(crate) fn lands_while_git_holds_the_index(env: &TestEnv, args: &[&str]) -> crate::common::Run {
    let holder = crate::common::FakeGit::start(env, "30");
    let held = env.store.join(".git/index.lock");
    std::fs::write(&held, b"held by another git").unwrap();
    let head = env.git(&["rev-parse", "HEAD"]);
    let out = env.run(args);
    drop(holder);
    std::fs::remove_file(&held).unwrap();
    out.ok();
    assert_ne!(env.git(&["rev-parse", "HEAD"]), head, "{args:?} committed nothing");
    assert!(out.stderr.lines().any(|l| l.starts_with("warning: committed ")), "{args:?}: {}", out.stderr);
    assert!(journal_pending(env), "{args:?}: the journal must stay for the replay");
    env.run(&["list"]).ok();
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
    assert!(!journal_pending(env));
    out
}

/// Two stores sharing a hub: `a` has pushed one conversation, `b` is a clone of it.
fn two_clones() -> (TestEnv, TestEnv, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let hub = crate::common::bare(dir.path(), "hub");
    let a = TestEnv::new();
    a.new_conversation("shared");
    a.run(&["append", "--user", "first"]).ok();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();
    let b = TestEnv::bare_at(100);
    b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();
    (a, b, dir)
}

#[test]
fn a_pull_that_fast_forwards_while_git_holds_the_index_succeeds_with_a_warning() {
    let (a, b, _dir) = two_clones();
    a.run(&["append", "--user", "second"]).ok();
    a.run(&["push"]).ok();
    let out = lands_while_git_holds_the_index(&b, &["pull"]);
    assert!(out.stderr.starts_with("Fast-forward to "), "{}", out.stderr);
    assert!(b.run(&["show", "shared", "--format", "jsonl"]).ok().contains("second"));
}

#[test]
fn a_pull_that_merges_while_git_holds_the_index_succeeds_with_a_warning() {
    let (a, b, _dir) = two_clones();
    a.run(&["append", "--user", "from a"]).ok();
    a.run(&["push"]).ok();
    b.new_conversation("only b");
    let out = lands_while_git_holds_the_index(&b, &["pull"]);
    assert!(out.stderr.starts_with("Merged "), "{}", out.stderr);
    assert!(b.run(&["show", "shared", "--format", "jsonl"]).ok().contains("from a"));
}

#[test]
fn a_pull_into_an_empty_store_while_git_holds_the_index_succeeds_with_a_warning() {
    let (a, _, dir) = two_clones();
    let empty = TestEnv::bare_at(200);
    empty.run(&["init"]).ok();
    let hub = dir.path().join("hub.git");
    empty.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    // `rev-parse HEAD` needs a commit to compare with: the store's first is the pull's.
    let holder = crate::common::FakeGit::start(&empty, "30");
    let held = empty.store.join(".git/index.lock");
    std::fs::write(&held, b"held by another git").unwrap();
    let out = empty.run(&["pull"]);
    drop(holder);
    std::fs::remove_file(&held).unwrap();
    out.ok();
    assert!(out.stderr.starts_with("Fast-forward to "), "{}", out.stderr);
    assert!(out.stderr.lines().any(|l| l.starts_with("warning: committed ")), "{}", out.stderr);
    assert_eq!(empty.git(&["rev-parse", "HEAD"]), a.git(&["rev-parse", "HEAD"]));
    empty.run(&["fsck"]).ok();
    assert_eq!(empty.git_status(), "");
    assert!(empty.run(&["show", "shared", "--format", "jsonl"]).ok().contains("first"));
}

#[test]
fn a_redact_while_git_holds_the_index_succeeds_with_a_warning() {
    let (env, id) = store_with_history();
    env.run(&["append", "--user", "the password is hunter2hunter2"]).ok();
    let out = lands_while_git_holds_the_index(&env, &["redact", "hunter2hunter2"]);
    assert!(out.stderr.starts_with("Redacted 1 text in "), "{}", out.stderr);
    let shown = env.run(&["show", &id, "--format", "jsonl"]).ok().to_owned();
    assert!(shown.contains("the password is [REDACTED]") && !shown.contains("hunter2"), "{shown}");
}
