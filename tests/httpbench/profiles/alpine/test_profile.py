"""``--profile alpine`` against real servers: fixture trees served by a real nginx (and, for a Range
offset bug nginx cannot have, a small real HTTP server), preflight called through
``httpbench.profiles.Context``; one end-to-end ``httpbench compare --profile alpine`` run."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from httpbench import report
from httpbench.errors import HttpbenchError
from httpbench.model import Target
from httpbench.peers.nginx import LocalNginx
from httpbench.profiles import Context, load
from httpbench.profiles.alpine import apk, fixture
from httpbench.profiles.alpine.profile import AlpineProfile
from tests.httpbench.http_fixtures import ALPINE_SCENARIOS, run_compare, seeded

SIZE = 300_000
REPO_KEY = apk.generate_private_key()  # a repository that re-signs the index with its own key
NOT_APK = apk.payload(100_000, 99)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    dest = tmp_path_factory.mktemp("alpine") / "tree"
    manifest = fixture.write_tree(dest, package_size=SIZE, seed=3)
    files = {rel: (dest / rel).read_bytes() for rel in manifest["files"]}
    return dest, manifest, files


@pytest.fixture(scope="module")
def served(tree, peer_programs):
    """One nginx, two ports, every variant of the repository under its own prefix."""
    dest, manifest, files = tree
    private = files[manifest["key"]["private"]]
    pkg_path, idx_path = manifest["package"]["path"], manifest["index"]["path"]
    package = apk.read_package(files[pkg_path])
    record = apk.record_for(package)
    key = manifest["key"]["name"]

    def index(records, signer=private, name=key):
        return apk.build_index(records, private_key=signer, key_name=name, description="variant")

    repo = {pkg_path: files[pkg_path], idx_path: files[idx_path]}
    middle = len(package.data) // 2
    flipped = package.data[:middle] + bytes([package.data[middle] ^ 0xFF]) + package.data[middle + 1 :]
    other_tree = fixture.write_tree(dest.parent / "other", package_size=SIZE, seed=4)
    extra = apk.IndexRecord("left-pad", "1.0-r0", 1234, 4096, "Q1" + base64.b64encode(b"\7" * 20).decode())
    other_c = replace(record, identity="Q1" + base64.b64encode(b"\5" * 20).decode())
    variants = {
        "ok": repo,
        "same": dict(repo),
        "flip": {**repo, pkg_path: flipped},
        "other": {rel: (dest.parent / "other" / rel).read_bytes() for rel in (pkg_path, idx_path)},
        "badsig": {**repo, idx_path: index([record], signer=apk.generate_private_key())},
        "extra": {**repo, idx_path: index([record, extra])},
        "cdiff": {**repo, idx_path: index([other_c])},
        # a release candidate listed after the release: text order or index order would pick it,
        # apk's version order picks the release (rc < no suffix)
        "versions": {
            **repo,
            idx_path: index([record, replace(record, version="1.0.0_rc1-r9", identity=other_c.identity)]),
        },
        "wrongsize": {**repo, idx_path: index([replace(record, size=record.size + 1)])},
        "resigned": {**repo, idx_path: index([record], signer=REPO_KEY, name="repo.rsa.pub")},
        "notapk": {pkg_path: NOT_APK, idx_path: files[idx_path]},
    }
    assert other_tree["package"]["path"] == pkg_path
    www = {f"{prefix}/{rel}": data for prefix, content in variants.items() for rel, data in content.items()}
    with LocalNginx(www, servers=2) as ng:
        yield ng, manifest, dest, package


def profile_for(manifest, dest, **over) -> AlpineProfile:
    opts = {
        "package_path": manifest["package"]["path"],
        "index_path": None,
        "package_sha256": manifest["package"]["sha256"],
        "public_key": (str(dest / manifest["key"]["public"]),),
    }
    opts.update(over)
    return AlpineProfile(**opts)


def run_preflight(profile: AlpineProfile, *urls: str):
    targets = [Target.parse(name, url)[0] for name, url in zip(("ref", "cand", "third"), urls)]
    ctx = Context(targets, timeout=5)
    try:
        return profile.preflight(ctx)
    finally:
        ctx.close()


@pytest.mark.servers
def test_two_identical_trees_pass_and_are_recorded(served):
    ng, manifest, dest, package = served
    profile = profile_for(manifest, dest)
    assert profile.scenarios()[4].sha256 is None
    section = run_preflight(profile, f"{ng.url(0)}/ok", f"{ng.url(1)}/same")
    assert section.notes == [] and section.gate_failures == []
    rec = section.records
    assert rec["package"]["identity"] == manifest["package"]["identity"] == package.identity
    assert rec["package"]["signature_verified"] and rec["package"]["size"] == package.size
    assert rec["index_path"] == manifest["index"]["path"]
    for name in ("ref", "cand"):
        t = rec["targets"][name]
        assert t["verified"] and t["signature_algorithm"] == "RSA" and t["signature_digest"] == "sha1"
        assert t["key_name"] == t["verified_with"] == manifest["key"]["name"]
        assert t["records"] == 1 and t["package_identity"] == package.identity
        assert t["package_identity_matches"] and t["identity_kinds"] == {"Q1": 1}
        assert t["index_sha256"] == manifest["index"]["sha256"]
        assert t["range_content_range"] == f"bytes 0-65535/{package.size}"
    # after preflight the scenarios carry exact expectations
    names = [s.name for s in profile.scenarios()]
    assert names == ALPINE_SCENARIOS
    get, rng = profile.scenarios()[3], profile.scenarios()[4]
    assert (get.length, get.sha256, get.klass) == (package.size, package.sha256, "payload")
    assert rng.length == 65536 and rng.sha256 == rec["package"]["range_sha256"]
    assert rng.expected_status == 206 and profile.scenarios()[2].expected_status == 304
    table = report.alpine_tables({"name": "alpine", "preflight": rec})[0]
    assert table[0] == "Alpine preflight" and len(table[2]) == 2
    assert table[2][0][:4] == ["ref", "1", "RSA (sha1)", manifest["key"]["name"]]
    assert load("alpine") is AlpineProfile


@pytest.mark.parametrize(
    "variant, message",
    [
        ("flip", r"target 'cand': package GET .*differs from --package-sha256"),
        ("other", r"target 'cand': package GET .*differs from --package-sha256"),
        (
            "badsig",
            r"target 'cand': index .*APKINDEX\.tar\.gz: bad signature: \.SIGN\.RSA\.httpbench-alpine"
            r"\.rsa\.pub does not verify",
        ),
        (
            "extra",
            r"target 'cand': index package set \(P/V/S/I\) differs from baseline 'ref': "
            r"extra left-pad-1\.0-r0 \(S:1234 I:4096\)",
        ),
        (
            "wrongsize",
            r"target 'cand': index package set .*missing httpbench-alpine-benchmark-1\.0\.0-r0 "
            r"\(S:\d+ I:\d+\); extra httpbench-alpine-benchmark",
        ),
    ],
)
def test_preflight_catches_a_broken_candidate(served, variant, message):
    ng, manifest, dest, _ = served
    with pytest.raises(HttpbenchError, match=message) as info:
        run_preflight(profile_for(manifest, dest), f"{ng.url(0)}/ok", f"{ng.url(1)}/{variant}")
    assert str(info.value).startswith("preflight: ") and "\n" not in str(info.value)


def test_missing_record_on_the_baseline_side_names_it(served):
    ng, manifest, dest, _ = served
    with pytest.raises(HttpbenchError, match=r"target 'cand'.*: missing left-pad-1\.0-r0"):
        run_preflight(profile_for(manifest, dest), f"{ng.url(0)}/extra", f"{ng.url(1)}/ok")


def test_index_size_that_disagrees_with_the_package_fails(served):
    ng, manifest, dest, package = served
    with pytest.raises(HttpbenchError, match=rf"target 'ref'.*has S:{package.size + 1}, but the package is"):
        run_preflight(profile_for(manifest, dest), f"{ng.url(0)}/wrongsize", f"{ng.url(1)}/wrongsize")


def test_identity_differences_are_notes_not_failures(served):
    ng, manifest, dest, _package = served
    section = run_preflight(profile_for(manifest, dest), f"{ng.url(0)}/ok", f"{ng.url(1)}/cdiff")
    assert not section.records["targets"]["cand"]["package_identity_matches"]
    assert section.records["targets"]["ref"]["package_identity_matches"]
    assert any("target 'cand': C:Q1BQUF" in n and "is not the package's identity" in n for n in section.notes)
    assert any("C: differs between 'ref' and 'cand' for 1 package(s)" in n for n in section.notes)
    rows = report.alpine_tables({"preflight": section.records})[0][2]
    assert rows[1][4].endswith("(not the package's)")


def test_package_signed_by_another_key_is_a_note(served, tmp_path):
    """A repository re-signs the index with its own key; the package keeps its builder's."""
    ng, manifest, dest, _ = served
    key = tmp_path / "repo.rsa.pub"
    key.write_bytes(apk.public_key_pem(REPO_KEY))
    section = run_preflight(
        profile_for(manifest, dest, public_key=(str(key),)), f"{ng.url(0)}/resigned", f"{ng.url(1)}/resigned"
    )
    assert section.records["targets"]["cand"]["verified_with"] == "repo.rsa.pub"
    assert not section.records["package"]["signature_verified"]
    assert section.records["package"]["signature"]["key_name"] == manifest["key"]["name"]
    assert [n for n in section.notes if n.startswith("package signature not verified")]


