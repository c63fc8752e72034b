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
import secrets
from dataclasses import dataclass
from pathlib import Path

from ..config import ServerSettings
from ..errors import ConfigError

ADMIN = "admin"
READ = "read"
ROLES = (ADMIN, READ)
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}


def digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


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


def load_keys(settings: ServerSettings) -> KeyRing:
    admin = [digest(k.get_secret_value()) for k in settings.api_keys if k.get_secret_value()]
    read = [digest(k.get_secret_value()) for k in settings.read_only_keys if k.get_secret_value()]
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
