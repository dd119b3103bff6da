"""The guardian's pure shell helpers, each compared with what the real bash does with the same text.

The guardian judges a command by what bash would run; when its reading of a word differs from
bash's, a dangerous command can hide behind the difference. So each helper is checked against
bash itself on the same inputs, not against expectations written by hand.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from zen.guard.shell.walk import Walker
from zen.guard.shell.words import (
    MARK_ALL,
    UNK,
    UNMARK_T,
    State,
    brace_expand,
    decode_ansi_c,
    dq_unescape,
    expand_command_braces,
    is_secret_name,
    join_continuations,
)

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


def bash_words(script: str) -> list[str]:
    """The words bash makes of `script` when it is the argument list of printf."""
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", f"printf '%s\\0' - {script}"],
                       capture_output=True, timeout=10, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"})
    assert r.returncode == 0, r.stderr
    return r.stdout.decode("utf-8", "surrogateescape").split("\0")[1:-1]


BRACES = [
    "{a,b,c}", "x{a,b}y", "{a,b}{1,2}", "{1..5}", "{5..1}", "{1..10..3}", "{10..1..4}", "{a..e}",
    "{e..a..2}", "{-3..2}", "pre{,fix}", "{a,{b,c}}d", "{{a,b},{c,d}}", "{a}", "{}", "{a,b", "a,b}",
    "{1..}", "{..3}", "{a..9}", "f{0..2}.{txt,md}", "{r,}m", "{rm,-rf,/tmp/x}", "a{b{c,d}e,f}g",
    "{x,y}{}", "{1..3}{a,b}", "~{a,b}", "{,}", "{a,,b}", "{W..a..4}", "{a..W..4}", "{A..Z}", "{!..%}", "{1..a}",
    "{01..03}", "{-01..2}", "{007..9}", "{-5..-03}", "{1..010..4}", "{+1..3}", "{a..e..0}", "{1..5..-2}",
]


@pytest.mark.parametrize("word", BRACES)
def test_brace_expansion_matches_bash(word: str) -> None:
    # bash then drops the empty words an unquoted `{,}` makes; that is word splitting, not braces
    assert [w for w in brace_expand(word) if w] == bash_words(word)


def test_a_huge_brace_sequence_is_unknown_rather_than_expanded() -> None:
    assert brace_expand("{1..100000000}") == [UNK]
    assert brace_expand("{a,b}" * 30) == [UNK]


def test_quoted_braces_are_not_expanded() -> None:
    # the walker marks quoted characters before expansion; bash keeps '{a,b}' as one word
    marked = "'{a,b}'".strip("'").translate(MARK_ALL)
    assert [w.translate(UNMARK_T) for w in brace_expand(marked)] == bash_words("'{a,b}'")


ANSI_C = [
    r"plain", r"a\nb", r"tab\there", r"\x41\x4a", r"\x4", r"\101\60", r"\1234", r"\u00e9", r"\U0001F600",
    r"\e[1m", r"\a\b\f\v\r", r"quote\'s", r"dq\"", r"back\\slash", r"\q", r"\cA", r"\c[", r"end\\",
    r"\x", r"\?", r"\x7e\x2f", r"\177",
]


@pytest.mark.parametrize("body", ANSI_C)
def test_ansi_c_strings_decode_as_bash_does(body: str) -> None:
    assert decode_ansi_c(body) == bash_words(f"$'{body}'")[0]


DOUBLE = [r"plain", r"a\$b", r"a\`b", r"a\"b", r"a\\b", r"a\nb", r"a\ b", "a\\\nb", r"\x", r"trail\\"]


@pytest.mark.parametrize("body", DOUBLE)
def test_backslashes_in_double_quotes_are_removed_as_bash_does(body: str) -> None:
    assert dq_unescape(body) == bash_words(f"\"{body}\"")[0]


def bash_argv(script: str) -> list[str]:
    """The argv bash gives the command `script` runs (printf standing in for the program)."""
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", f"f() {{ printf '%s\\0' \"$@\"; }}; {script}"],
                       capture_output=True, text=True, timeout=10, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\0")[:-1]


CONTINUATIONS = [
    "f a\\\nb", "f 'a\\\nb'", 'f "a\\\nb"', "f a \\\n b", "f\\\n x", "f # note \\\nx=1; f y",
    "f 'it''s' \\\nz", "f a\\\\ b",
]


@pytest.mark.parametrize("script", CONTINUATIONS)
def test_backslash_newlines_are_joined_as_bash_reads_them(script: str) -> None:
    joined = join_continuations(script)
    assert bash_argv(joined) == bash_argv(script)
    if "#" not in script:  # only one in single quotes (or in a comment) stays
        assert "\\\n" not in joined.replace("'a\\\nb'", "")


@pytest.mark.parametrize("src,words", [
    ("{rm,-rf,/tmp/x}", ["rm", "-rf", "/tmp/x"]),
    ("{r,}m -rf /tmp/x", ["rm", "m", "-rf", "/tmp/x"]),
    ("echo a; {ls,-la}", ["echo", "a;", "ls", "-la"]),
])
def test_brace_expansion_in_the_command_word_gives_bashs_words(src: str, words: list[str]) -> None:
    expanded = expand_command_braces(src)
    assert expanded.split() == words
    # and bash makes the same words of the original
    first = src.rsplit(";", maxsplit=1)[-1].strip()
    assert bash_words(first) == expand_command_braces(first).split()


def test_a_command_with_no_brace_in_its_command_word_is_left_as_it_is() -> None:
    for src in ("echo {a,b}", "ls -la", "git log --format='{x,y}'"):
        assert expand_command_braces(src) == src


@pytest.mark.parametrize("name,secret", [
    ("AWS_SECRET_ACCESS_KEY", True), ("GITHUB_TOKEN", True), ("OPENAI_API_KEY", True), ("DB_PASSWORD", True),
    ("PATH", False), ("HOME", False), ("LANG", False), ("NODE_OPTIONS", False),
])
def test_secret_variable_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


# -- the walker's words for whole commands ----------------------------------------------------

HOME = "/home/agent"
SCRIPTS = [
    "f a 'b c' \"d e\" $'x\\ty' a\\ b",
    "f pre{a,b}post {1..3} {01..3} '{a,b}' \"{a,b}\" \\{a,b\\}",
    "f ~ ~/x \"~/y\" '~' x~ ~/{a,b}",
    "f 'q'\"r\"s a\\\"b \"a\\$b\" \"back\\\\slash\" 'it'\\''s'",
    "V=1; f $V \"$V\" ${V} \"${V}x\" '$V'",
    "f -- --opt=val -abc \"\" ''",
    "cd /tmp && f x; f y",
    "f $'\\x41\\102' $\"plain\" \"$(printf a)\"",
    "V='a b'; f $V \"$V\"",
    "f $\"/\" a$\"b\"c $\"$HOME\" \"$\"/ x/$\"../..\"/..",
    "f $\"x\"y $\"/\"tmp",
    "f of=~/x a=~ b=~/x:~/y --x=~/a ./~ \"c=~\" d='~'",
    "Va=/; V=x; f $V{a,} ${V}{a,} \"$V\"{a,} $V{x}",
]


def walker_argv(script: str) -> list[list[str]]:
    """The argv of each `f` command the guardian's walker sees in `script` ('?' where unknown)."""
    seen: list[list[str]] = []
    def sink(cmd: object) -> None:
        words = getattr(cmd, "words", [])
        if words and words[0].text == "f":
            seen.append([w.text.replace(UNK, "?") for w in words[1:]])
    Walker(sink, HOME, {"HOME": HOME}).script(script, State(("/wt",)))
    return seen


def bash_calls(script: str) -> list[list[str]]:
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c",
                        f"f() {{ printf '%s\\0' \"$@\"; printf '\\1'; }}; cd /; {script}"],
                       capture_output=True, timeout=10, env={"PATH": "/usr/bin:/bin", "HOME": HOME})
    assert r.returncode == 0, r.stderr
    calls = r.stdout.decode("utf-8", "surrogateescape").split("\1")[:-1]
    return [c.split("\0")[:-1] for c in calls]


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_walker_sees_the_arguments_bash_passes(script: str) -> None:
    seen, ran = walker_argv(script), bash_calls(script)
    assert len(seen) == len(ran)
    for mine, theirs in zip(seen, ran, strict=True):
        # where the walker cannot know a word statically it says so ('?') and the words after it
        # may split differently; before it, every word is bash's
        known = next((i for i, m in enumerate(mine) if "?" in m), len(mine))
        assert mine[:known] == theirs[:known], (mine, theirs)
        assert known < len(mine) or len(mine) == len(theirs), (mine, theirs)