def test_bytes_that_are_not_a_package_fail(served):
    ng, manifest, dest, _ = served
    profile = profile_for(manifest, dest, package_sha256=hashlib.sha256(NOT_APK).hexdigest())
    with pytest.raises(
        HttpbenchError,
        match=r"^preflight: package /v3\.23/.*\.apk is not a valid APK v2 "
        r"package: not gzip",
    ):
        run_preflight(profile, f"{ng.url(0)}/notapk", f"{ng.url(1)}/notapk")


def test_wrong_public_key_and_missing_options(served, tmp_path):
    ng, manifest, dest, _ = served
    other = tmp_path / "other.rsa.pub"
    other.write_bytes(apk.public_key_pem(apk.generate_private_key()))
    with pytest.raises(HttpbenchError, match=r"target 'ref'.*any given public key \(other\.rsa\.pub"):
        run_preflight(
            profile_for(manifest, dest, public_key=(str(other),)), f"{ng.url(0)}/ok", f"{ng.url(1)}/ok"
        )
    bad = tmp_path / "bad.pub"
    bad.write_text("not a key")
    with pytest.raises(HttpbenchError, match=r"--public-key .*bad\.pub: public key 'bad\.pub' is not a PEM"):
        profile_for(manifest, dest, public_key=(str(bad),))
    with pytest.raises(HttpbenchError, match="needs --package-sha256"):
        profile_for(manifest, dest, package_sha256="abc")
    with pytest.raises(HttpbenchError, match="needs --public-key"):
        profile_for(manifest, dest, public_key=())
    with pytest.raises(HttpbenchError, match=r"target 'ref': index GET /nope/APKINDEX\.tar\.gz returned 404"):
        run_preflight(
            profile_for(manifest, dest, index_path="nope/APKINDEX.tar.gz"),
            f"{ng.url(0)}/ok",
            f"{ng.url(1)}/ok",
        )


