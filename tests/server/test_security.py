"""Security by default: loopback bind, keys (plain and hashed), roles, bare 401/403, host and origin
checks, CORS off unless configured, body and question limits, no stack traces."""

import base64
import subprocess
import sys

import httpx
import pytest
from server_helpers import client, start_server

from scholargraph.config import ServerSettings, load_settings
from scholargraph.errors import ConfigError
from scholargraph.server.security import (
    FailureThrottle,
    KeyRing,
    check_bind,
    digest,
    generate_key,
    host_allowed,
    key_file_line,
    key_weakness,
    load_keys,
    token_from_header,
)
from scholargraph.server.serve import ServerThread

ADMIN_KEY = "admin-key-0123456789"
READ_KEY = "read-key-0123456789"
FILE_KEY = "file-key-0123456789"


@pytest.fixture(scope="module")
def keyed(servers, tmp_path_factory):
    root = tmp_path_factory.mktemp("keys")
    key_file = root / "keys.txt"
    key_file.write_text(f"# team keys\n{key_file_line(FILE_KEY, 'read')}\n")
    return servers(root / "ws", server={"api_keys": [ADMIN_KEY], "read_only_keys": [READ_KEY],
                                        "key_file": str(key_file), "max_body_kb": 4, "max_question_chars": 50})


@pytest.mark.parametrize("path", ["/", "/openapi.json", "/docs", "/api/documents", "/api/info", "/v1/models",
                                  "/assets/nothing.js", "/api/no-such-route"])
def test_every_route_needs_a_key(keyed, path):
    with client(keyed) as http:
        response = http.get(path)
    assert response.status_code == 401
    assert response.json() == {"error": "unauthorized"}  # no detail a caller could probe
    assert "Basic" in response.headers["www-authenticate"] and "Bearer" in str(response.headers.get_list("www-authenticate"))


def test_wrong_key_is_401_with_the_same_body(keyed):
    with client(keyed, "not-a-key") as http:
        response = http.get("/api/documents")
    assert response.status_code == 401 and response.json() == {"error": "unauthorized"}


def test_admin_read_and_hashed_file_keys(keyed):
    for key, role in ((ADMIN_KEY, "admin"), (READ_KEY, "read"), (FILE_KEY, "read")):
        with client(keyed, key) as http:
            assert http.get("/api/info").json()["role"] == role
            assert http.get("/openapi.json").status_code == 200
            assert http.get("/").status_code == 200


def test_read_only_key_cannot_change_anything(keyed):
    with client(keyed, READ_KEY) as http:
        responses = [
            http.post("/api/uploads", files=[("files", ("a.md", b"# A\n\ntext", "text/markdown"))]),
            http.delete("/api/documents/anything"),
            http.post("/api/documents/upgrade", json={"ids": ["x"]}),
            http.post("/api/entities/merge", json={"keep": "a", "others": ["b"]}),
            http.post("/api/entities/split", json={"entity": "a"}),
        ]
    assert [r.status_code for r in responses] == [403] * 5
    assert all(r.json() == {"error": "forbidden"} for r in responses)


def test_browser_basic_auth_carries_the_key(keyed):
    token = base64.b64encode(f"anyone:{ADMIN_KEY}".encode()).decode()
    with httpx.Client(base_url=keyed.url, headers={"Authorization": f"Basic {token}"}) as http:
        assert http.get("/api/info").json()["role"] == "admin"


def test_host_header_must_be_loopback_name(keyed):
    with client(keyed, ADMIN_KEY) as http:
        assert http.get("/api/info", headers={"Host": "evil.example"}).status_code == 400
        assert http.get("/api/info", headers={"Host": f"localhost:{keyed.port}"}).status_code == 200


def test_cross_site_writes_are_refused(keyed):
    with client(keyed, ADMIN_KEY) as http:
        foreign = http.post("/api/entities/merge", json={"keep": "a", "others": ["b"]},
                            headers={"Origin": "http://evil.example"})
        sniffed = http.post("/api/entities/merge", json={"keep": "a", "others": ["b"]},
                            headers={"Sec-Fetch-Site": "cross-site"})
        same = http.post("/api/ask", json={"question": ""}, headers={"Origin": keyed.url})
    assert foreign.status_code == 403 and sniffed.status_code == 403
    assert same.status_code == 422  # same origin passes the check (and fails validation)


def test_cors_is_off_unless_configured(keyed, servers, tmp_path_factory):
    with client(keyed, ADMIN_KEY) as http:
        response = http.get("/api/info", headers={"Origin": "http://app.example"})
    assert "access-control-allow-origin" not in response.headers
    open_cors = servers(tmp_path_factory.mktemp("cors") / "ws", server={"cors_origins": "http://app.example"})
    with client(open_cors) as http:
        allowed = http.get("/api/info", headers={"Origin": "http://app.example"})
        preflight = http.options("/api/ask", headers={"Origin": "http://app.example", "Access-Control-Request-Method": "POST"})
    assert allowed.headers["access-control-allow-origin"] == "http://app.example"
    assert preflight.status_code == 200


