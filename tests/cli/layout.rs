//! The layout's promises on realistic data: a generated coding conversation round-trips
//! through segments, closed segments are never rewritten, and the tree stays shallow.

use std::path::Path;

use crate::common::{TestEnv, conversation_dir};

/// A realistic agent conversation from the shared generator (CI has ../shared beside the
/// checkout).
fn generated(turns: u32) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/gen-conversation.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .args(["--turns", &turns.to_string(), "--seed", "3"])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (tests expect ../shared beside the checkout)", script.display()));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn without_id_and_ts(line: &str) -> serde_json::Value {
    let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
    let map = value.as_object_mut().unwrap();
    map.shift_remove("id");
    map.shift_remove("ts");
    value
}

#[test]
fn a_generated_conversation_round_trips_and_closed_segments_are_never_rewritten() {
    let env = TestEnv::new();
    let id = env.new_conversation("generated");
    let input = generated(60);
    let lines: Vec<&str> = input.lines().collect();
    // Several appends of a few turns each, so segments fill and close across commits.
    for chunk in lines.chunks(40) {
        let file = env.root.join("chunk.jsonl");
        std::fs::write(&file, chunk.join("\n") + "\n").unwrap();
        env.run(&["append", "--file", file.to_str().unwrap()]).ok();
        // Only the segment that was open may change; every other touched path is new.
        let changes = env.git(&["diff-tree", "--no-commit-id", "-r", "--name-status", "HEAD~1", "HEAD"]);
        let modified: Vec<&str> = changes.lines().filter(|l| l.starts_with('M')).collect();
        assert!(modified.len() <= 1, "closed segments rewritten:\n{changes}");
        assert!(changes.lines().all(|l| l.starts_with('M') || l.starts_with('A')), "{changes}");
    }

    let shown = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let stored: Vec<serde_json::Value> = shown.lines().map(without_id_and_ts).collect();
    // `is_error` is always written; the generator leaves it out on some results.
    let given: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["type"] == "tool_result" && v.get("is_error").is_none() {
                v["is_error"] = false.into();
            }
            v
        })
        .collect();
    for (i, (a, b)) in stored.iter().zip(&given).enumerate() {
        assert!(a == b, "event {i} differs:\nstored {a}\ngiven  {b}");
    }
    assert_eq!(stored, given);

    let files = env.git(&["ls-files", &format!("{}/events", conversation_dir(&id))]);
    let segments: Vec<&str> = files.lines().collect();
    assert!(segments.len() > 20, "expected many segments, got {}", segments.len());
    for path in &segments {
        let bytes = std::fs::read(env.store.join(path)).unwrap();
        let one_line = bytes.iter().filter(|b| **b == b'\n').count() == 1;
        assert!(bytes.len() <= 16 * 1024 || one_line, "{path} is {} bytes", bytes.len());
    }
    let list: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    assert_eq!(list[0]["turns"], 60);
    assert_eq!(list[0]["events"], lines.len());
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
}