class RangeBug(BaseHTTPRequestHandler):
    """Serves one package and index correctly, except Range: answered ``shift`` bytes late, or with
    a wrong total in Content-Range."""

    protocol_version = "HTTP/1.1"
    files: ClassVar[dict[str, bytes]] = {}
    shift = 1
    bad_total = False

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        data = self.files.get(self.path)
        if data is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status, total = 200, len(data)
        if self.headers.get("Range") == "bytes=0-65535":
            status, data = 206, data[self.shift : self.shift + 65536]
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        if status == 206:
            self.send_header("Content-Range", f"bytes 0-65535/{total + 1 if self.bad_total else total}")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize(
    "shift, bad_total, message",
    [
        (
            1,
            False,
            r"target 'cand': package Range bytes=0-65535: body differs from the package's first "
            r"65,536 bytes at offset 0; the bytes are the package's from offset 1",
        ),
        (
            0,
            True,
            r"target 'cand': package Range bytes=0-65535: Content-Range 'bytes 0-65535/\d+', "
            r"expected 'bytes 0-65535/\d+'",
        ),
    ],
)
@pytest.mark.servers
def test_wrong_range_answer_is_caught(served, shift, bad_total, message):
    ng, manifest, dest, package = served
    files = {
        "/" + manifest["package"]["path"]: package.data,
        "/" + manifest["index"]["path"]: (dest / manifest["index"]["path"]).read_bytes(),
    }
    handler = type("Handler", (RangeBug,), {"files": files, "shift": shift, "bad_total": bad_total})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(HttpbenchError, match=message):
            run_preflight(
                profile_for(manifest, dest), f"{ng.url(0)}/ok", f"http://127.0.0.1:{server.server_address[1]}"
            )
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_fixture_tree_is_deterministic_and_never_clobbers(tree, tmp_path):
    dest, manifest, files = tree
    again = fixture.write_tree(dest, package_size=SIZE, seed=3)
    assert again == manifest
    assert {rel: (dest / rel).read_bytes() for rel in again["files"]} == files
    assert (dest / manifest["key"]["private"]).stat().st_mode & 0o777 == 0o600
    assert manifest["compare_options"][:2] == ["--profile", "alpine"]
    assert abs(manifest["package"]["size"] - SIZE) <= 4
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(HttpbenchError, match="refusing to write into .*foreign"):
        fixture.write_tree(foreign, package_size=SIZE)
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    with pytest.raises(HttpbenchError, match="^fixture alpine: cannot write .*: Not a directory"):
        fixture.write_tree(foreign / "notes.txt" / "tree", package_size=4096)


