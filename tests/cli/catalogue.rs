//! The catalogue (`.git/convo/catalogue`) and its titles file (`.git/convo/titles`): `list`
//! and title resolution read them instead of every conversation, so they must never answer
//! differently from a full read of HEAD,
//! whatever happened to it: deleted, corrupted, left behind by a pull or a reset, or by a
//! writer killed at any step.

use crate::common::{TestEnv, bare, run_command};

fn catalogue(env: &TestEnv) -> std::path::PathBuf {
    env.store.join(".git/convo/catalogue")
}

fn titles(env: &TestEnv) -> std::path::PathBuf {
    env.store.join(".git/convo/titles")
}

/// `list --format json` with every derived file dropped first: what a full read of HEAD says.
fn full_read(env: &TestEnv) -> String {
    let state = env.store.join(".git/convo");
    let saved: Vec<_> = [catalogue(env), titles(env)].map(|f| (std::fs::read(&f).ok(), f)).into();
    for (_, file) in &saved {
        let _ = std::fs::remove_file(file);
    }
    let _ = std::fs::remove_dir_all(state.join("cache"));
    let listed = env.run(&["list", "--format", "json"]).ok().to_owned();
    // Put the files under test back, so the caller goes on testing them, not fresh ones.
    for (bytes, file) in saved {
        match bytes {
            Some(bytes) => std::fs::write(file, bytes).unwrap(),
            None => {
                let _ = std::fs::remove_file(file);
            }
        }
    }
    listed
}

/// `list` and resolution by title agree with a full read of HEAD. Titles are resolved
/// first, while the catalogue is as the last command left it (a title lookup takes the
/// catalogue's fast path when its last line certifies HEAD).
#[track_caller]
fn agrees_with_a_full_read(env: &TestEnv, when: &str) {
    let expected = full_read(env);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&expected).unwrap();
    for row in &rows {
        let Some(title) = row["title"].as_str() else { continue };
        let id = row["id"].as_str().unwrap();
        let same = rows.iter().filter(|r| r["title"].as_str() == Some(title)).count();
        let by_title = env.run(&["show", title, "--format", "jsonl"]);
        if same == 1 {
            assert_eq!(by_title.ok(), env.run(&["show", id, "--format", "jsonl"]).ok(), "{when}: `{title}`");
        } else {
            by_title.fails_with(4);
        }
    }
    let listed = env.run(&["list", "--format", "json"]).ok().to_owned();
    assert_eq!(listed, expected, "{when}: the catalogue answered differently from HEAD");
}

fn ends_with_a_marker(file: &std::path::Path) -> bool {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines().last().is_some_and(|l| l.starts_with("#\t"))
}

fn three_conversations() -> TestEnv {
    let env = TestEnv::new();
    env.new_conversation("alpha");
    env.run(&["append", "--user", "one"]).ok();
    env.new_conversation("beta");
    env.run(&["append", "--user", "two"]).ok();
    env.run(&["append", "--assistant", "three"]).ok();
    env.new_conversation("gamma");
    env
}

