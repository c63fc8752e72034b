"""API keys, roles and the bind check.

Keys are bearer tokens (``Authorization: Bearer KEY``); a browser may send one as the password of
HTTP Basic authentication, so the web app works with the browser's own login prompt. Keys are
held only as SHA-256 digests and compared in constant time. A key file holds one key per line as
``admin sha256:<hex>`` or ``read sha256:<hex>`` (``scholargraph keygen`` appends such lines);
``#`` starts a comment.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config import ServerSettings
from ..errors import ConfigError

ADMIN = "admin"
READ = "read"
ROLES = (ADMIN, READ)
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}
MIN_KEY_CHARS = 16
MIN_KEY_DISTINCT = 8


def digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def token_id(key: str) -> str:
    """A short name for a key that tells keys apart without revealing them (not its stored digest)."""
    return hashlib.sha256(b"scholargraph key id\0" + digest(key)).hexdigest()[:16]


@dataclass(frozen=True)
class KeyRing:
    admin: tuple[bytes, ...] = ()
    read: tuple[bytes, ...] = ()

    @property
    def configured(self) -> bool:
        return bool(self.admin or self.read)

    def role_for(self, token: str | None) -> str | None:
        """The role a presented key grants, or None. Every stored digest is compared, matched or not."""
        if not token:
            return None
        presented = digest(token)
        role = None
        for name, digests in ((READ, self.read), (ADMIN, self.admin)):
            for stored in digests:
                if hmac.compare_digest(presented, stored):
                    role = name
        return role


def key_weakness(key: str) -> str | None:
    """Why ``key`` is too weak to guard the server, or None. ``keygen`` makes 46-character keys."""
    if len(key) < MIN_KEY_CHARS:
        return f"{len(key)} character{'s' if len(key) != 1 else ''}; at least {MIN_KEY_CHARS} are needed"
    if len(set(key)) < MIN_KEY_DISTINCT:
        return f"only {len(set(key))} different characters; at least {MIN_KEY_DISTINCT} are needed"
    return None


def _plain_keys(setting: str, keys: list) -> list[bytes]:
    """Digests of the configured plain keys; a weak one stops the server (the key is never shown)."""
    out = []
    for n, secret in enumerate(keys, 1):
        key = secret.get_secret_value()
        if not key:
            continue
        if (weakness := key_weakness(key)) is not None:
            raise ConfigError(f"server.{setting}: key {n} is too weak ({weakness}). Make a strong one with "
                              "`scholargraph keygen --key-file keys.txt` and start with `--key-file keys.txt`")
        out.append(digest(key))
    return out


def load_keys(settings: ServerSettings) -> KeyRing:
    admin = _plain_keys("api_keys", settings.api_keys)
    read = _plain_keys("read_only_keys", settings.read_only_keys)
    if settings.key_file is not None:
        for role, value in read_key_file(settings.key_file):
            (admin if role == ADMIN else read).append(value)
    return KeyRing(tuple(admin), tuple(read))


def read_key_file(path: Path) -> list[tuple[str, bytes]]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"server.key_file {path}: cannot read it ({exc.strerror})") from None
    out = []
    for n, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        role, _, value = line.partition(" ")
        algorithm, _, hexdigest = value.strip().partition(":")
        try:
            raw = bytes.fromhex(hexdigest)
        except ValueError:
            raw = b""
        if role not in ROLES or algorithm != "sha256" or len(raw) != 32:
            raise ConfigError(f"server.key_file {path}:{n}: expected 'admin sha256:<64 hex digits>' or "
                              "'read sha256:<64 hex digits>' (make lines with `scholargraph keygen`)")
        out.append((role, raw))
    return out


def generate_key() -> str:
    return "sg-" + secrets.token_urlsafe(32)


def key_file_line(key: str, role: str) -> str:
    return f"{role} sha256:{digest(key).hex()}"


def token_from_header(authorization: str | None) -> str | None:
    """The key in ``Bearer KEY`` or in the password of ``Basic base64(user:KEY)``."""
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    scheme = scheme.lower()
    if scheme == "bearer":
        return value.strip() or None
    if scheme == "basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return decoded.partition(":")[2] or None
    return None


def is_loopback(host: str) -> bool:
    host = host.strip()
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, keys: KeyRing) -> None:
    """Refuse to listen beyond this machine without keys."""
    if not is_loopback(host) and not keys.configured:
        raise ConfigError(
            f"refusing to listen on {host}: it is reachable from other machines and no API keys are configured. "
            "Create a key with `scholargraph keygen --key-file keys.txt` and start with "
            "`--key-file keys.txt` (or set server.api_keys / SCHOLARGRAPH_SERVER__API_KEYS), "
            "or listen on 127.0.0.1")


def host_allowed(host_header: str | None, settings: ServerSettings) -> bool:
    """DNS-rebinding guard: a loopback server answers only to loopback host names unless told otherwise."""
    if not host_header:
        return False
    name = host_header.rsplit(":", 1)[0] if not host_header.endswith("]") else host_header
    if host_header.startswith("[") and "]" in host_header:
        name = host_header[: host_header.index("]") + 1]
    if settings.allowed_hosts:
        return name.lower() in {h.lower() for h in settings.allowed_hosts} or "*" in settings.allowed_hosts
    if is_loopback(settings.host):
        return is_loopback(name)
    return True


class FailureThrottle:
    """Slows key guessing per client. After ``free`` wrong keys in a row the client must wait
    ``base`` seconds before a key of its is accepted again; every further wrong key (sent while it
    waits too) doubles the wait, never beyond ``cap``. A right key after the wait clears the count;
    a client quiet for ``forget`` seconds is forgotten, and at most ``max_clients`` are remembered
    (the oldest go first), so memory stays bounded."""

    def __init__(self, free: int = 5, cap: float = 60.0, base: float = 1.0, forget: float = 900.0,
                 max_clients: int = 10_000, clock: Callable[[], float] = time.monotonic):
        self.free, self.cap, self.base, self.forget, self.max_clients = free, cap, base, forget, max_clients
        self.clock = clock
        self._clients: OrderedDict[str, tuple[int, float, float]] = OrderedDict()  # failures, last, blocked until

    def wait(self, client: str) -> int:
        """Whole seconds ``client`` must still wait before its key is accepted (0: now)."""
        entry = self._entry(client)
        return 0 if entry is None else max(0, math.ceil(entry[2] - self.clock()))

    def failed(self, client: str) -> int:
        """Record a wrong key; returns the seconds the client must now wait (0 while it has free tries)."""
        now = self.clock()
        failures = (self._entry(client) or (0, now, now))[0] + 1
        delay = 0.0 if failures < self.free else min(self.cap, self.base * 2 ** (failures - self.free))
        self._clients[client] = (failures, now, now + delay)
        self._clients.move_to_end(client)
        while len(self._clients) > self.max_clients:
            self._clients.popitem(last=False)
        return math.ceil(delay)

    def succeeded(self, client: str) -> None:
        self._clients.pop(client, None)

    def _entry(self, client: str) -> tuple[int, float, float] | None:
        entry = self._clients.get(client)
        if entry is not None and self.clock() - entry[1] > max(self.forget, self.cap):
            del self._clients[client]
            return None
        return entry
