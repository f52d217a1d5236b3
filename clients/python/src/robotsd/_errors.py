from __future__ import annotations

from typing import Optional

from ._models import Problem


class RobotsdError(Exception):
    """Base of every error this package raises about robotsd's answers."""


class ProblemError(RobotsdError):
    """robotsd answered with an RFC 9457 problem (``application/problem+json``).

    An answer that was not problem+json (a proxy's error page, say) is given as a problem of
    type ``about:blank`` with the body in ``detail``.
    """

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"robotsd: {problem.title} ({problem.status}): {problem.detail}")
        self.problem = problem

    @property
    def type(self) -> str:
        """The problem's type, such as ``urn:robotsd:problem:unsupported-scheme``."""
        return self.problem.type

    @property
    def title(self) -> str:
        return self.problem.title

    @property
    def status(self) -> int:
        """The HTTP status robotsd answered with."""
        return self.problem.status

    @property
    def detail(self) -> str:
        return self.problem.detail

    @property
    def parameter(self) -> Optional[str]:
        """Which input the problem is about, when robotsd says."""
        return self.problem.parameter or None


class UnavailableError(RobotsdError):
    """robotsd could not be asked: no connection, a broken one, or no answer in time."""

    def __init__(self, base_url: str, cause: BaseException) -> None:
        reason = str(cause) or type(cause).__name__
        super().__init__(f"robotsd at {base_url} is unavailable: {reason}")
        self.base_url = base_url