#[test]
fn writers_keep_the_catalogue_in_step_with_every_change() {
    let env = three_conversations();
    assert!(catalogue(&env).exists(), "new and append write catalogue lines");
    agrees_with_a_full_read(&env, "after appends");
    // A full pass certified HEAD; each one-conversation writer keeps both files certified.
    assert!(ends_with_a_marker(&catalogue(&env)) && ends_with_a_marker(&titles(&env)));
    env.run(&["append", "beta", "--user", "four"]).ok();
    assert!(ends_with_a_marker(&catalogue(&env)), "an append keeps the marker");
    assert!(ends_with_a_marker(&titles(&env)), "and the titles file's");
    let last = std::fs::read_to_string(titles(&env)).unwrap();
    let line = last.lines().rev().nth(1).unwrap();
    assert!(line.ends_with("\t\t{\"title\":\"beta\"}"), "a titles line holds the title alone: {line}");
    agrees_with_a_full_read(&env, "after an append on a certified catalogue");
    env.run(&["rename", "alpha", "aleph two"]).ok();
    agrees_with_a_full_read(&env, "after a rename");
    // By title: the new one resolves, the old one is gone.
    env.run(&["show", "aleph two"]).ok();
    env.run(&["show", "alpha"]).fails_with(4);
    env.run(&["fork", "beta", "--title", "beta fork"]).ok();
    agrees_with_a_full_read(&env, "after a fork");
    env.run(&["rm", "gamma"]).ok();
    agrees_with_a_full_read(&env, "after a removal");
    env.run(&["restore", "gamma"]).ok();
    agrees_with_a_full_read(&env, "after a restore");
    env.run(&["compact", "beta", "--keep-last", "0"]).ok();
    agrees_with_a_full_read(&env, "after a compaction");
    // Superseded lines pile up until a reader rewrites the file with one line each.
    let lines = || std::fs::read_to_string(catalogue(&env)).unwrap().lines().count();
    // (The active conversation: resolving a title reads the catalogue, which may rewrite it.)
    env.run(&["switch", "aleph two"]).ok();
    for n in 0..80 {
        env.run(&["append", "--user", &format!("turn {n}")]).ok();
    }
    assert!(lines() > 70, "appends add lines");
    agrees_with_a_full_read(&env, "after many appends");
    env.run(&["list"]).ok();
    assert_eq!(lines(), 5, "rewritten with one line per conversation, and the marker");
    agrees_with_a_full_read(&env, "after the rewrite");
}

#[test]
fn a_deleted_or_corrupt_catalogue_or_titles_file_is_rebuilt_from_head() {
    let env = three_conversations();
    let expected = full_read(&env);
    for file in [catalogue(&env), titles(&env)] {
        damage_and_read(&env, &file, &expected);
    }
}

fn damage_and_read(env: &TestEnv, file: &std::path::Path, expected: &str) {
    env.run(&["list"]).ok();
    // The entry lines alone: without the marker that certifies them, as after a crash.
    let good: Vec<u8> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();

    let damaged: Vec<(&str, Vec<u8>)> = vec![
        ("deleted", Vec::new()),
        ("torn mid-line", good[..good.len() / 2].to_vec()),
        ("not UTF-8", [&good[..], b"\xff\xfe\n"].concat()),
        ("garbage lines", [&good[..], b"x\ty\tz\n\t\t\n{}\n"].concat()),
        // A marker for a tree HEAD does not have certifies nothing.
        ("a stale marker", [&good[..], format!("#\t{}\n", "0".repeat(40)).as_bytes()].concat()),
        // A torn line the next append ran into: two lines' fields on one line.
        ("run together", {
            let text = String::from_utf8(good.clone()).unwrap();
            let mut lines: Vec<&str> = text.lines().collect();
            let last = lines.pop().unwrap();
            let (head, _) = last.split_at(last.len() - 5);
            format!("{}\n{head}{last}\n", lines.join("\n")).into_bytes()
        }),
        // A line for the right id with a tree HEAD does not have (left by a reset, say),
        // claiming another title: it must not be believed.
        ("stale tree", {
            let text = String::from_utf8(good.clone()).unwrap();
            text.lines()
                .map(|l| {
                    let mut f = l.splitn(3, '\t');
                    let (id, _, json) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
                    format!("{id}\t{}\t{}\n", "0".repeat(40), json.replace("alpha", "forged"))
                })
                .collect::<String>()
                .into_bytes()
        }),
    ];
    for (what, bytes) in damaged {
        let what = format!("{}: {what}", file.display());
        if bytes.is_empty() {
            std::fs::remove_file(file).unwrap();
        } else {
            std::fs::write(file, &bytes).unwrap();
        }
        // By title first: the lookup must not believe what it finds.
        env.run(&["show", "alpha"]).ok();
        env.run(&["show", "forged"]).fails_with(4);
        let listed = env.run(&["list", "--format", "json"]).ok().to_owned();
        assert_eq!(listed, expected, "{what}");
        // The next read finds files that hold again.
        assert_eq!(env.run(&["list", "--format", "json"]).ok(), expected, "{what}, read twice");
        env.run(&["show", "alpha"]).ok();
    }
}

