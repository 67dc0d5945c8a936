"""Signed, expiring bearer tokens: ServiceAccount tokens (TokenRequest) and people's tokens.

``kubectl create token deployer -n team-a --duration 1h`` posts a ``TokenRequest`` to
``/api/v1/namespaces/team-a/serviceaccounts/deployer/token``; the answer is a JWT (HS256)
signed with the plane's key — the Secret ``fleetkeeper-token-signing-key`` in
``karmada-system``, created by the first replica, readable only by who may read Secrets
there — naming the account and its uid, for the audiences asked for (``fleetkeeper``, this
server, when none is given: a token made for another audience is refused here, as
kube-apiserver does), and expiring after the duration asked for (10 minutes at least, as in
Kubernetes; 1 hour when none is given; 1 year at most). It authenticates as
``system:serviceaccount:NS:NAME`` in the groups ``system:serviceaccounts``,
``system:serviceaccounts:NS`` and ``system:authenticated`` while the account exists with
that uid: deleting the account (or deleting and creating it again) revokes every token
issued for it as soon as the watch tells this server, and an expired one is refused on the
clock. :func:`user_token` makes a person's token the same way (``fleetkeeper token
create-user``): a user name and groups, valid until it expires.

Tokens are checked in constant time; a token longer than :data:`MAX_TOKEN` characters or
one that is not three base64url parts is refused before any decoding.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from fleetkeeper import errors
from fleetkeeper.apiserver import identity
from fleetkeeper.apiserver.auth import AGENT_USER_PREFIX, User
from fleetkeeper.apiserver.rbac import SA_PREFIX
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import StoreProtocol

SIGNING_SECRET = "fleetkeeper-token-signing-key"
ISSUER = "https://fleetkeeper.local"
AUDIENCE = "fleetkeeper"
MIN_SECONDS, DEFAULT_SECONDS, MAX_SECONDS = 600, 3600, 365 * 24 * 3600
MAX_TOKEN = 8192
MAX_GROUPS = 64
_HEADER = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=")


def _b64(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def _unb64(text: bytes) -> bytes:
    return base64.urlsafe_b64decode(text + b"=" * (-len(text) % 4))


def looks_signed(token: str) -> bool:
    """Whether a bearer token has a JWT's shape (three dot-separated parts)."""
    return token.count(".") == 2 and len(token) <= MAX_TOKEN


