"""A client for robotsd, robots.txt as a service: may this user agent fetch this URL, and why.

:class:`Client` and :class:`AsyncClient` ask robotsd over one pooled connection set;
``robotsd.scrapy.RobotsdMiddleware`` checks every request of a Scrapy crawl through robotsd.
The answer types are generated from robotsd's OpenAPI document (``_models.py``).
"""

from ._client import (
    DEFAULT_TIMEOUT,
    MAX_BATCH,
    AsyncClient,
    Client,
    Evaluation,
    PercentDecoding,
    Result,
    UserAgent,
)
from ._errors import ProblemError, RobotsdError, UnavailableError
from ._models import (
    AgentJson,
    AgentLineJson,
    BackoffJson,
    CheckResponse,
    DiagnosticJson,
    Directive,
    GroupDetailJson,
    GroupJson,
    Lookup,
    ParsedJson,
    PreferenceJson,
    PreferenceValue,
    Problem,
    Reason,
    RobotsResponse,
    RobotsSourceJson,
    RuleJson,
    SitemapJson,
    UsageJson,
    UsageLineJson,
    UsageSourceName,
    Verdict,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_BATCH",
    "AgentJson",
    "AgentLineJson",
    "AsyncClient",
    "BackoffJson",
    "CheckResponse",
    "Client",
    "DiagnosticJson",
    "Directive",
    "Evaluation",
    "GroupDetailJson",
    "GroupJson",
    "Lookup",
    "ParsedJson",
    "PercentDecoding",
    "PreferenceJson",
    "PreferenceValue",
    "Problem",
    "ProblemError",
    "Reason",
    "Result",
    "RobotsResponse",
    "RobotsSourceJson",
    "RobotsdError",
    "RuleJson",
    "SitemapJson",
    "UnavailableError",
    "UsageJson",
    "UsageLineJson",
    "UsageSourceName",
    "UserAgent",
    "Verdict",
]

__version__ = "0.1.0"