#[test]
fn a_torn_catalogue_line_a_writer_ends_never_loses_a_title() {
    let env = three_conversations();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&full_read(&env)).unwrap();
    let alpha = rows.iter().find(|r| r["title"] == "alpha").unwrap()["id"].as_str().unwrap().to_owned();
    env.run(&["list"]).ok();
    // A reader's append cut short (killed, disk full): the file ends inside `gamma`'s line,
    // whose tree is HEAD's; no titles file yet.
    let text = std::fs::read_to_string(catalogue(&env)).unwrap();
    let line = text.lines().find(|l| l.contains("\"gamma\"")).unwrap();
    let cut = &line[..line.find('{').unwrap() + 4];
    let kept: String = text.lines().filter(|l| !l.starts_with('#') && *l != line).map(|l| format!("{l}\n")).collect();
    std::fs::write(catalogue(&env), format!("{kept}{cut}")).unwrap();
    std::fs::remove_file(titles(&env)).unwrap();
    // A writer ends the torn line before its own (named by id: no title lookup first,
    // whose full pass would mend the file).
    env.run(&["append", &alpha, "--user", "after the tear"]).ok();
    env.run(&["show", "gamma"]).ok();
    agrees_with_a_full_read(&env, "after a writer ended a torn line");
    env.run(&["show", "gamma"]).ok();
}

#[test]
fn a_writer_killed_at_any_step_leaves_a_catalogue_that_agrees_with_head() {
    for step in ["journal", "committed", "worktree", "index"] {
        let env = three_conversations();
        for args in [&["append", "beta", "--user", "last words"][..], &["rename", "beta", "renamed"][..]] {
            let mut cmd = env.command(args);
            cmd.env("CONVO_TEST_FAIL_AT", step);
            assert_ne!(run_command(cmd, "").code, 0, "{step}: the process should have died");
            agrees_with_a_full_read(&env, step);
        }
    }
}

#[test]
fn a_pull_and_a_reset_bring_the_catalogue_up_to_date() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let a = three_conversations();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();
    let b = TestEnv::bare_at(100);
    b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();
    agrees_with_a_full_read(&b, "after a clone");
    b.run(&["list"]).ok();

    a.run(&["append", "alpha", "--user", "more from a"]).ok();
    a.run(&["rename", "gamma", "gamma renamed"]).ok();
    a.new_conversation("delta");
    a.run(&["push"]).ok();
    b.run(&["pull"]).ok();
    agrees_with_a_full_read(&b, "after a pull");
    b.run(&["show", "gamma renamed"]).ok();
    b.run(&["show", "delta"]).ok();

    // Another tool moves HEAD back: the lines for the newer trees no longer hold.
    b.git(&["reset", "-q", "--hard", "HEAD~3"]);
    agrees_with_a_full_read(&b, "after git reset");
    b.run(&["show", "gamma"]).ok();
    b.run(&["show", "delta"]).fails_with(4);
}

