# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a boot ended in NoValidHost: read one request's scheduler and conductor lines, then replay it on the fleet.

Two steps, both pure:

``read_request(texts, request)`` finds one request's lines in oslo.log text (Kolla's files
``/var/log/kolla/nova/nova-scheduler.log`` and ``nova-conductor.log``, or ``journalctl -u`` output in its
short or short-iso format, whose prefix is dropped) and returns the evidence: the request ids and instance
uuids, what Placement answered (``no_candidates`` or the number of hosts the filters started with), the
filters that ran with their host counts, the filter that took the hosts to zero and the hosts it removed
and what each filter said about each host (DEBUG only), the allocation candidates queries Nova sent (where
keystoneauth logs at DEBUG), and the failure the conductor logged (``NoValidHost`` or ``MaxRetriesExceeded``). The
messages recognised are Nova 34's own (``nova/scheduler/manager.py``, ``nova/filters.py``,
``nova/scheduler/utils.py``, ``nova/exception.py``).

``explain(evidence, flavor, fleet, **options)`` replays the flavor on the fleet as it is now with
``flavor_fit`` (Nova's translation, Placement's semantics, the modelled filters) and says per host which
constraint fails there, the fix, and whether the replay agrees with the log (and, where the log holds
Nova's queries, whether the flavor given translates to them).

Reading is bounded: each text at most ``MAX_BYTES`` characters and ``MAX_LINES`` lines; a line longer than
``MAX_LINE`` is skipped and counted (``skipped_lines``). Only lines containing the term (then the request ids
found) are parsed.
"""

from __future__ import annotations

import ast
import json
import os
import re
import stat
from collections.abc import Mapping
from urllib import parse

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import flavor_fit

MAX_BYTES = 64 * 1024 * 1024
MAX_LINES = 1_000_000
MAX_LINE = 64 * 1024

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
UUID_RE = re.compile(rf"^{_UUID}$")
REQUEST_RE = re.compile(rf"^req-{_UUID}$")
_REQ_IN = re.compile(rf"req-{_UUID}")
_UUID_IN = re.compile(_UUID)
# journalctl -o short: "Dec 02 08:00:00 host unit[pid]: "; -o short-iso: "2026-12-02T08:00:00+0000 host unit[pid]: "
_JOURNAL = re.compile(
    r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT[\d:.,+-]+Z?) \S+ [^\s:\[]+(?:\[\d+\])?: "
)
# oslo.log's logging_context_format_string as Kolla and distributions run it.
_OSLO = re.compile(
    r"^(?P<time>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?) +(?P<pid>\d+) +"
    r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL|TRACE) +(?P<logger>\S+) +\[(?P<context>[^\]]*)\] ?(?P<message>.*)\Z"
)
# oslo.log's logging_debug_format_suffix ("%(funcName)s %(pathname)s:%(lineno)d") ends every DEBUG line.
_DEBUG_SUFFIX = re.compile(r" \w+ \S+\.py:\d+\Z")
_INSTANCE_PREFIX = re.compile(rf"^\[instance: ({_UUID})\] ")

# Nova 34's messages.
NO_CANDIDATES = "Got no allocation candidates from the Placement API."
_FALLBACK = "Requesting fallback allocation candidates with VCPU instead of PCPU"
_STARTING = re.compile(r"^Starting with (\d+) host\(s\)\Z")
_FILTER_N = re.compile(r"^Filter (\w+) returned (\d+) host\(s\)\Z")
_FILTER_ZERO = re.compile(r"^Filter (\w+) returned 0 hosts\Z")
_REMOVED_ALL = re.compile(
    rf"^Filtering removed all hosts for the request with instance ID '({_UUID})'\. Filter results: (\[.*\])\Z"
)
_PART = re.compile(r"'(\w+): \(start: (\d+), end: (\d+)\)'")
# A filter's DEBUG line on one host: HostState's repr "(host, node) ram: ... allocation_candidates: N" or "host, node".
_HOST_STATE = re.compile(r"^\((?P<host>[^,()\s]+), [^()\s]+\) ram: .*? allocation_candidates: \d+,? (?P<why>.+)\Z")
_HOST_NODE = re.compile(r"^(?P<host>[^,\s()]+), \S+ (?P<why>fails .+)\Z")
# keystoneauth's request line (logger keystoneauth.session at DEBUG): the query Nova sends to Placement.
_HTTP_QUERY = re.compile(r'^REQ: curl .*? -X GET "?[^"\s?]*/allocation_candidates\?(?P<query>[^"\s]+)"?')
_NO_VALID_HOST = "No valid host was found."
_MAX_RETRIES = "Exceeded maximum number of retries."

# The evidence an answer carries under "log".
LOG_KEYS = (
    "placement",
    "hosts_from_placement",
    "pcpu_fallback",
    "filters",
    "zeroed_by",
    "removed_last",
    "host_reasons",
    "queries",
    "debug",
)
# What each kind of constraint asks the operator to do.
FIXES = {
    "resource": "free or add capacity of that resource class on a host, or shrink the flavor",
    "trait": "add the trait to a host's provider (openstack resource provider trait set) or drop it from the flavor",
    "forbidden_trait": "remove the forbidden trait from a host with room, or drop the forbidden trait from the flavor",
    "compute_disabled": "enable a compute service (openstack compute service set --enable HOST nova-compute)",
    "ComputeFilter": "enable the host's compute service (openstack compute service set --enable HOST nova-compute)",
    "NUMATopologyFilter": "fit the flavor's NUMA layout (hw:numa_nodes, hw:numa_cpus.N, hw:numa_mem.N) to its cells",
    "PciPassthroughFilter": "free a device of the alias on the host, or match the alias and NUMA policy to its devices",
    "AggregateInstanceExtraSpecsFilter": (
        "add the host to an aggregate whose metadata matches the flavor's aggregate_instance_extra_specs"
    ),
    "limit": "raise [scheduler] max_placement_results",
    "placement_overload": "see the detail: Placement's settings for such queries",
}
_REASON_KIND = {
    "no_inventory": "resource",
    "in_use": "resource",
    "too_big": "resource",
    "too_many_devices": "resource",
    "unknown_resource_class": "resource",
    "missing_trait": "trait",
    "unknown_trait": "trait",
    "forbidden_trait": "forbidden_trait",
    "hosts_disabled": "compute_disabled",
    "placement_overload": "placement_overload",
}


class ForensicsError(AccelError):
    """An input the reader or the replay cannot use; the message names it and the fix."""


def check_request(request) -> tuple[str, str]:
    """``("request", "req-<uuid>")`` or ``("instance", "<uuid>")``; anything else is refused."""
    if not isinstance(request, str):
        raise ForensicsError(
            f"the request must be a request id (req- and a UUID) or an instance UUID, got {kind_of(request)}"
        )
    text = request.strip().lower()
    if REQUEST_RE.match(text):
        return "request", text
    if UUID_RE.match(text):
        return "instance", text
    shown = request if len(request) <= 80 else f"{request[:80]} (+{len(request) - 80} characters)"
    raise ForensicsError(
        f"{json.dumps(shown)} is neither a request id (req- and a UUID, e.g. req-0b8c0b45-3f4e-4c55-9a57-6a3fe04f2a0e) "
        "nor an instance UUID; copy it from the scheduler log or from openstack server show"
    )


def parse_line(text: str) -> dict | None:
    """One oslo.log line (a journald prefix dropped) as a dict, or None when it is not one."""
    journal = _JOURNAL.match(text)
    if journal:
        text = text[journal.end() :]
    found = _OSLO.match(text)
    if not found:
        return None
    message = found["message"]
    if found["level"] == "DEBUG":
        message = _DEBUG_SUFFIX.sub("", message)
    instance = _INSTANCE_PREFIX.match(message)
    if instance:
        message = message[instance.end() :]
    return {
        "time": found["time"],
        "level": found["level"],
        "logger": found["logger"],
        "requests": _REQ_IN.findall(found["context"]),
        "instance": instance.group(1) if instance else None,
        "message": message,
    }


def _raw_lines(texts) -> tuple[list[str], int]:
    """Every line of the texts within the bounds, and how many were skipped as too long."""
    kept, skipped = [], 0
    if isinstance(texts, str):
        texts = [texts]
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ForensicsError(f"log {index + 1} must be text, got {kind_of(text)}")
        if len(text) > MAX_BYTES:
            raise ForensicsError(
                f"log {index + 1} has {len(text)} characters, more than the {MAX_BYTES} read; "
                "cut it to the failure's minutes first (journalctl --since/--until, or grep the request id)"
            )
        count = text.count("\n") + 1
        if count > MAX_LINES:
            raise ForensicsError(
                f"log {index + 1} has {count} lines, more than the {MAX_LINES} read; "
                "cut it to the failure's minutes first"
            )
        for line in text.splitlines():
            if len(line) > MAX_LINE:
                skipped += 1
            else:
                kept.append(line)
    return kept, skipped


def _parsed(raw: list[str], needles) -> list[dict]:
    """The oslo.log lines of ``raw`` that contain one of ``needles`` (a cheap test before the parse)."""
    needles = tuple(needles)
    out = []
    for line in raw:
        if any(n in line for n in needles):
            record = parse_line(line)
            if record:
                out.append(record)
    return out


def _mentions(record: dict) -> set[str]:
    return set(_UUID_IN.findall(record["message"])) | ({record["instance"]} if record["instance"] else set())


def read_request(texts, request: str) -> dict:
    """The evidence of one request in ``texts`` (see the module docstring); raises ForensicsError when absent."""
    kind, wanted = check_request(request)
    raw, skipped = _raw_lines(texts)
    if kind == "request":
        requests = [wanted]
    else:
        requests = []
        for record in _parsed(raw, [wanted]):
            # The line's own request id is the last of its context (a global request id may come first).
            if wanted in _mentions(record) and record["requests"] and record["requests"][-1] not in requests:
                requests.append(record["requests"][-1])
    mine = [r for r in _parsed(raw, requests) if set(r["requests"]) & set(requests)] if requests else []
    if not mine:
        raise ForensicsError(
            f"no line of the {'request' if kind == 'request' else 'instance'} {wanted} in the logs given "
            f"({len(raw)} line(s) read, {skipped} over {MAX_LINE} characters skipped); give the scheduler "
            "and conductor logs of the failure's minutes (/var/log/kolla/nova/nova-scheduler.log, nova-conductor.log)"
        )
    evidence = {
        "requests": requests,
        "instances": [],
        "levels": sorted({r["level"] for r in mine}),
        "debug": any(r["level"] == "DEBUG" for r in mine),
        "placement": None,
        "hosts_from_placement": None,
        "pcpu_fallback": False,
        "filters": [],
        "zeroed_by": None,
        "removed_last": [],
        "host_reasons": {},
        "queries": [],
        "failure": None,
        "failure_message": None,
        "lines": len(mine),
        "skipped_lines": skipped,
    }
    instances = evidence["instances"]
    if kind == "instance":
        instances.append(wanted)

    def filter_entry(name: str) -> dict:
        for entry in evidence["filters"]:
            if entry["name"] == name:
                return entry
        entry = {"name": name, "start": None, "end": None}
        evidence["filters"].append(entry)
        return entry

    last = None
    for record in mine:
        message = record["message"]
        for uuid in sorted(_mentions(record)):
            if uuid not in instances and ("instance" in message.lower() or record["instance"] == uuid):
                instances.append(uuid)
        if message.startswith(NO_CANDIDATES):
            evidence["placement"] = "no_candidates"
        elif (found := _HTTP_QUERY.match(message)) and parse.unquote(found["query"]) not in evidence["queries"]:
            evidence["queries"].append(parse.unquote(found["query"]))
        elif message == _FALLBACK:
            evidence["pcpu_fallback"] = True
        elif found := _STARTING.match(message):
            evidence["placement"] = "candidates"
            evidence["hosts_from_placement"] = int(found[1])
            evidence["filters"] = []
            last = int(found[1])
        elif found := _FILTER_N.match(message):
            entry = filter_entry(found[1])
            entry["start"] = last
            entry["end"] = last = int(found[2])
        elif found := _FILTER_ZERO.match(message):
            entry = filter_entry(found[1])
            entry["end"] = 0
            evidence["zeroed_by"] = found[1]
        elif found := _REMOVED_ALL.match(message):
            _removed_all(evidence, found[2], filter_entry)
        elif record["logger"].startswith("nova.scheduler.filters.") and (
            found := _HOST_STATE.match(message) or _HOST_NODE.match(message)
        ):
            reasons = evidence["host_reasons"].setdefault(found["host"], [])
            words = f"{record['logger'].rsplit('.', 1)[1]}: {found['why']}"
            if words not in reasons:
                reasons.append(words)
        elif _NO_VALID_HOST in message or _MAX_RETRIES in message:
            # MaxRetriesExceeded is a NoValidHost: its own words win wherever both appear.
            if _MAX_RETRIES in message:
                evidence["failure"], evidence["failure_message"] = (
                    "MaxRetriesExceeded",
                    _sentence(message, _MAX_RETRIES),
                )
            elif evidence["failure"] != "MaxRetriesExceeded":
                evidence["failure"], evidence["failure_message"] = "NoValidHost", _sentence(message, _NO_VALID_HOST)
    if evidence["failure"] is None and (evidence["placement"] == "no_candidates" or evidence["zeroed_by"]):
        evidence["failure"] = "NoValidHost"
        evidence["failure_message"] = "the scheduler found no host (the conductor's line is not in the logs given)"
    return evidence


# oslo.log appends the exception being handled (": module.Class" or ": module.Class: text") to a line logged
# inside an except block, as nova-conductor's "Failed to compute_task_build_instances: ..." is.
_ERROR_SUMMARY = re.compile(r"\s*: [A-Za-z_]\w*(?:\.\w+)+(?:: .*)?\Z")


def _sentence(message: str, start: str) -> str:
    return _ERROR_SUMMARY.sub("", message[message.index(start) :]).strip()


def _removed_all(evidence: dict, results: str, filter_entry) -> None:
    """Both forms of Nova's "Filtering removed all hosts" line: counts (INFO) and hosts per filter (DEBUG)."""
    parts = _PART.findall(results)
    if parts:
        # The summary is the whole history, in the order the filters ran.
        evidence["filters"] = [{"name": name, "start": int(start), "end": int(end)} for name, start, end in parts]
        for name, _start, end in parts:
            if int(end) == 0:
                evidence["zeroed_by"] = name
        if evidence["hosts_from_placement"] is None:
            evidence["hosts_from_placement"] = int(parts[0][1])
            evidence["placement"] = "candidates"
        return
    try:
        full = ast.literal_eval(results)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return
    if not isinstance(full, list):
        return
    previous = None
    for item in full:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            return
        name, hosts = item
        if hosts is None:
            evidence["zeroed_by"] = name
            filter_entry(name)["end"] = 0
            if previous is not None:
                evidence["removed_last"] = previous
            break
        previous = sorted({str(h[0]) for h in hosts if isinstance(h, tuple | list) and h})


def _kind_of_removal(reason: str) -> str:
    return reason.split(":", 1)[0] if ":" in reason else "filter"


def explain(evidence: Mapping, flavor, fleet, **options) -> dict:
    """Replay the flavor on ``fleet`` and set it beside ``evidence``; see the module docstring."""
    if not isinstance(flavor, Mapping):
        raise ForensicsError(
            "flavor must be a dict (name, vcpus, ram, disk, extra_specs) as openstack flavor show gives it, "
            f"got {kind_of(flavor)}; "
            "Nova's scheduler log does not carry the flavor"
        )
    (report,) = flavor_fit([dict(flavor)], fleet, **options)
    constraints = []
    placed = report["hosts"]
    if report["outcome"] in ("invalid_flavor", "scheduler_error", "rejected_by_placement"):
        code = (report.get("reason") or {}).get("code") or report["outcome"]
        constraints.append(
            {
                "host": None,
                "kind": _REASON_KIND.get(code, code),
                "detail": report["message"] or code,
                "fix": _fix(code, report),
            }
        )
    elif not placed:
        reason = report.get("reason") or {}
        kind = _REASON_KIND.get(reason.get("code"), "resource")
        for host, why in sorted(report["why_not"].items()):
            host_kind = "limit" if "limit" in why and "max_placement_results" in why else kind
            constraints.append(
                {"host": host, "kind": host_kind, "detail": why, "fix": _fix(reason.get("code"), report, host_kind)}
            )
        if not constraints:
            constraints.append(
                {
                    "host": None,
                    "kind": kind,
                    "detail": reason.get("detail") or report["message"],
                    "fix": _fix(reason.get("code"), report),
                }
            )
    else:
        for host, why in sorted(report["after_filters"]["removed"].items()):
            kind = _kind_of_removal(why)
            constraints.append({"host": host, "kind": kind, "detail": why, "fix": FIXES.get(kind, "see the detail")})
    replay = {
        "outcome": report["outcome"],
        "placement_hosts": placed,
        "hosts_after_filters": report["after_filters"]["hosts"],
        "reason": report.get("reason"),
        "queries": report["queries"],
    }
    agrees, disagreement = _agreement(evidence, replay, constraints)
    return {
        "request": (evidence.get("requests") or [None])[0],
        "instances": list(evidence.get("instances") or []),
        "failure": evidence.get("failure"),
        "log": {key: evidence.get(key) for key in LOG_KEYS},
        "flavor": report["name"],
        "replay": replay,
        "constraints": constraints,
        "agrees": agrees,
        "disagreement": disagreement,
        "summary": _summary(evidence, replay, constraints, disagreement),
    }


def _fix(code, report: Mapping, kind: str | None = None) -> str:
    reason = report.get("reason") or {}
    kind = kind or _REASON_KIND.get(code, "resource")
    words = FIXES.get(kind, "see the detail")
    if reason.get("did_you_mean"):
        words += f" (did you mean {', '.join(str(v) for v in reason['did_you_mean'])}?)"
    return words


# The parameters of a request group; what follows the name is the group's suffix.
_GROUP_PARAM = re.compile(r"^(resources|required|member_of|in_tree)(.+)\Z")


def query_shape(query: str) -> tuple:
    """A Placement query as its request groups ask, whatever their suffixes are called: Nova 34 names the groups of
    a PCI alias after the PCI request's UUID (``resources<uuid>-0``) where the replay names them after the alias's
    position (``resources_pci0-0``). Each group becomes its sorted parameters without the suffix, and
    ``same_subtree`` names the groups it joins by their parameters; the rest is compared as it is."""
    plain: list[tuple[str, object]] = []
    groups: dict[str, list[tuple[str, str]]] = {}
    for key, value in parse.parse_qsl(query, keep_blank_values=True):
        found = _GROUP_PARAM.match(key)
        if found:
            groups.setdefault(found.group(2), []).append((found.group(1), value))
        else:
            plain.append((key, value))
    asked = {suffix: tuple(sorted(items)) for suffix, items in groups.items()}
    shaped = [
        (key, tuple(sorted(repr(asked.get(name, name)) for name in str(value).split(","))))
        if key == "same_subtree"
        else (key, value)
        for key, value in plain
    ]
    return tuple(sorted(shaped, key=repr)), tuple(sorted(asked.values()))


def _agreement(evidence: Mapping, replay: Mapping, constraints: list) -> tuple[bool, str | None]:
    said = evidence.get("placement")
    now_hosts = len(replay["placement_hosts"])
    after = len(replay["hosts_after_filters"])
    zeroed = evidence.get("zeroed_by")
    logged = list(evidence.get("queries") or [])
    if logged and {query_shape(q) for q in logged} != {query_shape(q) for q in replay["queries"]}:
        return False, (
            f"the flavor given is not the one this request asked for: Nova asked Placement {' then '.join(logged)}; "
            f"the flavor translates to {' then '.join(replay['queries']) or 'no query'}"
        )
    if said == "no_candidates" and now_hosts:
        filtered = f"and {after} pass the filters" if after else "but the filters remove them"
        return False, (
            f"the log says Placement returned no allocation candidates; today it returns {now_hosts} host(s) "
            f"{filtered}: capacity was freed or the fleet changed since"
        )
    if said == "candidates" and not now_hosts:
        return False, (
            f"the log says Placement returned candidates on {evidence.get('hosts_from_placement')} host(s) "
            "and a filter removed them; today Placement returns none: capacity was consumed or the fleet changed since"
        )
    if said == "candidates" and after:
        return False, (
            f"the log says {zeroed or 'a filter'} removed every host; today {after} host(s) pass the modelled "
            f"filters ({', '.join(replay['hosts_after_filters'])}): usage or aggregates changed since, "
            "or the filter is not one the collection models"
        )
    if said == "candidates" and zeroed and constraints and not any(c["kind"] == zeroed for c in constraints):
        kinds = sorted({c["kind"] for c in constraints})
        return False, f"the log says {zeroed} removed the last host(s); the replay removes them with {', '.join(kinds)}"
    if said is None:
        return False, (
            "the log does not say what Placement answered (no scheduler line of this request); "
            "the replay alone explains it"
        )
    return True, None


def _log_words(evidence: Mapping) -> str:
    if evidence.get("placement") == "no_candidates":
        return "Placement returned no allocation candidates"
    if evidence.get("zeroed_by"):
        return (
            f"Placement returned {evidence.get('hosts_from_placement')} host(s); "
            f"{evidence['zeroed_by']} removed the last of them"
        )
    return "the scheduler's lines do not say where the hosts went"


def _summary(evidence: Mapping, replay: Mapping, constraints: list, disagreement: str | None) -> str:
    failure = evidence.get("failure") or "no failure logged"
    said = _log_words(evidence)
    hosts = [c for c in constraints if c["host"]]
    if replay["hosts_after_filters"]:
        now = f"today it fits on {', '.join(replay['hosts_after_filters'])}"
        if hosts:
            now += f" ({len(hosts)} other host(s) removed by the filters)"
    elif hosts:
        kinds = sorted({c["kind"] for c in hosts})
        now = f"today {len(hosts)} host(s) fail on {', '.join(kinds)}: " + "; ".join(
            f"{c['host']}: {c['detail']}" for c in hosts
        )
    elif constraints:
        now = f"today: {constraints[0]['detail']}"
    else:
        now = "today the replay names no constraint"
    text = f"{failure}: {said}; {now}"
    return f"{text}. The log and the replay disagree: {disagreement}" if disagreement else text


def read_logs(paths) -> list[str]:
    """The text of each log file, refused (naming the file) when it is not a readable regular file or too large."""
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, list | tuple) or not paths:
        raise ForensicsError(
            "logs must be a list of log file paths, e.g. [/var/log/kolla/nova/nova-scheduler.log, "
            f"/var/log/kolla/nova/nova-conductor.log], got {kind_of(paths)}"
        )
    texts = []
    for path in paths:
        if not isinstance(path, str) or not path:
            raise ForensicsError(f"each log must be a file path, got {kind_of(path)}")
        try:
            info = os.stat(path)
        except OSError as exc:
            raise ForensicsError(f"log {path} cannot be read ({exc.strerror}); give the path of a log file") from None
        if not stat.S_ISREG(info.st_mode):
            raise ForensicsError(f"log {path} is not a regular file; save journalctl -u output to a file and give that")
        if info.st_size > MAX_BYTES:
            raise ForensicsError(
                f"log {path} has {info.st_size} bytes, more than the {MAX_BYTES} read; cut it to the failure's minutes "
                "first (journalctl --since/--until, or grep the request id)"
            )
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                texts.append(handle.read(MAX_BYTES + 1))
        except OSError as exc:
            raise ForensicsError(f"log {path} cannot be read ({exc.strerror})") from None
    return texts