#[test]
fn an_unknown_event_type_in_a_stored_file_is_carried_through() {
    let env = TestEnv::new();
    let id = env.new_conversation("future");
    env.run(&["append", "--user", "hi"]).ok();
    // A newer convo wrote a type this one does not know.
    let segment = env.store.join(format!("{}/events/0000/000000.jsonl", conversation_dir(&id)));
    let line = "{\"id\":\"f1\",\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"hologram\",\"beam\":{\"on\":true}}\n";
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes.extend_from_slice(line.as_bytes());
    std::fs::write(&segment, bytes).unwrap();
    env.git(&["add", "."]);
    env.git(&["-c", "user.name=H", "-c", "user.email=h@x", "commit", "-qm", "from the future"]);

    assert!(env.run(&["show", "--format", "jsonl"]).ok().ends_with(line));
    insta::assert_snapshot!(env.run(&["show"]).ok(), @r#"
    future 01KDVDQ4K00000000000000001
    1 turn, 2 events, ~1 tokens (chars/4)

    ── turn 0 ── 2026-01-01 00:02:00
    user
        hi
    hologram {"beam":{"on":true}}
    "#);
    env.run(&["append", "--assistant", "still works"]).ok();
    // The unknown event survives later appends.
    insta::assert_snapshot!(env.run(&["show", "--format", "jsonl"]).ok(), @r#"
    {"id":"01KDVDRZ600000000000000001","ts":"2026-01-01T00:02:00.000Z","type":"user","content":"hi"}
    {"id":"f1","ts":"2026-01-01T00:00:00Z","type":"hologram","beam":{"on":true}}
    {"id":"01KDVDYEZ00000000000000001","ts":"2026-01-01T00:05:00.000Z","type":"assistant","content":"still works"}
    "#);
    env.run(&["fsck"]).ok();
}

#[test]
fn commits_use_the_git_identity_when_configured() {
    let env = TestEnv::new();
    env.git(&["config", "user.name", "Ada Lovelace"]);
    env.git(&["config", "user.email", "ada@example.com"]);
    env.new_conversation("signed");
    assert_eq!(
        env.git(&["log", "-1", "--format=%an <%ae>|%cn <%ce>"]),
        "Ada Lovelace <ada@example.com>|Ada Lovelace <ada@example.com>\n"
    );
    // convo moves the branch itself: git must find the repository and both reflogs sound.
    env.run(&["append", "--user", "hello"]).ok();
    env.git(&["fsck", "--strict", "--no-progress"]);
    assert_eq!(
        env.git(&["reflog", "--format=%gs"]),
        "commit: append: \"signed\" turn 0 (+1 event)\ncommit (initial): new: \"signed\"\n"
    );
    assert_eq!(env.git(&["reflog", "show", "--format=%gs", "main"]), env.git(&["reflog", "--format=%gs"]));
}

#[test]
fn the_repository_is_packed_as_git_would() {
    let env = TestEnv::new();
    env.new_conversation("packed");
    // Enough loose objects to cross git's threshold (it samples .git/objects/17), written
    // by one git process; and no detaching, so the test sees the result.
    let blobs = env.root.join("blobs");
    std::fs::create_dir_all(&blobs).unwrap();
    let paths: String = (0..3000)
        .map(|i| {
            let path = blobs.join(i.to_string());
            std::fs::write(&path, format!("loose object {i}\n")).unwrap();
            format!("{}\n", path.display())
        })
        .collect();
    let mut hash = std::process::Command::new("git");
    hash.args(["hash-object", "-w", "--stdin-paths"]).current_dir(&env.store);
    crate::common::run_command(hash, &paths).ok();
    env.git(&["config", "gc.auto", "256"]);
    env.git(&["config", "gc.autoDetach", "false"]);
    assert!(std::fs::read_dir(env.store.join(".git/objects/17")).unwrap().count() > 1);

    env.run(&["append", "--user", "pack me"]).ok();
    // Reachable objects are now packed (unreachable recent ones stay loose, as in git).
    let counts = env.git(&["count-objects", "-v"]);
    let in_pack: u64 = counts.lines().find_map(|l| l.strip_prefix("in-pack: ")).unwrap().parse().unwrap();
    assert!(in_pack > 0, "git gc --auto did not run:\n{counts}");
    insta::assert_snapshot!(env.run(&["show", "--format", "jsonl"]).ok(), @r#"{"id":"01KDVDRZ600000000000000001","ts":"2026-01-01T00:02:00.000Z","type":"user","content":"pack me"}"#);
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
    // What git wrote for convo (packs, index files) is as private as the rest.
    use std::os::unix::fs::PermissionsExt;
    let packs = env.store.join(".git/objects/pack");
    let mut seen = 0;
    for entry in std::fs::read_dir(&packs).unwrap() {
        let path = entry.unwrap().path();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{} is {mode:o}", path.display());
        seen += 1;
    }
    assert!(seen > 0);
}

#[test]
fn a_terminal_gets_the_pager_and_colour_unless_told_otherwise() {
    let env = TestEnv::new();
    env.new_conversation("paged");
    env.run(&["append", "--user", "page me"]).ok();
    let transcript = env.root.join("pager-saw");
    let convo = env!("CARGO_BIN_EXE_convo");
    // `script` gives convo a terminal; the "pager" records what it was sent.
    let on_a_terminal = |command: &str| {
        let mut script = env.sealed("script");
        script
            .args(["-qec", command, "/dev/null"])
            .env("CONVO_DIR", &env.store)
            .env("CONVO_PAGER", format!("cat > {}", transcript.display()));
        crate::common::run_command(script, "")
    };
    on_a_terminal(&format!("{convo} show")).ok();
    // What the pager was sent, each ESC shown as ␛: a terminal gets colour.
    let seen = || std::fs::read_to_string(&transcript).unwrap().replace('\x1b', "␛");
    insta::assert_snapshot!(seen(), @"
    ␛[1mpaged␛[0m ␛[1;33m01KD␛[0m␛[2mVDQ4K00000000000000001␛[0m
    ␛[2m1 turn, 1 event, ~2 tokens (chars/4)␛[0m

    ␛[1m── turn 0 ── 2026-01-01 00:02:00␛[0m
    ␛[32muser␛[0m
        page me
    ");
    on_a_terminal(&format!("NO_COLOR=1 {convo} show")).ok();
    // NO_COLOR is honoured.
    insta::assert_snapshot!(seen(), @"
    paged 01KDVDQ4K00000000000000001
    1 turn, 1 event, ~2 tokens (chars/4)

    ── turn 0 ── 2026-01-01 00:02:00
    user
        page me
    ");

    // --no-pager writes to the terminal directly.
    std::fs::remove_file(&transcript).unwrap();
    let out = on_a_terminal(&format!("{convo} --no-pager show"));
    // (the terminal ends each line with \r\n)
    insta::assert_snapshot!(out.ok().replace("\r\n", "\n").replace('\x1b', "␛"), @"
    ␛[1mpaged␛[0m ␛[1;33m01KD␛[0m␛[2mVDQ4K00000000000000001␛[0m
    ␛[2m1 turn, 1 event, ~2 tokens (chars/4)␛[0m

    ␛[1m── turn 0 ── 2026-01-01 00:02:00␛[0m
    ␛[32muser␛[0m
        page me
    ");
    assert!(!transcript.exists());
}
