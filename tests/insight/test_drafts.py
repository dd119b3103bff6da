"""How `zen incident propose` reads a command into a rule (issue 38 step 3): the program behind
wrappers and `bash -c`, its subcommand, its options (a short cluster letter by letter), and only
the options the incident names when it names some (a rule's flags match when any is present)."""

from __future__ import annotations

from zen.orchestration.insight.propose import rule_for, segments


def test_wrappers_assignments_and_shells_are_looked_through() -> None:
    assert segments("FOO=1 sudo -n rm -rf build && ls") == [["rm", "-rf", "build"], ["ls"]]
    assert segments("bash -c 'git push --force origin main'") == [["git", "push", "--force", "origin", "main"]]
    assert segments("/usr/bin/env timeout 10 nice -n 5 make deploy | tee log") == [["make", "deploy"], ["tee", "log"]]
    assert segments("echo 'unbalanced") == []


def test_a_rule_keeps_the_program_subcommand_and_the_options_the_incident_names() -> None:
    assert rule_for(["rm", "-rf", "build"]) == {"command": ["rm"], "flags": ["-f", "-r"]}
    assert rule_for(["git", "push", "--force", "--set-upstream", "origin"], "a git push --force wiped main") == {
        "command": ["git"], "subcommand": ["push"], "flags": ["--force"]}
    assert rule_for(["git", "push", "--force=yes"]) == {"command": ["git"], "subcommand": ["push"],
                                                        "flags": ["--force"]}
    assert rule_for(["psql", "-c", "DROP TABLE x", "--", "-not-an-option"]) == {"command": ["psql"], "flags": ["-c"]}