def read_fleet_file(path) -> dict:
    """A fleet snapshot saved as JSON (placement_info's ``fleet``), refused naming the file when it is not one."""
    if not isinstance(path, str) or not path:
        raise ForensicsError(f"fleet_file must be the path of a JSON fleet snapshot, got {kind_of(path)}")
    try:
        size = os.stat(path).st_size
        if size > MAX_BYTES:
            raise ForensicsError(f"fleet_file {path} has {size} bytes, more than the {MAX_BYTES} read")
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise ForensicsError(f"fleet_file {path} cannot be read ({exc.strerror})") from None
    except (ValueError, RecursionError) as exc:
        raise ForensicsError(
            f"fleet_file {path} is not JSON ({exc}); save placement_info's fleet with to_json"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("resource_providers"), list):
        raise ForensicsError(
            f"fleet_file {path} is not a fleet snapshot (a dict with resource_providers); "
            "save what accel.openstack.placement_info returns as fleet"
        )
    return data


def novalidhost(request: str, texts, flavor=None, fleet=None, **options) -> dict:
    """The lookup's answer for one request: the log's evidence, and the replay when a flavor and a fleet are given."""
    evidence = read_request(texts, request)
    if flavor is None or fleet is None:
        missing = " and ".join(n for n, v in (("flavor", flavor), ("fleet", fleet)) if v is None)
        return {
            "request": evidence["requests"][0] if evidence["requests"] else None,
            "instances": evidence["instances"],
            "failure": evidence["failure"],
            "log": {key: evidence[key] for key in LOG_KEYS},
            "flavor": None,
            "replay": None,
            "constraints": [],
            "agrees": None,
            "disagreement": None,
            "summary": f"{evidence['failure'] or 'no failure logged'}: {_log_words(evidence)}; "
            f"no replay (give {missing}: Nova's log does not carry the flavor)",
        }
    return explain(evidence, flavor, fleet, **options)
