"""Mutating calls to hosted APIs (GitHub, GitLab, Vercel, Slack, ...) from inside a job: an action
beyond the worktree, like a push (DESIGN sections 5 and 6). Reads, documentation hosts and local
servers stay allowed."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.guard.test_corpus import ENV, WT, _home
from tests.guard.util import make_job, set_policy
from tests.helpers import ZEN
from zen.guard.api import Context, ToolCall
from zen.guard.decide import decide
from zen.guard.policy.load import PolicyError, _compile_guardian, load_policy

# every spelling of a change: method options, data that makes a POST, uploads, every client
MUTATING = [
    "gh api -X DELETE repos/o/r",
    "gh api --method DELETE repos/o/r",
    "gh api -XPATCH repos/o/r -f name=x",
    "gh api --method=PUT repos/o/r/topics",
    "gh api repos/o/r/issues -f title=x",                 # fields make gh api a POST
    "gh api repos/o/r/issues --input body.json",
    "gh api graphql -f query='mutation { addStar(input: {starrableId: \"x\"}) { clientMutationId } }'",
    "gh api graphql -F query=@q.graphql",                  # a body the guardian cannot see
    "gh api -X $M repos/o/r",                              # a method only known at run time
    "gh api --hostname ghe.example.com -X DELETE repos/o/r",
    "glab api -X DELETE projects/1",
    "glab api --method POST projects/1/issues -f title=x",
    "hub api -X DELETE repos/o/r",
    "curl -X DELETE https://api.github.com/repos/o/r",
    "curl --request DELETE https://api.github.com/repos/o/r",
    "curl -XDELETE https://api.github.com/repos/o/r",
    "curl -sS -XPATCH -H 'Accept: application/json' https://api.github.com/repos/o/r",
    "curl -d '{\"title\":\"x\"}' https://api.github.com/repos/o/r/issues",
    "curl --json '{\"title\":\"x\"}' https://api.github.com/repos/o/r/issues",
    "curl -F file=@x.zip https://uploads.github.com/repos/o/r/releases/1/assets",
    "curl -T x.zip https://uploads.github.com/repos/o/r/releases/1/assets",
    "curl --requ DELETE https://api.github.com/repos/o/r",      # an abbreviated long option
    "curl -X delete https://api.github.com/repos/o/r",          # the method in lower case
    "curl --url https://api.github.com/repos/o/r -X DELETE",
    "curl -X POST https://gitlab.com/api/v4/projects/1/issues",
    "curl -X DELETE https://api.bitbucket.org/2.0/repositories/o/r",
    "curl -X DELETE https://api.vercel.com/v9/projects/x",
    "curl -X DELETE https://api.cloudflare.com/client/v4/zones/x",
    "curl -X POST -d '{\"text\":\"hi\"}' https://hooks.slack.com/services/T/B/X",
    "curl -X POST https://x.atlassian.net/rest/api/3/issue",
    "wget --method=DELETE https://api.github.com/repos/o/r",
    "wget --method DELETE https://api.github.com/repos/o/r",
    "wget --post-data='x=1' https://api.github.com/repos/o/r/issues",
    "wget --meth=DELETE https://api.github.com/repos/o/r",
    "http DELETE api.github.com/repos/o/r",
    "http POST https://api.github.com/repos/o/r/issues title=x",
    "http api.github.com/repos/o/r/issues title=x",              # a data item makes httpie POST
    "http --form api.github.com/repos/o/r/issues title=x",
    "echo '{}' | http api.github.com/repos/o/r/issues",          # a body on stdin too
    "xh delete api.github.com/repos/o/r",
    "https PUT api.github.com/user/starred/o/r",
    "python3 -c \"import requests; requests.delete('https://api.github.com/repos/o/r')\"",
    "python3 -c \"import requests; requests.request('DELETE', 'https://api.github.com/repos/o/r')\"",
    "python3 -c \"import httpx; httpx.post('https://api.github.com/repos/o/r/issues', json={})\"",
    "python3 -c \"import requests as r; s = r.Session(); s.patch('https://api.github.com/repos/o/r', json={})\"",
    "python3 -c \"import httpx; httpx.Client().delete('https://api.github.com/repos/o/r')\"",
    "python3 -c \"import requests; requests.put(url='https://api.github.com/user/starred/o/r')\"",
    "python3 -c \"import requests; m = 'DELETE'; requests.request(m, 'https://api.github.com/repos/o/r')\"",
    "node -e \"fetch('https://api.github.com/repos/o/r', {method: 'DELETE'})\"",
    "node -e \"fetch('https://api.github.com/repos/o/r/issues', {method: 'POST', body: '{}'})\"",
    "node -e \"require('axios').delete('https://api.github.com/repos/o/r')\"",
    "ruby -e \"require 'net/http'; u = URI('https://api.github.com/repos/o/r'); "
    "Net::HTTP.start(u.host, 443, use_ssl: true) { |h| h.request(Net::HTTP::Delete.new(u)) }\"",
    "perl -MHTTP::Tiny -e 'HTTP::Tiny->new->delete(\"https://api.github.com/repos/o/r\")'",
    "php -r '$c = curl_init(\"https://api.github.com/repos/o/r\"); curl_setopt($c, CURLOPT_CUSTOMREQUEST, \"DELETE\"); curl_exec($c);'",
    "bash -c 'curl -X DELETE https://api.github.com/repos/o/r'",
    "curl -X DELETE https://140.82.112.6/repos/o/r -H 'Host: api.github.com'",   # asked by address
    "curl -X DELETE api.github.com/repos/o/r",
    "curl -X DELETE https://API.GITHUB.COM/repos/o/r",
    "node -e \"require('https').request({hostname: 'api.github.com', path: '/r', method: 'DELETE'}).end()\"",
    "python3 -c \"import http.client as h; c = h.HTTPSConnection('api.github.com'); c.request('DELETE', '/r')\"",
    # gh's own subcommands that change GitHub
    "gh pr create --fill",
    "gh repo edit --visibility public",
    "gh secret set TOKEN -b x",
    "gh workflow run ci.yml",
    "gh issue close 3",
    "gh pr review 1 --comment -b ok",
    "glab mr create --fill",
    "curl -sXDELETE https://api.github.com/repos/o/r",
    "gh api --method=delete repos/o/r",
    "gh api repos/o/r -F private=true",
    "echo \"import requests; requests.delete('https://api.github.com/x')\" > s.py && python3 s.py",
    "node -e \"const m = process.argv[1]; fetch('https://api.github.com/x', {method: m})\"",
    "timeout 5 curl -X DELETE https://api.github.com/repos/o/r",
]

# near misses: reading a hosted API, a GraphQL query, documentation hosts, local servers
READS = [
    "gh api repos/o/r",
    "gh api -X GET search/issues -f q=x",
    "gh api --method GET repos/o/r/pulls --paginate",
    "gh api graphql -f query='query { viewer { login } }'",
    "glab api projects/1",
    "curl https://api.github.com/repos/o/r",
    "curl -X GET https://api.github.com/repos/o/r",
    "curl -sSfL -H 'Accept: application/vnd.github+json' https://api.github.com/repos/o/r/releases/latest",
    "curl -I https://api.github.com",
    "curl -G -d q=x https://api.github.com/search/issues",
    "curl -X POST https://api.github.com/graphql -d '{\"query\": \"query { viewer { login } }\"}'",
    "curl -X POST -d q=x https://docs.github.com/search",
    "curl -X POST http://localhost:8080/api/x -d 1",
    "curl -X DELETE http://127.0.0.1:5000/items/1",
    "curl -X POST https://example.com/api -d 1",
    "wget -q https://api.github.com/repos/o/r",
    "http GET api.github.com/repos/o/r",
    "http api.github.com/search/issues q==x",                   # == is a query parameter
    "http api.github.com/repos/o/r Accept:application/json",   # : is a header
    "python3 -c \"import requests; print(requests.get('https://api.github.com/repos/o/r').json())\"",
    "python3 -c \"import httpx; print(httpx.head('https://api.github.com'))\"",
    "node -e \"fetch('https://api.github.com/repos/o/r').then(r => r.json()).then(console.log)\"",
    "node -e \"fetch('https://docs.github.com/x', {method: 'POST'})\"",
    "gh pr view 1",
    "gh pr list --state open",
    "gh run list",
    "gh pr checkout 1",
    "gh repo clone o/r",
    "gh auth status",
    "gh search issues x",
    "gh run download 1",
    "gh api -XGET repos/o/r",
    "glab mr list",
    "glab config set editor vim",
    "hub sync",
    "gh repo set-default o/r",
    "gh api graphql -F owner=o -f query='query($owner: String!) { user(login: $owner) { login } }'",
    "gh api repos/o/r/actions/runs --jq '.workflow_runs[0]'",
]



def ctx(level: str, job: bool = True) -> Context:
    return Context(cwd=WT, worktree=WT, home="/z/home", user_home="/u", level=level, domain="code",
                   job_id="J" if job else None, env=ENV)


def bash(policy, command: str, level: str = "suggest", job: bool = True):
    return decide(ToolCall("Bash", command=command), ctx(level, job), policy)


def test_the_families_are_big_enough() -> None:
    assert len(MUTATING) >= 40 and len(READS) >= 20


@pytest.mark.parametrize("command", MUTATING)
def test_a_change_to_a_hosted_api_is_beyond_the_worktree_at_suggest(policy, command: str) -> None:
    d = bash(policy, command)
    assert d.decision == "deny" and d.rule == "level.suggest", (command, d.as_dict())
    assert "act-and-report" in d.reason and "outside the worktree" in d.reason, d.reason


@pytest.mark.parametrize("command", MUTATING[:20] + MUTATING[-24:])
def test_act_and_report_allows_it_and_reports_it(policy, command: str) -> None:
    d = bash(policy, command, "act-and-report")
    assert d.decision == "allow" and d.rule == "report.hosted-api", (command, d.as_dict())


@pytest.mark.parametrize("command", MUTATING[:5])
def test_observe_denies_it(policy, command: str) -> None:
    assert bash(policy, command, "observe").decision == "deny"


@pytest.mark.parametrize("command", READS)
def test_reads_docs_and_local_servers_stay_allowed(policy, command: str) -> None:
    d = bash(policy, command)
    assert d.decision == "allow" and d.rule == "allow", (command, d.as_dict())


@pytest.mark.parametrize("command", [
    "gh api -X PUT repos/o/r/pulls/1/merge",
    "gh api --method PUT repos/o/r/pulls/12/merge -f merge_method=squash",
    "curl -X PUT https://api.github.com/repos/o/r/pulls/1/merge",
    "curl -X PUT https://gitlab.com/api/v4/projects/1/merge_requests/3/merge",
    "glab api -X POST projects/1/merge_requests/3/approve",
    "curl -X POST https://api.bitbucket.org/2.0/repositories/o/r/pullrequests/4/merge",
    "gh pr merge 1 --squash",
    "gh pr review 1 --approve",
    "gh pr review 1 -a",
    "glab mr merge 3",
    "glab mr approve 3",
])
def test_an_agent_never_merges_or_approves_through_the_api(policy, command: str) -> None:
    d = bash(policy, command, "autonomous")
    assert d.decision == "deny" and d.rule == "remote.human-only", (command, d.as_dict())
    # a human (no job) at autonomous may
    assert bash(policy, command, "autonomous", job=False).allowed, command


def test_autonomous_allows_a_change_without_a_report(policy) -> None:
    d = bash(policy, "curl -X DELETE https://api.github.com/repos/o/r/labels/x", "autonomous")
    assert d.decision == "allow" and d.rule == "allow", d.as_dict()


def test_the_policy_adds_hosted_api_hosts(tmp_path) -> None:
    home = _home(tmp_path)
    text = (tmp_path / "policy" / "guardian.yaml").read_text().replace(
        "  code_hosting: []", "  code_hosting: [git.internal.example, '*.forge.example']")
    (tmp_path / "policy" / "guardian.yaml").write_text(text)
    pol, _ = load_policy(home)
    assert pol.invalid is None, pol.invalid
    for url in ("https://git.internal.example/api/v4/projects/1", "https://eu.forge.example/x"):
        d = bash(pol, f"curl -X DELETE {url}")
        assert d.rule == "level.suggest", d.as_dict()
        assert bash(pol, f"curl {url}").allowed


def test_a_bad_hosted_api_hosts_entry_is_refused() -> None:
    with pytest.raises(PolicyError, match="hosted_api_hosts"):
        _compile_guardian({"hosted_api_hosts": {"code_hosting": [1]}}, "policy/guardian.yaml")


def test_zen_guard_check_in_a_job_denies_it(tmp_path) -> None:
    """The real CLI, as the lead probes it: a zen home, a job of the code domain (suggest)."""
    home = tmp_path / "home"
    subprocess.run([*ZEN, "init", str(home)], check=True, capture_output=True, env={"HOME": str(tmp_path)})
    set_policy(home, (home / "policy" / "guardian.yaml").read_text())
    wt = make_job(home, "J1")
    env = {"HOME": str(tmp_path), "ZEN_HOME": str(home), "ZEN_JOB_ID": "J1", "ZEN_WORKTREE": str(wt),
           "PATH": "/usr/bin:/bin"}
    for command, code in (("gh api --method DELETE repos/o/r", 4), ("gh api repos/o/r", 0),
                          ("curl -XDELETE https://api.github.com/repos/o/r", 4)):
        r = subprocess.run([*ZEN, "guard", "check", "--json", "--", command], cwd=wt, env=env,
                           capture_output=True, text=True)
        assert r.returncode == code, (command, r.stdout, r.stderr)
        if code:
            assert json.loads(r.stdout)["rule"] == "level.suggest", r.stdout


def test_a_host_header_is_judged_as_the_host(policy) -> None:
    d = bash(policy, "curl -H 'Host: api.stripe.com' https://1.2.3.4/v1/charges", "autonomous")
    assert d.decision == "deny" and d.rule == "net.high-consequence", d.as_dict()


def test_gh_extension_install_is_code_from_a_repository(policy) -> None:
    d = bash(policy, "gh extension install owner/gh-x", "autonomous")
    assert d.decision == "deny" and d.rule == "pkg.unknown-index", d.as_dict()


PUBLISH = ["npm publish", "npm publish --access public", "pnpm publish", "yarn npm publish", "yarn publish",
           "bun publish", "npm unpublish x@1.0.0", "npm deprecate x 'no'", "npm dist-tag add x@1 latest",
           "twine upload dist/*", "python -m twine upload dist/*", "cargo publish", "cargo yank --version 1.0.0",
           "cargo owner --add u", "gem push x.gem", "poetry publish --build", "uv publish", "hatch publish",
           "flit publish", "docker push me/img", "podman push me/img", "docker image push me/img",
           "docker buildx build --push -t me/x .", "gh release create v1", "gh release upload v1 x.zip",
           "glab release create v1", "hub release create v1", "bash -c 'npm publish'"]
NOT_PUBLISH = ["npm pack", "npm version patch", "npm dist-tag ls x", "npm owner ls x", "cargo owner --list",
               "cargo build --release", "twine check dist/*", "docker build -t me/x .", "gh release view v1",
               "gh release download v1", "poetry build", "uv build", "docker pull me/img"]


@pytest.mark.parametrize("command", PUBLISH)
def test_an_agent_never_publishes_a_release(policy, command: str) -> None:
    d = bash(policy, command, "autonomous")
    assert d.decision == "deny" and d.rule == "remote.human-only", (command, d.as_dict())
    assert "never a human" in d.reason
    # a human at suggest: beyond the worktree; at act-and-report: allowed and reported
    assert bash(policy, command, "suggest", job=False).rule == "level.suggest", command
    assert bash(policy, command, "act-and-report", job=False).decision == "allow", command


@pytest.mark.parametrize("command", NOT_PUBLISH)
def test_packing_building_and_reading_releases_stay_allowed(policy, command: str) -> None:
    d = bash(policy, command, "act-and-report")
    assert d.decision == "allow" and not d.rule.startswith("remote."), (command, d.as_dict())