/// `.git/convo/ids` (HEAD's conversation ids in order, kept so a prefix or a short id
/// need not list every fan folder) is used only for the `conversations` tree it names and
/// only when it is whole and sorted; anything else is listed from the folders again.
#[test]
fn a_damaged_ids_file_is_never_believed() {
    let env = three_conversations();
    let ids = env.store.join(".git/convo/ids");
    let expected = full_read(&env);
    env.run(&["show", "beta"]).ok();
    let good = std::fs::read(&ids).expect("a read keeps HEAD's ids");
    let header_len = good.iter().position(|b| *b == b'\n').unwrap() + 1;
    let (header, lines) = good.split_at(header_len);
    let mut swapped = lines.to_vec();
    // Ids out of order: a binary search would miss one.
    let (first, second) = swapped.split_at_mut(27);
    first.swap_with_slice(&mut second[..27]);
    for (what, bytes) in [
        ("truncated", good[..good.len() - 7].to_vec()),
        // Cut at a line's end: still well shaped, but short.
        ("an id short", good[..good.len() - 27].to_vec()),
        ("out of order", [header, &swapped].concat()),
        ("another tree", [format!("{} 3\n", "0".repeat(40)).as_bytes(), lines].concat()),
        ("no header", lines.to_vec()),
    ] {
        std::fs::write(&ids, &bytes).unwrap();
        agrees_with_a_full_read(&env, what);
        assert_eq!(env.run(&["list", "--format", "json"]).ok(), expected, "{what}");
        for id in ["alpha", "beta", "gamma"] {
            env.run(&["log", id]).ok();
        }
        // By prefix: the ids file is what answers it.
        let list: serde_json::Value = serde_json::from_str(&expected).unwrap();
        for c in list.as_array().unwrap() {
            let id = c["id"].as_str().unwrap();
            let by_prefix = env.run(&["show", &id[..24], "--format", "jsonl"]).ok().to_owned();
            assert_eq!(by_prefix, env.run(&["show", id, "--format", "jsonl"]).ok(), "{what}");
        }
    }
    std::fs::remove_file(&ids).unwrap();
    env.run(&["append", "gamma", "--user", "after"]).ok();
    agrees_with_a_full_read(&env, "after a write with no ids file");
    assert!(ids.exists(), "the write made it again");
}

/// Writers keep `.git/convo/ids` in step with HEAD: an append moves its header along, a new
/// conversation is inserted, so a read after a write never lists the fan folders again.
#[test]
fn writers_keep_the_ids_file_in_step() {
    let env = three_conversations();
    let ids = env.store.join(".git/convo/ids");
    let check = |what: &str| {
        let text = std::fs::read_to_string(&ids).unwrap_or_else(|e| panic!("{what}: {e}"));
        let list: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
        let mut expected: Vec<String> =
            list.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect();
        expected.sort();
        let conversations = env.git(&["rev-parse", "HEAD:conversations"]);
        let header = format!("{} {}", conversations.trim(), expected.len());
        assert_eq!(text, format!("{header}\n{}\n", expected.join("\n")), "{what}");
    };
    check("after three conversations");
    for (what, args) in [
        ("an append", vec!["append", "gamma", "--user", "four"]),
        ("another append", vec!["append", "alpha", "--assistant", "five"]),
        ("a rename", vec!["rename", "beta", "bravo"]),
    ] {
        let before = std::fs::metadata(&ids).unwrap();
        env.run(&args).ok();
        check(what);
        use std::os::unix::fs::MetadataExt as _;
        assert_eq!(std::fs::metadata(&ids).unwrap().ino(), before.ino(), "{what}: the header moved in place");
    }
    env.new_conversation("delta");
    check("a new conversation");
}

