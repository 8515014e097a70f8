"""A stand-in for systemd's boot and shutdown inside a root that has no running init (a chroot): it reads
the unit files, drop-ins and ``.wants`` links under the root, builds the start transaction of a target,
orders it, runs each unit's commands and records what happened. Standard library only: it runs inside the
Debian roots of the molecule scenarios, with their ``python3``.

What it mirrors of systemd (``systemd.unit(5)``, ``systemd.service(5)``, ``systemd.target(5)``):
- unit search path ``/etc/systemd/system``, ``/run/systemd/system``, ``/lib/systemd/system``,
  ``/usr/lib/systemd/system`` (the first file of a name wins); drop-ins ``<unit>.d/*.conf`` from every
  path, applied in file-name order (a name in an earlier path hides the same name later); ``.wants/`` and
  ``.requires/`` directories; list settings accumulate and an empty assignment resets them;
- the transaction: ``Wants=`` and ``Requires=`` pulled in from the goal target; a missing unit that is
  only wanted is ignored, a missing required unit fails its dependents; targets are ordered after what
  they want or require (their default dependencies); ``After=``/``Before=`` order the jobs, and an
  ordering cycle is an error;
- a unit that ``Requires=`` a unit that failed and is ordered after it does not start ("dependency");
  one that only ``Wants=`` it starts anyway; a failed condition (``ConditionPathExists=``,
  ``ConditionDirectoryNotEmpty=``, with ``|`` and ``!``) skips a unit without failing its dependents;
- a service runs ``ExecStartPre=``, ``ExecStart=``, ``ExecStartPost=`` in order (a ``-`` prefix ignores
  a failure), each bounded by ``TimeoutStartSec=`` (default 90 s); shutdown stops the active units in
  reverse start order and runs their ``ExecStop=``.
Simplified: every service's commands run to completion (the stand-in services of the scenarios exit at
once); no sockets, no restarts, no parallel jobs.

Command line (inside the root): ``fake-systemd boot [TARGET]``, ``fake-systemd shutdown``. Each boot
writes ``/var/log/fake-systemd/boot-<n>.json`` (every unit's result, reason and output, in start order)
and ``/run/fake-systemd/active.json``.
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import subprocess
import sys
import time

SEARCH = ("/etc/systemd/system", "/run/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system")
LISTS = ("After", "Before", "Requires", "Wants", "WantedBy", "RequiredBy")
EXECS = ("ExecStartPre", "ExecStart", "ExecStartPost", "ExecStop")
LOG_DIR = "/var/log/fake-systemd"
RUN_DIR = "/run/fake-systemd"
INSTALLED = "/usr/lib/fake-systemd/fake-systemd"


class Unit:
    def __init__(self, name: str):
        self.name = name
        self.found = False
        self.lists: dict[str, list[str]] = {key: [] for key in LISTS}
        self.execs: dict[str, list[str]] = {key: [] for key in EXECS}
        self.settings: dict[str, str] = {}
        self.conditions: list[tuple[str, str]] = []

    def parse(self, text: str) -> None:
        logical = text.replace("\\\n", " ")
        for raw in logical.splitlines():
            line = raw.strip()
            if not line or line[0] in "#;" or line.startswith("["):
                continue
            key, sep, value = line.partition("=")
            if not sep:
                continue
            key, value = key.strip(), value.strip()
            if key in LISTS:
                self.lists[key] = [] if not value else self.lists[key] + value.split()
            elif key in EXECS:
                self.execs[key] = [] if not value else self.execs[key] + [value]
            elif key.startswith("Condition"):
                self.conditions = [] if not value else self.conditions + [(key, value)]
            else:
                self.settings[key] = value

    @property
    def kind(self) -> str:
        return self.name.rsplit(".", 1)[-1]


class Manager:
    def __init__(self, root: str = "/"):
        self.root = root
        self.units: dict[str, Unit] = {}

    def real(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    def load(self, name: str) -> Unit:
        if name in self.units:
            return self.units[name]
        unit = Unit(name)
        self.units[name] = unit
        for directory in SEARCH:
            path = self.real(f"{directory}/{name}")
            if os.path.isfile(path):
                with open(path) as handle:
                    unit.parse(handle.read())
                unit.found = True
                break
        drop_ins: dict[str, str] = {}
        for directory in SEARCH:
            for path in glob.glob(self.real(f"{directory}/{name}.d/*.conf")):
                drop_ins.setdefault(os.path.basename(path), path)
        for base in sorted(drop_ins):
            with open(drop_ins[base]) as handle:
                unit.parse(handle.read())
        for directory in SEARCH:
            for kind, key in (("wants", "Wants"), ("requires", "Requires")):
                for path in sorted(glob.glob(self.real(f"{directory}/{name}.{kind}/*"))):
                    unit.lists[key].append(os.path.basename(path))
        return unit

    def transaction(self, goal: str) -> list[str]:
        """Every unit the goal pulls in (Wants/Requires), the goal first."""
        seen, queue = [goal], [goal]
        while queue:
            unit = self.load(queue.pop(0))
            for dep in unit.lists["Requires"] + unit.lists["Wants"]:
                if dep not in seen:
                    seen.append(dep)
                    queue.append(dep)
        return seen

    def order(self, names: list[str]) -> list[str]:
        """Topological order by After/Before (a target after what it wants or requires)."""
        present = set(names)
        after: dict[str, set[str]] = {n: set() for n in names}
        for name in names:
            unit = self.units[name]
            for dep in unit.lists["After"]:
                if dep in present:
                    after[name].add(dep)
            for dep in unit.lists["Before"]:
                if dep in present:
                    after[dep].add(name)
            if unit.kind == "target":
                after[name] |= {d for d in unit.lists["Requires"] + unit.lists["Wants"] if d in present}
        done: list[str] = []
        while len(done) < len(names):
            ready = sorted(n for n in names if n not in done and after[n] <= set(done))
            if not ready:
                cycle = sorted(n for n in names if n not in done)
                raise SystemExit(f"fake-systemd: ordering cycle among {', '.join(cycle)}")
            done.append(ready[0])
        return done

    def condition_ok(self, unit: Unit) -> bool:
        triggers, plain = [], []
        for key, value in unit.conditions:
            trigger = value.startswith("|")
            value = value.lstrip("|")
            negate = value.startswith("!")
            path = self.real(value.lstrip("!"))
            if key == "ConditionPathExists":
                result = os.path.exists(path)
            elif key == "ConditionDirectoryNotEmpty":
                result = os.path.isdir(path) and bool(os.listdir(path))
            else:
                result = True
            result = result != negate
            (triggers if trigger else plain).append(result)
        return all(plain) and (not triggers or any(triggers))

    def run_commands(self, unit: Unit, keys: tuple[str, ...]) -> tuple[bool, str]:
        timeout = unit.settings.get("TimeoutStartSec", "90")
        seconds = None if timeout == "infinity" else float(timeout.rstrip("s") or 90)
        output = []
        for key in keys:
            for line in unit.execs[key]:
                ignore = line.startswith("-")
                argv = shlex.split(line.lstrip("-@+!:"))
                try:
                    proc = subprocess.run(
                        argv, capture_output=True, text=True, timeout=seconds, check=False, stdin=subprocess.DEVNULL
                    )
                except subprocess.TimeoutExpired:
                    return False, "\n".join(output + [f"{key}: timed out after {seconds:g}s"])
                except OSError as exc:
                    if ignore:
                        continue
                    return False, "\n".join(output + [f"{key}: {exc}"])
                output.append(proc.stdout + proc.stderr)
                if proc.returncode != 0 and not ignore:
                    return False, "\n".join(output + [f"{key}: exit status {proc.returncode}"])
        return True, "".join(output)

    def boot(self, goal: str = "multi-user.target") -> dict:
        names = self.transaction(goal)
        results: dict[str, str] = {}
        record = []
        for index, name in enumerate(self.order(names)):
            unit = self.units[name]
            entry = {"unit": name, "order": index, "time": time.time(), "output": ""}
            # a target is ordered after what it requires (its default dependencies)
            ordered = set(unit.lists["After"]) | (set(unit.lists["Requires"]) if unit.kind == "target" else set())
            ordered_failed = [
                dep
                for dep in unit.lists["Requires"]
                if results.get(dep) == "not-found" or (results.get(dep) in ("failed", "dependency") and dep in ordered)
            ]
            if not unit.found and name != goal:
                result, reason = "not-found", f"Unit {name} not found."
            elif ordered_failed:
                result, reason = "dependency", f"Dependency failed for {name}: {', '.join(ordered_failed)} failed."
            elif not self.condition_ok(unit):
                result, reason = "skipped", "a start condition was not met"
            elif unit.kind == "service":
                ok, output = self.run_commands(unit, ("ExecStartPre", "ExecStart", "ExecStartPost"))
                entry["output"] = output[-4000:]
                last = (output.strip().splitlines() or [""])[-1]
                result, reason = ("active", "") if ok else ("failed", last)
            else:
                result, reason = "active", ""
            results[name] = result
            entry.update(result=result, reason=reason)
            record.append(entry)
        journal = {"goal": goal, "units": record}
        os.makedirs(self.real(LOG_DIR), exist_ok=True)
        count = len(glob.glob(self.real(f"{LOG_DIR}/boot-[0-9]*.json")))
        with open(self.real(f"{LOG_DIR}/boot-{count + 1}.json"), "w") as handle:
            json.dump(journal, handle, indent=2)
        os.makedirs(self.real(RUN_DIR), exist_ok=True)
        with open(self.real(f"{RUN_DIR}/active.json"), "w") as handle:
            json.dump([e["unit"] for e in record if e["result"] == "active"], handle)
        return journal

    def shutdown(self) -> list[dict]:
        try:
            with open(self.real(f"{RUN_DIR}/active.json")) as handle:
                active = json.load(handle)
        except OSError:
            active = []
        stopped = []
        for name in reversed(active):
            unit = self.load(name)
            ok, output = self.run_commands(unit, ("ExecStop",)) if unit.execs["ExecStop"] else (True, "")
            stopped.append({"unit": name, "stopped": ok, "output": output[-4000:]})
        os.makedirs(self.real(LOG_DIR), exist_ok=True)
        with open(self.real(f"{LOG_DIR}/shutdown.json"), "w") as handle:
            json.dump(stopped, handle, indent=2)
        os.makedirs(self.real(RUN_DIR), exist_ok=True)
        with open(self.real(f"{RUN_DIR}/active.json"), "w") as handle:
            json.dump([], handle)
        return stopped


def install(root: str) -> str:
    """Put this file at ``<root>/usr/lib/fake-systemd/fake-systemd`` (run by the root's python3)."""
    target = os.path.join(root, INSTALLED.lstrip("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(os.path.abspath(__file__)) as source, open(target, "w") as handle:
        handle.write("#!/usr/bin/python3\n" + source.read())
    os.chmod(target, 0o755)
    return target


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--install"]:
        print(install(argv[1]))
        return 0
    root = "/"
    if argv[:1] == ["--root"]:
        root, argv = argv[1], argv[2:]
    manager = Manager(root)
    if argv[:1] == ["boot"]:
        journal = manager.boot(argv[1] if len(argv) > 1 else "multi-user.target")
        for entry in journal["units"]:
            print(f"{entry['unit']}: {entry['result']}" + (f" ({entry['reason']})" if entry["reason"] else ""))
        return 0
    if argv[:1] == ["shutdown"]:
        for entry in manager.shutdown():
            print(f"{entry['unit']}: {'stopped' if entry['stopped'] else 'stop failed'}")
        return 0
    print("usage: fake-systemd [--root ROOT] boot [TARGET] | shutdown | --install ROOT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
