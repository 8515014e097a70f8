# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one request loop of the OpenStack clients (Placement, Cyborg, Ironic).

:func:`send` makes one request through a keystoneauth adapter (``conn.placement``, ``conn.accelerator``,
``conn.baremetal``) with the client's microversion, never lets the adapter raise for a status, and gives
back an :class:`Answer`: the status, the body as JSON (None when empty or not JSON), the body's text with
every credential masked and cut to a bound that the message states, and the headers. A request the service
never answered raises :class:`Unanswered`, whose text is masked too. The service clients keep their own
words (which call, which fix); what crosses the wire, and what of a refusal a message may quote, is decided
here once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

# How much of a refusal's body a message quotes (after the credentials in it are masked).
MAX_BODY = 300


class Unanswered(Exception):
    """The service did not answer (connection refused, timeout, no endpoint); ``str()`` is masked."""


class Answer(NamedTuple):
    status: int
    data: Any
    text: str
    headers: Any
    # False when the body is not empty and not JSON (a proxy's HTML page): ``data`` is then None.
    parsed: bool


def _same(text: str) -> str:
    return text


def bounded(text: str, limit: int = MAX_BODY) -> str:
    """``text`` as a message quotes it: whole, or its first ``limit`` characters and how many there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} (the first {limit} of {len(text)} characters)"


def send(
    adapter,
    method: str,
    path: str,
    microversion: str,
    body: Any = None,
    mask: Callable[[str], str] | None = None,
) -> Answer:
    """One request; see the module's docstring."""
    mask = mask or _same
    kwargs: dict[str, Any] = {"microversion": microversion, "raise_exc": False}
    if body is not None:
        kwargs["json"] = body
    try:
        resp = getattr(adapter, method.lower())(path, **kwargs)
    except Exception as exc:  # keystoneauth's ConnectFailure, timeouts, endpoint lookups: each one message
        raise Unanswered(mask(str(exc))) from None
    content = getattr(resp, "content", None)
    try:
        data, parsed = (resp.json() if content else None), True
    except ValueError:
        data, parsed = None, False
    text = mask(getattr(resp, "text", None) or "") if content else ""
    reason = getattr(resp, "reason", None) or ""
    return Answer(resp.status_code, data, text or mask(str(reason)), getattr(resp, "headers", None), parsed)


def error_text(
    data: Any, keys: tuple[str, ...], fallback: str, mask: Callable[[str], str] | None = None, limit: int = MAX_BODY
) -> str:
    """The service's own words for a refusal: the first text under ``keys`` of its JSON body (masked,
    bounded), else ``fallback`` (the body's masked text) bounded."""
    mask = mask or _same
    if isinstance(data, dict):
        for key in keys:
            text = data.get(key)
            if isinstance(text, str) and text:
                return bounded(mask(" ".join(text.split())), limit)
    return bounded(fallback, limit)
