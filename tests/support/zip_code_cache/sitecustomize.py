"""Keep the code Python compiles from Ansible's module zips, for the test suite's managed-host Pythons.

Ansible sends each module as a zip (AnsiballZ) and the host's Python imports the module, its module_utils and
ansible-core's own from that zip. ``zipimport`` never writes bytecode: every module run compiles the same
sources again (about a third of a module run's CPU). With ``ACCEL_ZIP_CODE_CACHE`` naming a directory, this
file (on PYTHONPATH, set by ``tests/support/zip_code_cache/__init__.py``) keeps each compiled source there,
keyed by the interpreter's bytecode magic and the source's SHA-256, and takes it back the next time. The code
is what ``compile()`` makes of the same source, with the file name of this run, so the module runs as it
would; only the compiling is saved. Without the variable nothing is changed. An interpreter's own
sitecustomize (Debian's) is still run. Python 3.9 compatible: it runs in every managed-host Python the tests
use.
"""

import os
import sys


def _install(directory):
    import hashlib
    import importlib.util
    import marshal
    import zipimport

    compile_source = getattr(zipimport, "_compile_source", None)
    if compile_source is None:  # not the pure-Python zipimport of 3.8 and later
        return
    magic = importlib.util.MAGIC_NUMBER

    def renamed(code, filename):
        constants = tuple(renamed(c, filename) if isinstance(c, type(code)) else c for c in code.co_consts)
        return code.replace(co_filename=filename, co_consts=constants)

    def cached(pathname, source):
        if isinstance(source, str):
            return compile_source(pathname, source)
        path = os.path.join(directory, hashlib.sha256(magic + source).hexdigest())
        try:
            with open(path, "rb") as handle:
                return renamed(marshal.load(handle), pathname)
        except (OSError, EOFError, ValueError, TypeError):
            pass
        code = compile_source(pathname, source)
        try:
            os.makedirs(directory, exist_ok=True)
            temporary = f"{path}.{os.getpid()}"
            with open(temporary, "wb") as handle:
                marshal.dump(code, handle)
            os.replace(temporary, path)
        except OSError:
            pass
        return code

    zipimport._compile_source = cached


def _run_the_shadowed_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if os.path.abspath(entry or os.curdir) == here:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            with open(candidate) as handle:
                source = handle.read()
            exec(compile(source, candidate, "exec"), {"__name__": "sitecustomize", "__file__": candidate})
            return


if os.environ.get("ACCEL_ZIP_CODE_CACHE"):
    _install(os.environ["ACCEL_ZIP_CODE_CACHE"])
_run_the_shadowed_sitecustomize()
