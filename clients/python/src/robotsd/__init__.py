"""A client for robotsd, robots.txt as a service: may this user agent fetch this URL, and why.

:class:`Client` and :class:`AsyncClient` ask robotsd over one pooled connection set, and
reserve fleet-wide fetch slots (``pace=True``) and report what the sites answered
(``feedback``); ``robotsd.scrapy.RobotsdMiddleware`` checks and paces every request of a Scrapy
crawl through robotsd.
The answer types are generated from robotsd's OpenAPI document (``_models.py``).
"""

from ._client import (
    DEFAULT_TIMEOUT,
    MAX_BATCH,
    AsyncClient,
    Client,
    Evaluation,
    FeedbackResult,
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
    IntervalSource,
    Lookup,
    PaceJson,
    PaceOutcome,
    PaceStateJson,
    ParsedJson,
    PreferenceJson,
    PreferenceValue,
    Problem,
    Reason,
    ReportItem,
    ReportTaken,
    RobotsResponse,
    RobotsSourceJson,
    RuleJson,
    Scope,
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
    "FeedbackResult",
    "GroupDetailJson",
    "GroupJson",
    "IntervalSource",
    "Lookup",
    "PaceJson",
    "PaceOutcome",
    "PaceStateJson",
    "ParsedJson",
    "PercentDecoding",
    "PreferenceJson",
    "PreferenceValue",
    "Problem",
    "ProblemError",
    "Reason",
    "ReportItem",
    "ReportTaken",
    "Result",
    "RobotsResponse",
    "RobotsSourceJson",
    "RobotsdError",
    "RuleJson",
    "Scope",
    "SitemapJson",
    "UnavailableError",
    "UsageJson",
    "UsageLineJson",
    "UsageSourceName",
    "UserAgent",
    "Verdict",
]

__version__ = "0.1.0"