/// The per-conversation cache is rewritten in place (one file for the conversation's life:
/// a new file per append made ext4 allocate an inode each time), so a reader can meet it
/// half written, or torn by a crash. One whose fields do not match its checksum, or that
/// does not parse, is a miss and a recount, never an answer.
#[test]
fn the_conversation_cache_is_rewritten_in_place_and_a_torn_one_is_never_believed() {
    use std::os::unix::fs::MetadataExt as _;
    let env = TestEnv::new();
    let id = env.new_conversation("cached");
    env.run(&["append", &id, "--user", "one"]).ok();
    let cache = env.store.join(".git/convo/cache").join(format!("{id}.json"));
    let inode = std::fs::metadata(&cache).unwrap().ino();
    env.run(&["append", &id, "--assistant", "two"]).ok();
    assert_eq!(std::fs::metadata(&cache).unwrap().ino(), inode, "rewritten in place");
    let good = std::fs::read_to_string(&cache).unwrap();
    assert!(good.contains(r#""turns":1,"#), "{good}");
    let damaged = [
        ("fields changed, checksum not", good.replacen(r#""turns":1,"#, r#""turns":5,"#, 1)),
        ("cut short", good[..good.len() / 2].to_owned()),
        ("the old file's tail after a shorter new one", format!("{good}{}", &good[good.len() - 30..])),
    ];
    for (n, (what, bytes)) in damaged.into_iter().enumerate() {
        std::fs::write(&cache, bytes).unwrap();
        // The turn number an append prints comes from the counts: 1, 2, 3 whatever the file said.
        let out = env.run(&["append", &id, "--user", &format!("after {what}")]);
        out.ok();
        assert!(out.stderr.contains(&format!("turn {} (+1 event)", n + 1)), "{what}: {}", out.stderr);
        agrees_with_a_full_read(&env, what);
    }
}

/// A catalogue an older convo wrote has no `project` in its lines: they are computed again
/// (once), never read as "ran nowhere", so `list --here` and `list --format json` agree with
/// HEAD and the next `list` reads the catalogue alone again.
#[test]
fn catalogue_lines_without_where_a_session_ran_are_computed_again() {
    let env = TestEnv::new();
    let session = serde_json::json!({"parentUuid": null, "isSidechain": false, "type": "user", "uuid": "u1",
        "timestamp": "2026-01-01T00:00:00Z", "cwd": "/work/project", "gitBranch": "main",
        "message": {"role": "user", "content": "Fix the parser"}});
    let file = env.root.join("s.jsonl");
    std::fs::write(&file, format!("{session}\n")).unwrap();
    env.run(&["import", file.to_str().unwrap()]).ok();
    env.new_conversation("made here");
    let expected = full_read(&env);
    // As a convo from before `project` wrote it.
    let old: String = std::fs::read_to_string(catalogue(&env))
        .unwrap()
        .lines()
        .map(|l| regex::Regex::new(r#","project":\{[^}]*\}"#).unwrap().replace(l, "").into_owned() + "\n")
        .collect();
    assert!(!old.contains("project") && !old.contains("/work/project"));
    std::fs::write(catalogue(&env), &old).unwrap();
    assert_eq!(env.run(&["list", "--format", "json"]).ok(), expected);
    let healed = std::fs::read_to_string(catalogue(&env)).unwrap();
    assert!(healed.contains(r#""project":{"cwd":"/work/project","branch":"main","remote":null}"#), "{healed}");
    assert!(ends_with_a_marker(&catalogue(&env)));
    agrees_with_a_full_read(&env, "after the old lines were computed again");
}

/// A catalogue line or a cache file an older convo wrote has no `who` (the people, agents
/// and models of the conversation's events): counted as missing, it is computed again from
/// the events (once), never read as "nobody took part", and written back so the next `list
/// --format json` reads no event. An append to a conversation whose cache lacks it names
/// the appended event's person too.
#[test]
fn catalogue_lines_and_caches_without_who_took_part_are_computed_again() {
    let env = TestEnv::new();
    env.git(&["config", "user.name", "Ann Lee"]);
    env.git(&["config", "user.email", "ann@example.com"]);
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex-0.169.jsonl");
    let codex = env.run(&["import", fixture.to_str().unwrap()]).ok().trim().to_owned();
    let made = env.new_conversation("made here");
    env.run(&["append", &made, "--user", "hello"]).ok();
    let expected = full_read(&env);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&expected).unwrap();
    let row = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap().clone();
    assert_eq!(row(&codex)["agents"], serde_json::json!(["codex 0.169.0"]), "{expected}");
    assert_eq!(row(&codex)["models"], serde_json::json!(["gpt-5.1-codex"]), "{expected}");
    let ann = serde_json::json!(["Ann Lee <ann@example.com>"]);
    assert_eq!(row(&codex)["people"], ann, "{expected}");
    assert_eq!(row(&made)["people"], ann, "{expected}");

    // As a convo from before `who` wrote them: the catalogue's lines and each cache file
    // (whose checksum is its stored JSON's SHA-1, so made again).
    let without_who = |text: &str| regex::Regex::new(r#","who":\{[^}]*\}"#).unwrap().replace_all(text, "").into_owned();
    let old: String =
        std::fs::read_to_string(catalogue(&env)).unwrap().lines().map(|l| without_who(l) + "\n").collect();
    assert!(!old.contains("\"who\"") && !old.contains("gpt-5.1-codex"), "{old}");
    std::fs::write(catalogue(&env), &old).unwrap();
    let cache = env.store.join(".git/convo/cache");
    let make_old = |path: &std::path::Path| {
        let checked: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let stored = without_who(&checked["stored"].to_string());
        assert!(!stored.contains("\"who\""), "{stored}");
        let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
        hasher.update(stored.as_bytes());
        let check = hasher.try_finalize().unwrap().to_string()[..16].to_owned();
        std::fs::write(path, format!(r#"{{"check":"{check}","stored":{stored}}}"#)).unwrap();
    };
    for file in std::fs::read_dir(&cache).unwrap() {
        make_old(&file.unwrap().path());
    }

    assert_eq!(env.run(&["list", "--format", "json"]).ok(), expected);
    let healed = std::fs::read_to_string(catalogue(&env)).unwrap();
    assert!(
        healed.contains(
            r#""who":{"people":["Ann Lee <ann@example.com>"],"agents":["codex 0.169.0"],"models":["gpt-5.1-codex"]}"#
        ),
        "{healed}"
    );
    assert!(ends_with_a_marker(&catalogue(&env)));
    agrees_with_a_full_read(&env, "after the old lines were computed again");

    // An append to a conversation whose cache lacks who took part names everyone: those
    // before it too.
    make_old(&cache.join(format!("{made}.json")));
    env.git(&["config", "user.name", "Bo Ng"]);
    env.git(&["config", "user.email", "bo@example.com"]);
    env.run(&["append", &made, "--user", "again"]).ok();
    let listed: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let both = serde_json::json!(["Ann Lee <ann@example.com>", "Bo Ng <bo@example.com>"]);
    assert_eq!(listed.iter().find(|r| r["id"] == made.as_str()).unwrap()["people"], both);
    agrees_with_a_full_read(&env, "after an append to a conversation cached without who");
}

/// Who took part comes from the catalogue like everything else `list --format json` says:
/// with every event's object gone from the repository (so any read of one fails), a
/// current catalogue still answers, and answers the same.
#[test]
fn list_in_json_names_who_took_part_without_reading_an_event() {
    let env = TestEnv::new();
    env.git(&["config", "user.name", "Ann Lee"]);
    env.git(&["config", "user.email", "ann@example.com"]);
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex-0.169.jsonl");
    env.run(&["import", fixture.to_str().unwrap()]).ok();
    let made = env.new_conversation("made here");
    env.run(&["append", &made, "--user", "hello"]).ok();
    let listed = env.run(&["list", "--format", "json"]).ok().to_owned();
    assert!(listed.contains("gpt-5.1-codex") && listed.contains("Ann Lee <ann@example.com>"), "{listed}");
    let mut gone = 0;
    for line in env.git(&["ls-tree", "-r", "HEAD"]).lines().filter(|l| l.contains("/events/")) {
        let blob = line.split_whitespace().nth(2).unwrap();
        let loose = env.store.join(".git/objects").join(&blob[..2]).join(&blob[2..]);
        std::fs::remove_file(&loose).unwrap_or_else(|e| panic!("{blob} is not loose: {e}"));
        gone += 1;
    }
    assert!(gone >= 2, "{gone}");
    env.run(&["show", &made]).fails_with(5);
    assert_eq!(env.run(&["list", "--format", "json"]).ok(), listed);
}