@pytest.mark.servers
def test_compare_profile_alpine_end_to_end(served, tmp_path):
    ng, manifest, _dest, package = served
    profile = manifest["compare_options"]
    out = tmp_path / "result.json"
    options = seeded(50, warmups=2, concurrency=4, output=out, q=True)
    run = run_compare({"ref": f"{ng.url(0)}/ok", "cand": f"{ng.url(1)}/same"}, **options, extra=profile)
    assert run.code == 0, run.output
    doc = json.loads(out.read_text())
    assert doc["totals"] == {"timed_requests": 6 * 2 * 50, "ok": 600, "failures": 0}
    section = doc["profile"]
    assert section["name"] == "alpine"
    assert section["preflight"]["targets"]["cand"]["verified"]
    assert section["preflight"]["package"]["identity"] == package.identity
    assert doc["summaries"]["package Range 64 KiB"]["cand"]["mibps"] > 0
    assert "Alpine preflight" in run.stdout and "RSA (sha1)" in run.stdout


@pytest.mark.servers
def test_repositories_that_sign_their_own_index_compare_end_to_end(served, tmp_path):
    """Two repositories serve the same package but each signs its index with its own key: the index
    bytes differ, so the index scenarios compare contents (P/V/S/I), not bytes, and still time."""
    ng, manifest, _dest, package = served
    repo_key = tmp_path / "repo.rsa.pub"
    repo_key.write_bytes(apk.public_key_pem(REPO_KEY))
    out = tmp_path / "result.json"
    targets = {"ref": f"{ng.url(0)}/ok", "cand": f"{ng.url(1)}/resigned"}
    keys = [*manifest["compare_options"], "--public-key", str(repo_key)]  # the fixture's key, then ours
    run = run_compare(targets, **seeded(20, warmups=1, concurrency=2), output=out, q=True, extra=keys)
    assert run.code == 0, run.output
    doc = json.loads(out.read_text())
    pre = {(p["scenario"], p["target"]): p for p in doc["preflight"]}
    assert pre[("signed index GET", "ref")]["sha256"] != pre[("signed index GET", "cand")]["sha256"]
    assert pre[("package GET", "ref")]["sha256"] == pre[("package GET", "cand")]["sha256"]
    targets = doc["profile"]["preflight"]["targets"]
    assert targets["ref"]["verified_with"] == manifest["key"]["name"]
    assert targets["cand"]["verified_with"] == "repo.rsa.pub"
    assert doc["totals"]["failures"] == 0
    # the timed Range bodies were digest-checked against the exact slice found by the preflight
    rng = next(s for s in doc["config"]["scenarios"] if s["name"] == "package Range 64 KiB")
    assert rng["sha256"] == hashlib.sha256(package.data[:65536]).hexdigest() and rng["length"] == 65536


def test_apk_client_verifies_what_it_fetches_and_never_echoes_credentials(served):
    from httpbench.profiles.alpine import apk_client

    ng, manifest, dest, package = served
    branch_repo = manifest["package"]["path"].rsplit("/", 2)[0]
    keys = apk_client.trusted_keys(dest / "keys")
    fetch = {"arch": "x86_64", "keys": keys, "package": package.name, "timeout": 5}
    found = apk_client.flow(f"{ng.url(0)}/ok/{branch_repo}", **fetch)
    assert found["identity"] == package.identity and found["bytes"] == package.size
    with pytest.raises(HttpbenchError, match="bad signature") as err:
        apk_client.flow(f"{ng.url(0)}/badsig/{branch_repo}", **fetch)
    assert err.value.exit_code == 1
    port = ng.ports[0]
    with pytest.raises(HttpbenchError, match="HTTP 404") as err:
        apk_client.flow(f"http://apk:S3cretPw@127.0.0.1:{port}/missing/{branch_repo}", **fetch)
    assert "S3cretPw" not in str(err.value) and f"http://127.0.0.1:{port}/missing/" in str(err.value)


def test_apk_client_picks_the_version_apk_would_install(served):
    from httpbench.profiles.alpine import apk_client

    ng, manifest, dest, package = served
    branch_repo = manifest["package"]["path"].rsplit("/", 2)[0]
    keys = apk_client.trusted_keys(dest / "keys")
    found = apk_client.flow(f"{ng.url(0)}/versions/{branch_repo}", "x86_64", keys, package.name, timeout=5)
    assert found["versions"] == ["1.0.0_rc1-r9", package.version]
    assert found["identity"] == package.identity and found["bytes"] == package.size