def test_body_and_question_limits(keyed):
    with client(keyed, ADMIN_KEY) as http:
        big = http.post("/api/ask", json={"question": "x" * 10_000})
        long_question = http.post("/api/ask", json={"question": "why " * 20, "stream": False})
        streamed = http.post("/api/ask", content=b"{" + b" " * 8000, headers={"Content-Type": "application/json",
                                                                             "Transfer-Encoding": "chunked"})
    assert big.status_code == 413 and big.json() == {"error": "request body too large"}
    assert long_question.status_code == 413 and "at most 50" in long_question.json()["error"]
    assert streamed.status_code == 413


def test_security_headers(keyed):
    with client(keyed, ADMIN_KEY) as http:
        page = http.get("/")
        api = http.get("/api/info")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff" and page.headers["x-frame-options"] == "DENY"
    assert api.headers["cache-control"] == "no-store"


def test_internal_errors_carry_no_trace(servers, tmp_path_factory, monkeypatch):
    from scholargraph.kb import KnowledgeBase

    server = servers(tmp_path_factory.mktemp("boom") / "ws")

    def explode(self):
        raise RuntimeError("secret internal detail /etc/passwd")

    monkeypatch.setattr(KnowledgeBase, "status", explode)
    with client(server) as http:
        response = http.get("/api/documents")
    assert response.status_code == 500
    assert set(response.json()) == {"error", "incident"} and "secret" not in response.text
    assert "Traceback" not in response.text


def test_non_loopback_bind_without_keys_refuses_to_start(tmp_path):
    with pytest.raises(ConfigError, match="refusing to listen on 0.0.0.0"):
        ServerThread(load_settings(tmp_path / "ws", {"server": {"host": "0.0.0.0", "port": 0}}))
    result = subprocess.run([sys.executable, "-m", "scholargraph.cli", "serve", "--host", "0.0.0.0", "--port", "0",
                             "-w", str(tmp_path / "ws")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "refusing to listen" in result.stderr


def test_non_loopback_bind_with_keys_starts(tmp_path):
    server = start_server(tmp_path / "ws", server={"host": "0.0.0.0", "api_keys": ADMIN_KEY})
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}") as http:
            assert http.get("/api/info").status_code == 401
            assert http.get("/api/info", headers={"Authorization": f"Bearer {ADMIN_KEY}"}).status_code == 200
    finally:
        server.stop()


def test_keygen_appends_a_hash_never_the_key(tmp_path):
    from scholargraph.cli import main

    key_file = tmp_path / "keys.txt"
    assert main(["keygen", "--key-file", str(key_file), "--read-only", "--json"]) == 0
    line = key_file.read_text().strip()
    assert line.startswith("read sha256:") and len(line.split(":")[1]) == 64
    ring = load_keys(ServerSettings(key_file=key_file))
    assert ring.read == (bytes.fromhex(line.split(":")[1]),)
    key_file.write_text("admin md5:abc\n")
    with pytest.raises(ConfigError, match="keys.txt:1"):
        load_keys(ServerSettings(key_file=key_file))


def test_key_and_host_helpers():
    ring = KeyRing(admin=(digest("a"),), read=(digest("r"),))
    assert ring.role_for("a") == "admin" and ring.role_for("r") == "read" and ring.role_for("x") is None
    assert token_from_header("Bearer abc") == "abc" and token_from_header("Basic !!!") is None
    assert token_from_header("Basic " + base64.b64encode(b"u:k").decode()) == "k"
    check_bind("127.0.0.1", KeyRing())
    check_bind("::1", KeyRing())
    with pytest.raises(ConfigError):
        check_bind("192.168.1.5", KeyRing())
    loopback = ServerSettings()
    assert host_allowed("127.0.0.1:8765", loopback) and host_allowed("[::1]:8765", loopback)
    assert not host_allowed("attacker.example:8765", loopback) and not host_allowed(None, loopback)
    assert host_allowed("papers.lab.org", ServerSettings(host="0.0.0.0"))
    assert not host_allowed("x.org", ServerSettings(host="0.0.0.0", allowed_hosts=["papers.lab.org"]))


def test_the_back_off_doubles_up_to_its_cap_and_a_right_key_clears_it():
    now = [0.0]
    throttle = FailureThrottle(free=3, cap=8.0, clock=lambda: now[0])
    assert [throttle.failed("10.0.0.1") for _ in range(3)] == [0, 0, 1]  # the 3rd wrong key starts the wait
    assert throttle.wait("10.0.0.1") == 1 and throttle.wait("10.0.0.2") == 0  # per client
    assert [throttle.failed("10.0.0.1") for _ in range(4)] == [2, 4, 8, 8]  # doubling, bounded
    now[0] += 8.0
    assert throttle.wait("10.0.0.1") == 0
    throttle.succeeded("10.0.0.1")
    assert throttle.failed("10.0.0.1") == 0  # counted afresh
    now[0] += 1000.0
    assert throttle.failed("10.0.0.1") == 0  # a client quiet for long is forgotten


def test_the_throttle_remembers_a_bounded_number_of_clients():
    throttle = FailureThrottle(free=1, max_clients=100, clock=lambda: 0.0)
    for n in range(1000):
        throttle.failed(f"10.0.{n // 256}.{n % 256}")
    assert throttle.wait("10.0.3.231") == 1 and throttle.wait("10.0.0.0") == 0  # the oldest were dropped


def test_keys_need_a_minimum_strength():
    assert key_weakness("a") == "1 character; at least 16 are needed"
    assert "different characters" in (key_weakness("abababababababababab") or "")
    assert key_weakness(generate_key()) is None and key_weakness(READ_KEY) is None
