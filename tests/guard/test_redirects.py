"""Redirects and heredocs (zen/guard/shell/expand.py, shell.py): every redirect operator gets the
write rules, `exec` redirects persist, /dev/tcp is a socket, and a heredoc's text runs its
substitutions only when its delimiter is unquoted."""

from __future__ import annotations

import pytest

from tests.guard.ctxs import agent, bash, check

OUT = "outside the job's worktree (/z/home/worktrees/J)"


@pytest.mark.parametrize("command,shown", [
    ("echo x >| /etc/x", "/etc/x"),                    # clobber
    ("echo x &>> /etc/x", "/etc/x"),                   # append both streams
    ("echo x 2> /etc/err", "/etc/err"),
    ("exec > /etc/x", "/etc/x"),                       # the rest of the script writes there
    ("exec 3> /etc/x", "/etc/x"),
    ("exec 3>/etc/x; echo hi >&3", "/etc/x"),
    ("echo x > /proc/sys/kernel/x", "/proc/sys/kernel/x"),
    ("echo x > ~/x", "~/x"),
    ("f=/etc/x; echo > $f", "$f"),                     # the word as written, resolved to /etc/x
    ("echo x > \"$(echo /etc/x)\"", "\"$(echo /etc/x)\""),
    ("echo x > /e*c/x", "/e*c/x"),
    ("cat > /etc/x <<EOF\nhi\nEOF", "/etc/x"),
])
def test_every_redirect_operator_gets_the_write_rules(policy, command: str, shown: str) -> None:
    check(bash(policy, command), "deny", "fs.outside-worktree", f"redirects output into {shown}, {OUT}", command)


def test_a_process_substitution_target_is_judged_as_a_command(policy) -> None:
    check(bash(policy, "echo x > >(tee /etc/x)"), "deny", "fs.outside-worktree", "`tee` writes /etc/x")


@pytest.mark.parametrize("command,rule", [
    ("echo x > $(mktemp)", "fs.unresolved-target"),
    ("echo x > {a,/etc/b}", "fs.unresolved-target"),   # bash does not brace-expand a redirect target
    ("cat <> /etc/x", "shell.parse"),                  # read-write redirect: not read, so denied
])
def test_redirect_targets_it_cannot_pin_down_are_denied(policy, command: str, rule: str) -> None:
    check(bash(policy, command), "deny", rule, None, command)


@pytest.mark.parametrize("command,fragment", [
    ("echo x > /dev/tcp/example.com/80", "redirects output into a network socket (/dev/tcp/example.com/80)"),
    ("cat < /dev/tcp/api.stripe.com/443", "opens a network socket (/dev/tcp/api.stripe.com/443)"),
])
def test_dev_tcp_is_a_socket(policy, command: str, fragment: str) -> None:
    check(bash(policy, command), "deny", "net.raw-socket", fragment, command)


@pytest.mark.parametrize("command", ["echo x > /dev/stderr", "echo x >/z/home/worktrees/J/../J/ok",
                                     "echo $((1+2)) > n.txt", "make 2>&1 | tee build.log", "ls 1>&2",
                                     "exec 2>/dev/null; ls"])
def test_redirects_that_stay_inside_are_allowed(policy, command: str) -> None:
    check(bash(policy, command), "allow", None, None, command)


def test_an_unquoted_heredoc_runs_its_substitutions_and_a_quoted_one_does_not(policy) -> None:
    check(bash(policy, "cat <<EOF > out\n$(rm -rf /etc)\nEOF"), "deny", "fs.outside-worktree", "`rm` deletes /etc")
    check(bash(policy, "cat <<'EOF' > out\n$(rm -rf /etc)\nEOF"), "allow")
    check(bash(policy, "cat <<\"EOF\" > out\n`rm -rf /etc`\nEOF"), "allow")


def test_a_heredoc_fed_to_a_shell_is_judged_as_its_script(policy) -> None:
    check(bash(policy, "bash <<'EOF'\ncd /\nrm -rf etc\nEOF"), "deny", "fs.outside-worktree")
    check(bash(policy, "sh <<'EOF'\necho hi > out.txt\nEOF"), "allow")


def test_a_redirect_is_a_write_at_observe_even_into_the_worktree(policy) -> None:
    check(bash(policy, "echo x > out.txt", agent(level="observe")), "deny", "level.observe")
    check(bash(policy, "ls > /dev/null 2>&1", agent(level="observe")), "allow")