@dataclass(frozen=True)
class Signer:
    """Signs and checks tokens with the plane's key."""

    key: bytes
    clock: Clock
    #: (namespace, name) → uid of the stored ServiceAccounts (kept current by the server)
    accounts: Mapping[tuple[str, str], str]

    def sign(self, claims: dict[str, Any]) -> str:
        body = _HEADER + b"." + _b64(orjson.dumps(claims))
        return (body + b"." + _b64(hmac.new(self.key, body, hashlib.sha256).digest())).decode()

    def account_token(self, namespace: str, name: str, uid: str, *, seconds: int,
                      audiences: list[str]) -> tuple[str, int]:
        """A token for the ServiceAccount; (token, expiry as Unix seconds)."""
        now = int(self.clock.now().timestamp())
        claims = {"iss": ISSUER, "sub": f"{SA_PREFIX}{namespace}:{name}", "aud": audiences or [AUDIENCE],
                  "iat": now, "nbf": now, "exp": now + seconds, "jti": secrets.token_hex(8),
                  "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}}}
        return self.sign(claims), now + seconds

    def user_token(self, name: str, groups: list[str], *, seconds: int) -> str:
        """A person's token: ``name`` in ``groups`` (and ``system:authenticated``) for ``seconds``."""
        now = int(self.clock.now().timestamp())
        return self.sign({"iss": ISSUER, "sub": name, "aud": [AUDIENCE], "iat": now, "nbf": now,
                          "exp": now + seconds, "jti": secrets.token_hex(8), "fleetkeeper.io/groups": groups})

    def authenticate(self, token: str) -> User:
        """The caller a signed token stands for; ``401`` when forged, expired or revoked."""
        claims = self._claims(token)
        exp = claims.get("exp")
        if not isinstance(exp, int) or exp <= self.clock.now().timestamp():
            raise errors.Unauthorized("Unauthorized: the bearer token has expired")
        audiences = claims.get("aud")
        if not isinstance(audiences, list) or AUDIENCE not in audiences:
            raise errors.Unauthorized(f"Unauthorized: the bearer token is not meant for this server "
                                      f"(its audiences do not include {AUDIENCE!r})")
        bound = claims.get("kubernetes.io")
        if isinstance(bound, dict):
            raw = bound.get("serviceaccount")
            account: dict[str, Any] = raw if isinstance(raw, dict) else {}
            namespace, account_name = str(bound.get("namespace") or ""), str(account.get("name") or "")
            if not account_name or self.accounts.get((namespace, account_name)) != account.get("uid"):
                raise errors.Unauthorized("Unauthorized: the ServiceAccount of this token no longer exists")
            groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated")
            return User(f"{SA_PREFIX}{namespace}:{account_name}", groups)
        name, listed = claims.get("sub"), claims.get("fleetkeeper.io/groups")
        if not isinstance(name, str) or not name or name.startswith((SA_PREFIX, AGENT_USER_PREFIX)):
            raise errors.Unauthorized("Unauthorized: the bearer token is not valid")
        kept = [g for g in listed[:MAX_GROUPS] if isinstance(g, str)] if isinstance(listed, list) else []
        return User(name, tuple(dict.fromkeys([*kept, "system:authenticated"])))

    def _claims(self, token: str) -> dict[str, Any]:
        parts = token.encode().split(b".")
        if len(parts) != 3 or len(token) > MAX_TOKEN:
            raise errors.Unauthorized("Unauthorized: the bearer token is not valid")
        expected = _b64(hmac.new(self.key, parts[0] + b"." + parts[1], hashlib.sha256).digest())
        if parts[0] != _HEADER or not hmac.compare_digest(expected, parts[2]):
            raise errors.Unauthorized("Unauthorized: the bearer token is not valid")
        try:
            claims = orjson.loads(_unb64(parts[1]))
        except (ValueError, orjson.JSONDecodeError):
            raise errors.Unauthorized("Unauthorized: the bearer token is not valid") from None
        if not isinstance(claims, dict):
            raise errors.Unauthorized("Unauthorized: the bearer token is not valid")
        return claims


async def load_signer(store: StoreProtocol, *, clock: Clock,
                      accounts: Mapping[tuple[str, str], str]) -> Signer:
    """The plane's signing key (created when absent; a replica losing the race takes the winner's)."""
    obj, _ = await identity.ensure_secret(store, SIGNING_SECRET, lambda: identity.secret(
        SIGNING_SECRET, {"key": secrets.token_bytes(32)}, credential="signing"))
    key = identity.secret_value(obj, "key")
    if not key:
        raise ValueError(f"secret {identity.NAMESPACE}/{SIGNING_SECRET} holds no key")
    return Signer(key, clock, accounts)


def expiration(spec: Mapping[str, Any]) -> int:
    """``spec.expirationSeconds`` of a TokenRequest, checked as Kubernetes does."""
    seconds = spec.get("expirationSeconds")
    if seconds is None:
        return DEFAULT_SECONDS
    if not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < MIN_SECONDS:
        raise _invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")
    if seconds > MAX_SECONDS:
        raise _invalid("spec.expirationSeconds", seconds, "may not specify a duration longer than a year")
    return seconds


def audiences(spec: Mapping[str, Any]) -> list[str]:
    raw = spec.get("audiences")
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_GROUPS or not all(isinstance(a, str) and a for a in raw):
        raise _invalid("spec.audiences", "…", f"must be at most {MAX_GROUPS} non-empty strings")
    return list(raw)


def _invalid(field: str, value: Any, rule: str) -> errors.Invalid:
    return errors.Invalid(f"TokenRequest.authentication.k8s.io is invalid: {field}: Invalid value: {value}: "
                          f"{rule}",
                          causes=[errors.Cause(field, rule, "FieldValueInvalid")], kind="TokenRequest",
                          group="authentication.k8s.io")


def token_response(request: dict[str, Any], token: str, expires: int, clock: Clock) -> dict[str, Any]:
    """The TokenRequest answer (spec echoed, status with the token and its expiry)."""
    when = datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    raw = request.get("spec")
    spec: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "metadata": {"creationTimestamp": clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")},
            "spec": spec, "status": {"token": token, "expirationTimestamp": when}}


__all__ = ["AUDIENCE", "SIGNING_SECRET", "Signer", "audiences", "expiration", "load_signer", "looks_signed",
           "token_response"]
