"""Access sessions: a principal and its grants, turned into SQL filters (authorization before relevance)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .constants import ALL_PERMISSIONS, OWNER_ONLY
from .errors import Invalid, shown

PRINCIPAL_TYPES = ("user", "model_client", "host")
ACTOR_FOR_PRINCIPAL = {"user": "user", "model_client": "model", "host": "system"}


@dataclass(frozen=True)
class AccessSession:
    """Who is calling (principal) and what it may do where (grants: namespace pattern -> permissions)."""

    principal_type: str
    principal_id: str
    grants: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def owner(cls, principal_id: str = "owner") -> "AccessSession":
        return cls("user", principal_id, {"*": ALL_PERMISSIONS})

    @classmethod
    def model_client(cls, client_id: str, grants: Mapping[str, Iterable[str]]) -> "AccessSession":
        if not client_id or not isinstance(client_id, str):
            raise Invalid("A model client needs a non-empty client id.")
        return cls("model_client", client_id, normalise_grants(grants))

    @staticmethod
    def parse_grants(specs: Iterable[str]) -> dict[str, frozenset[str]]:
        """Parse `NS=perm,perm` strings (NS may be `*` or end with `*`)."""
        grants: dict[str, set[str]] = {}
        for spec in specs:
            ns, sep, perms = spec.partition("=")
            if not sep or not ns.strip() or not perms.strip():
                raise Invalid(f"Grant {shown(spec)} must look like NAMESPACE=perm,perm (e.g. project:alpha=search,read).")
            grants.setdefault(ns.strip(), set()).update(p.strip() for p in perms.split(",") if p.strip())
        return normalise_grants(grants)

    @property
    def actor_type(self) -> str:
        return ACTOR_FOR_PRINCIPAL[self.principal_type]

    @property
    def is_owner(self) -> bool:
        return self.principal_type == "user"

    def effective(self, perms: frozenset[str]) -> frozenset[str]:
        return perms if self.is_owner else perms - OWNER_ONLY

    def permissions_in(self, namespace: str) -> frozenset[str]:
        """Every permission this session holds in one namespace."""
        out: set[str] = set()
        for pattern, perms in self.grants.items():
            if pattern_matches(pattern, namespace):
                out |= perms
        return self.effective(frozenset(out))

    def granted(self, permission: str, namespace: str) -> bool:
        """Whether a grant names `permission` here, even one a model client may never exercise."""
        return any(permission in perms for pattern, perms in self.grants.items() if pattern_matches(pattern, namespace))

    def allows(self, permission: str, namespace: str) -> bool:
        return permission in self.permissions_in(namespace)

    def may_anywhere(self, permission: str) -> bool:
        return any(permission in self.effective(p) for p in self.grants.values())

    def namespace_filter(self, permission: str, column: str) -> tuple[str, list[Any]]:
        """A SQL condition on `column` (a namespace) true exactly where `permission` is granted.

        The SQL form of `pattern_matches` (one matcher everywhere): case-sensitive, and only a
        trailing `*` is a wildcard; `%`, `_` and any other `*` in a namespace are literal.
        """
        if permission in self.effective(self.grants.get("*", frozenset())):
            return "1", []
        parts, params = [], []
        for pattern, perms in sorted(self.grants.items()):
            if permission not in self.effective(perms):
                continue
            sql, values = pattern_sql(pattern, column)
            parts.append(sql)
            params += values
        if not parts:
            return "0", []
        return "(" + " OR ".join(parts) + ")", params


def pattern_matches(pattern: str, namespace: str) -> bool:
    """Whether a grant pattern covers a namespace: `NS` exactly, `PREFIX*` by case-sensitive prefix."""
    if pattern.endswith("*"):
        return namespace.startswith(pattern[:-1])
    return pattern == namespace


def pattern_sql(pattern: str, column: str) -> tuple[str, list[Any]]:
    """`pattern_matches(pattern, column)` as SQL (binary comparison, no LIKE, so no wildcard characters)."""
    if pattern.endswith("*"):
        prefix = pattern[:-1]
        if not prefix:
            return "1", []
        return f"substr({column}, 1, ?) = ?", [len(prefix), prefix]
    return f"{column} = ?", [pattern]


def normalise_grants(grants: Mapping[str, Iterable[str]]) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for ns, perms in grants.items():
        perm_set = frozenset(perms)
        unknown = sorted(perm_set - ALL_PERMISSIONS)
        if unknown:
            raise Invalid(
                f"Unknown permission {', '.join(unknown)}; known: {', '.join(sorted(ALL_PERMISSIONS))}."
            )
        out[ns] = out.get(ns, frozenset()) | perm_set
    return out
