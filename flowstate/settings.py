"""Configuration, read only at the edges (CLI, tests) and passed down as values.

Every field can be set by an environment variable with the `FLOWSTATE_` prefix, for example
`FLOWSTATE_NEO4J_URI=neo4j+s://xxxx.databases.neo4j.io`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from flowstate.errors import UsageError

DEFAULT_URI = "bolt://127.0.0.1:7687"

# The Neo4j versions the managed local server runs by default (flowstate.local.lines has what
# each release line needs).
LTS_VERSION = "5.26.30"
# The newest 2026.x whose dependency tree resolves from Maven Central (checked with mvn).
NEWEST_VERSION = "2026.08.1"
# Short names accepted by `--version` / FLOWSTATE_LOCAL_NEO4J_VERSION.
ALIASES = {
    "lts": LTS_VERSION,
    "5.26": LTS_VERSION,
    "latest": NEWEST_VERSION,
    "2026": NEWEST_VERSION,
}


def resolve_version(version: str) -> str:
    """An alias (`lts`, `latest`, `2026`...) or a full version, as the full version."""
    return ALIASES.get(version.strip().lower(), version.strip())


class EnvSettings(BaseSettings):
    """Settings read from the environment: a value that does not parse is a UsageError that
    names its variable (`FLOWSTATE_MCP_READ_ONLY='tru': should be a valid boolean, ...`), not
    a validation dump."""

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as e:
            prefix = str(self.model_config.get("env_prefix", ""))
            raise UsageError("; ".join(_named(prefix, error) for error in e.errors())) from None


def _named(prefix: str, error: Any) -> str:
    name = f"{prefix}{'_'.join(str(part) for part in error['loc'])}".upper()
    given = str(error.get("input", ""))[:80]
    return f"{name}={given!r}: {error['msg'].removeprefix('Input ').lower()}"


def _xdg(var: str, fallback: str) -> Path:
    return Path(os.environ.get(var) or Path.home() / fallback)


def default_cache_dir() -> Path:
    return _xdg("XDG_CACHE_HOME", ".cache") / "flowstate"


def default_data_dir() -> Path:
    return _xdg("XDG_DATA_HOME", ".local/share") / "flowstate"


class Neo4jSettings(EnvSettings):
    """Where the database is. `neo4j://` and `neo4j+s://` URIs (clusters, Aura) work unchanged."""

    model_config = SettingsConfigDict(env_prefix="FLOWSTATE_NEO4J_", extra="ignore")

    uri: str = DEFAULT_URI
    user: str = "neo4j"
    password: SecretStr | None = None
    database: str = "neo4j"
    # How long the driver keeps retrying a transaction on transient failures (server
    # unreachable, leader switch) with exponential backoff before FlowState reports it.
    retry_time_s: float = Field(15.0, ge=0, le=600)
    connect_timeout_s: float = Field(10.0, gt=0, le=600)

    @classmethod
    def defaults(cls) -> Neo4jSettings:
        """The defaults, ignoring every `FLOWSTATE_*` variable: what the library uses when it
        is given no settings (the environment is read only at the edges)."""
        return cls.model_construct()

    @property
    def configured(self) -> bool:
        """True when the user named a server; False when we fall back to the default address."""
        return "uri" in self.model_fields_set

    def auth(self) -> tuple[str, str] | None:
        if self.password is None:
            return None
        return (self.user, self.password.get_secret_value())


class LocalServerSettings(EnvSettings):
    """The managed local Neo4j assembled from Maven Central (`flowstate neo4j ...`)."""

    model_config = SettingsConfigDict(env_prefix="FLOWSTATE_LOCAL_", extra="ignore")

    # A full version or an alias: lts / 5.26 (the default) or latest / 2026 (the newest 2026.x).
    neo4j_version: str = LTS_VERSION
    # The newest Browser on Maven Central; the 2026.x server serves it at /browser/ as 5.26 does.
    browser_version: str = "5.24.0"
    cache_dir: Path = Field(default_factory=default_cache_dir)
    data_dir: Path = Field(default_factory=default_data_dir)
    bolt_port: int = Field(7687, ge=1, le=65535)
    http_port: int = Field(7474, ge=1, le=65535)
    heap: str = "1g"
    pagecache: str = "256m"
    java_home: Path | None = None
    maven: str = "mvn"
    start_timeout_s: float = 180.0

    @field_validator("neo4j_version")
    @classmethod
    def _full_version(cls, value: str) -> str:
        return resolve_version(value)

    @property
    def server_dir(self) -> Path:
        """Home of the server: config, database files, logs, pid file."""
        return self.data_dir / "neo4j"

    @property
    def maven_repo(self) -> Path:
        """Maven's local repository for the server jars: downloaded once, kept in the cache."""
        return self.cache_dir / "neo4j" / "m2"

    @property
    def classpath_file(self) -> Path:
        name = f"classpath-{self.neo4j_version}-{self.browser_version}.txt"
        return self.cache_dir / "neo4j" / name

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"


class MemorySettings(EnvSettings):
    """Deployment controls for the commands that open a namespace."""

    model_config = SettingsConfigDict(env_prefix="FLOWSTATE_", extra="ignore")

    # JSON, e.g. {"observation": 30, "preference": null}: applied whenever a command opens a
    # namespace for writing (see flowstate.safety.retention).
    retention: str | None = None
    # Mask card numbers and e-mail addresses before anything is persisted.
    redact: bool = True
