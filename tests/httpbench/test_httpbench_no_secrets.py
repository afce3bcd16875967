"""No credential in any httpbench output (issue 13, item 3): compare with URL userinfo, ``--auth
env:`` and ``file:``, a client command that prints ``$HTTPBENCH_AUTHORIZATION``, every exporter;
every stream and file is searched (tests/leaks.py).
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from tests.httpbench.http_fixtures import FixtureServer, Route, body_of, run_httpbench
from tests.leaks import HTTP_PASSWORD, HTTP_TOKEN, HTTP_USER, Recorder, Secret, find_leaks, free_port

# ---------------------------------------------------------------------------------------------
# httpbench

HTTP_SMALL = (
    "--warmups",
    "1",
    "--requests",
    "8",
    "--concurrency",
    "2",
    "--min-round-ms",
    "0",
    "-q",
    "--budget",
    "5",
)
# the client prints what it was given -- the header, the decoded pair, the URL -- on its last line
ECHO_AND_FAIL = (
    'echo "auth=$HTTPBENCH_AUTHORIZATION url={url} env=$HTTPBENCH_URL '
    'pair=$(printf %s "${HTTPBENCH_AUTHORIZATION#* }" | base64 -d 2>/dev/null)" >&2; exit 3'
)


def http_secrets() -> list[Secret]:
    return [
        Secret(HTTP_PASSWORD, HTTP_USER, "the HTTP password"),
        Secret(HTTP_TOKEN, None, "the bearer token"),
    ]


@pytest.mark.servers
def test_httpbench_never_shows_credentials(tmp_path):
    body = body_of(4096)
    out = tmp_path / "out"
    out.mkdir()
    rec = Recorder([out])
    token_file = out / "token"  # the credentials file itself is the one file allowed to hold it
    token_file.write_text(f"Bearer {HTTP_TOKEN}\n")
    enc = f"{quote(HTTP_USER, safe='')}:{quote(HTTP_PASSWORD, safe='')}"
    env = {"HB_T_CRED": f"{HTTP_USER}:{HTTP_PASSWORD}", "GITHUB_STEP_SUMMARY": str(out / "env-summary.md")}
    with (
        FixtureServer({"/f": Route(body)}) as a,
        FixtureServer({"/f": Route(body)}) as b,
        FixtureServer({"/f": Route(body, fault="wrong_bytes")}) as bad,
    ):
        userinfo_url = f"http://{enc}@127.0.0.1:{a.port}"
        runs = [
            (
                "compare",
                [
                    "--target",
                    f"ref={userinfo_url}",
                    "--target",
                    f"cand={b.url}",
                    "--target",
                    f"tok={b.url}",
                    "--auth",
                    "cand=env:HB_T_CRED",
                    "--auth",
                    f"tok=file:{token_file}",
                    "--scenario",
                    "/f",
                    "--client-command",
                    ECHO_AND_FAIL,
                    "--client-rounds",
                    "5",
                    "--output",
                    str(out / "r.json"),
                    "--junit",
                    str(out / "r.xml"),
                    "--github-summary",
                    str(out / "summary.md"),
                    "--samples",
                    *HTTP_SMALL,
                ],
                (0, 1, 3),
            ),
            (
                "compare markdown",
                [
                    "--target",
                    f"ref={b.url}",
                    "--target",
                    f"cand={userinfo_url}",
                    "--auth",
                    "ref=env:HB_T_CRED",
                    "--scenario",
                    "/f",
                    "--markdown",
                    "--client-command",
                    "ref=" + ECHO_AND_FAIL,
                    "--client-command",
                    f"cand=curl -sS -u {HTTP_USER}:$HTTPBENCH_AUTHORIZATION {{url}}/nope; exit 4",
                    "--client-rounds",
                    "1",
                    "--enforce-gates",
                    "--output",
                    str(out / "md.json"),
                    "--method",
                    "seed",
                    "--rounds",
                    "1",
                    *HTTP_SMALL[:-2],
                ],
                (1, 3),
            ),
            (
                "unreachable userinfo",
                [
                    "--target",
                    f"ref={userinfo_url}",
                    "--target",
                    f"cand=http://{enc}@127.0.0.1:{free_port()}",
                    "--scenario",
                    "/f",
                    "--output",
                    str(out / "down.json"),
                    *HTTP_SMALL,
                ],
                (1, 2),
            ),
            (
                "mismatched bytes",
                [
                    "--target",
                    f"ref={userinfo_url}",
                    "--target",
                    f"cand=http://{enc}@127.0.0.1:{bad.port}",
                    "--auth",
                    "cand=env:HB_T_CRED",
                    "--scenario",
                    "/f",
                    "--verify-digest",
                    "--output",
                    str(out / "bad.json"),
                    "--junit",
                    str(out / "bad.xml"),
                    *HTTP_SMALL,
                ],
                (1, 2),
            ),
            (
                "credential header refused",
                [
                    "--target",
                    f"ref={a.url}",
                    "--target",
                    f"cand={b.url}",
                    "--scenario",
                    f"path=/f,header=X-Api-Key: {HTTP_TOKEN}",
                    *HTTP_SMALL,
                ],
                (2,),
            ),
            (
                "cookie refused",
                [
                    "--target",
                    f"ref={a.url}",
                    "--target",
                    f"cand={b.url}",
                    "--scenario",
                    f"path=/f,header=Cookie: s={HTTP_TOKEN}",
                    *HTTP_SMALL,
                ],
                (2,),
            ),
            (
                "literal auth refused",
                [
                    "--target",
                    f"ref={a.url}",
                    "--target",
                    f"cand={b.url}",
                    "--auth",
                    f"cand={HTTP_USER}:{HTTP_PASSWORD}",
                    "--scenario",
                    "/f",
                ],
                (2,),
            ),
            (
                "password not encoded",
                [
                    "--target",
                    f"ref=http://{HTTP_USER}:{HTTP_PASSWORD}@127.0.0.1:{a.port}",
                    "--target",
                    f"cand={b.url}",
                    "--scenario",
                    "/f",
                    *HTTP_SMALL,
                ],
                (1, 2),
            ),
        ]
        for name, args, codes in runs:
            result = rec.keep(name, run_httpbench("compare", *args, env=env, timeout=120))
            assert result.code in codes, f"{name}: exit {result.code}\n{result.output}"
    doc = json.loads((out / "r.json").read_text())
    assert [t["authenticated"] for t in doc["config"]["targets"]] == [True, True, True]
    errors = json.dumps(doc)
    assert "auth=" in errors and "url=http://127.0.0.1" in errors, "the failing client's line is recorded"
    blobs = rec.blobs()
    blobs.pop(str(token_file))
    leaks = find_leaks(blobs, http_secrets())
    assert not leaks, "credentials leaked:\n" + "\n".join(leaks)
